// eliminateCommonSubexpressions: a pure op equal to an earlier one in the same
// block or an enclosing one (same kind, operands, attributes and result type)
// is replaced by it. Values defined inside a region are not visible after it.
#include "ir/passes/Passes.h"

namespace tk::ir {

// Attributes print canonically (sorted, shortest round-trip floats), so the
// printed form is a faithful key; NaNs compare equal, which is what we want.
static std::string keyOf(const Op &op) {
  std::string key = op.info().mnemonic;
  for (const Value *v : op.operands()) key += " " + std::to_string(reinterpret_cast<uintptr_t>(v));
  for (const auto &[k, a] : op.attrs()) key += " " + k + "=" + attrStr(a) + (std::holds_alternative<double>(a) ? "f" : "");
  return key + " : " + op.result()->type().str();
}

static bool cseBlock(Function &fn, Block &block, std::map<std::string, Value *> available) {
  bool changed = false;
  for (auto it = block.ops().begin(); it != block.ops().end();) {
    Op &op = **it;
    for (auto &region : op.regions()) changed |= cseBlock(fn, *region, available);
    if (!op.hasTrait(OpTrait::Pure) || !op.regions().empty() || !op.result()) {
      ++it;
      continue;
    }
    auto [found, inserted] = available.emplace(keyOf(op), op.result());
    if (inserted) {
      ++it;
      continue;
    }
    Value *earlier = found->second;
    if (earlier->nameHint().empty()) earlier->setNameHint(op.result()->nameHint());
    replaceAllUses(fn, op.result(), earlier);
    it = block.erase(it);
    changed = true;
  }
  return changed;
}

bool eliminateCommonSubexpressions(Function &fn) { return cseBlock(fn, fn.body, {}); }

}  // namespace tk::ir
