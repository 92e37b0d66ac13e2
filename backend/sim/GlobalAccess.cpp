// The checked global access every instrumented load, store, atomic and
// cp.async makes (checkedGlobalAccess): alignment, bounds — against the
// buffer of the kernel argument the address derives from when the site
// knows it (Site::param, PointerProvenance.h), or against the allocation
// holding the root pointer it derives from (Site::root), else against every
// live allocation — and the counters; and the same bounds check of the rows
// a bulk tensor copy reads or writes (checkedGlobalRange), with the race
// check of the writes. A bad access is reported once per launch
// and redirected to scratch, so the kernel goes on without touching it.
#include <algorithm>
#include <bit>

#include "backend/sim/Runtime.h"

namespace tk::sim {

namespace {

// The range in `ranges` (sorted, disjoint) that holds [lo, hi), or -1.
ptrdiff_t findRange(const std::vector<Memory::Range> &ranges, uintptr_t lo, uintptr_t hi, size_t &hint) {
  if (hint < ranges.size() && ranges[hint].begin <= lo && hi <= ranges[hint].end) return ptrdiff_t(hint);
  auto it = std::upper_bound(ranges.begin(), ranges.end(), lo,
                             [](uintptr_t a, const Memory::Range &r) { return a < r.begin; });
  if (it == ranges.begin()) return -1;
  --it;
  if (hi > it->end || lo < it->begin) return -1;
  hint = size_t(it - ranges.begin());
  return ptrdiff_t(hint);
}

// The range that contains address a at all (for diagnostics), or -1.
ptrdiff_t containing(const std::vector<Memory::Range> &ranges, uintptr_t a) {
  size_t hint = ~size_t(0);
  return findRange(ranges, a, a + 1, hint);
}

std::string bytesOf(uintptr_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

// Why [lo, hi) is not in any live allocation (the fallback's report).
std::string outsideAllocations(const Memory::Snapshot &mem, uintptr_t lo, uintptr_t hi, std::string &what) {
  if (ptrdiff_t r = containing(mem.released, lo); r >= 0) {
    what = "use-after-free";
    const Memory::Range &rr = mem.released[size_t(r)];
    return ": " + std::to_string(lo - rr.begin) + " bytes into a released allocation of " +
           std::to_string(rr.end - rr.begin) + " bytes at " + hexAddress(rr.begin);
  }
  if (ptrdiff_t r = containing(mem.live, lo); r >= 0) {
    const Memory::Range &lr = mem.live[size_t(r)];
    return ": runs " + std::to_string(hi - lr.end) + " bytes past the end of a " + std::to_string(lr.end - lr.begin) +
           "-byte allocation at " + hexAddress(lr.begin);
  }
  if (lo == 0) return ": null pointer";
  // Name the nearest allocation below, the usual victim of a bad index,
  // when the address is near enough to be its overrun: within its own size
  // or a page past its end. Farther away (a host pointer the program never
  // allocated through tk or borrowed, as a generated launcher may be
  // given), naming it would blame an unrelated buffer.
  auto it = std::upper_bound(mem.live.begin(), mem.live.end(), lo,
                             [](uintptr_t a, const Memory::Range &r) { return a < r.begin; });
  if (it == mem.live.begin()) return ": not in any allocation the sim knows";
  --it;
  const uintptr_t gap = lo - it->end, size = it->end - it->begin;
  if (gap < std::max<uintptr_t>(size, 4096))
    return ": " + std::to_string(gap) + " bytes past the end of a " + std::to_string(size) + "-byte allocation at " +
           hexAddress(it->begin);
  return ": not in any allocation the sim knows (the nearest below, " + std::to_string(size) + " bytes at " +
         hexAddress(it->begin) + ", ends " + std::to_string(gap) +
         " bytes before it): memory that was neither allocated through tk nor borrowed";
}

std::string paramLabel(const Site &s) {
  return s.paramName.empty() ? "parameter " + std::to_string(s.param) : s.paramName;
}

// The parameter whose buffer starts at `begin` ("x"), or "".
std::string bufferOwner(const LaunchCtx &l, uintptr_t begin) {
  const std::vector<Site> &sites = l.program->sites.sites;
  for (size_t i = 0; i < sites.size(); ++i)
    if (l.siteBuffers[i].begin == begin && sites[i].param >= 0) return paramLabel(sites[i]);
  return "";
}

// What offsets in an error are from: the parameter, or the root pointer
// ("the integer-made pointer 0x..., in y's buffer" when a parameter's
// buffer holds it).
std::string bufferLabel(const LaunchCtx &l, const Site &s, const ParamBuffer &pb) {
  if (s.root == SiteRoot::None) return paramLabel(s);
  const char *what = s.root == SiteRoot::Loaded      ? "the loaded pointer "
                     : s.root == SiteRoot::TensorMap ? "the tensor map's base "
                                                     : "the integer-made pointer ";
  std::string label = what + hexAddress(pb.arg);
  const std::string owner = bufferOwner(l, pb.begin);
  return owner.empty() ? label : label + " (into " + owner + "'s buffer)";
}

// The buffer of a rooted site: the live allocation that holds the root, with
// offsets from the root; none when no live allocation holds it (the
// fallback then says what the address is).
ParamBuffer rootBuffer(const std::vector<Memory::Range> &live, uintptr_t root, size_t &hint) {
  const ptrdiff_t r = findRange(live, root, root + 1, hint);
  if (r < 0) return ParamBuffer{};
  return ParamBuffer{live[size_t(r)].begin, live[size_t(r)].end, root};
}

// Why [lo, hi) is outside the buffer of the argument the site's address
// derives from: the byte offset from the argument, how far past an end it
// is, and whose memory it would have touched (another buffer silently, on a
// GPU, which is what this check exists to catch).
std::string outsideParamBuffer(const LaunchCtx &l, const Site &s, const ParamBuffer &pb, uintptr_t lo, uintptr_t hi) {
  const intptr_t offset = intptr_t(lo - pb.arg);
  std::string how;
  if (lo < pb.begin)
    how = bytesOf(pb.begin - lo) + " before the start";
  else if (lo >= pb.end)
    how = bytesOf(lo - pb.end) + " past the end";
  else
    how = "runs " + bytesOf(hi - pb.end) + " past the end";
  std::string text = ": byte offset " + std::to_string(offset) + " from " + bufferLabel(l, s, pb) + ", " + how + " of its " +
                     std::to_string(pb.end - pb.begin) + "-byte buffer at " + hexAddress(pb.begin);
  if (containing(l.memory.live, lo) >= 0) {
    // Inside another live buffer: name it by a parameter whose buffer it is.
    const std::vector<Site> &sites = l.program->sites.sites;
    for (size_t i = 0; i < sites.size(); ++i) {
      const ParamBuffer &other = l.siteBuffers[i];
      if (other.begin != 0 && other.begin <= lo && lo < other.end && other.begin != pb.begin)
        return text + "; the address is inside " + paramLabel(sites[i]) + "'s buffer";
    }
    return text + "; the address is inside another live allocation";
  }
  if (containing(l.memory.released, lo) >= 0) return text + "; the address is inside a released allocation";
  return text;
}

void reportGlobal(ThreadCtx *t, const Site &s, const ParamBuffer &pb, uintptr_t lo, uintptr_t hi) {
  LaunchCtx *l = t->block->launch;
  if (l->failed.load(std::memory_order_relaxed)) return;
  std::string what = "out-of-bounds";
  std::string detail = pb.begin ? outsideParamBuffer(*l, s, pb, lo, hi) : outsideAllocations(l->memory, lo, hi, what);
  l->fail("kernel " + l->kernel->name + ": " + what + " " + s.verb() + " of " + std::to_string(hi - lo) + " bytes at " +
          hexAddress(lo) + siteLoc(s) + ", " + threadWhere(t) + detail);
}

void reportMisaligned(ThreadCtx *t, const Site &s, uintptr_t a, uintptr_t need) {
  LaunchCtx *l = t->block->launch;
  if (l->failed.load(std::memory_order_relaxed)) return;
  l->fail("kernel " + l->kernel->name + ": misaligned " + s.verb() + " of " + std::to_string(s.bytes) + " bytes at " +
          hexAddress(a) + siteLoc(s) + ", " + threadWhere(t) + ": the address must be a multiple of " +
          std::to_string(need) + " bytes");
}

// " (byte offset N from P)" for an address inside a parameter's buffer, else "".
std::string inParamBuffer(const LaunchCtx &l, uintptr_t address) {
  const std::vector<Site> &sites = l.program->sites.sites;
  for (size_t i = 0; i < sites.size(); ++i) {
    const ParamBuffer &pb = l.siteBuffers[i];
    if (pb.begin != 0 && pb.begin <= address && address < pb.end)
      return "byte offset " + std::to_string(intptr_t(address - pb.arg)) + " from " + paramLabel(sites[i]) + ", ";
  }
  return "";
}

// Reads a thread remembers for replicaRead: a tile op's elements per thread
// rarely exceed this, so a thread's read of an element is still there when
// it stores the element back.
constexpr uint32_t kRecentReads = 256;

// Layouts replicate small tiles: several threads hold (and load) the same
// element, and one of them stores it. `load(p); store(p, f(...))` then has a
// replica read the byte its owner wrote, with no barrier -- which the
// program never asked for and whose value the replica never stores. It is
// the lowering's, not a race of the program: both threads read the byte at
// the same site. A read of another element (the mirrored re-read of Liger's
// kernel) is still a race.
bool replicaRead(const void *ctx, uint32_t writer, uintptr_t address, uint32_t readSite) {
  const auto &w = *static_cast<const Simulator::Worker *>(ctx);
  const uint32_t epoch = w.globalRace.epoch();
  for (const ThreadCtx::RecentRead &r : w.threads[writer].recentReads)
    if (r.site == readSite && r.epoch == epoch && r.lo <= address && address < r.hi) return true;
  return false;
}

void rememberRead(ThreadCtx *t, uint32_t site, uintptr_t lo, uintptr_t hi, uint32_t epoch) {
  if (t->recentReads.size() != kRecentReads) t->recentReads.assign(kRecentReads, {});
  t->recentReads[t->recentNext++ % kRecentReads] = ThreadCtx::RecentRead{lo, hi, site, epoch};
}

// The global race check of one in-bounds access; atomics may meet freely.
void checkGlobalRace(ThreadCtx *t, const Site &s, uint32_t siteId, uintptr_t a, uint64_t mask) {
  BlockCtx *b = t->block;
  LaunchCtx *l = b->launch;
  if (s.isAtomic() || l->failed.load(std::memory_order_relaxed)) return;
  GlobalRaceShadow &shadow = b->worker->globalRace;
  GlobalRaceShadow::Race r;
  bool found = false;
  const bool write = s.isStore();
  const Simulator::Worker *w = b->worker;
  if (!s.masked) {
    found = shadow.access(t->tid, siteId, write, a, s.bytes, r, replicaRead, w);
  } else {
    for (uint32_t e = 0; e * s.elemBytes < s.bytes && !found; ++e)
      if (mask >> e & 1)
        found = shadow.access(t->tid, siteId, write, a + uintptr_t(e) * s.elemBytes, s.elemBytes, r, replicaRead, w);
  }
  if (!write) rememberRead(t, siteId, a, a + s.bytes, shadow.epoch());
  if (found) l->fail(globalRaceMessage(*b, r));
}

}  // namespace

std::string globalRaceMessage(const BlockCtx &b, const GlobalRaceShadow::Race &r) {
  const LaunchCtx &l = *b.launch;
  auto who = [&](const GlobalRaceShadow::Access &a) {
    return "thread " + std::to_string(a.tid) + (a.write ? " wrote it" : " read it") +
           siteLoc(l.program->sites.sites[a.site]);
  };
  return "kernel " + l.kernel->name + ": global-memory race on byte at " + hexAddress(r.address) + " (" +
         inParamBuffer(l, r.address) + blockName(b) + "): " + who(r.first) + " and " + who(r.second) +
         " with no barrier between";
}

void bindSiteBuffers(LaunchCtx &l) {
  const std::vector<Site> &sites = l.program->sites.sites;
  l.siteBuffers.assign(sites.size(), ParamBuffer{});
  for (size_t i = 0; i < sites.size(); ++i) {
    const Site &s = sites[i];
    if (s.param < 0 || unsigned(s.param) >= l.kernel->numParams || s.kernel != l.kernel->name) continue;
    const uintptr_t arg = *static_cast<const uintptr_t *>(l.args[s.param]);
    // An argument outside every live allocation (null, released, foreign
    // memory) keeps the fallback, which says which of those it is.
    if (ptrdiff_t r = containing(l.memory.live, arg); r >= 0)
      l.siteBuffers[i] = ParamBuffer{l.memory.live[size_t(r)].begin, l.memory.live[size_t(r)].end, arg};
  }
}

bool checkedGlobalRange(ThreadCtx *t, uint32_t siteId, uintptr_t lo, uintptr_t hi, uintptr_t root) {
  BlockCtx *b = t->block;
  LaunchCtx *l = b->launch;
  size_t &hint = b->worker->memoryHint;
  const std::vector<Memory::Range> &live = l->memory.live;
  const ParamBuffer pb = rootBuffer(live, root, hint);
  const Site &s = l->program->sites.sites[siteId];
  if (!(pb.begin ? pb.begin <= lo && hi <= pb.end : findRange(live, lo, hi, hint) >= 0)) {
    reportGlobal(t, s, pb, lo, hi);
    return false;
  }
  // A bulk store's row is one write of the site (its width is the row's).
  GlobalRaceShadow &shadow = b->worker->globalRace;
  GlobalRaceShadow::Race r;
  if (s.isStore() && shadow.enabled() && !l->failed.load(std::memory_order_relaxed) &&
      shadow.access(t->tid, siteId, true, lo, uint32_t(hi - lo), r, replicaRead, b->worker)) {
    l->fail(globalRaceMessage(*b, r));
    return false;
  }
  return true;
}

void *checkedGlobalAccess(void *p, uint32_t siteId, uint64_t mask, uintptr_t root) {
  ThreadCtx *t = tlsThread;
  BlockCtx *b = t->block;
  LaunchCtx *l = b->launch;
  const Site &s = l->program->sites.sites[siteId];
  uint32_t k = t->occurrences[siteId]++;
  uintptr_t a = uintptr_t(p), lo, hi;
  if (!activeRange(s, a, mask, lo, hi)) {
    b->worker->grouper.record(t->warp, t->lane, siteId, k, a, 0, b->counters);
    return p;
  }
  // A GPU faults on a global access not aligned to its size ("misaligned
  // address"): a vector access the compiler widened on a wrong alignment
  // fact (a user's @multiple_of or multiple_of(), or a bug) must fail here too.
  if (const uintptr_t need = s.masked ? s.elemBytes : s.bytes; need > 1 && (need & (need - 1)) == 0 && a % need) {
    reportMisaligned(t, s, a, need);
    return redirectToScratch(t, s);
  }
  // With a known argument buffer the check is two compares (cheaper than the
  // fallback's search); without, any live allocation will do.
  size_t &hint = b->worker->memoryHint;
  const std::vector<Memory::Range> &live = l->memory.live;
  const ParamBuffer pb = s.root == SiteRoot::None ? l->siteBuffers[siteId] : rootBuffer(live, root, hint);
  auto inside = [&](uintptr_t from, uintptr_t to) {
    return pb.begin ? pb.begin <= from && to <= pb.end : findRange(live, from, to, hint) >= 0;
  };
  if (!inside(lo, hi)) {
    // A masked access may leave the buffer only through inactive lanes: check lane by lane.
    bool bad = true;
    if (s.masked) {
      bad = false;
      for (uint32_t e = 0; e * s.elemBytes < s.bytes && !bad; ++e)
        if (mask >> e & 1) {
          uintptr_t el = a + uintptr_t(e) * s.elemBytes;
          if (!inside(el, el + s.elemBytes)) {
            bad = true;
            lo = el;
            hi = el + s.elemBytes;
          }
        }
    }
    if (bad) {
      reportGlobal(t, s, pb, lo, hi);
      return redirectToScratch(t, s);
    }
  }
  if (b->worker->globalRace.enabled()) checkGlobalRace(t, s, siteId, a, s.masked ? mask : ~uint64_t(0));
  uint64_t bytes = s.masked ? uint64_t(std::popcount(mask)) * s.elemBytes : s.bytes;
  if (s.isStore() || s.isAtomic())
    b->counters.globalStoreBytes += bytes;
  else
    b->counters.globalLoadBytes += bytes;
  if (SiteCounters *ps = b->worker->perSite) ps[siteId].bytes += bytes;
  b->worker->grouper.record(t->warp, t->lane, siteId, k, a, s.masked ? mask : ~uint64_t(0), b->counters);
  return p;
}

}  // namespace tk::sim
