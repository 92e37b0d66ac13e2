// loopInvariantCodeMotion: moves the pure ops of a `for` body whose operands
// are all defined outside the loop to just before the `for`, innermost loops
// first, so each loop computes only what changes between its iterations.
#include <algorithm>
#include <set>

#include "ir/passes/Passes.h"

namespace tk::ir {

// Pure ops have no effects, so computing one earlier, or once when the loop
// runs zero times, changes nothing observable (integer division lowers to a
// safe divisor, lower/LowerToLLVM.cpp). Ops with regions (`for`, `if`) stay.
static bool movable(const Op &op) {
  return op.hasTrait(OpTrait::Pure) && !op.hasTrait(OpTrait::Terminator) && op.regions().empty();
}

// Moves the invariant ops of the body of the `for` at `loopIt` in front of it
// in `parent`, keeping their order. One forward sweep suffices: an op whose
// operands were hoisted before it sees them as defined outside.
static bool hoistOutOf(Block &parent, Block::iterator loopIt) {
  Block &body = *(*loopIt)->regions().front();
  // Values that may differ between iterations: the induction variable, the
  // carried values and the results of every op that stays in the body.
  std::set<const Value *> variant;
  for (const auto &arg : body.arguments()) variant.insert(arg.get());
  bool changed = false;
  for (auto it = body.ops().begin(); it != body.ops().end();) {
    Op &op = **it;
    bool invariant = movable(op) && std::none_of(op.operands().begin(), op.operands().end(),
                                                 [&](const Value *v) { return variant.count(v) != 0; });
    if (!invariant) {
      for (const Value *r : op.results()) variant.insert(r);
      ++it;
      continue;
    }
    auto next = std::next(it);
    parent.ops().splice(loopIt, body.ops(), it);
    op.setParentBlock(&parent);
    it = next;
    changed = true;
  }
  return changed;
}

// Inner loops first: what leaves an inner loop lands in the outer body and is
// considered again there, so an op rises as far as its operands allow. Loops
// inside an `if` are handled, but nothing leaves the `if` itself.
static bool hoistInBlock(Block &block) {
  bool changed = false;
  for (auto it = block.ops().begin(); it != block.ops().end(); ++it) {
    Op &op = **it;
    for (auto &region : op.regions()) changed |= hoistInBlock(*region);
    if (op.is(OpKind::For) && op.regions().size() == 1) changed |= hoistOutOf(block, it);
  }
  return changed;
}

bool loopInvariantCodeMotion(Function &fn) { return hoistInBlock(fn.body); }

}  // namespace tk::ir
