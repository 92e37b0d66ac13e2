// Layout rules AssignLayouts applies (see LayoutRules.h).
#include "lower/LayoutRules.h"

#include <algorithm>
#include <functional>

#include "lower/Layouts.h"
#include "tk/error.h"

namespace tk::lower {

using ir::LayoutRef;
using ir::Op;
using ir::OpKind;
using ir::Value;

// The layout a tile gets when nothing asks for one: row-major, as many
// elements per thread as 16 bytes hold but no more than it takes to give
// every thread an element.
LayoutRef defaultLayout(const ir::Type &t, int numWarps) {
  std::vector<int> order;
  for (int d = t.rank() - 1; d >= 0; --d) order.push_back(d);
  const int64_t threads = int64_t(numWarps) * kWarpSize;
  // A pointer tile takes the layout its accesses want: by its pointee's size.
  const int64_t eltBytes = t.isPtr() ? t.elem.pointee().bytes() : t.elem.bytes();
  const int vec =
      static_cast<int>(std::max<int64_t>(1, std::min({16 / eltBytes, t.shape.back(), t.numElements() / threads})));
  return defaultBlockedLayout(t.shape, numWarps, vec, order);
}

// The layout operand `i` of `op` must have for the op to produce `result`.
LayoutRef operandLayout(const Op &op, size_t i, const LayoutRef &result) {
  if (!op.operand(i)->type().isTile()) return nullptr;
  if (op.is(OpKind::ExpandDims)) return ir::Layout::slice(static_cast<int>(op.intAttr("axis")), result);
  // trans moves no data: its operand holds the same registers in the
  // permuted layout.
  if (op.is(OpKind::Trans)) return permutedLayout(result, ir::transOrder(op));
  return result;
}

// A scan or sort combines a thread's elements along the axis cheaply and
// every repetition of the block's footprint along it dearly (a lane scan or
// an exchange each): give each thread one contiguous run along the axis
// instead, the same threads and warps (a 1024-element row over 32 lanes: 32
// elements a thread, not 32 one-element repetitions).
LayoutRef alongOneRun(const LayoutRef &l, const std::vector<int64_t> &shape, int axis) {
  if (!l || l->kind != ir::Layout::Kind::Blocked) return l;
  const int64_t across = int64_t(l->threadsPerWarp[axis]) * l->warpsPerCTA[axis];
  if (int64_t(l->sizePerThread[axis]) * across >= shape[axis]) return l;
  std::vector<int> spt = l->sizePerThread;
  spt[axis] = static_cast<int>(shape[axis] / across);
  return ir::Layout::blocked(spt, l->threadsPerWarp, l->warpsPerCTA, l->order);
}

namespace {
// Whether some reduction along dim 1 of a 2-D tile, or a dot's a, reads
// (through up to 8 ops, and what loops and ifs yield) the result of a dot.
bool wantsDotRowsInWarps(ir::Function &fn) {
  std::function<bool(const Value *, int)> fromDot = [&](const Value *v, int depth) {
    const Op *def = v->definingOp();
    if (!def || depth > 8) return false;
    if (def->is(OpKind::Dot)) return true;
    for (const Value *o : def->operands())
      if (o->type().isTile() && fromDot(o, depth + 1)) return true;
    // A loop's or if's results: what its regions yield.
    for (const auto &region : def->regions())
      if (!region->ops().empty())
        for (const Value *o : region->ops().back()->operands())
          if (o->type().isTile() && fromDot(o, depth + 1)) return true;
    return false;
  };
  for (Op *op : fn.walk()) {
    if (op->is(OpKind::Reduce) && op->intAttr("axis") == 1 && op->operand(0)->type().rank() == 2 &&
        fromDot(op->operand(0), 0))
      return true;
    if (op->is(OpKind::Dot) && fromDot(op->operand(0), 0)) return true;
  }
  return false;
}
}  // namespace

void decideRowWarps(ir::Function &fn) {
  if (fn.wgmma() || wantsDotRowsInWarps(fn)) fn.setFlag("row_warps", true);
}

void requirePaddedTiles(ir::Function &fn) {
  auto check = [&](const ir::Value *v) {
    if (ir::paddedShape(v->type().shape) != v->type().shape)
      throw tk::InternalError("a tile of type " + v->type().str() + " reached layout assignment: run pad-tiles first");
  };
  for (ir::Op *op : fn.walk()) {
    for (const ir::Value *r : op->results()) check(r);
    for (const auto &region : op->regions())
      for (const auto &arg : region->arguments()) check(arg.get());
  }
}

// The tensor-core layout of the dot whose result `v` is (LayoutRules.h).
ir::LayoutRef accumulatorLayout(const ir::Value *v, const ir::Function &fn, int depth) {
  const ir::Op *def = v->definingOp();
  if (!def || !v->type().isTile() || depth > 16) return nullptr;
  if (ir::LayoutRef mma = tensorCoreLayout(*def, fn)) return mma;
  if (def->is(ir::OpKind::For)) {
    const ir::Block &body = *def->regions()[0];
    return body.ops().empty() ? nullptr : accumulatorLayout(body.ops().back()->operand(v->resultIndex()), fn, depth + 1);
  }
  if (!def->hasTrait(ir::OpTrait::Elementwise)) return nullptr;
  for (const ir::Value *operand : def->operands())
    if (operand->type().shape == v->type().shape)
      if (ir::LayoutRef l = accumulatorLayout(operand, fn, depth + 1)) return l;
  return nullptr;
}

// Two cases store straight from the accumulator (docs/perf.md, "The
// accumulator stored from its registers", "The matmul's epilogue without
// facts"):
//  - its registers hold runs of 2 or more along `dim` that the alignment
//    lets one vector store take: no exchange through shared memory, whose
//    128 values and 32 addresses per thread cost the 128 x 128 x 32 matmul
//    on sm_90a 169 registers against 162. A warp's 8-byte pairs still fill
//    whole 32-byte sectors (4 lanes per row).
//  - nothing is known contiguous (run-time strides): no layout is known to
//    coalesce, and the exchange cost the matmul without facts half its
//    compile time (0.21 s -> 0.11 s) and 20-27 KiB of shared memory. Only
//    while each thread holds at most 32 columns: the lowering computes a
//    tile's offsets before its stores, all live beside the accumulator
//    (128 x 256 with 8 warps, 64 columns, spilled 36 B on sm_90a).
// Scalar runs of a known contiguous dim keep the exchange and its
// coalesced stores.
ir::LayoutRef accumulatorStoreLayout(const ir::Op &store, int dim, int64_t vectorWidth, int64_t contiguity,
                                     const ir::Function &fn, int &vec) {
  ir::LayoutRef acc = accumulatorLayout(store.operand(1), fn);
  if (!acc || acc->kind != ir::Layout::Kind::Blocked || acc->order[0] != dim) return nullptr;
  const int pairs = static_cast<int>(std::min<int64_t>(acc->sizePerThread[dim], vectorWidth));
  const int columns = RegisterMap(acc, store.operand(1)->type().shape).count(dim);
  if (pairs < 2 && (contiguity > 1 || columns > 32)) return nullptr;
  vec = std::max(pairs, 1);
  return acc;
}

}  // namespace tk::lower
