// The verifier's per-op rules (ir/OpRules.h): operand and result types and
// the attributes each op needs, in three groups: tile-shaping ops, value
// ops, memory ops.
#include "ir/OpRules.h"

#include <set>

#include "ir/Atomics.h"
#include "ir/MemoryHints.h"
#include "ir/PointerCasts.h"
#include "tk/gpu.h"

namespace tk::ir {

namespace {
// The widest vector assign-layouts makes: 16 bytes of i8.
constexpr int64_t kMaxVec = 16;


bool sameShapeAndLayout(const Type &a, const Type &b) { return a.shape == b.shape && sameLayout(a.layout, b.layout); }

std::string shapeStr(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out + "]";
}
}  // namespace

void OpRules::check(const Op &op) {
  switch (op.kind()) {
    case OpKind::Constant: case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::Arange:
    case OpKind::Splat: case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Trans:
    case OpKind::Reshape: case OpKind::Reduce: case OpKind::Scan: case OpKind::Dot: case OpKind::ConvertLayout:
      return tileOp(op);
    case OpKind::Gather: case OpKind::Sort: case OpKind::Histogram:
      return selectionOp(op);
    case OpKind::Load: case OpKind::Store: case OpKind::AtomicRmw: case OpKind::AtomicCas: case OpKind::Print:
    case OpKind::Assert: case OpKind::AsyncCopy: case OpKind::SharedLoad: case OpKind::AsyncWait:
      return memoryOp(op);
    case OpKind::DescLoad: case OpKind::TmaInit: case OpKind::TmaExpect: case OpKind::TmaCopy: case OpKind::TmaWait:
    case OpKind::TmaRelease: case OpKind::TmaAcquire: case OpKind::TmaConsumed: case OpKind::DescStore:
    case OpKind::TmaStore:
      return tmaOp(op);
    // Their operands and regions are checkControlFlow's.
    case OpKind::AsyncCommit: case OpKind::Barrier: case OpKind::Return: case OpKind::Yield:
    case OpKind::For: case OpKind::If: case OpKind::While:
      return;
    default:
      return valueOp(op);
  }
}

// A declared integer attribute (present, checked) within [lo, hi].
void OpRules::checkAxis(const Op &op, const char *name, int64_t lo, int64_t hi) {
  const int64_t v = op.intAttr(name);
  if (v < lo || v > hi)
    opError(op, std::string("'") + name + "' = " + std::to_string(v) + " is not in [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "]");
}

// All operands have the result's type, whose element `ok` accepts.
void OpRules::checkSameAsResult(const Op &op, bool (*ok)(const Type &), const char *what) {
  const Type &rt = op.result()->type();
  for (size_t i = 0; i < op.numOperands(); ++i)
    if (op.operand(i)->type() != rt) {
      opError(op, "operand " + std::to_string(i) + " has type " + op.operand(i)->type().str() + ", expected the result type " + rt.str());
      return;
    }
  if (!ok(rt)) opError(op, std::string("works on ") + what + ", not " + rt.str());
}

// assign-layouts' vector attributes of a load, store or async_copy, as the
// lowering relies on them: `vec` groups a thread's registers into runs (a
// width that does not divide their power-of-two count walks off the end),
// `mask_run` is positive. A bundle or .tir file may carry anything, so they
// are checked here, not trusted.
std::string OpRules::vectorAttrProblem(const Op &op) {
  if (op.hasAttr("vec")) {
    const int64_t v = op.intAttr("vec");
    if (!isPowerOfTwo(v) || v > kMaxVec)
      return "'vec' = " + std::to_string(v) + " must be a power of two from 1 to " + std::to_string(kMaxVec);
  }
  if (op.hasAttr("mask_run") && op.intAttr("mask_run") < 1)
    return "'mask_run' = " + std::to_string(op.intAttr("mask_run")) + " must be positive";
  return "";
}

// Constants, ids, shapes, reductions, scans and dot.
void OpRules::tileOp(const Op &op) {
  const Type *rt = op.result() ? &op.result()->type() : nullptr;
  auto operandType = [&](size_t i) -> const Type & { return op.operand(i)->type(); };
  switch (op.kind()) {
    case OpKind::Constant: {
      auto it = op.attrs().find("value");
      if (rt->isPtr()) return opError(op, "cannot make a pointer constant");
      if (rt->isFloat() && !std::holds_alternative<double>(it->second))
        return opError(op, "a " + rt->str() + " constant needs a float 'value'");
      if (rt->isInt()) {
        if (!std::holds_alternative<int64_t>(it->second)) return opError(op, "a " + rt->str() + " constant needs an integer 'value'");
        int64_t v = std::get<int64_t>(it->second);
        int bits = bitWidth(rt->elem.scalar);
        bool fits = bits == 1 ? (v == 0 || v == 1 || v == -1)
                    : bits == 64 ? true
                                 : (v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << bits));
        if (!fits) opError(op, "value " + std::to_string(v) + " does not fit " + scalarName(rt->elem.scalar));
      }
      return;
    }
    case OpKind::ProgramId:
    case OpKind::NumPrograms:
      checkAxis(op, "axis", 0, 2);
      if (*rt != Type::scalar(ScalarKind::I32)) opError(op, "result must be i32, not " + rt->str());
      return;
    case OpKind::Arange: {
      const int64_t start = op.intAttr("start"), end = op.intAttr("end");
      if (end <= start) return opError(op, "'end' must be greater than 'start'");
      if (rt->elem != ElemType{ScalarKind::I32, false} || rt->shape != std::vector<int64_t>{end - start})
        opError(op, "result must be tile<" + std::to_string(end - start) + "xi32>, not " + rt->str());
      return;
    }
    case OpKind::Splat:
      if (!operandType(0).isScalar()) return opError(op, "operand must be a scalar, not " + operandType(0).str());
      if (!rt->isTile() || rt->elem != operandType(0).elem)
        opError(op, "result must be a tile of " + operandType(0).str() + ", not " + rt->str());
      return;
    case OpKind::Broadcast: {
      const Type &src = operandType(0);
      if (!src.isTile() || !rt->isTile() || src.rank() != rt->rank() || src.elem != rt->elem)
        return opError(op, "must map a tile to a tile of the same rank and element: " + src.str() + " to " + rt->str());
      for (int i = 0; i < src.rank(); ++i)
        if (src.shape[i] != rt->shape[i] && src.shape[i] != 1)
          return opError(op, "cannot broadcast " + shapeStr(src.shape) + " to " + shapeStr(rt->shape) +
                                 " (dim " + std::to_string(i) + " is neither equal nor 1)");
      return;
    }
    case OpKind::ExpandDims: {
      const Type &src = operandType(0);
      if (!src.isTile()) return opError(op, "operand must be a tile, not " + src.str());
      checkAxis(op, "axis", 0, src.rank());
      const int64_t axis = op.intAttr("axis");
      if (axis < 0 || axis > src.rank()) return;
      std::vector<int64_t> want = src.shape;
      want.insert(want.begin() + axis, 1);
      if (rt->shape != want || rt->elem != src.elem)
        opError(op, "result must have shape " + shapeStr(want) + " and element " + src.elem.str() + ", not " + rt->str());
      return;
    }
    case OpKind::Trans: {
      const Type &src = operandType(0);
      if (!src.isTile()) return opError(op, "operand must be a tile, not " + src.str());
      const std::vector<int> order = transOrder(op);
      std::vector<bool> seen(src.rank(), false);
      bool perm = static_cast<int>(order.size()) == src.rank();
      for (int d : order)
        if (!perm || d < 0 || d >= src.rank() || seen[d])
          perm = false;
        else
          seen[d] = true;
      if (!perm)
        return opError(op, "'order' must be a permutation of the operand's " + std::to_string(src.rank()) + " dims");
      std::vector<int64_t> want;
      for (int d : order) want.push_back(src.shape[d]);
      if (rt->shape != want || rt->elem != src.elem)
        opError(op, "result must have shape " + shapeStr(want) + " and element " + src.elem.str() + ", not " + rt->str());
      return;
    }
    case OpKind::Reshape: {
      const Type &src = operandType(0);
      if (!src.isTile() || !rt->isTile() || src.elem != rt->elem || src.numElements() != rt->numElements())
        opError(op, "must keep the element type and count: " + src.str() + " to " + rt->str());
      return;
    }
    case OpKind::Reduce: {
      const Type &src = operandType(0);
      if (!src.isTile() || src.isPtr()) return opError(op, "operand must be a tile of numbers, not " + src.str());
      checkAxis(op, "axis", 0, src.rank() - 1);
      const int64_t axis = op.intAttr("axis");
      if (axis < 0 || axis >= src.rank()) return;
      const ReduceKind kind = op.enumAttr<ReduceKind>("kind");
      if (kind == ReduceKind::XorSum && (!src.isInt() || src.isBool()))
        return opError(op, "xor_sum works on integers, not " + src.str());
      std::vector<int64_t> want = src.shape;
      want.erase(want.begin() + axis);
      const ScalarKind elem = reduceResultElem(kind, src.elem.scalar);
      if (rt->shape != want || rt->elem != ElemType{elem, false})
        opError(op, "result must have shape " + shapeStr(want) + " and element " + scalarName(elem) + ", not " +
                        rt->str());
      if (rt->isTile() && rt->layout && src.layout &&
          !sameLayout(rt->layout, Layout::slice(static_cast<int>(axis), src.layout)))
        opError(op, "result layout must be the operand's sliced along the axis, not " + rt->layout->str());
      return;
    }
    case OpKind::Scan: {  // element as reduce's "sum" (prod too), keeping the shape and layout
      const Type &src = operandType(0);
      if (!src.isTile() || src.isPtr()) return opError(op, "operand must be a tile of numbers, not " + src.str());
      checkAxis(op, "axis", 0, src.rank() - 1);
      Type want = src.withScalar(reduceResultElem(ReduceKind::Sum, src.elem.scalar));
      if (rt->shape != want.shape || rt->elem != want.elem || !sameLayout(rt->layout, src.layout))
        opError(op, "result must be " + want.str() + ", not " + rt->str());
      return;
    }
    case OpKind::Dot: {  // a[M,K] @ b[K,N] + acc[M,N]; the result is the acc's type
      const Type &a = operandType(0), &b = operandType(1), &acc = operandType(2);
      // One element type, or two 8-bit float formats (e4m3 by e5m2, as fp8
      // tensor cores multiply them).
      const bool mixedFp8 = isFp8(a.elem.scalar) && isFp8(b.elem.scalar) && !a.isPtr() && !b.isPtr();
      if (a.rank() != 2 || b.rank() != 2 || a.isPtr() || (a.elem != b.elem && !mixedFp8))
        return opError(op, "operands must be 2-D tiles of one element type, not " + a.str() + " and " + b.str());
      if (a.shape[1] != b.shape[0])
        return opError(op, "inner dims differ: " + shapeStr(a.shape) + " and " + shapeStr(b.shape));
      const ScalarKind in = a.elem.scalar;
      const bool f32Acc = in == ScalarKind::F16 || in == ScalarKind::BF16 || in == ScalarKind::F32 || isFp8(in);
      const std::optional<ScalarKind> want = f32Acc ? std::optional(ScalarKind::F32)
                                             : in == ScalarKind::F64 ? std::optional(ScalarKind::F64)
                                             : in == ScalarKind::I8  ? std::optional(ScalarKind::I32)
                                                                     : std::nullopt;
      if (!want)
        return opError(op, std::string("works on f16, bf16, f8e4m3, f8e5m2, f32, f64 and i8 tiles, not ") + scalarName(in));
      if (acc.shape != std::vector<int64_t>{a.shape[0], b.shape[1]} || acc.elem != ElemType{*want, false})
        return opError(op, "the accumulator must be " + shapeStr({a.shape[0], b.shape[1]}) + " of " + scalarName(*want) +
                               ", not " + acc.str());
      if (*rt != acc) opError(op, "result must have the accumulator's type " + acc.str() + ", not " + rt->str());
      if (op.hasAttr("input_precision") && in != ScalarKind::F32)
        opError(op, std::string("input_precision applies to f32 operands, not ") + scalarName(in));
      return;
    }
    case OpKind::ConvertLayout:
      if (!operandType(0).isTile() || operandType(0).shape != rt->shape || operandType(0).elem != rt->elem)
        opError(op, "must keep the shape and element: " + operandType(0).str() + " to " + rt->str());
      return;
    default:
      return;
  }
}

