// The metadata contract between the lowering and the sim, declared once:
// `!tk.loc !{!"file:line:col"}` names the .tk position of a memory access,
// barrier or warp-collective call (one MDString operand, ir::Location::str()),
// and, for a Target that asks (locatesIntegerArithmetic), of integer arithmetic,
// `!tk.shared !{}` marks a shared-memory access. The lowering writes both
// (FunctionLowering::tagGlobal/tagShared), the sim's instrumentation reads
// them (backend/sim/InstrumentMemory.cpp) to name lines in its diagnostics.
#pragma once

#include <llvm/IR/Instruction.h>
#include <llvm/IR/Metadata.h>

#include <string>

namespace tk::lower {

inline constexpr const char *kMdLoc = "tk.loc";
inline constexpr const char *kMdShared = "tk.shared";

// Attaches `!tk.loc !{!"loc"}` ("file:line:col").
inline void setSourceLoc(llvm::Instruction &i, const std::string &loc) {
  llvm::LLVMContext &c = i.getContext();
  i.setMetadata(kMdLoc, llvm::MDNode::get(c, {llvm::MDString::get(c, loc)}));
}

// The "file:line:col" of `!tk.loc`, or empty when the instruction has none.
inline std::string sourceLoc(const llvm::Instruction &i) {
  if (llvm::MDNode *n = i.getMetadata(kMdLoc))
    if (n->getNumOperands() > 0)
      if (auto *s = llvm::dyn_cast<llvm::MDString>(n->getOperand(0))) return s->getString().str();
  return {};
}
inline bool hasSourceLoc(const llvm::Instruction &i) { return i.getMetadata(kMdLoc) != nullptr; }

// Marks a shared-memory access (`!tk.shared !{}`).
inline void markShared(llvm::Instruction &i) { i.setMetadata(kMdShared, llvm::MDNode::get(i.getContext(), {})); }
inline bool isSharedAccess(const llvm::Instruction &i) { return i.getMetadata(kMdShared) != nullptr; }

}  // namespace tk::lower
