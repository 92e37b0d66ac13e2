// Rendering a MaskedAccess as inline PTX and its constraints, and carrying it
// on the call as metadata.
#include "backend/nvptx/MaskedAccess.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>

namespace tk::nvptx {

using namespace llvm;

namespace {
constexpr const char *kMetadata = "tk.masked_access";

// "{$first, ..., $first+count-1}" (or "$first" for one register).
std::string operandList(unsigned first, unsigned count) {
  if (count == 1) return "$" + std::to_string(first);
  std::string s = "{";
  for (unsigned i = 0; i < count; ++i) s += (i ? ", $" : "$") + std::to_string(first + i);
  return s + "}";
}
}  // namespace

std::string MaskedAccess::constraints(bool predicated, const std::string &extra) const {
  const std::string word(1, constraint);
  std::string s;
  if (load) {
    for (unsigned i = 0; i < words; ++i) s += "=" + word + ",";
    s += predicated ? "l,b" : "l";
    for (unsigned i = 0; i < words; ++i) s += "," + std::to_string(i);
  } else {
    s += predicated ? "l,b" : "l";
    for (unsigned i = 0; i < words; ++i) s += "," + word;
  }
  if (policy) s += ",l";
  return s + extra + ",~{memory}";
}

std::string MaskedAccess::text(bool predicated) const {
  // The predicate is the operand after the pointer.
  return predicated ? render(1, "@$" + std::to_string(load ? words + 1 : 1) + " ") : render(0, "");
}

std::string MaskedAccess::textGuardedBy(const std::string &pred) const { return render(0, "@" + pred + " "); }

std::string MaskedAccess::render(unsigned p, const std::string &guard) const {
  if (load) {
    const unsigned policyOperand = 2 * words + 1 + p;
    return guard + opcode + " " + operandList(0, words) + ", [$" + std::to_string(words) + "]" +
           (policy ? ", $" + std::to_string(policyOperand) : "") + ";";
  }
  const unsigned first = 1 + p;
  return guard + opcode + " [$0], " + operandList(first, words) +
         (policy ? ", $" + std::to_string(first + words) : "") + ";";
}

void MaskedAccess::attachTo(CallInst &call) const {
  LLVMContext &ctx = call.getContext();
  Type *i32 = Type::getInt32Ty(ctx);
  auto num = [&](unsigned v) { return ConstantAsMetadata::get(ConstantInt::get(i32, v)); };
  call.setMetadata(kMetadata, MDNode::get(ctx, {num(load), MDString::get(ctx, opcode), num(words),
                                                MDString::get(ctx, std::string(1, constraint)), num(policy)}));
}

void MaskedAccess::detachFrom(CallInst &call) { call.setMetadata(kMetadata, nullptr); }

std::optional<MaskedAccess> MaskedAccess::of(const CallInst &call) {
  const MDNode *md = call.getMetadata(kMetadata);
  if (!md || md->getNumOperands() != 5) return std::nullopt;
  auto num = [&](unsigned i) -> std::optional<unsigned> {
    if (auto *c = mdconst::dyn_extract_or_null<ConstantInt>(md->getOperand(i))) return unsigned(c->getZExtValue());
    return std::nullopt;
  };
  auto *op = dyn_cast_or_null<MDString>(md->getOperand(1).get());
  auto *constraint = dyn_cast_or_null<MDString>(md->getOperand(3).get());
  const auto load = num(0), words = num(2), policy = num(4);
  if (!op || !constraint || constraint->getString().size() != 1 || !load || !words || !policy) return std::nullopt;
  MaskedAccess a;
  a.load = *load != 0;
  a.opcode = op->getString().str();
  a.words = *words;
  a.constraint = constraint->getString()[0];
  a.policy = *policy != 0;
  return a;
}

}  // namespace tk::nvptx
