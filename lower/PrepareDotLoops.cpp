// The two rewrites pipeline-dot-operands runs on a loop before it rings its
// dot operands (PipelineDotOperands.h), so that more of Triton's loops
// qualify: a `trans` of a load read only by dots becomes a load of the
// transposed pointers, and pointers the loop advances become functions of
// the induction variable.
#include <algorithm>
#include <functional>

#include "ir/MemoryHints.h"
#include "lower/Layouts.h"
#include "lower/PipelineDotOperands.h"

namespace tk::lower::detail {

using ir::Op;
using ir::OpKind;
using ir::Value;

// `trans(load(p, mask, other))` in the loop's body, read only by
// tensor-core dots (Triton's `tl.dot(a, tl.trans(x))`): the trans becomes a
// load of the transposed pointers, mask and other, which the pipeliner can
// ring like any dot operand (the trans between a load and its dot stopped
// that; copied through registers and staged for the dot in every iteration
// instead: attention's backward written with trans took 190 registers on
// sm_90a, 119 loaded this way). The original load keeps its other uses; if
// they are dots too, both become rings, and the second read of the same
// bytes hits L1/L2.
// Only where the pipeliner can ring the new load (a constant step, nothing
// in the body that blocks it, addresses from the induction variable and
// values from outside): otherwise it would only add a load.
bool loadTransposed(ir::Function &fn, Op &loop, const std::map<const Value *, std::vector<std::pair<Op *, size_t>>> &uses) {
  ir::Block &body = *loop.regions()[0];
  if (!pipelinableStep(loop)) return false;
  // Whether `v` is computed in the body from a carried value.
  std::function<bool(const Value *)> carried = [&](const Value *v) {
    const Op *def = v->definingOp();
    if (!def) return v != body.argument(0) && std::any_of(body.arguments().begin(), body.arguments().end(),
                                                          [&](const auto &a) { return a.get() == v; });
    if (def->parentBlock() != &body) return false;
    if (!def->regions().empty()) return true;  // what its regions yield: not followed
    return std::any_of(def->operands().begin(), def->operands().end(), carried);
  };
  std::vector<Op *> transposes;
  for (const auto &op : body.ops()) {
    if (!op->is(OpKind::Trans) || op->result()->type().rank() != 2) continue;
    const Op *load = op->operand(0)->definingOp();
    if (!load || !load->is(OpKind::Load) || load->parentBlock() != &body || ir::memoryHintsOf(*load).isVolatile ||
        std::any_of(load->operands().begin(), load->operands().end(), carried))
      continue;
    auto it = uses.find(op->result());
    bool dotsOnly = it != uses.end() && !it->second.empty();
    if (dotsOnly)
      for (const auto &[user, index] : it->second)
        dotsOnly = dotsOnly && user->is(OpKind::Dot) && index < 2 && pipelinedDot(*user, fn);
    if (dotsOnly) transposes.push_back(op.get());
  }
  for (Op *trans : transposes) {
    const Op &load = *trans->operand(0)->definingOp();
    ir::Builder b(&body, body.find(trans));
    b.setLoc(trans->loc());
    auto transposed = [&](Value *v) -> Value * {
      const ir::Type t = v->type().withShape({v->type().shape[1], v->type().shape[0]});
      const Op *def = v->definingOp();
      if (def && def->is(OpKind::Constant)) return b.value(OpKind::Constant, {}, t, def->attrs());
      if (def && def->is(OpKind::Splat)) return b.value(OpKind::Splat, {def->operand(0)}, t);
      return b.value(OpKind::Trans, {v}, t);
    };
    std::vector<Value *> operands;
    for (Value *o : load.operands()) operands.push_back(transposed(o));
    Value *loaded = b.value(OpKind::Load, operands, trans->result()->type(), load.attrs());
    loaded->setNameHint(trans->result()->nameHint());
    for (const auto &[user, index] : uses.at(trans->result())) user->setOperand(index, loaded);
    body.erase(body.find(trans));
  }
  return !transposes.empty();
}

// Pointers a loop advances by a fixed amount (Triton's tutorial 03:
// `a_ptrs += BLOCK_K * stride_ak`, carried from one iteration to the next)
// become functions of the induction variable: in the body, the carried
// argument's uses read `p0 + ((iv - lb) / step) * d` (in i64, as the
// repeated pointer additions were), so the loads through them are pure
// functions of iv and values from outside, which the pipeliner can issue
// iterations ahead. The carried chain stays for any use after the loop
// (LLVM drops it where there is none). Only in a loop the pipeliner can
// take, with a tensor-core dot to feed: elsewhere it would change nothing.
bool inductCarriedPointers(ir::Function &fn, Op &loop) {
  ir::Block &body = *loop.regions()[0];
  const std::optional<int64_t> pipelinable = pipelinableStep(loop);
  if (!pipelinable || std::none_of(body.ops().begin(), body.ops().end(), [&](const auto &op) {
        return op->is(OpKind::Dot) && pipelinedDot(*op, fn);
      }))
    return false;
  const int64_t step = *pipelinable;
  Op *yield = body.ops().back().get();
  Value *iv = body.argument(0);
  Value *count = nullptr;  // (iv - lb) / step, made once
  ir::Builder b(&body, body.ops().begin());  // each new op after the last
  bool changed = false;
  for (size_t j = 0; j + 1 < body.arguments().size() && j < yield->numOperands(); ++j) {
    Value *arg = body.argument(j + 1);
    const Op *next = yield->operand(j)->definingOp();
    if (!arg->type().elem.isPtr() || !next || !next->is(OpKind::AddPtr) || next->operand(0) != arg ||
        next->parentBlock() != &body)
      continue;
    Value *d = next->operand(1);
    if (d->definingOp() && d->definingOp()->parentBlock() == &body) continue;  // not invariant
    if (d == iv || std::any_of(body.arguments().begin(), body.arguments().end(),
                               [&](const auto &a) { return a.get() == d; }))
      continue;
    b.setLoc(next->loc());
    const ir::Type i64 = ir::Type::scalar(ir::ScalarKind::I64);
    if (!count) {
      Value *n = b.value(OpKind::Sub, {iv, loop.operand(0)}, iv->type());
      if (step != 1) n = b.value(OpKind::Div, {n, b.constInt(step, iv->type())}, iv->type());
      count = iv->type() == i64 ? n : b.value(OpKind::Cast, {n}, i64);
    }
    const ir::Type dt = d->type().withScalar(ir::ScalarKind::I64);
    Value *d64 = d->type() == dt ? d : b.value(OpKind::Cast, {d}, dt);
    Value *n = dt.isTile() ? b.value(OpKind::Splat, {count}, dt) : count;
    Value *at = b.value(OpKind::AddPtr, {loop.operand(3 + j), b.value(OpKind::Mul, {d64, n}, dt)}, arg->type());
    at->setNameHint(arg->nameHint());
    std::function<void(ir::Block &)> replace = [&](ir::Block &block) {
      for (const auto &op : block.ops()) {
        for (size_t k = 0; k < op->numOperands(); ++k)
          if (op->operand(k) == arg) op->setOperand(k, at);
        for (auto &region : op->regions()) replace(*region);
      }
    };
    replace(body);
    changed = true;
  }
  return changed;
}


}  // namespace tk::lower::detail
