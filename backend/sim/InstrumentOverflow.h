// instrumentIndexOverflow: the compile half of sim:overflow. Every i32 add,
// sub, mul and shl, and every i64 -> i32 truncation, whose result flows into
// the address of a global access gets a call that reports the first one to
// wrap (docs/sim.md, "Index overflow"): the silent i32 overflow of
// `pid * stride` on a large tensor (triton-lang/triton#6748).
#pragma once

#include "backend/sim/SiteTable.h"

namespace llvm {
class Module;
}

namespace tk::sim {

// Runtime hooks the instrumented code calls (backend/sim/IndexOverflow.cpp):
//   void __tk_sim_index_i32(i32 a, i32 b, i32 site)   after `a OP b`, OP the site's IndexOp
//   void __tk_sim_index_trunc(i64 v, i32 site)        after `trunc i64 v to i32`
inline constexpr const char *kFnIndexI32 = "__tk_sim_index_i32";
inline constexpr const char *kFnIndexTrunc = "__tk_sim_index_trunc";

// Rewrites the module in place, before instrumentMemoryAccesses and before
// any optimisation (which would fold the index math into forms that no longer
// show where it wrapped), and appends one IndexOverflow site per checked
// instruction to `sites`. Only integer operations reached by a backwards walk
// from a global address through integer arithmetic, extensions and pointer
// arithmetic are checked: a hash or a random-number generator wraps on
// purpose, and its bits reach an address, if at all, through a mask, shift or
// remainder, where the walk stops. Returns the number of sites added.
unsigned instrumentIndexOverflow(llvm::Module &m, SiteTable &sites);

}  // namespace tk::sim
