// pointerParam: which kernel parameter a global access's address derives
// from, found statically in the LLVM IR, so the runtime can check the access
// against that parameter's buffer and not merely against any live allocation
// (docs/sim.md, "Provenance").
#pragma once

namespace llvm {
class Value;
}

namespace tk::sim {

// The index of the parameter of the access's kernel that `address` (a pointer
// or a vector of pointers) is derived from through GEPs, casts, selects, phis
// and vector element moves; -1 when it cannot be traced to exactly one
// parameter (a pointer loaded from memory, made from an integer, returned by
// a call, or merging two parameters), in which case the runtime falls back to
// checking the access against every live allocation. `kernel` is the function
// holding the access; its arguments are the launch's arguments.
int pointerParam(const llvm::Value *address, const llvm::Value *kernel);

}  // namespace tk::sim
