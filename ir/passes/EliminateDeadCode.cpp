// eliminateDeadCode: erases pure ops whose results nobody uses, walking each
// block backwards so a chain of dead ops goes in one sweep.
#include "ir/passes/Passes.h"

namespace tk::ir {

static bool sweepBlock(Block &block, std::map<const Value *, int> &uses) {
  bool changed = false;
  for (auto &op : block.ops())
    for (auto &region : op->regions()) changed |= sweepBlock(*region, uses);
  for (auto it = block.ops().end(); it != block.ops().begin();) {
    --it;
    Op &op = **it;
    if (!op.hasTrait(OpTrait::Pure) || !op.regions().empty() || !op.result() || uses[op.result()] > 0) continue;
    for (Value *v : op.operands()) --uses[v];
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
