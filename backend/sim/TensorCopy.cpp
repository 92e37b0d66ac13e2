// cp.async.bulk.tensor on the sim (PTX ISA, "cp.async.bulk.tensor", tile
// mode). A load: the box is read, bounds-checked and counted like one global
// load request, and lands in shared memory at issue, row after row, each
// 16-byte chunk at its swizzled address; then its bytes complete on the
// mbarrier. Landing at once is one order a GPU may take: the bytes are
// defined only once the barrier's phase completes, which the readers wait
// for. A store walks the same rows and chunks the other way, at issue too:
// a GPU may read and write any time until the bulk group's wait, and the
// program may not look before it.
#include "backend/sim/TensorCopy.h"

#include <algorithm>
#include <cstring>

#include "backend/sim/Mbarrier.h"
#include "backend/sim/RaceCheck.h"
#include "backend/sim/TensorMap.h"
#include "backend/sim/Wgmma.h"

namespace tk::sim {

namespace {

const char *const kOp = "cp.async.bulk.tensor";

void fault(ThreadCtx *t, uint32_t site, const std::string &why) {
  LaunchCtx *l = t->block->launch;
  if (l->failed.load(std::memory_order_relaxed)) return;
  l->fail("kernel " + l->kernel->name + ": " + kOp + siteSuffix(*l, site) + ", " + threadWhere(t) + ": " + why);
}

// The rule tensor map `m` breaks for a `rank`-d copy, or "". The layout
// rules are cuTensorMapEncodeTiled's, so a map the sim takes a GPU takes.
std::string mapProblem(const TensorMap &m, int32_t rank) {
  if (m.magic != kTensorMapMagic) return "the tensor map has no TKMP magic (the host did not encode it)";
  if (m.rank < 1 || m.rank > kTensorMapMaxRank) return "the tensor map's rank is " + std::to_string(m.rank);
  if (uint32_t(rank) != m.rank)
    return "a " + std::to_string(rank) + "-d copy through a rank-" + std::to_string(m.rank) + " tensor map";
  if (m.elemBytes != 1 && m.elemBytes != 2 && m.elemBytes != 4 && m.elemBytes != 8)
    return "the tensor map's element size is " + std::to_string(m.elemBytes) + " bytes";
  if (m.swizzle != 0 && m.swizzle != 32 && m.swizzle != 64 && m.swizzle != 128)
    return "the tensor map's swizzle is " + std::to_string(m.swizzle) + " bytes (want 0, 32, 64 or 128)";
  if (m.base % 16) return "the tensor map's base " + hexAddress(m.base) + " is not 16-byte aligned";
  if (m.strides[0] != m.elemBytes)
    return "the tensor map's innermost stride is " + std::to_string(m.strides[0]) + " bytes, not its element size";
  for (uint32_t d = 0; d < m.rank; ++d) {
    if (m.box[d] < 1 || m.box[d] > 256)
      return "box dimension " + std::to_string(d) + " is " + std::to_string(m.box[d]) + " elements (want 1..256)";
    if (d > 0 && m.strides[d] % 16)
      return "the tensor map's stride " + std::to_string(d) + " is " + std::to_string(m.strides[d]) +
             " bytes, not a multiple of 16";
  }
  const uint64_t inner = uint64_t(m.box[0]) * m.elemBytes;
  if (inner % 16) return "the box's rows are " + std::to_string(inner) + " bytes, not a multiple of 16";
  if (m.swizzle && inner > m.swizzle)
    return "the box's rows are " + std::to_string(inner) + " bytes, more than the " + std::to_string(m.swizzle) +
           "-byte swizzle spans";
  return "";
}

// Where the byte at shared offset `a` of an unswizzled box lands with an
// S-byte swizzle: its 16-byte chunk XORed with bits 7.. of the address
// (lower/Wgmma.h IntArith::swizzle, which wgmma reads with).
uint64_t swizzled(uint64_t a, uint32_t swizzle) { return swizzle ? a ^ (((a >> 7) & (swizzle / 16 - 1)) << 4) : a; }

// What the copy read from global memory, for the counters.
struct Traffic {
  uint64_t bytes = 0, sectors = 0;
};

// One row of the box: `rowInBounds` false (an outer coordinate out of
// range) writes zeros. Its in-bounds elements [lo, hi) (relative to the
// box) come from `row` (the global address of the row's element c0).
// False when the read left the tensor's allocation (the launch failed).
bool copyRow(ThreadCtx *t, uint32_t site, const TensorMap &m, uint64_t rowOffset, bool rowInBounds, uintptr_t row,
             int64_t lo, int64_t hi, Traffic &traffic) {
  const uint64_t eb = m.elemBytes, inner = m.box[0] * eb;
  if (!rowInBounds) lo = hi = 0;
  if (hi > lo) {
    const uintptr_t from = row + uintptr_t(lo * int64_t(eb)), to = row + uintptr_t(hi * int64_t(eb));
    if (!checkedGlobalRange(t, site, from, to, uintptr_t(m.base))) return false;
    traffic.bytes += to - from;
    traffic.sectors += (to - 1) / 32 - from / 32 + 1;
  }
  char *shared = t->block->shared;
  for (uint64_t chunk = 0; chunk < inner; chunk += 16) {
    char *to = shared + swizzled(rowOffset + chunk, m.swizzle);
    std::memset(to, 0, 16);
    const int64_t first = std::max<int64_t>(lo, int64_t(chunk / eb)),
                  last = std::min<int64_t>(hi, int64_t((chunk + 16) / eb));
    if (first < last)
      std::memcpy(to + (uint64_t(first) * eb - chunk), reinterpret_cast<const char *>(row) + first * int64_t(eb),
                  uint64_t(last - first) * eb);
  }
  return true;
}

// Walks the box row after row (outer coordinates as an odometer, dim 1
// fastest): row(rowOffset, inBounds, row, lo, hi) gets the row's shared
// offset (unswizzled; the box starts at `offset`), whether its outer
// coordinates lie in the tensor, the global address of its element c0, and
// its in-bounds elements [lo, hi) relative to c0. False when `row` was.
template <class Row>
bool forEachRow(const TensorMap &m, const int32_t coords[5], uint64_t offset, Row &&row) {
  const int64_t c0 = coords[0];
  const int64_t lo = std::max<int64_t>(0, -c0), hi = std::min<int64_t>(m.box[0], int64_t(m.dims[0]) - c0);
  const uint64_t inner = uint64_t(m.box[0]) * m.elemBytes;
  uint32_t index[kTensorMapMaxRank] = {};
  for (uint64_t rowOffset = offset;; rowOffset += inner) {
    bool inBounds = true;
    uintptr_t address = uintptr_t(m.base) + uintptr_t(c0 * int64_t(m.elemBytes));
    for (uint32_t d = 1; d < m.rank; ++d) {
      const int64_t x = int64_t(coords[d]) + index[d];
      inBounds = inBounds && x >= 0 && x < int64_t(m.dims[d]);
      address += uintptr_t(x * int64_t(m.strides[d]));
    }
    if (!row(rowOffset, inBounds, address, lo, hi)) return false;
    uint32_t d = 1;
    while (d < m.rank && ++index[d] == m.box[d]) index[d++] = 0;
    if (d == m.rank) return true;
  }
}

// The box's bytes, and its footprint in shared memory at `a`: a swizzled box
// covers whole 128-byte lines (its chunks move within them). Fails the
// launch (false) unless the footprint lies in the block's shared memory,
// aligned as the TMA unit needs; `role` names the operand ("destination").
bool sharedBox(ThreadCtx *t, uint32_t site, const TensorMap &m, uintptr_t a, const char *role, uint64_t &offset,
               uint64_t &bytes, uint64_t &extent) {
  BlockCtx *b = t->block;
  bytes = uint64_t(m.box[0]) * m.elemBytes;
  for (uint32_t d = 1; d < m.rank; ++d) bytes *= m.box[d];
  const uintptr_t base = uintptr_t(b->shared);
  const uint64_t align = m.swizzle ? 128 : 16;
  extent = m.swizzle ? (bytes + 127) / 128 * 128 : bytes;
  if (a < base || a - base + extent > b->sharedBytes) {
    fault(t, site,
          "the " + std::to_string(extent) + "-byte box at " + hexAddress(a) + " is not inside the block's " +
              std::to_string(b->sharedBytes) + " bytes of shared memory");
    return false;
  }
  offset = a - base;
  if (offset % align) {
    fault(t, site,
          std::string("the ") + role + ", shared offset " + hexAddress(offset) + ", is not " + std::to_string(align) +
              "-byte aligned" + (m.swizzle ? " (a swizzled copy needs 128)" : ""));
    return false;
  }
  return true;
}

// A store's shared bytes are read through the async proxy: every thread's
// generic writes before the last barrier, and the issuing thread's since,
// must have a fence.proxy.async after them (as wgmma requires, Wgmma.cpp).
bool fencedForAsyncProxy(ThreadCtx *t, uint32_t site) {
  BlockCtx *b = t->block;
  for (uint32_t i = 0; i < b->nthreads; ++i) {
    const uint64_t u = b->worker->threads[i].wg.unfencedWrite;
    const bool beforeBarrier = u && u - 1 < b->counters.barriers;
    if (!u || (i != t->tid && !beforeBarrier)) continue;
    fault(t, site,
          "thread " + std::to_string(i) +
              (beforeBarrier ? " wrote shared memory before the last barrier"
                             : " (the issuing thread) wrote shared memory after the last barrier") +
              " with no fence.proxy.async after the write; the bulk tensor store reads shared memory through the "
              "async proxy");
    return false;
  }
  return true;
}

// One row of a stored box: when its outer coordinates are in the tensor, its
// in-bounds elements [lo, hi) go from their chunks in shared memory (where
// copyRow puts them) to the row in global memory. False when the launch
// failed.
bool storeRow(ThreadCtx *t, uint32_t site, const TensorMap &m, uint64_t rowOffset, bool rowInBounds, uintptr_t row,
              int64_t lo, int64_t hi, Traffic &traffic) {
  if (!rowInBounds || hi <= lo) return true;
  const uint64_t eb = m.elemBytes, inner = m.box[0] * eb;
  const uintptr_t from = row + uintptr_t(lo * int64_t(eb)), to = row + uintptr_t(hi * int64_t(eb));
  // Bounds and the global race check (a write of the store's site), before any byte moves.
  if (!checkedGlobalRange(t, site, from, to, uintptr_t(m.base))) return false;
  traffic.bytes += to - from;
  traffic.sectors += (to - 1) / 32 - from / 32 + 1;
  BlockCtx *b = t->block;
  RaceShadow &race = b->worker->race;
  for (uint64_t chunk = 0; chunk < inner; chunk += 16) {
    const int64_t first = std::max<int64_t>(lo, int64_t(chunk / eb)),
                  last = std::min<int64_t>(hi, int64_t((chunk + 16) / eb));
    if (first >= last) continue;
    const uint64_t at = swizzled(rowOffset + chunk, m.swizzle) + (uint64_t(first) * eb - chunk),
                   n = uint64_t(last - first) * eb;
    RaceShadow::Race r;
    if (race.enabled() && race.access(t->tid, site, false, uint32_t(at), uint32_t(n), r)) {
      b->launch->fail(raceMessage(*b, r));
      return false;
    }
    std::memcpy(reinterpret_cast<char *>(row) + first * int64_t(eb), b->shared + at, n);
  }
  return true;
}

// Copies the tensor map at `map` to `m`; false after failing the launch
// when there is none or it breaks a rule.
bool readMap(ThreadCtx *t, uint32_t site, const void *map, int32_t rank, TensorMap &m) {
  if (!map) {
    fault(t, site, "the tensor map is a null pointer");
    return false;
  }
  std::memcpy(&m, map, sizeof m);
  if (std::string why = mapProblem(m, rank); !why.empty()) {
    fault(t, site, why);
    return false;
  }
  return true;
}

// One request of `traffic` at `site`, when the launch counts per site.
void countSite(BlockCtx &b, uint32_t site, const Traffic &traffic) {
  if (SiteCounters *ps = b.worker->perSite) {
    ps[site].requests += 1;
    ps[site].bytes += traffic.bytes;
    ps[site].sectors += traffic.sectors;
  }
}

}  // namespace

void tmaLoad(void *dst, const void *map, void *bar, int32_t rank, const int32_t coords[5], uint32_t site) {
  ThreadCtx *t = tlsThread;
  BlockCtx *b = t->block;
  TensorMap m;
  uint64_t offset, bytes, extent;
  if (!readMap(t, site, map, rank, m) || !sharedBox(t, site, m, uintptr_t(dst), "destination", offset, bytes, extent))
    return;
  // The copy may land any time until its phase completes: wgmma must not
  // read those bytes meanwhile.
  checkWgmmaOverwrite(*t, offset, extent, [&] {
    return std::string(kOp) + " of " + std::to_string(bytes) + " bytes" + siteSuffix(*b->launch, site);
  });
  Traffic traffic;
  auto row = [&](uint64_t rowOffset, bool inBounds, uintptr_t address, int64_t lo, int64_t hi) {
    return copyRow(t, site, m, rowOffset, inBounds, address, lo, hi, traffic);
  };
  if (!forEachRow(m, coords, offset, row)) return;
  // One request, however many rows: the TMA unit, not the thread's warp, reads.
  b->counters.globalLoadBytes += traffic.bytes;
  b->counters.globalLoadRequests += 1;
  b->counters.globalLoadSectors += traffic.sectors;
  countSite(*b, site, traffic);
  mbarrierCompleteTx(bar, uint32_t(bytes), site);
}

void tmaStore(const void *src, const void *map, int32_t rank, const int32_t coords[5], uint32_t site) {
  ThreadCtx *t = tlsThread;
  BlockCtx *b = t->block;
  TensorMap m;
  uint64_t offset, bytes, extent;
  if (!readMap(t, site, map, rank, m) || !sharedBox(t, site, m, uintptr_t(src), "source", offset, bytes, extent) ||
      !fencedForAsyncProxy(t, site))
    return;
  Traffic traffic;
  auto row = [&](uint64_t rowOffset, bool inBounds, uintptr_t address, int64_t lo, int64_t hi) {
    return storeRow(t, site, m, rowOffset, inBounds, address, lo, hi, traffic);
  };
  if (!forEachRow(m, coords, offset, row)) return;
  // One request, as for a load: the TMA unit writes the box.
  b->counters.globalStoreBytes += traffic.bytes;
  b->counters.globalStoreRequests += 1;
  b->counters.globalStoreSectors += traffic.sectors;
  countSite(*b, site, traffic);
}

}  // namespace tk::sim
