// emulateFp8: the 8-bit floats (f8e4m3, f8e5m2) are storage types. No GPU
// computes on them elementwise (Hopper's fp8 arithmetic is its tensor cores),
// so, as Triton and MLIR's arith-emulate-unsupported-floats do, every op that
// computes on one is rewritten to compute on f32: its fp8 operands are cast
// to f32 and its fp8 results come back through a cast to their type. What
// only moves bytes keeps them (loads, stores, selects, shape and layout ops,
// gathers, control flow), and a conversion between fp8 and anything but f32
// goes through f32. A `dot` of fp8 tiles takes them as f16 instead (exact:
// f16 holds every e4m3 and e5m2 value), so it runs on the f16 tensor cores
// of every arch; Hopper's fp8 MMA is not used yet. The lowering then meets
// fp8 only in those ops and in casts to and from f32 (lower/Fp8.cpp).
#include "ir/passes/Passes.h"

namespace tk::ir {

namespace {

bool fp8(const Value *v) { return !v->type().isPtr() && isFp8(v->type().elem.scalar); }

// Ops that move fp8 values without computing on them.
bool movesBytes(OpKind k) {
  switch (k) {
    case OpKind::Constant: case OpKind::Splat: case OpKind::Broadcast: case OpKind::ExpandDims:
    case OpKind::ConvertLayout: case OpKind::Trans: case OpKind::Reshape: case OpKind::Select:
    case OpKind::Bitcast: case OpKind::AxisHint: case OpKind::Load: case OpKind::DescLoad: case OpKind::DescStore: case OpKind::Store:
    case OpKind::Gather: case OpKind::AsyncCopy: case OpKind::SharedLoad: case OpKind::For: case OpKind::If:
    case OpKind::While: case OpKind::Yield: case OpKind::Return:
      return true;
    default: return false;
  }
}

Value *castTo(Builder &b, Value *v, ScalarKind k) { return b.value(OpKind::Cast, {v}, v->type().withScalar(k)); }

// Rewrites `op` (at `it` in `block`) to compute on f32 (a dot: on f16).
void widen(Block &block, Block::iterator it) {
  Op &op = **it;
  Builder before(&block, it);
  before.setLoc(op.loc());
  const ScalarKind wide = op.is(OpKind::Dot) ? ScalarKind::F16 : ScalarKind::F32;
  for (size_t i = 0; i < op.operands().size(); ++i)
    if (fp8(op.operand(i))) op.setOperand(i, castTo(before, op.operand(i), wide));
  Builder after(&block, std::next(it));
  after.setLoc(op.loc());
  for (Value *r : op.results()) {
    if (!fp8(r)) continue;
    const ScalarKind k = r->type().elem.scalar;
    r->setType(r->type().withScalar(ScalarKind::F32));
    Op *back = after.create(OpKind::Cast, {r}, r->type().withScalar(k));
    r->replaceAllUsesWith(back->result());
    back->setOperand(0, r);  // the cast itself reads the widened value
  }
}

// A cast with an fp8 side whose other side is not f32: two casts through f32
// (exact for f16, bf16 and fp8 to f32; one rounding from f32 down).
void splitCast(Block &block, Block::iterator it) {
  Op &op = **it;
  Builder b(&block, it);
  b.setLoc(op.loc());
  op.setOperand(0, castTo(b, op.operand(0), ScalarKind::F32));
}

bool emulateIn(Block &block) {
  bool changed = false;
  for (auto it = block.ops().begin(); it != block.ops().end(); ++it) {
    Op &op = **it;
    for (auto &region : op.regions()) changed |= emulateIn(*region);
    const auto operands = op.operands();
    const auto results = op.results();
    const bool touches = std::any_of(operands.begin(), operands.end(), fp8) || std::any_of(results.begin(), results.end(), fp8);
    if (!touches || movesBytes(op.kind())) continue;
    if (op.is(OpKind::Cast)) {
      const ScalarKind from = op.operand(0)->type().elem.scalar, to = op.result()->type().elem.scalar;
      if (from == ScalarKind::F32 || to == ScalarKind::F32 || from == to) continue;
      splitCast(block, it);
    } else {
      widen(block, it);
    }
    changed = true;
  }
  return changed;
}

}  // namespace

bool emulateFp8(Function &fn) { return emulateIn(fn.body); }

}  // namespace tk::ir