// Elementwise arithmetic, math, comparisons, casts and pointer arithmetic.
void OpRules::valueOp(const Op &op) {
  static auto numeric = +[](const Type &t) { return !t.isPtr(); };
  static auto integer = +[](const Type &t) { return t.isInt(); };
  static auto floating = +[](const Type &t) { return t.isFloat(); };
  const Type *rt = op.result() ? &op.result()->type() : nullptr;
  auto operandType = [&](size_t i) -> const Type & { return op.operand(i)->type(); };
  switch (op.kind()) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
    case OpKind::Max: case OpKind::Min: case OpKind::Neg: case OpKind::Abs:
      return checkSameAsResult(op, numeric, "numbers");
    case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Shl: case OpKind::Shr: case OpKind::Not:
      return checkSameAsResult(op, integer, "integers");
    case OpKind::AxisHint: {
      static auto intOrPtr = +[](const Type &t) { return (t.isInt() && !t.isBool()) || t.isPtr(); };
      checkSameAsResult(op, intOrPtr, "integers and pointers");
      for (const char *key : {"multiple_of", "max_contiguous", "max_constancy"}) {
        auto it = op.attrs().find(key);
        if (it == op.attrs().end()) continue;
        const auto *v = std::get_if<std::vector<int64_t>>(&it->second);
        if (!v || v->size() != std::max<size_t>(1, rt->shape.size()))
          return opError(op, std::string("'") + key + "' must list one value per dim");
        for (int64_t x : *v)
          if (x < 1 || (x & (x - 1)))
            return opError(op, std::string("'") + key + "' values must be powers of two, not " + std::to_string(x));
      }
      return;
    }
    // fma and every math op (ir/Ops.def's TK_MATH_OP) map floats to their type.
    case OpKind::Fma:
#define TK_OP(E, M, MIN, MAX, RES, TRAITS, DOC)
#define TK_MATH_OP(E, M, ARITY, DOC) case OpKind::E:
#include "ir/Ops.def"
      return checkSameAsResult(op, floating, "floats");
    case OpKind::UMulHi:
      return checkSameAsResult(op, +[](const Type &t) {
        return t.elem.scalar == ScalarKind::I32 || t.elem.scalar == ScalarKind::I64;
      }, "i32 or i64");
    case OpKind::IsNan: case OpKind::IsInf: case OpKind::Signbit:
      if (!operandType(0).isFloat()) return opError(op, "needs a float operand, not " + operandType(0).str());
      if (!rt->isBool() || !sameShapeAndLayout(*rt, operandType(0)))
        opError(op, "result must be " + operandType(0).withScalar(ScalarKind::I1).str() + ", not " + rt->str());
      return;

    case OpKind::Cmp: {
      if (operandType(0) != operandType(1))
        return opError(op, "operands differ in type: " + operandType(0).str() + " and " + operandType(1).str());
      if (!rt->isBool() || !sameShapeAndLayout(*rt, operandType(0)))
        opError(op, "result must be " + operandType(0).withScalar(ScalarKind::I1).str() + ", not " + rt->str());
      return;
    }
    case OpKind::Select:
      if (!operandType(0).isBool() || !sameShapeAndLayout(operandType(0), *rt))
        return opError(op, "condition must be " + rt->withScalar(ScalarKind::I1).str() + ", not " + operandType(0).str());
      for (size_t i = 1; i < 3; ++i)
        if (operandType(i) != *rt)
          return opError(op, "operand " + std::to_string(i) + " has type " + operandType(i).str() + ", expected the result type " + rt->str());
      return;
    case OpKind::Cast: {
      const Type &src = operandType(0);
      if (!sameShapeAndLayout(src, *rt)) return opError(op, "must keep the shape and layout: " + src.str() + " to " + rt->str());
      if (src.isPtr() != rt->isPtr())
        opError(op, "cannot cast between pointers and numbers (int_to_ptr, ptr_to_int do): " + src.str() + " to " + rt->str());
      else if (src.isPtr() && src.elem != rt->elem)
        opError(op, "cannot cast one pointer type to another: " + src.str() + " to " + rt->str());
      else if (op.hasAttr("rounding") && !isNarrowingFloatCast(src.elem.scalar, rt->elem.scalar))
        opError(op, "'rounding' applies to a float cast to a narrower float (not fp8), not " + src.str() + " to " +
                        rt->str());
      return;
    }
    case OpKind::IntToPtr:
    case OpKind::PtrToInt:
    case OpKind::Bitcast:
      if (std::string bad = checkPointerCast(op); !bad.empty()) opError(op, bad);
      return;
    case OpKind::AddPtr:
      if (!rt->isPtr() || operandType(0) != *rt)
        return opError(op, "operand 0 and the result must be the same pointer type; have " + operandType(0).str() + " and " + rt->str());
      if (!operandType(1).isInt() || operandType(1).isBool() || !sameShapeAndLayout(operandType(1), *rt))
        opError(op, "offset must be an integer of shape " + shapeStr(rt->shape) + ", not " + operandType(1).str());
      return;
    default:
      return;
  }
}

