// padTiles: a tile may have any positive size in the language (BLOCK_D =
// 781); layouts hold powers of two. This pass pads every dim to the next
// power of two and keeps the padding out of sight: loads, stores and atomics
// never touch it, reductions and reverse scans see their identity there,
// `dot` a zero along K, `sort` a key that goes last, `gather` an index taken
// modulo the real length, `histogram` no count from it, `assert` no failure
// and `print` no line. Element i of a padded tile is the real element i
// wherever i is inside the real shape in every dim, so shape ops that keep
// that correspondence (broadcast, trans, expand_dims, elementwise ops)
// change only their types; a `reshape` that does not is a `gather` of the
// flattened tile.
//
// Why a pass and not the front end: the IR keeps the shapes the user wrote
// (`--emit tir-raw`, tk-opt tests), and one file says everything padding
// means. It runs first, so every later pass and the lowering see powers of
// two only.
#include <cmath>
#include <limits>
#include <unordered_map>

#include "ir/passes/Passes.h"

namespace tk::ir {

namespace {

using Shape = std::vector<int64_t>;

int64_t product(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Row-major offset of `coords` in `shape`.
int64_t flatten(const Shape &coords, const Shape &shape) {
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + coords[d];
  return off;
}

Shape unflatten(int64_t off, const Shape &shape) {
  Shape c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = off % shape[d];
    off /= shape[d];
  }
  return c;
}

// The element that sorts after every other of its type (ascending, NaN
// last; bools unsigned), and the one before every other number.
Attr highest(ScalarKind k) {
  if (isFloat(k)) return std::numeric_limits<double>::quiet_NaN();
  if (k == ScalarKind::I1) return int64_t{1};
  return int64_t((uint64_t{1} << (bitWidth(k) - 1)) - 1);
}
Attr lowest(ScalarKind k) {
  if (isFloat(k)) return -std::numeric_limits<double>::infinity();
  if (k == ScalarKind::I1) return int64_t{0};
  return int64_t(-(uint64_t{1} << (bitWidth(k) - 1)));
}

// What a reduction of `kind` ignores. Floats: -0.0 for sums (x + -0.0 is x,
// -0.0 included), NaN for max/min and their args (they ignore NaN, and an
// arg-reduction's NaNs tie, the smaller index winning).
Attr reduceIdentity(ReduceKind kind, ScalarKind k) {
  const bool fp = isFloat(k);
  if (kind == ReduceKind::Sum || kind == ReduceKind::XorSum) return fp ? Attr(-0.0) : Attr(int64_t{0});
  if (fp) return std::numeric_limits<double>::quiet_NaN();
  return kind == ReduceKind::Max || kind == ReduceKind::Argmax ? lowest(k) : highest(k);
}
Attr scanIdentity(ScanKind kind, ScalarKind k) {
  if (kind == ScanKind::Prod) return isFloat(k) ? Attr(1.0) : Attr(int64_t{1});
  return isFloat(k) ? Attr(-0.0) : Attr(int64_t{0});
}

// Zero in the constant's spelling for type k (a float tile's constant
// holds a float value): what a dot's padding along K must hold.
Attr zeroOf(ScalarKind k) { return isFloat(k) ? Attr(0.0) : Attr(int64_t{0}); }

class TilePadder {
 public:
  explicit TilePadder(Function &fn) : fn_(fn) {}

  bool run() {
    retype(fn_.body);
    if (logical_.empty()) return false;
    rewrite(fn_.body);
    return true;
  }

 private:
  // ---- types: every tile value gets its padded shape; its shape as written
  // is remembered in logical_.
  void pad(Value *v) {
    const Type &t = v->type();
    if (!t.isTile()) return;
    Shape p = paddedShape(t.shape);
    if (p == t.shape) return;
    logical_[v] = t.shape;
    v->setType(t.withShape(p));
  }

  void retype(Block &block) {
    for (const auto &arg : block.arguments()) pad(arg.get());
    for (auto &op : block.ops()) {
      for (Value *r : op->results()) pad(r);
      for (auto &region : op->regions()) retype(*region);
      if (op->is(OpKind::Arange) && logical_.count(op->result()))
        op->setAttr("end", op->intAttr("start") + op->result()->type().shape[0]);
    }
  }

  const Shape &logical(const Value *v) const {
    auto it = logical_.find(v);
    return it == logical_.end() ? v->type().shape : it->second;
  }
  bool padded(const Value *v) const { return logical_.count(v) != 0; }
  bool paddedAlong(const Value *v, int d) const { return logical(v)[d] != v->type().shape[d]; }

