// mbarriers on the sim. Their state lives in the barrier's 8 bytes of shared
// memory, as on a GPU, in the sim's own format (MbarrierState); the runtime
// reads and writes it directly, outside the race check and the counters: an
// mbarrier orders threads, it is not data they share. A phase completes when
// no arrival and no transaction byte is pending; the threads parked on that
// phase are then handed back to the block scheduler.
#include "backend/sim/Mbarrier.h"

#include <cstring>

namespace tk::sim {

namespace {

// MbarrierState::tag of an initialised barrier: the poison (0b11) and zeroed
// memory (0b00) are not one.
constexpr uint64_t kValidTag = 2;
constexpr uint64_t kMaxCount = (uint64_t(1) << 20) - 1;
constexpr uint64_t kMaxTx = (uint64_t(1) << 21) - 1;

MbarrierState loadState(const char *at) {
  MbarrierState s;
  std::memcpy(&s, at, sizeof s);
  return s;
}

void storeState(char *at, const MbarrierState &s) { std::memcpy(at, &s, sizeof s); }

std::string offsetName(uint32_t offset) { return "the mbarrier at shared offset " + hexAddress(offset); }

// "kernel K: OP (loc), block (x,y,z), thread t: WHY", the first fault of the launch.
void fault(ThreadCtx *t, const char *op, uint32_t site, const std::string &why) {
  LaunchCtx *l = t->block->launch;
  if (l->failed.load(std::memory_order_relaxed)) return;
  l->fail("kernel " + l->kernel->name + ": " + op + siteSuffix(*l, site) + ", " + threadWhere(t) + ": " + why);
}

// The barrier at `bar`, as a shared offset: false (the launch failed) when
// its 8 bytes are not in the block's shared memory or not 8-byte aligned.
bool locate(ThreadCtx *t, const void *bar, const char *op, uint32_t site, uint32_t &offset) {
  const BlockCtx *b = t->block;
  const uintptr_t a = uintptr_t(bar), base = uintptr_t(b->shared);
  if (a < base || a - base + sizeof(MbarrierState) > b->sharedBytes) {
    fault(t, op, site,
          "the mbarrier at " + hexAddress(a) + " is not in the block's " + std::to_string(b->sharedBytes) +
              " bytes of shared memory");
    return false;
  }
  offset = uint32_t(a - base);
  if (offset % sizeof(MbarrierState)) {
    fault(t, op, site, offsetName(offset) + " is not 8-byte aligned");
    return false;
  }
  return true;
}

// The initialised barrier at `bar`, or false (the launch failed).
bool validState(ThreadCtx *t, const void *bar, const char *op, uint32_t site, uint32_t &offset, MbarrierState &s) {
  if (!locate(t, bar, op, site, offset)) return false;
  s = loadState(t->block->shared + offset);
  if (s.tag == kValidTag) return true;
  fault(t, op, site, offsetName(offset) + " is not initialised (no mbarrier.init, or invalidated since)");
  return false;
}

// Completes the current phase when nothing is pending: the phase parity
// flips, the arrivals are expected afresh, and the threads parked on the
// completed phase go back to the scheduler's next round.
void completeIfDone(BlockCtx &b, uint32_t offset, MbarrierState &s) {
  if (s.pending != 0 || s.tx != 0) return;
  s.phase ^= 1;
  s.pending = s.count;
  Simulator::Worker &w = *b.worker;
  for (uint32_t j = 0; j < b.nthreads; ++j) {
    ThreadCtx &u = w.threads[j];
    if (u.wait != Wait::Mbarrier || u.parked.offset != offset || u.parked.parity == s.phase) continue;
    u.wait = Wait::None;
    w.next.push_back(j);
  }
}

}  // namespace

void mbarrierInit(void *bar, int32_t count, uint32_t site) {
  ThreadCtx *t = tlsThread;
  uint32_t offset;
  if (!locate(t, bar, "mbarrier.init", site, offset)) return;
  if (count < 1 || uint64_t(count) > kMaxCount) {
    fault(t, "mbarrier.init", site, "an arrival count of " + std::to_string(count) + " (want 1 .. 2^20 - 1)");
    return;
  }
  MbarrierState s{};
  s.count = s.pending = uint64_t(count);
  s.tag = kValidTag;
  storeState(t->block->shared + offset, s);
}

void mbarrierInval(void *bar, uint32_t site) {
  ThreadCtx *t = tlsThread;
  uint32_t offset;
  MbarrierState s;
  if (!validState(t, bar, "mbarrier.inval", site, offset, s)) return;
  storeState(t->block->shared + offset, MbarrierState{});
}

namespace {

// `bytes` more transaction bytes, then one arrival: arrive.expect_tx, and
// (with none) a plain arrive, under the name `op` in errors.
void arrive(void *bar, int32_t bytes, uint32_t site, const char *op) {
  ThreadCtx *t = tlsThread;
  uint32_t offset;
  MbarrierState s;
  if (!validState(t, bar, op, site, offset, s)) return;
  if (s.pending == 0) {
    // Only a phase still waiting for transaction bytes can have none.
    fault(t, op, site,
          "all " + std::to_string(s.count) + " arrivals of the current phase of " + offsetName(offset) +
              " have been made (it waits for " + std::to_string(s.tx) + " transaction bytes)");
    return;
  }
  if (bytes < 0 || s.tx + uint64_t(bytes) > kMaxTx) {
    fault(t, op, site,
          "expecting " + std::to_string(bytes) + " more bytes on " + offsetName(offset) + ", which already waits for " +
              std::to_string(s.tx) + ", overflows its transaction count");
    return;
  }
  s.tx += uint64_t(bytes);
  s.pending -= 1;
  completeIfDone(*t->block, offset, s);
  storeState(t->block->shared + offset, s);
}

}  // namespace

void mbarrierArriveExpectTx(void *bar, int32_t bytes, uint32_t site) {
  arrive(bar, bytes, site, "mbarrier.arrive.expect_tx");
}

void mbarrierArrive(void *bar, uint32_t site) { arrive(bar, 0, site, "mbarrier.arrive"); }

bool mbarrierCompleteTx(void *bar, uint32_t bytes, uint32_t site) {
  const char *op = "cp.async.bulk.tensor";
  ThreadCtx *t = tlsThread;
  uint32_t offset;
  MbarrierState s;
  if (!validState(t, bar, op, site, offset, s)) return false;
  if (bytes > s.tx) {
    fault(t, op, site,
          "the copy completes " + std::to_string(bytes) + " transaction bytes on " + offsetName(offset) +
              ", whose phase expects only " + std::to_string(s.tx) +
              " more (an mbarrier.arrive.expect_tx must announce them first)");
    return false;
  }
  s.tx -= bytes;
  completeIfDone(*t->block, offset, s);
  storeState(t->block->shared + offset, s);
  return true;
}

void mbarrierWait(void *bar, int32_t parity, uint32_t site) {
  const char *op = "mbarrier.try_wait.parity";
  ThreadCtx *t = tlsThread;
  uint32_t offset;
  MbarrierState s;
  if (!validState(t, bar, op, site, offset, s)) return;
  if (parity != 0 && parity != 1) {
    fault(t, op, site, "parity " + std::to_string(parity) + " (want 0 or 1)");
    return;
  }
  // The phase of parity p has completed iff the current phase's parity is not p.
  if (s.phase != uint64_t(parity)) return;
  t->parked = MbarrierWaiter{offset, uint32_t(parity), site};
  t->wait = Wait::Mbarrier;
  yieldToScheduler(t);
}

bool reportParkedOnMbarrier(const BlockCtx &b, const std::vector<ThreadCtx> &threads) {
  for (uint32_t i = 0; i < b.nthreads; ++i) {
    const ThreadCtx &t = threads[i];
    if (t.wait != Wait::Mbarrier) continue;
    LaunchCtx &l = *b.launch;
    const MbarrierState s = loadState(b.shared + t.parked.offset);
    const std::string why = s.tag != kValidTag
                                ? "(the mbarrier was invalidated)"
                                : "(" + std::to_string(s.pending) + " of " + std::to_string(s.count) +
                                      " arrivals pending, " + std::to_string(s.tx) + " transaction bytes outstanding)";
    const std::string at = t.parked.site == ~0u ? "" : l.program->sites.sites[t.parked.site].loc;
    l.fail("kernel " + l.kernel->name + ": mbarrier wait" + (at.empty() ? "" : " at " + at) + " in " + blockName(b) +
           ", warp " + std::to_string(t.warp) + ": the phase of parity " + std::to_string(t.parked.parity) +
           " never completes " + why);
    return true;
  }
  return false;
}

}  // namespace tk::sim
