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

static bool unused(const Op &op) {
  for (size_t i = 0; i < op.numResults(); ++i)
    if (op.result(i)->hasUses()) return false;
  return true;
}

// Erasing an op unlinks its operands (and those of its regions' ops) from
// their use-lists, so the ops it used may become dead in the same sweep.
static bool sweepBlock(Block &block) {
  bool changed = false;
  for (auto &op : block.ops())
    for (auto &region : op->regions()) changed |= sweepBlock(*region);
  for (auto it = block.ops().end(); it != block.ops().begin();) {
    --it;
    Op &op = **it;
    if (op.is(OpKind::Yield) || op.is(OpKind::Return) || hasEffects(op) || !unused(op)) continue;
    if (op.numResults() == 0 && op.regions().empty()) continue;  // kept for its effects
    it = block.erase(it);
    changed = true;
  }
  return changed;
}

bool eliminateDeadCode(Function &fn) {
  bool changed = false;
  // Ops in a region may keep outer ops alive; repeat until nothing moves.
  while (sweepBlock(fn.body)) changed = true;
  return changed;
}

}  // namespace tk::ir
