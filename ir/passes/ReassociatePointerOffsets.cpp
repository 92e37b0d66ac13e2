// reassociatePointerOffsets: `p + (u + w)`, where u is a row's start (a
// column broadcast along the tile's last dim) and w varies along it, becomes
// `(p + u) + w`, so each row's address is computed once and the elements of
// a row are constant offsets from it.
//
// Why: an i32 offset is sign-extended to 64 bits per element, and LLVM may
// not split sext(u + w) into sext(u) + sext(w) (the add may wrap), so
// `x + (r * D + c)` costs every element its own 64-bit add and keeps it live
// (softmax's row on sm_80: 16 registers of addresses, 39 in all; 28 this
// way, where Triton 3.9 takes 32). Written `x + r * D + c`, as Triton users
// usually do, the code is already this shape. The two differ only when
// u + w overflows i32, which is an out-of-range index (the bug sim:overflow
// reports): then the reassociated address is the one meant.
#include "ir/passes/Passes.h"

namespace tk::ir {

namespace {

// Whether `v` is a row's start: a tile of rank 2 or more broadcast from one
// whose last dim is 1, so each row holds one value. (Splats and 1-D tiles
// are left alone: `x + (pid * BLOCK + arange(BLOCK))` loses nothing to its
// one sext per vector, and splitting it cost dropout 8 registers on sm_80.)
bool rowStart(const Value *v) {
  const Op *def = v->definingOp();
  if (!def || !def->is(OpKind::Broadcast) || v->type().rank() < 2) return false;
  const Type &src = def->operand(0)->type();
  return src.isTile() && src.shape.back() == 1;
}

// Whether every element of `v` along its tile's last dim is one value.
bool uniformAlongLastDim(const Value *v) {
  const Op *def = v->definingOp();
  return rowStart(v) || (def && (def->is(OpKind::Splat) || def->is(OpKind::Constant)));
}

// One step on `addptr`: true when it took its offset's uniform half.
bool reassociate(Op &addptr) {
  const Op *add = addptr.operand(1)->definingOp();
  if (!add || !add->is(OpKind::Add) || add->numOperands() != 2 || !add->result()->type().isInt() ||
      !addptr.operand(0)->type().isTile())
    return false;
  for (size_t i = 0; i < 2; ++i) {
    Value *u = add->operand(i), *w = add->operand(1 - i);
    if (!rowStart(u) || uniformAlongLastDim(w)) continue;
    Block &block = *addptr.parentBlock();
    Builder b(&block, block.find(&addptr));
    b.setLoc(addptr.loc());
    Value *row = b.value(OpKind::AddPtr, {addptr.operand(0), u}, addptr.result()->type(), {});
    addptr.setOperand(0, row);
    addptr.setOperand(1, w);
    return true;
  }
  return false;
}

}  // namespace

// Whether `op` is in the body of a loop, at any depth.
static bool inLoop(const Op &op) {
  for (const Op *p = op.parentBlock()->parentOp(); p; p = p->parentBlock()->parentOp())
    if (p->is(OpKind::For) || p->is(OpKind::While)) return true;
  return false;
}

// Outside loops only: in a loop the row's start is usually invariant, licm
// hoists it, and a tile of 64-bit row pointers live across the loop can
// cost more than the 32-bit offsets it replaces (layernorm's chunk loops
// at D = 768 on sm_80: 32 registers -> 40).
bool reassociatePointerOffsets(Function &fn) {
  bool changed = false;
  for (Op *op : fn.walk())
    if (op->is(OpKind::AddPtr) && !inLoop(*op))
      while (reassociate(*op)) changed = true;
  return changed;
}

}  // namespace tk::ir