  // ---- small builders
  Value *constant(Builder &b, Attr value, const Type &t) {
    return b.value(OpKind::Constant, {}, Type{t.elem, t.shape, nullptr}, {{"value", std::move(value)}});
  }
  Value *binary(Builder &b, OpKind k, Value *x, Value *y) { return b.value(k, {x, y}, x->type()); }
  Value *less(Builder &b, Value *x, Value *y) {
    return b.value(OpKind::Cmp, {x, y}, x->type().withScalar(ScalarKind::I1), {{"predicate", attrOf(CmpPredicate::Lt)}});
  }
  Value *select(Builder &b, Value *c, Value *x, Value *y) { return b.value(OpKind::Select, {c, x, y}, x->type()); }

  // A tile of `shape` (padded) that is true where the coordinate along each
  // dim in `dims` is inside `real`.
  Value *inside(Builder &b, const Shape &real, const Shape &shape, const std::vector<int> &dims) {
    Value *all = nullptr;
    const Type boolTile = Type::tile({ScalarKind::I1, 0}, shape);
    for (int d : dims) {
      if (real[d] == shape[d]) continue;
      const Type idx = Type::tile({ScalarKind::I32, 0}, {shape[d]});
      Value *i = b.value(OpKind::Arange, {}, idx, {{"start", int64_t{0}}, {"end", shape[d]}});
      Value *m = less(b, i, constant(b, real[d], idx));
      Shape s = {shape[d]};
      for (int k = d - 1; k >= 0; --k) {
        s.insert(s.begin(), 1);
        m = b.value(OpKind::ExpandDims, {m}, m->type().withShape(s), {{"axis", int64_t{0}}});
      }
      for (size_t k = d + 1; k < shape.size(); ++k) {
        s.push_back(1);
        m = b.value(OpKind::ExpandDims, {m}, m->type().withShape(s), {{"axis", int64_t(k)}});
      }
      if (s != shape) m = b.value(OpKind::Broadcast, {m}, boolTile);
      all = all ? binary(b, OpKind::And, all, m) : m;
    }
    return all;
  }
  Value *insideAll(Builder &b, const Value *v) {
    std::vector<int> dims(v->type().rank());
    for (int d = 0; d < v->type().rank(); ++d) dims[d] = d;
    return inside(b, logical(v), v->type().shape, dims);
  }
  Value *insideAlong(Builder &b, const Value *v, int axis) {
    return inside(b, logical(v), v->type().shape, {axis});
  }

  // `v` where inside, `fill` in the padding along `axis`.
  Value *fillAlong(Builder &b, Value *v, int axis, Attr fill) {
    return select(b, insideAlong(b, v, axis), v, constant(b, std::move(fill), v->type()));
  }

  // ---- the rewrites, one per kind of op that could see the padding
  void rewrite(Block &block) {
    for (auto it = block.ops().begin(); it != block.ops().end();) {
      Op &op = **it;
      for (auto &region : op.regions()) rewrite(*region);
      Builder b(&block, it);
      b.setLoc(op.loc());
      auto next = std::next(it);
      if (rewrite(b, op)) {
        block.erase(it);
      }
      it = next;
    }
  }

