// Checks the invariants every pass may rely on: operand counts and types per
// op (the conventions listed in Ops.def), SSA dominance, valid layouts, a
// closing `return`. Run between passes (PassPipeline) and by `tk-opt`.
#pragma once

#include <string>

#include "ir/IR.h"

namespace tk::ir {

// Returns true when `fn` is well formed; otherwise false with one message per
// problem in `error` ("loc: error: 'op' op: what", a line naming the op),
// newline-separated.
bool verifyFunction(const Function &fn, std::string &error);
bool verifyModule(const Module &module, std::string &error);

}  // namespace tk::ir
