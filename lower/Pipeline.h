// The tile-IR pipeline from the front end's output to IR ready for lowering,
// as one readable list (Pipeline.cpp).
#pragma once

#include "ir/passes/Passes.h"

namespace tk::lower {

// canonicalize, cse, licm, cse, dce, canonicalize, dce, assign-layouts, cse, dce.
ir::PassPipeline tilePipeline();

}  // namespace tk::lower