  // Returns true when `op` was replaced and is to be erased.
  bool rewrite(Builder &b, Op &op) {
    switch (op.kind()) {
      case OpKind::Load: maskAccess(b, op, 1); return false;
      case OpKind::Store: case OpKind::AtomicRmw: maskAccess(b, op, 2); return false;
      case OpKind::AtomicCas: maskAccess(b, op, 3); return false;
      case OpKind::Reduce: {
        const int axis = static_cast<int>(op.intAttr("axis"));
        Value *x = op.operand(0);
        if (paddedAlong(x, axis))
          op.setOperand(0, fillAlong(b, x, axis, reduceIdentity(op.enumAttr<ReduceKind>("kind"), x->type().elem.scalar)));
        return false;
      }
      case OpKind::Scan: {
        const int axis = static_cast<int>(op.intAttr("axis"));
        Value *x = op.operand(0);
        // A forward scan's padding comes after every real element.
        if (reversed(op) && paddedAlong(x, axis))
          op.setOperand(0, fillAlong(b, x, axis, scanIdentity(op.enumAttr<ScanKind>("kind"), x->type().elem.scalar)));
        return false;
      }
      case OpKind::ReduceCombine: case OpKind::ScanCombine: {
        const int axis = static_cast<int>(op.intAttr("axis"));
        if (paddedAlong(op.operand(0), axis) && (op.is(OpKind::ReduceCombine) || reversed(op))) flagCombine(b, op, axis);
        return false;
      }
      case OpKind::Dot: {
        const int kDims[2] = {1, 0};  // K is a's dim 1 and b's dim 0
        for (int i = 0; i < 2; ++i)
          if (paddedAlong(op.operand(i), kDims[i]) && !zeroPadded(op.operand(i)))
            op.setOperand(i, fillAlong(b, op.operand(i), kDims[i], zeroOf(op.operand(i)->type().elem.scalar)));
        return false;
      }
      case OpKind::Gather: return gather(b, op), false;
      case OpKind::Histogram: return histogram(b, op), false;
      case OpKind::Sort: {
        const int axis = static_cast<int>(op.intAttr("axis"));
        if (!paddedAlong(op.operand(0), axis)) return false;
        const bool descending = op.hasAttr("descending") && op.intAttr("descending") != 0;
        // Padding sorts after every real element: its key last in the sort's
        // direction, ties (a real key equal to it) broken by the next tiles,
        // ascending, where it is last again.
        for (size_t i = 0; i < op.numOperands(); ++i) {
          const ScalarKind k = op.operand(i)->type().elem.scalar;
          op.setOperand(i, fillAlong(b, op.operand(i), axis, i == 0 && descending ? lowest(k) : highest(k)));
        }
        return false;
      }
      case OpKind::Assert: {
        Value *c = op.operand(0);
        if (padded(c)) op.setOperand(0, select(b, insideAll(b, c), c, constant(b, int64_t{1}, c->type())));
        return false;
      }
      case OpKind::Print: {
        std::vector<int64_t> extent;
        bool any = false;
        for (Value *v : op.operands()) {
          any = any || padded(v);
          for (int64_t d : logical(v)) extent.push_back(d);
        }
        if (any) op.setAttr("extent", extent);
        return false;
      }
      case OpKind::Reshape: return reshape(b, op);
      default: return false;
    }
  }

  static bool reversed(const Op &op) { return op.hasAttr("reverse") && op.intAttr("reverse") != 0; }

  // Loads, stores and atomics: the padding's lanes are masked off (a masked
  // load gives zero there, or `other`).
  void maskAccess(Builder &b, Op &op, size_t maskIndex) {
    Value *ptr = op.operand(0);
    if (!padded(ptr)) return;
    Value *in = insideAll(b, ptr);
    if (op.numOperands() > maskIndex) {
      op.setOperand(maskIndex, binary(b, OpKind::And, op.operand(maskIndex), in));
    } else {
      std::vector<Value *> operands = op.operands();
      operands.push_back(in);
      op.setOperands(operands);
    }
  }

  // Whether `v`'s padding is known to hold zeros: a masked load with no
  // `other` or a zero one (maskAccess masked its padding), or a cast of one.
  static bool zeroPadded(const Value *v) {
    const Op *def = v->definingOp();
    while (def && def->is(OpKind::Cast)) def = def->operand(0)->definingOp();
    if (!def || !def->is(OpKind::Load) || def->numOperands() < 2) return false;
    if (def->numOperands() == 2) return true;
    const Op *other = def->operand(2)->definingOp();
    if (!other || !other->is(OpKind::Constant)) return false;
    const Attr &a = other->attrs().at("value");
    return (std::holds_alternative<int64_t>(a) && std::get<int64_t>(a) == 0) ||
           (std::holds_alternative<double>(a) && std::get<double>(a) == 0.0);
  }

  // gather: the index is taken modulo the real length of the axis (the
  // lowering takes it modulo the padded one, which is then a no-op).
  void gather(Builder &b, Op &op) {
    const int axis = static_cast<int>(op.intAttr("axis"));
    Value *src = op.operand(0), *idx = op.operand(1);
    if (!paddedAlong(src, axis)) return;
    Value *n = constant(b, logical(src)[axis], idx->type());
    Value *r = binary(b, OpKind::Rem, idx, n);  // in (-n, n), the sign of idx
    op.setOperand(1, binary(b, OpKind::Rem, binary(b, OpKind::Add, r, n), n));
  }

  // histogram: the input's padding counts nowhere, and neither do values
  // that fall in the padded bins.
  void histogram(Builder &b, Op &op) {
    Value *x = op.operand(0);
    const int64_t bins = op.intAttr("bins"), paddedBins = op.result()->type().shape[0];
    Value *count = padded(x) ? insideAll(b, x) : nullptr;
    if (paddedBins != bins) {
      Value *below = less(b, x, constant(b, bins, x->type()));
      count = count ? binary(b, OpKind::And, count, below) : below;
      op.setAttr("bins", paddedBins);
    }
    if (!count) return;
    if (op.numOperands() > 1)
      op.setOperand(1, binary(b, OpKind::And, op.operand(1), count));
    else
      op.setOperands({x, count});
  }

