// SpecializeWarps: on a `tma` kernel (every arch sm_90a) with two or more
// stages, the loop written `range(.., warp_specialize: true)` at the
// kernel's top level -- a dot loop whose operands are host-descriptor
// loads the tensor memory accelerator takes (detail::tmaTakes), or a
// persistent loop with one such dot loop in its body -- gets a producer
// warpgroup: one of its threads issues the copies into the rings, the
// kernel's own warps wait for each slot, run the dots and release the slot
// (SpecializeWarps.cpp has the IR). Any other loop is left to
// pipeline-dot-operands, which runs next.
#pragma once

#include "ir/IR.h"

namespace tk::lower {

bool specializeWarps(ir::Function &fn);

}  // namespace tk::lower
