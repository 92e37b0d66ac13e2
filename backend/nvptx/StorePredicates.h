// The NVPTX backend's late rewrite of predicated stores (StorePredicates.cpp).
#pragma once

namespace llvm {
class Module;
}

namespace tk::nvptx {

// Metadata NvptxTarget::maskedStore puts on its inline asm call.
inline constexpr const char *kMaskedStoreMD = "tk.masked_store";

// Moves each masked store's predicate computation into its inline asm, after
// optimisation, so no predicate stays live from a masked load to its store.
void recomputeStorePredicates(llvm::Module &m);

}  // namespace tk::nvptx
