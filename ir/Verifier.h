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

// Tile IR from outside the process (a bundle's, a .tir file): parsed, then
// verified, so nothing lowers IR whose invariants were not checked. Null with
// `error` (the parser's message, or "invalid tile IR:" and the verifier's)
// when either fails.
std::unique_ptr<Module> parseVerifiedModule(const std::string &text, const std::string &filename, std::string &error);

}  // namespace tk::ir