// gather, sort, histogram: elements picked, reordered or counted.
void OpRules::selectionOp(const Op &op) {
  const Type *rt = op.result() ? &op.result()->type() : nullptr;
  auto operandType = [&](size_t i) -> const Type & { return op.operand(i)->type(); };
  switch (op.kind()) {
    case OpKind::Gather: {
      const Type &src = operandType(0), &idx = operandType(1);
      if (!src.isTile() || !idx.isTile() || src.rank() != idx.rank())
        return opError(op, "needs a tile and an index tile of the same rank, not " + src.str() + " and " + idx.str());
      if (!idx.isInt() || idx.isBool() || idx.isPtr()) return opError(op, "the index must be a tile of integers, not " + idx.str());
      checkAxis(op, "axis", 0, src.rank() - 1);
      const int64_t axis = op.intAttr("axis");
      for (int d = 0; d < src.rank(); ++d)
        if (d != axis && src.shape[d] != idx.shape[d])
          return opError(op, "the index must have the tile's size in every dim but the axis, not " + idx.str());
      if (rt->shape != idx.shape || rt->elem != src.elem)
        opError(op, "result must be " + Type{src.elem, idx.shape, nullptr}.str() + ", not " + rt->str());
      return;
    }
    case OpKind::Histogram: {
      const Type &x = operandType(0);
      if (!x.isTile() || x.rank() != 1 || !x.isInt() || x.isBool() || x.isPtr())
        return opError(op, "counts a 1-D tile of integers, not " + x.str());
      if (op.numOperands() == 2 && (operandType(1).shape != x.shape || !operandType(1).isBool()))
        return opError(op, "the mask must be a tile of i1 of the input's shape, not " + operandType(1).str());
      checkAxis(op, "bins", 1, int64_t{1} << 20);
      const Type want = Type::tile({ScalarKind::I32, false}, {op.intAttr("bins")});
      if (rt->shape != want.shape || rt->elem != want.elem) opError(op, "result must be " + want.str() + ", not " + rt->str());
      return;
    }
    case OpKind::Sort: {
      const Type &first = operandType(0);
      for (size_t i = 0; i < op.numOperands(); ++i) {
        const Type &t = operandType(i);
        if (!t.isTile() || t.isPtr() || t.shape != first.shape)
          return opError(op, "operands must be tiles of numbers of one shape, not " + t.str());
        if (i >= op.numResults() || op.result(i)->type().shape != t.shape || op.result(i)->type().elem != t.elem)
          return opError(op, "result " + std::to_string(i) + " must have operand " + std::to_string(i) + "'s type " + t.str());
      }
      if (op.numResults() != op.numOperands()) return opError(op, "needs one result per operand");
      checkAxis(op, "axis", 0, first.rank() - 1);
      return;
    }
    default:
      return;
  }
}

