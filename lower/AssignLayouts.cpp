// AssignLayouts (see AssignLayouts.h): demand-driven layout assignment with
// rematerialisation of pure ops and conversions after loads.
#include "lower/AssignLayouts.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "lower/AxisInfo.h"
#include "lower/Layouts.h"

namespace tk::lower {

namespace {

using ir::LayoutRef;
using ir::Op;
using ir::OpKind;
using ir::Value;

bool isAnchor(const Op &op) {
  return op.is(OpKind::Load) || op.is(OpKind::Store) || op.is(OpKind::AtomicRmw) || op.is(OpKind::AtomicCas);
}

// The layout operand `i` of `op` must have for the op to produce `result`.
LayoutRef operandLayout(const Op &op, size_t i, const LayoutRef &result) {
  if (!op.operand(i)->type().isTile()) return nullptr;
  if (op.is(OpKind::ExpandDims)) return ir::Layout::slice(static_cast<int>(op.intAttr("axis")), result);
  return result;
}

class LayoutAssigner {
 public:
  explicit LayoutAssigner(ir::Function &fn) : fn_(fn), axis_(fn) {}

  void run() {
    std::vector<Op *> ops = fn_.walk();
    for (Op *op : ops)
      if (!op->regions().empty())
        throw std::logic_error("assign-layouts: ops with regions are not supported yet");
    chooseAnchors(ops);
    collectDemands(ops);
    rewrite(ops);
  }

 private:
  void chooseAnchors(const std::vector<Op *> &ops) {
    for (Op *op : ops) {
      if (!isAnchor(*op)) continue;
      Value *ptrs = op->operand(0);
      const ir::Type &t = ptrs->type();
      if (!t.isTile()) {
        op->setAttr("vec", int64_t(1));
        continue;
      }
      int dim = axis_.contiguousDim(ptrs);
      // Like Triton's coalescing: no wider per thread than needed to give
      // every thread of the block an element, so small tiles are spread over
      // all threads instead of replicated.
      int64_t threads = int64_t(fn_.numWarps()) * kWarpSize;
      const bool atomic = op->is(OpKind::AtomicRmw) || op->is(OpKind::AtomicCas);  // one element per instruction
      int vec = atomic ? 1
                       : static_cast<int>(std::min<int64_t>(axis_.vectorWidth(ptrs, dim),
                                                            std::max<int64_t>(1, t.numElements() / threads)));
      std::vector<int> order{dim};
      for (int d = t.rank() - 1; d >= 0; --d)
        if (d != dim) order.push_back(d);
      anchor_[op] = defaultBlockedLayout(t.shape, fn_.numWarps(), vec, order);
      op->setAttr("vec", int64_t(vec));
    }
  }

  // A reduction's operand layout for a result demanded in `want`: the parent
  // when `want` slices the reduced axis away (no data moves), else the
  // default blocked layout of the operand (and a conversion after).
  LayoutRef reduceInputLayout(const Op &op, const LayoutRef &want) {
    const int axis = static_cast<int>(op.intAttr("axis"));
    if (want && want->kind == ir::Layout::Kind::Slice && want->dim == axis) return want->parent;
    const ir::Type &t = op.operand(0)->type();
    std::vector<int> order;
    for (int d = t.rank() - 1; d >= 0; --d) order.push_back(d);
    const int64_t threads = int64_t(fn_.numWarps()) * kWarpSize;
    const int64_t eltBytes = std::max(1, ir::bitWidth(t.elem.scalar) / 8);
    const int vec = static_cast<int>(std::max<int64_t>(
        1, std::min({16 / eltBytes, t.shape.back(), t.numElements() / threads})));
    return defaultBlockedLayout(t.shape, fn_.numWarps(), vec, order);
  }

  // One reduction per operand layout its uses need; a use that wants the
  // result in another layout than the slice gets a conversion.
  void rewriteReduce(Op *op) {
    ir::Block *block = op->parentBlock();
    Value *source = op->operand(0);
    const int axis = static_cast<int>(op->intAttr("axis"));
    const ir::Type resultType = op->result()->type();
    if (!resultType.isTile()) {
      op->setOperand(0, lookup(source, reduceInputLayout(*op, nullptr)));
      return;
    }
    const auto &want = demands_[op->result()];
    if (want.empty()) {
      dead_.push_back(op);
      return;
    }
    std::vector<std::pair<LayoutRef, Value *>> reductions;  // by operand layout
    auto pos = std::next(block->find(op));
    for (const LayoutRef &w : want) {
      LayoutRef in = reduceInputLayout(*op, w);
      Value *reduced = nullptr;
      for (auto &[l, v] : reductions)
        if (ir::sameLayout(l, in)) reduced = v;
      ir::Builder b(block, pos);
      b.setLoc(op->loc());
      if (!reduced) {
        Op *target = reductions.empty() ? op : b.create(op->kind(), {source}, resultType, op->attrs());
        target->setOperand(0, lookup(source, in));
        target->result()->setType(resultType.withLayout(ir::Layout::slice(axis, in)));
        reduced = target->result();
        reductions.push_back({in, reduced});
      }
      Value *version = reduced;
      if (!ir::sameLayout(reduced->type().layout, w))
        version = b.value(OpKind::ConvertLayout, {reduced}, resultType.withLayout(w));
      versions_[op->result()].push_back({w, version});
    }
  }

