// PipelineDotOperands: software pipelining of the operands of tensor-core
// dots over num_stages shared buffers (the function's `num_stages`
// attribute, from CompileOptions::numStages; below 2 the pass does nothing).
//
// In a `for` with a constant step whose body loads 2-D tiles that only
// tensor-core dots use (as a or b, or through a cast only they read: the
// slot then holds the loaded bytes), with masked-off elements zero (no `other`,
// or 0), and whose pointers and masks are pure functions of the induction
// variable and of values from outside the loop, each such load becomes a
// ring of S shared slots: S = num_stages for dots on wgmma (the function's
// `wgmma` attribute), which read the slot while they run; num_stages - 1,
// at least 2, for mma.sync, which reads its slot into registers within the
// iteration (Triton's sm_80 count, PipelineDotOperands.cpp):
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

#include <map>
#include <optional>

#include "ir/IR.h"

namespace tk::lower {

bool pipelineDotOperands(ir::Function &fn);

// On a `tma` kernel, host-descriptor loads in a loop whose dots run on wgmma
// become copies of the tensor memory accelerator instead (docs/internals.md,
// "Tensor memory accelerator"): per stage one thread expects the stage's
// bytes on the slot's mbarrier and copies the blocks in boxes of wgmma's
// swizzled layout; every thread waits for the slot's phase:
//
//   prologue   tma_init; tma_expect + tma_copy for iterations 0 .. A-1
//   body       tma_wait %slot, %phase; tma_expect + tma_copy of iteration
//              i + A; shared_load the slot for the dots
//   after      tma_release
//
// Every other host-descriptor load becomes a masked load.
//
// Turns each host-descriptor load (desc_load) into a masked load, except
// those tmaTakes (ExpandDescriptorLoads.cpp).
bool expandDescriptorLoads(ir::Function &fn);
// Expands one desc_load in place; returns the load that replaces it.
ir::Value *expandDescriptorLoad(ir::Op &op);

namespace detail {
// Whether pipeline-dot-operands fills a ring from desc_load `op` with the
// tensor memory accelerator: a `tma` kernel of two or more stages, `op` in
// a loop it can pipeline, reading a 2-D f16/bf16 block of a host descriptor
// parameter (base, sizes, strides the parameter's own, inner stride 1),
// every use an a or b of a dot in the body that wgmma runs, whose other
// operand is such a load too, a register tile or a tile from before the
// loop. fp8 blocks too where both operands are (before or after
// emulate-fp8's widening) and B is read as a trans of a block stored [N, K]:
// wgmma multiplies fp8 codes K-major only.
bool tmaTakes(const ir::Function &fn, const ir::Op &op);
// The op behind operand k of `dot` as a TMA ring would hold it: through
// emulate-fp8's widening of fp8 codes (wgmma reads the codes) and, for b,
// a 2-D trans (a ring of B^T, K-major); `transposed` says whether a trans
// was on the way. Null where the operand is a block argument.
const ir::Op *ringSource(const ir::Op &dot, size_t k, bool *transposed = nullptr);
// The bytes one stage of TMA copies of `loads` brings (tma_expect's): every
// block whole, out-of-bounds elements too (the hardware writes their zeros).
int64_t stageBytes(const std::vector<ir::Op *> &loads);
// The loop's constant, nonzero step when nothing in its body stops
// pipelining (a store, an atomic, a pipeline already); else nullopt.
std::optional<int64_t> pipelinableStep(const ir::Op &loop);
// A zero: a constant tile, or a splat of a constant scalar (a load's
// `other` the copies' zero fill matches).
bool isZeroConstant(const ir::Value *v);
using Uses = std::map<const ir::Value *, std::vector<std::pair<ir::Op *, size_t>>>;
// A tmaTakes load's tma_copy attributes: block, box, swizzle, operand and
// k_major (a B read through a trans, its ring K-major); nullopt where
// wgmma's layout of the operand has no swizzle.
std::optional<std::map<std::string, ir::Attr>> tmaCopyAttrs(const ir::Function &fn, const ir::Op &load,
                                                           const Uses &uses);
// The rewrites that prepare a loop (PrepareDotLoops.cpp).
bool loadTransposed(ir::Function &fn, ir::Op &loop,
                    const std::map<const ir::Value *, std::vector<std::pair<ir::Op *, size_t>>> &uses);
bool inductCarriedPointers(ir::Function &fn, ir::Op &loop);
}  // namespace detail

}  // namespace tk::lower
