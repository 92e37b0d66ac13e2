// The NVPTX backend's late rewrite of predicated loads and stores (AccessPredicates.cpp).
#pragma once

namespace llvm {
class Module;
}

namespace tk::nvptx {

// Metadata NvptxTarget::maskedStore and maskedLoad put on their inline asm calls.
inline constexpr const char *kMaskedStoreMD = "tk.masked_store";
inline constexpr const char *kMaskedLoadMD = "tk.masked_load";

// After optimisation, moves the predicate computation of each masked store
// whose mask a masked load shares, and of each masked load in a loop whose
// mask is computed outside it, into the access's inline asm, so no predicate
// stays live from a masked load to its store or across a loop.
void recomputeAccessPredicates(llvm::Module &m);

}  // namespace tk::nvptx
