// cp.async on the sim, with the PTX ISA's semantics ("cp.async",
// "cp.async.commit_group", "cp.async.wait_group"): each thread keeps its own
// queue of copies in flight. A copy reads its source when issued (a GPU may
// read it any time before completion; the source is not written meanwhile in
// code tk generates) and is counted there like a global load of its srcBytes;
// its bytes land in shared memory, counted as a shared store, only when a
// wait_group of the issuing thread completes its group. Barriers complete
// nothing. With the race check on, any access to bytes whose copy is still in
// flight is reported with both lines.
#include <algorithm>
#include <cstring>

#include "backend/sim/Runtime.h"
#include "backend/sim/Wgmma.h"

namespace tk::sim {

namespace {

void fault(ThreadCtx *t, uint32_t site, const std::string &what) {
  LaunchCtx *l = t->block->launch;
  if (l->failed.load(std::memory_order_relaxed)) return;
  l->fail("kernel " + l->kernel->name + ": " + what + siteSuffix(*l, site) + ", " + blockName(*t->block) +
          ", thread " + std::to_string(t->tid));
}

}  // namespace

void cpAsyncIssue(void *dst, const void *src, int32_t bytes, int32_t srcBytes, uint32_t globalSite,
                  uint32_t sharedSite) {
  ThreadCtx *t = tlsThread;
  BlockCtx *b = t->block;
  if (srcBytes < 0 || srcBytes > bytes) {
    fault(t, globalSite, "cp.async of " + std::to_string(bytes) + " bytes with source size " + std::to_string(srcBytes));
    srcBytes = 0;
  }
  const uintptr_t d = uintptr_t(dst), base = uintptr_t(b->shared);
  if (d % uint32_t(bytes) != 0 || (srcBytes > 0 && uintptr_t(src) % uint32_t(bytes) != 0))
    fault(t, globalSite, "misaligned cp.async of " + std::to_string(bytes) + " bytes (both addresses must be " +
                             std::to_string(bytes) + "-byte aligned)");
  PendingCopy c;
  c.dst = d;
  c.bytes = uint32_t(bytes);
  c.group = t->committedGroups;
  c.site = sharedSite;
  // Only the first srcBytes are read (and checked, and counted); the rest is zero.
  const uint64_t mask = srcBytes >= 64 ? ~uint64_t(0) : (uint64_t(1) << srcBytes) - 1;
  const void *from = checkedGlobalAccess(const_cast<void *>(src), globalSite, mask);
  if (srcBytes > 0) std::memcpy(c.data, from, size_t(srcBytes));
  RaceShadow &race = b->worker->race;
  if (race.enabled() && d >= base && d - base + c.bytes <= b->sharedBytes)
    race.beginAsync(t->tid, sharedSite, uint32_t(d - base), c.bytes);
  // The copy may land any time until its wait_group.
  if (d >= base && d - base + c.bytes <= b->sharedBytes)
    checkWgmmaOverwrite(*t, d - base, c.bytes, [&] {
      return "cp.async of " + std::to_string(bytes) + " bytes" + siteSuffix(*b->launch, sharedSite);
    });
  t->copies.push_back(c);
}

void cpAsyncCommit() { ++tlsThread->committedGroups; }

void cpAsyncWait(int32_t n) {
  ThreadCtx *t = tlsThread;
  BlockCtx *b = t->block;
  const uint32_t keep = uint32_t(std::max(n, 0));
  // Groups g with g + keep < committed are complete; copies are queued in
  // issue order, so their groups never decrease and the complete ones lead.
  size_t done = 0;
  while (done < t->copies.size() && uint64_t(t->copies[done].group) + keep < t->committedGroups) {
    const PendingCopy &c = t->copies[done++];
    const uintptr_t base = uintptr_t(b->shared);
    RaceShadow &race = b->worker->race;
    if (race.enabled() && c.dst >= base && c.dst - base + c.bytes <= b->sharedBytes)
      race.endAsync(uint32_t(c.dst - base), c.bytes);
    void *to = checkedSharedAccess(reinterpret_cast<void *>(c.dst), c.site, ~uint64_t(0));
    std::memcpy(to, c.data, c.bytes);
  }
  t->copies.erase(t->copies.begin(), t->copies.begin() + ptrdiff_t(done));
}

}  // namespace tk::sim
