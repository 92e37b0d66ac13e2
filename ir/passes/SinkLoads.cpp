// sinkLoads: moves each global `load` outside loops down its block to just
// before the first op that uses its value, touches memory or computes a
// pointer, past pure arithmetic only.
//
// Why: the order of independent ops in the PTX is the schedule ptxas starts
// from. A load written ahead of a long computation that does not need it
// (dropout's `x`, loaded before the Philox rounds that decide which elements
// survive, as Triton's tutorial writes it) reached ptxas ahead of that
// computation, and ptxas for sm_90 then kept the loaded values and more of
// the rounds' streams live at once: 46 registers (56 with no integer facts)
// where the same kernel with its load written after the rounds takes 32, as
// Triton's does (docs/perf.md, "Dropout's load"). At its first use
// the load is still ptxas's to hoist where latency is worth the registers.
//
// Where it stops, each measured over stdlib/ and tests/kernels/ (sm_80 and
// sm_90a, ptxas -v):
//  - at an op that computes a pointer: crossing one moves another access's
//    64-bit addresses above the load, live across it (a single-tile f16 dot:
//    40 -> 48 registers, an fp8 one 96 -> 128 on sm_90a);
//  - at a loop: loads inside a `for`, `while` or warp-specialised body stay
//    where the program wrote them (attention_bwd_dkdv on sm_80 took 160
//    registers instead of 132 with its body's loads sunk);
//  - at any op that is not pure (store, atomic, barrier, print, another
//    load, an op with regions), so the load reads the same bytes: the ops it
//    crosses neither read nor write memory. Volatile loads stay put.
#include <iterator>
#include <set>
#include <vector>

#include "ir/passes/Passes.h"

namespace tk::ir {

// Whether `op`, or an op inside its regions, uses one of `values`.
static bool usesAny(const Op &op, const std::set<const Value *> &values) {
  for (const Value *v : op.operands())
    if (values.count(v)) return true;
  for (const auto &region : op.regions())
    for (const auto &inner : region->ops())
      if (usesAny(*inner, values)) return true;
  return false;
}

static bool crossable(const Op &op) {
  if (!op.hasTrait(OpTrait::Pure) || op.hasTrait(OpTrait::Terminator) || !op.regions().empty()) return false;
  for (const Value *r : op.results())
    if (r->type().isPtr()) return false;
  return true;
}

static bool isLoop(const Op &op) {
  return op.is(OpKind::For) || op.is(OpKind::While) || op.is(OpKind::WarpSpecialize);
}

// Moves the load at `it` down `block` as far as it may go; returns whether
// it moved.
static bool sinkOne(Block &block, Block::iterator it) {
  const std::vector<Value *> produced = (*it)->results();
  const std::set<const Value *> results(produced.begin(), produced.end());
  auto stop = std::next(it);
  while (stop != block.ops().end() && crossable(**stop) && !usesAny(**stop, results)) ++stop;
  if (stop == std::next(it)) return false;
  block.ops().splice(stop, block.ops(), it);
  return true;
}

static bool sinkInBlock(Block &block) {
  bool changed = false;
  std::vector<Block::iterator> loads;  // collected first: a moved load is not visited again
  for (auto it = block.ops().begin(); it != block.ops().end(); ++it) {
    Op &op = **it;
    if (!isLoop(op))
      for (auto &region : op.regions()) changed |= sinkInBlock(*region);
    bool isVolatile = op.hasAttr("volatile") && op.intAttr("volatile") != 0;
    if (op.is(OpKind::Load) && !isVolatile) loads.push_back(it);
  }
  // Last first: a load stops at the next one only once that one has moved.
  for (auto l = loads.rbegin(); l != loads.rend(); ++l) changed |= sinkOne(block, *l);
  return changed;
}

bool sinkLoads(Function &fn) { return sinkInBlock(fn.body); }

}  // namespace tk::ir
