// Named barriers on the sim (PTX ISA, "bar.sync"): `bar.sync id, threads`
// waits until `threads` threads of the block have arrived at barrier `id`,
// the consumers' barrier in a warp-specialised kernel, which the producer
// warps never reach.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/sim/Runtime.h"

namespace tk::sim {

// The current thread arrives at barrier `id` (1..15) of an instance that
// waits for `threads` threads, and yields until the scheduler releases it;
// `site` names the call's line in errors (~0u: none). A bad id or count, or
// a count other than the one the instance's first arrival gave, fails the
// launch and the thread goes on.
void namedBarrierArrive(int32_t id, int32_t threads, uint32_t site);

// After thread `t` (which waits at a named barrier) yielded: when its
// barrier's count has arrived, resumes exactly the threads waiting at it
// and closes the instance.
void releaseNamedBarrier(Simulator::Worker &w, const ThreadCtx &t);

// Where the unfinished threads of a stuck block wait, those for which
// `skip` is false, grouped by place in order of their first thread: "96
// exited (first: thread 160), 32 wait at barrier 1 (64 threads) (f.tk:3:5)
// (first: thread 128)". `count` is set to the threads described.
std::string describeWaits(const BlockCtx &b, const std::vector<ThreadCtx> &threads,
                          const std::function<bool(const ThreadCtx &)> &skip, uint32_t &count);

// When the stuck block `b` has a named barrier some threads wait at: fails
// the launch naming the barrier, its count, its line, how many arrived and
// where the others are, and returns true.
bool reportStuckAtNamedBarrier(const BlockCtx &b, const std::vector<ThreadCtx> &threads);

}  // namespace tk::sim
