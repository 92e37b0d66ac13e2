// The NVPTX backend's late rewrite of predicated loads and stores (AccessPredicates.cpp).
#pragma once

namespace llvm {
class Module;
}

namespace tk::nvptx {

// After optimisation, moves the predicate computation of each masked store
// whose mask a masked load shares, and of each masked load in a loop whose
// mask is computed outside it, into the access's inline asm, so no predicate
// stays live from a masked load to its store or across a loop. The accesses
// are the calls NvptxTarget marked with their MaskedAccess; each is rendered
// again from it, with the predicate's computation in front.
void recomputeAccessPredicates(llvm::Module &m);

}  // namespace tk::nvptx
