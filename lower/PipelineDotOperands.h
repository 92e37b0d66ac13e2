// PipelineDotOperands: software pipelining of the operands of tensor-core
// dots over num_stages shared buffers (the function's `num_stages`
// attribute, from CompileOptions::numStages; below 2 the pass does nothing).
//
// In a `for` with a constant step whose body loads 2-D tiles that only
// tensor-core dots use (as a or b, or through a cast only they read: the
// slot then holds the loaded bytes), with masked-off elements zero (no `other`,
// or 0), and whose pointers and masks are pure functions of the induction
// variable and of values from outside the loop, each such load becomes a
// ring of num_stages shared slots:
//
//   prologue   async_copy the tiles of iterations 0 .. S-2 into slots 0 .. S-2,
//              one async_commit per iteration
//   body       async_wait {pending = S-2} (this iteration's slot is complete
//              and every thread is past the previous iteration), async_copy
//              iteration i+S-1 into the slot iteration i-1 read, async_commit,
//              shared_load the slot of iteration i for the dots
//   after      async_wait {pending = 0}
//
// A loop whose one dot can run on wgmma and keep its group in flight (the
// function is compiled for an arch with wgmma -- its `wgmma` attribute --
// f16/bf16 of a shape wgmma takes, a and b both pipelined,
// its accumulator carried from one iteration to the next and nowhere else)
// runs its copies S-2 iterations ahead when S >= 3 instead of S-1: then the
// slot iteration i refills is the one iteration i-2 read, so the dot may
// wait with `wgmma.wait_group 1` (lower/LowerPipeline.cpp,
// planWgmmaInFlight). Its async_wait keeps S-3 groups pending, its shared
// loads and copies carry `ahead = S-2`.
//
// Two rewrites come first, so that more of Triton's loops qualify: a
// pointer the loop carries and advances by a loop-invariant amount (`a_ptrs
// += BLOCK_K * stride_ak`) is read as p0 + ((iv - lb) / step) * d, and a
// `trans` of a load, read only by tensor-core dots, becomes a load of the
// transposed pointers (docs/internals.md, "Pipelined dot operands").
//
// Copies beyond the loop's end are masked off entirely (the mask is the load's
// and `iv < ub`), so they read nothing. A loop that stores or already
// pipelines keeps its loads: a load moved ahead of a store could read stale
// data. The slot read in each iteration is a new loop-carried i32.
#pragma once

#include "ir/IR.h"

namespace tk::lower {

bool pipelineDotOperands(ir::Function &fn);

}  // namespace tk::lower
