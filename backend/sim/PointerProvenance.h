// pointerProvenance: where a global access's address comes from, found
// statically in the LLVM IR — a kernel parameter, or one pointer made from
// an integer or loaded from memory — so the runtime can check the access
// against that buffer and not merely against any live allocation
// (docs/sim.md, "Provenance").
#pragma once

namespace llvm {
class Value;
}

namespace tk::sim {

struct Provenance {
  // The index of the parameter of the access's kernel the address derives
  // from, or -1.
  int param = -1;
  // Else, when the address derives from exactly one pointer made from an
  // integer (`inttoptr`, whose integer holds no traceable pointer) or loaded
  // from memory: that instruction. The runtime then checks the access
  // against the allocation holding the root's value.
  const llvm::Value *root = nullptr;
  bool rootLoaded = false;  // the root is a load (else an inttoptr)
};

// The source of `address` (a pointer or a vector of pointers), traced back
// through GEPs, casts, selects, phis and vector element moves, and through
// inttoptr into integer pointer arithmetic (add, sub, phi, select) down to a
// ptrtoint. Neither param nor root when the sources disagree (a select or
// phi of two different parameters or roots), or one of them is a call's
// result, a global, null, or a vector of loaded or integer-made pointers:
// the runtime falls back to checking against every live allocation.
// `kernel` is the function holding the access; its arguments are the
// launch's arguments.
Provenance pointerProvenance(const llvm::Value *address, const llvm::Value *kernel);

}  // namespace tk::sim
