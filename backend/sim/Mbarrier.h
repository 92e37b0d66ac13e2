// mbarriers on the sim (PTX ISA, "mbarrier"): init, inval, arrive, arrive.expect_tx,
// the complete_tx of a bulk copy, and try_wait.parity as a wait that parks
// the thread until the block scheduler may resume it.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/sim/Runtime.h"

namespace tk::sim {

// The sim's format of an mbarrier's 8 bytes of shared memory: the arrivals
// a phase expects, those still pending, the transaction bytes still
// outstanding, the parity of the phases completed so far, and a tag that
// tells an initialised barrier from the poison shared memory starts with
// (all ones) or zeroes.
struct MbarrierState {
  uint64_t count : 20, pending : 20, tx : 21, phase : 1, tag : 2;
};
static_assert(sizeof(MbarrierState) == 8, "an mbarrier is 8 bytes");

// The current thread's operations on the mbarrier at `bar`; `site` names
// the call's line in errors (~0u: none). Misuse fails the launch.
// init: `count` arrivals per phase, none pending yet, phase 0.
void mbarrierInit(void *bar, int32_t count, uint32_t site);
void mbarrierInval(void *bar, uint32_t site);
// `bytes` more transaction bytes for the current phase, then one arrival.
void mbarrierArriveExpectTx(void *bar, int32_t bytes, uint32_t site);
// One arrival, no transaction bytes (mbarrier.arrive): the same rules.
void mbarrierArrive(void *bar, uint32_t site);
// Returns once the phase of parity `parity` has completed: at once when the
// barrier's phase parity differs from it, else after the thread was parked.
void mbarrierWait(void *bar, int32_t parity, uint32_t site);
// A copy the current thread issued (cp.async.bulk.tensor at `site`) has
// written `bytes` of the phase's transactions. False when it failed the launch.
bool mbarrierCompleteTx(void *bar, uint32_t bytes, uint32_t site);

// When a thread of the stuck block `b` is parked on an mbarrier: fails the
// launch naming the wait, its line and why the phase never completes, and
// returns true.
bool reportParkedOnMbarrier(const BlockCtx &b, const std::vector<ThreadCtx> &threads);

}  // namespace tk::sim
