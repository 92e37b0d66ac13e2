// A predicated global load or store as structure: NvptxTarget renders it as
// inline PTX, puts the structure on the call as metadata, and after LLVM's
// optimisation AccessPredicates renders it again with a recomputed guard.
// The asm's text is written from this structure, never read back.
#pragma once

#include <optional>
#include <string>

namespace llvm {
class CallInst;
class LLVMContext;
class MDNode;
}  // namespace llvm

namespace tk::nvptx {

struct MaskedAccess {
  bool load = true;
  std::string opcode;     // everything before the operands: "ld.global.nc.v4.b32"
  unsigned words = 1;     // the registers moved: a load's outputs, a store's values
  char constraint = 'r';  // their LLVM constraint: 'h', 'r' or 'l'
  bool policy = false;    // an L2 cache-policy operand follows (.L2::cache_hint)

  // The call's operands, in order: a load's `words` outputs, the pointer,
  // the predicate where `predicated`, a load's `words` inputs tied to its
  // outputs (what a masked-off lane keeps) or a store's `words` values, the
  // policy, then `extra` inputs (",r,l": AccessPredicates' leaves); the
  // memory clobber last.
  std::string constraints(bool predicated, const std::string &extra = "") const;
  // `[@$k ]ld... {$0, ...}, [$n][, $policy];` or `st... [$0], {...}[, $policy];`,
  // numbered as constraints() with the same `predicated`, guarded by the
  // predicate operand where `predicated`.
  std::string text(bool predicated) const;
  // The form without a predicate operand under `pred`, a predicate register
  // the asm computes itself ("%tkp2").
  std::string textGuardedBy(const std::string &pred) const;

  // The structure as the call's metadata, `!tk.masked_access !{i32 load,
  // !"opcode", i32 words, !"constraint", i32 policy}`, and back (nullopt
  // where the call has none: not a masked access).
  void attachTo(llvm::CallInst &call) const;
  static void detachFrom(llvm::CallInst &call);
  static std::optional<MaskedAccess> of(const llvm::CallInst &call);

 private:
  // The text with `p` (0 or 1) predicate operands, under `guard`.
  std::string render(unsigned p, const std::string &guard) const;
};

}  // namespace tk::nvptx