  void demand(Value *v, const LayoutRef &l) {
    if (!l || !v->type().isTile()) return;
    auto &list = demands_[v];
    for (const LayoutRef &have : list)
      if (ir::sameLayout(have, l)) return;
    list.push_back(l);
  }

  // Walks backwards so every use has stated its demand before the def is seen.
  void collectDemands(const std::vector<Op *> &ops) {
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      Op *op = *it;
      if (isAnchor(*op) && anchor_.count(op)) {
        for (Value *v : op->operands()) demand(v, anchor_[op]);
        continue;
      }
      if (op->is(OpKind::Reduce)) {
        if (!op->result()->type().isTile()) demand(op->operand(0), reduceInputLayout(*op, nullptr));
        for (const LayoutRef &l : demands_[op->result()]) demand(op->operand(0), reduceInputLayout(*op, l));
        continue;
      }
      if (!op->result() || !op->result()->type().isTile()) continue;
      for (const LayoutRef &l : demands_[op->result()])
        for (size_t i = 0; i < op->numOperands(); ++i) demand(op->operand(i), operandLayout(*op, i, l));
    }
  }

  Value *lookup(Value *v, const LayoutRef &l) {
    if (!l || !v->type().isTile()) return v;
    for (auto &[have, value] : versions_[v])
      if (ir::sameLayout(have, l)) return value;
    throw std::logic_error("assign-layouts: no version of a value in a demanded layout");
  }

  void rewrite(const std::vector<Op *> &ops) {
    for (Op *op : ops) {
      ir::Block *block = op->parentBlock();
      if (isAnchor(*op) && anchor_.count(op)) {
        const LayoutRef &l = anchor_[op];
        for (size_t i = 0; i < op->numOperands(); ++i) op->setOperand(i, lookup(op->operand(i), l));
        if (op->result()) {
          op->result()->setType(op->result()->type().withLayout(l));
          versions_[op->result()].push_back({l, op->result()});
          auto pos = std::next(block->find(op));
          ir::Builder b(block, pos);
          b.setLoc(op->loc());
          for (const LayoutRef &want : demands_[op->result()]) {
            if (ir::sameLayout(want, l)) continue;
            Value *cv = b.value(OpKind::ConvertLayout, {op->result()}, op->result()->type().withLayout(want));
            versions_[op->result()].push_back({want, cv});
          }
        }
        continue;
      }
      if (op->is(OpKind::Reduce)) {
        rewriteReduce(op);
        continue;
      }
      if (!op->result() || !op->result()->type().isTile()) {
        for (size_t i = 0; i < op->numOperands(); ++i)
          if (op->operand(i)->type().isTile())
            throw std::logic_error("assign-layouts: a tile used by an op that is not an anchor");
        continue;
      }
      const auto &want = demands_[op->result()];
      if (want.empty()) {
        dead_.push_back(op);
        continue;
      }
      // The op itself takes the first layout; clones follow it for the rest.
      std::vector<Value *> originals = op->operands();
      auto pos = std::next(block->find(op));
      for (size_t k = 0; k < want.size(); ++k) {
        Op *target = op;
        if (k > 0) {
          ir::Builder b(block, pos);
          b.setLoc(op->loc());
          target = b.create(op->kind(), originals, op->result()->type(), op->attrs());
        }
        for (size_t i = 0; i < originals.size(); ++i)
          target->setOperand(i, lookup(originals[i], operandLayout(*op, i, want[k])));
        target->result()->setType(op->result()->type().withLayout(want[k]));
        target->result()->setNameHint(op->result()->nameHint());
        versions_[op->result()].push_back({want[k], target->result()});
      }
    }
    // Unused tile values: erase users before their operands.
    for (auto it = dead_.rbegin(); it != dead_.rend(); ++it) {
      ir::Block *block = (*it)->parentBlock();
      block->erase(block->find(*it));
    }
  }

  ir::Function &fn_;
  AxisInfoAnalysis axis_;
  std::map<Op *, LayoutRef> anchor_;
  std::map<Value *, std::vector<LayoutRef>> demands_;
  std::map<Value *, std::vector<std::pair<LayoutRef, Value *>>> versions_;
  std::vector<Op *> dead_;
};

}  // namespace

bool assignLayouts(ir::Function &fn) {
  LayoutAssigner(fn).run();
  return true;
}

}  // namespace tk::lower
