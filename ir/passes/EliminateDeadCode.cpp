// eliminateDeadCode: erases pure ops whose results nobody uses, walking each
// block backwards so a chain of dead ops goes in one sweep. A `for` or `if`
// whose results are unused goes too when nothing in its regions has an effect.
#include "ir/passes/Passes.h"

namespace tk::ir {

static bool hasEffects(const Op &op) {
  if (op.is(OpKind::Yield)) return false;
  if (op.is(OpKind::For) || op.is(OpKind::If)) {
    for (const auto &region : op.regions())
      for (const auto &inner : region->ops())
        if (hasEffects(*inner)) return true;
    return false;
  }
  return !op.hasTrait(OpTrait::Pure);
}

static bool unused(const Op &op, std::map<const Value *, int> &uses) {
  for (const Value *r : op.results())
    if (uses[r] > 0) return false;
  return true;
}

// Drops the uses that `op` and everything in its regions make.
static void dropUses(const Op &op, std::map<const Value *, int> &uses) {
  for (Value *v : op.operands()) --uses[v];
  for (const auto &region : op.regions())
    for (const auto &inner : region->ops()) dropUses(*inner, uses);
}

static bool sweepBlock(Block &block, std::map<const Value *, int> &uses) {
  bool changed = false;
  for (auto &op : block.ops())
    for (auto &region : op->regions()) changed |= sweepBlock(*region, uses);
  for (auto it = block.ops().end(); it != block.ops().begin();) {
    --it;
    Op &op = **it;
    if (op.is(OpKind::Yield) || op.is(OpKind::Return) || hasEffects(op) || !unused(op, uses)) continue;
    if (op.numResults() == 0 && op.regions().empty()) continue;  // kept for its effects
    dropUses(op, uses);
    it = block.erase(it);
    changed = true;
  }
  return changed;
}

bool eliminateDeadCode(Function &fn) {
  std::map<const Value *, int> uses;
  for (Op *op : fn.walk())
    for (Value *v : op->operands()) ++uses[v];
  bool changed = false;
  // Ops in a region may keep outer ops alive; repeat until nothing moves.
  while (sweepBlock(fn.body, uses)) changed = true;
  return changed;
}

}  // namespace tk::ir