// Loads, stores, atomics, print/assert and the pipelined-operand ops.
void OpRules::memoryOp(const Op &op) {
  const Type *rt = op.result() ? &op.result()->type() : nullptr;
  auto operandType = [&](size_t i) -> const Type & { return op.operand(i)->type(); };
  switch (op.kind()) {
    case OpKind::Load:
    case OpKind::Store: {
      const Type &ptr = operandType(0);
      if (!ptr.isPtr()) return opError(op, "operand 0 must be a pointer or a tile of pointers, not " + ptr.str());
      Type pointee = ptr.withElem(ptr.elem.pointee());
      bool isLoad = op.is(OpKind::Load);
      if (isLoad && *rt != pointee) return opError(op, "result must be " + pointee.str() + ", not " + rt->str());
      size_t maskIndex = isLoad ? 1 : 2;
      if (!isLoad && operandType(1) != pointee)
        return opError(op, "stored value must be " + pointee.str() + ", not " + operandType(1).str());
      if (op.numOperands() > maskIndex) {
        const Type &mask = operandType(maskIndex);
        if (!mask.isBool() || !sameShapeAndLayout(mask, ptr))
          return opError(op, "mask must be " + ptr.withScalar(ScalarKind::I1).str() + ", not " + mask.str());
      }
      if (isLoad && op.numOperands() > 2 && operandType(2) != pointee)
        return opError(op, "'other' must be " + pointee.str() + ", not " + operandType(2).str());
      if (std::string bad = checkMemoryHints(op); !bad.empty()) return opError(op, bad);
      if (std::string bad = vectorAttrProblem(op); !bad.empty()) return opError(op, bad);
      return;
    }
    case OpKind::AtomicRmw:
    case OpKind::AtomicCas: {
      const Type &ptr = operandType(0);
      if (!ptr.isPtr()) return opError(op, "operand 0 must be a pointer or a tile of pointers, not " + ptr.str());
      Type pointee = ptr.withElem(ptr.elem.pointee());
      if (pointee.isPtr()) return opError(op, "works on numbers in memory, not on the pointers of " + ptr.str());
      if (*rt != pointee) return opError(op, "result must be " + pointee.str() + ", not " + rt->str());
      const bool cas = op.is(OpKind::AtomicCas);
      for (size_t i = 1; i < (cas ? 3u : 2u); ++i)
        if (operandType(i) != pointee)
          return opError(op, "operand " + std::to_string(i) + " must be " + pointee.str() + ", not " + operandType(i).str());
      // atomic_rmw's mask is operand 2; compare-and-swap's is 3 (pad-tiles
      // masks a padded tile's padding with it).
      if (op.numOperands() > (cas ? 3u : 2u)) {
        const Type &mask = operandType(cas ? 3 : 2);
        if (!mask.isBool() || !sameShapeAndLayout(mask, ptr))
          return opError(op, "mask must be " + ptr.withScalar(ScalarKind::I1).str() + ", not " + mask.str());
      }
      const ScalarKind k = ptr.elem.scalar;
      const std::optional<AtomicKind> kind = cas ? std::nullopt : std::optional(op.enumAttr<AtomicKind>("kind"));
      if (!atomicTakes(kind, k))
        opError(op, std::string(cas ? "compare-and-swap" : "atomic " + std::string(enumName(*kind))) +
                        " works on " + atomicTypesText(kind) + ", not " + scalarName(k));
      return;
    }
    case OpKind::Print:
    case OpKind::Assert: {  // assert's operand is bool
      if (op.is(OpKind::Assert) && !operandType(0).isBool())
        opError(op, "condition must be i1 or a tile of i1, not " + operandType(0).str());
      if (op.is(OpKind::Print) && op.hasAttr("extent")) {  // pad-tiles': the real shapes of the tile operands
        const auto *extent = std::get_if<std::vector<int64_t>>(&op.attrs().at("extent"));
        size_t at = 0;
        bool ok = true;
        for (size_t i = 0; ok && i < op.numOperands(); ++i)
          for (int64_t d : operandType(i).shape) ok = at < extent->size() && (*extent)[at] >= 1 && (*extent)[at++] <= d;
        if (!ok || at != extent->size())
          opError(op, "'extent' must list, for each tile operand, a size from 1 to its own per dim");
      }
      return;
    }
    case OpKind::AsyncCopy:
    case OpKind::SharedLoad: {
      const bool copy = op.is(OpKind::AsyncCopy);
      const Type &slot = operandType(copy ? 1 : 0);
      if (slot != Type::scalar(ScalarKind::I32)) return opError(op, "the slot must be a scalar i32, not " + slot.str());
      Type tile = copy ? operandType(0).withElem(operandType(0).elem.pointee()) : *rt;
      if (tile.rank() != 2 || tile.isPtr() || tile.isBool())
        return opError(op, "works on a 2-D tile of numbers, not " + (copy ? operandType(0) : *rt).str());
      if (copy && !operandType(0).isPtr()) return opError(op, "operand 0 must be a tile of pointers");
      if (copy && op.numOperands() > 2) {
        const Type &mask = operandType(2);
        if (!mask.isBool() || !sameShapeAndLayout(mask, operandType(0)))
          return opError(op, "mask must be " + operandType(0).withScalar(ScalarKind::I1).str() + ", not " + mask.str());
      }
      if (std::string bad = vectorAttrProblem(op); !bad.empty()) return opError(op, bad);
      const int64_t buffer = op.intAttr("buffer"), stages = op.intAttr("stages");
      if (buffer < 0 || stages < 1) return opError(op, "needs integer attributes 'buffer' (>= 0) and 'stages' (>= 1)");
      // Every op naming a ring agrees on its slot's shape and element and its stages.
      auto [it, fresh] = rings_.emplace(buffer, std::make_pair(tile.withLayout(nullptr), stages));
      if (!fresh && (it->second.first != tile.withLayout(nullptr) || it->second.second != stages))
        opError(op, "ring " + std::to_string(buffer) + " has slots of " + it->second.first.str() + " in " +
                        std::to_string(it->second.second) + " stages elsewhere, not " + tile.withLayout(nullptr).str() +
                        " in " + std::to_string(stages));
      return;
    }
    case OpKind::AsyncWait:
      if (op.intAttr("pending") < 0) opError(op, "needs an integer 'pending' attribute (>= 0)");
      return;
    default:
      return;
  }
}

}  // namespace tk::ir
