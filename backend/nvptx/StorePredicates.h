// The NVPTX backend's late rewrite of predicated stores (StorePredicates.cpp).
#pragma once

namespace llvm {
class Module;
}

namespace tk::nvptx {

// Metadata NvptxTarget::maskedStore puts on its inline asm call.
inline constexpr const char *kMaskedStoreMD = "tk.masked_store";

// After optimisation, moves the predicate computation of each masked store
// whose mask another access shares into the store's inline asm, so no
// predicate stays live from a masked load to its store.
void recomputeStorePredicates(llvm::Module &m);

}  // namespace tk::nvptx