  // A reduction or reverse scan by a user's combine along a padded axis: the
  // combine has no identity to fill with, so each element carries whether it
  // is real, and the region combines (l, lv) with (r, rv) as
  //   lv && rv ? f(l, r) : (rv ? r : l),  flag lv || rv.
  // Padding sits at the end of the axis, so the real elements still combine
  // in index order.
  void flagCombine(Builder &b, Op &op, int axis) {
    const size_t n = op.numOperands();
    std::vector<Value *> operands = op.operands();
    operands.push_back(insideAlong(b, op.operand(0), axis));
    op.setOperands(operands);
    Type flagType = Type::tile({ScalarKind::I1, 0}, op.result(0)->type().shape);
    op.addResult(flagType);

    std::unique_ptr<Block> &slot = op.regions()[0];
    auto body = std::make_unique<Block>();
    body->setParentOp(&op);
    const Type flag = Type::scalar(ScalarKind::I1);
    std::vector<Value *> left, right;
    for (size_t i = 0; i < n; ++i) left.push_back(body->addArgument(slot->argument(i)->type()));
    Value *lv = body->addArgument(flag);
    for (size_t i = 0; i < n; ++i) right.push_back(body->addArgument(slot->argument(n + i)->type()));
    Value *rv = body->addArgument(flag);
    for (size_t i = 0; i < n; ++i) {
      slot->argument(i)->replaceAllUsesWith(left[i]);
      slot->argument(n + i)->replaceAllUsesWith(right[i]);
    }
    Op *yield = slot->ops().back().get();
    std::vector<Value *> combined = yield->operands();
    slot->ops().pop_back();
    for (auto &o : slot->ops()) o->setParentBlock(body.get());
    body->ops().splice(body->ops().end(), slot->ops());
    Builder in(body.get());
    in.setLoc(op.loc());
    Value *both = binary(in, OpKind::And, lv, rv);
    std::vector<Value *> out;
    for (size_t i = 0; i < n; ++i)
      out.push_back(select(in, both, combined[i], select(in, rv, right[i], left[i])));
    out.push_back(binary(in, OpKind::Or, lv, rv));
    in.create(OpKind::Yield, out, std::nullopt);
    slot = std::move(body);
  }

  // reshape: kept where element i of the padded operand is element i of the
  // padded result for every real i; otherwise the result is a gather of the
  // operand, flattened, at each result element's real source.
  bool reshape(Builder &b, Op &op) {
    Value *src = op.operand(0), *res = op.result();
    const Shape &s = logical(src), &t = logical(res), &p = src->type().shape, &q = res->type().shape;
    if (!padded(src) && !padded(res)) return false;
    bool same = true;
    for (int64_t i = 0; same && i < product(s); ++i)
      same = flatten(unflatten(i, s), p) == flatten(unflatten(i, t), q);
    if (same) return false;
    const int64_t np = product(p), nq = product(q);
    Value *flat = src;
    if (p.size() != 1) flat = b.value(OpKind::Reshape, {src}, src->type().withShape({np}));
    const Type idx = Type::tile({ScalarKind::I32, 0}, {nq});
    auto cst = [&](int64_t v) { return constant(b, v, idx); };
    Value *pos = b.value(OpKind::Arange, {}, idx, {{"start", int64_t{0}}, {"end", nq}});
    // Its coordinates in q, then its row-major offset in the real result...
    Value *linear = cst(0);
    int64_t stride = nq;
    for (size_t d = 0; d < q.size(); ++d) {
      stride /= q[d];
      Value *c = binary(b, OpKind::Rem, binary(b, OpKind::Div, pos, cst(stride)), cst(q[d]));
      linear = binary(b, OpKind::Add, binary(b, OpKind::Mul, linear, cst(t[d])), c);
    }
    // ...which is the real operand's; where that element sits in p.
    Value *from = cst(0);
    stride = product(s);
    for (size_t d = 0; d < s.size(); ++d) {
      stride /= s[d];
      Value *c = binary(b, OpKind::Rem, binary(b, OpKind::Div, linear, cst(stride)), cst(s[d]));
      from = binary(b, OpKind::Add, binary(b, OpKind::Mul, from, cst(p[d])), c);
    }
    Value *out = b.value(OpKind::Gather, {flat, from}, flat->type().withShape({nq}), {{"axis", int64_t{0}}});
    if (q.size() != 1) out = b.value(OpKind::Reshape, {out}, res->type());
    res->replaceAllUsesWith(out);
    return true;
  }

  Function &fn_;
  std::unordered_map<const Value *, Shape> logical_;
};

}  // namespace

bool padTiles(Function &fn) { return TilePadder(fn).run(); }

}  // namespace tk::ir
