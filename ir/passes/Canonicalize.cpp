// canonicalize: folds ops whose operands are constants, applies algebraic
// identities (x+0, x*1, x*0 for ints, -(-x), ...), turns shape ops of splats
// and constants into splats and constants, and puts constants on the right
// of commutative ops so CSE sees one form. Repeats until nothing changes.
//
// Folding (ir/Fold.h, shared with the front end) follows the lowering's
// semantics exactly or not at all: ints wrap at their width, divisions by
// zero, MIN / -1 and overflowing shifts stay, f16/bf16 and transcendental
// functions (whose device versions differ from libm) are left alone, float
// compares with NaN are not folded, and i1 folds only its logical ops.
#include <cmath>
#include <limits>

#include "ir/Fold.h"
#include "ir/passes/Passes.h"

namespace tk::ir {
namespace {

// A constant operand: the `value` of a `constant` op (a splat for tiles).
struct Const {
  bool isFloat = false;
  int64_t i = 0;
  double f = 0;
};

// Sign-extends `v` from the width of `k` (i1 is 0 or 1).
int64_t normalize(int64_t v, ScalarKind k) { return wrapInt(v, bitWidth(k)); }

// Rounds `d` to the float type `k`; nullopt where the host cannot do it
// exactly as the device would (f16, bf16).
std::optional<double> roundTo(double d, ScalarKind k) { return roundFloat(d, k); }

std::optional<Const> constantOf(const Value *v) {
  const Op *def = v->definingOp();
  if (!def || !def->is(OpKind::Constant)) return std::nullopt;
  auto it = def->attrs().find("value");
  if (it == def->attrs().end()) return std::nullopt;
  const Type &t = v->type();
  if (t.isPtr()) return std::nullopt;
  if (auto *i = std::get_if<int64_t>(&it->second)) {
    if (!t.isInt()) return std::nullopt;
    return Const{false, normalize(*i, t.elem.scalar), 0};
  }
  if (auto *d = std::get_if<double>(&it->second)) {
    if (!t.isFloat()) return std::nullopt;
    // An f32 constant may hold a double the front end did not round.
    auto rounded = roundTo(*d, t.elem.scalar);
    return Const{true, 0, rounded ? *rounded : *d};
  }
  return std::nullopt;
}

// Passes may run unverified (tk-opt --no-verify): leave alone any op whose
// operands do not match Ops.def rather than read past them.
bool wellFormed(const Op &op) {
  const OpInfo &info = op.info();
  int n = static_cast<int>(op.numOperands());
  if (n < info.minOperands || (info.maxOperands >= 0 && n > info.maxOperands)) return false;
  for (const Value *v : op.operands())
    if (!v) return false;
  return true;
}

bool isIntConst(const Value *v, int64_t c) {
  auto k = constantOf(v);
  return k && !k->isFloat && k->i == normalize(c, v->type().elem.scalar);
}

bool isFloatConst(const Value *v, double c) {
  auto k = constantOf(v);
  return k && k->isFloat && k->f == c && std::signbit(k->f) == std::signbit(c);
}

bool isCommutative(OpKind k) {
  return k == OpKind::Add || k == OpKind::Mul || k == OpKind::And || k == OpKind::Or || k == OpKind::Xor ||
         k == OpKind::Max || k == OpKind::Min;
}

// What an op simplifies to: an existing value, a new constant, or a new
// splat of a scalar, all of the op's result type.
struct Rewrite {
  enum Kind { None, Existing, Constant, Splat } kind = None;
  Value *value = nullptr;  // Existing: the replacement; Splat: the scalar
  Attr constant;           // Constant

  static Rewrite existing(Value *v) { return {Existing, v, {}}; }
  static Rewrite intConst(int64_t v) { return {Constant, nullptr, Attr(v)}; }
  static Rewrite floatConst(double v) { return {Constant, nullptr, Attr(v)}; }
  static Rewrite splat(Value *scalar) { return {Splat, scalar, {}}; }
};

std::optional<FoldOp> foldOpOf(OpKind kind) {
  switch (kind) {
    case OpKind::Add: return FoldOp::Add;
    case OpKind::Sub: return FoldOp::Sub;
    case OpKind::Mul: return FoldOp::Mul;
    case OpKind::Div: return FoldOp::Div;
    case OpKind::Rem: return FoldOp::Rem;
    case OpKind::And: return FoldOp::And;
    case OpKind::Or: return FoldOp::Or;
    case OpKind::Xor: return FoldOp::Xor;
    case OpKind::Shl: return FoldOp::Shl;
    case OpKind::Shr: return FoldOp::Shr;
    case OpKind::Max: return FoldOp::Max;
    case OpKind::Min: return FoldOp::Min;
    default: return std::nullopt;
  }
}

std::optional<int64_t> foldIntBinary(OpKind kind, int64_t a, int64_t b, ScalarKind k) {
  auto op = foldOpOf(kind);
  if (!op) return std::nullopt;
  // i1 is a bool: only the logical ops have one obvious meaning.
  if (bitWidth(k) == 1 && *op != FoldOp::And && *op != FoldOp::Or && *op != FoldOp::Xor) return std::nullopt;
  IntFold f = foldInt(*op, a, b, bitWidth(k));
  if (f.status != IntFold::Ok) return std::nullopt;
  if (f.overflowed && (*op == FoldOp::Div || *op == FoldOp::Rem)) return std::nullopt;  // MIN / -1
  return f.value;
}

std::optional<double> foldFloatBinary(OpKind kind, double a, double b) {
  auto op = foldOpOf(kind);
  return op ? foldFloat(*op, a, b) : std::nullopt;
}

std::optional<bool> foldCmp(CmpPredicate p, const Const &a, const Const &b, ScalarKind k) {
  if (a.isFloat) {
    if (std::isnan(a.f) || std::isnan(b.f)) return std::nullopt;
    return foldCompare(p, a.f, b.f);
  }
  if (bitWidth(k) == 1 && p != CmpPredicate::Eq && p != CmpPredicate::Ne) return std::nullopt;
  return foldCompare(p, a.i, b.i);
}

Rewrite foldCast(const Const &c, const Type &from, const Type &to) {
  ScalarKind src = from.elem.scalar, dst = to.elem.scalar;
  // Casts to bool (x != 0 or truncation?) are the front end's to define.
  if (to.isBool()) return {};
  if (!c.isFloat && to.isInt()) {
    return Rewrite::intConst(normalize(c.i, dst));  // i1 holds 0/1, so it zero-extends
  }
  if (!c.isFloat && to.isFloat()) {
    auto r = roundTo(static_cast<double>(c.i), dst);
    // Ints beyond 2^53 lose precision on the way through double.
    if (!r || std::fabs(static_cast<double>(c.i)) > 9007199254740992.0) return {};
    return Rewrite::floatConst(*r);
  }
  if (c.isFloat && to.isFloat()) {
    if (!roundTo(0.0, src)) return {};
    auto r = roundTo(c.f, dst);
    return r ? Rewrite::floatConst(*r) : Rewrite{};
  }
  if (c.isFloat && to.isInt()) {
    if (!roundTo(0.0, src) || std::isnan(c.f)) return {};
    double t = std::trunc(c.f);
    int bits = bitWidth(dst);
    double lo = -std::ldexp(1.0, bits - 1), hi = std::ldexp(1.0, bits - 1);
    if (t < lo || t >= hi) return {};  // out of range: the device's answer is not ours to guess
    return Rewrite::intConst(static_cast<int64_t>(t));
  }
  return {};
}

Rewrite foldConstants(const Op &op) {
  const Type &rt = op.result()->type();
  std::vector<Const> cs;
  for (const Value *v : op.operands()) {
    auto c = constantOf(v);
    if (!c) return {};
    cs.push_back(*c);
  }
  if (cs.empty()) return {};
  switch (op.kind()) {
    case OpKind::Splat: case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::ConvertLayout:
      return cs[0].isFloat ? Rewrite::floatConst(cs[0].f) : Rewrite::intConst(cs[0].i);
    case OpKind::Cmp: {
      auto r = foldCmp(op.enumAttr<CmpPredicate>("predicate"), cs[0], cs[1], op.operand(0)->type().elem.scalar);
      return r ? Rewrite::intConst(*r ? 1 : 0) : Rewrite{};
    }
    case OpKind::Cast:
      // Constants fold to nearest even; one rounded toward zero stays a cast.
      if (op.hasAttr("rounding") && op.enumAttr<Rounding>("rounding") == Rounding::Rtz) return {};
      return foldCast(cs[0], op.operand(0)->type(), rt);
    default:
      break;
  }
  if (!op.hasTrait(OpTrait::Elementwise) || op.hasTrait(OpTrait::Math) || op.is(OpKind::Select)) return {};
  ScalarKind k = rt.elem.scalar;
  if (rt.isInt()) {
    if (cs.size() == 2) {
      auto r = foldIntBinary(op.kind(), cs[0].i, cs[1].i, k);
      return r ? Rewrite::intConst(*r) : Rewrite{};
    }
    int64_t a = cs[0].i;
    int bits = bitWidth(k);
    if (op.is(OpKind::Not)) return Rewrite::intConst(bits == 1 ? !a : normalize(~a, k));
    if (bits == 1) return {};
    if (op.is(OpKind::Neg)) return Rewrite::intConst(normalize(static_cast<int64_t>(0 - static_cast<uint64_t>(a)), k));
    if (op.is(OpKind::Abs)) return Rewrite::intConst(normalize(static_cast<int64_t>(a < 0 ? 0 - static_cast<uint64_t>(a) : a), k));
    return {};
  }
  if (!rt.isFloat() || !roundTo(0.0, k)) return {};
  std::optional<double> r;
  if (cs.size() == 2) r = foldFloatBinary(op.kind(), cs[0].f, cs[1].f);
  else if (op.is(OpKind::Neg)) r = -cs[0].f;
  else if (op.is(OpKind::Abs)) r = std::fabs(cs[0].f);
  else if (op.is(OpKind::Fma)) r = k == ScalarKind::F32 ? double(std::fmaf(float(cs[0].f), float(cs[1].f), float(cs[2].f)))
                                                          : std::fma(cs[0].f, cs[1].f, cs[2].f);
  if (!r) return {};
  auto rounded = roundTo(*r, k);
  return rounded ? Rewrite::floatConst(*rounded) : Rewrite{};
}

// Identities that hold for every value of the non-constant operand.
Rewrite simplify(const Op &op) {
  const Type &rt = op.result()->type();
  auto operand = [&](size_t i) { return op.operand(i); };
  auto same = [&](size_t i) { return operand(i)->type() == rt; };
  bool isInt = rt.isInt(), isFloat = rt.isFloat();
  int64_t allOnes = bitWidth(rt.elem.scalar) == 1 ? 1 : -1;
  switch (op.kind()) {
    case OpKind::Add:
      if (isInt && isIntConst(operand(1), 0)) return Rewrite::existing(operand(0));
      if (isFloat && isFloatConst(operand(1), -0.0)) return Rewrite::existing(operand(0));
      break;
    case OpKind::Sub:
      if (isInt && isIntConst(operand(1), 0)) return Rewrite::existing(operand(0));
      if (isFloat && isFloatConst(operand(1), 0.0)) return Rewrite::existing(operand(0));
      if (isInt && operand(0) == operand(1)) return Rewrite::intConst(0);
      break;
    case OpKind::Mul:
      if (isInt && isIntConst(operand(1), 1)) return Rewrite::existing(operand(0));
      if (isFloat && isFloatConst(operand(1), 1.0)) return Rewrite::existing(operand(0));
      if (isInt && isIntConst(operand(1), 0)) return Rewrite::intConst(0);
      break;
    case OpKind::Div:
      if (isInt && bitWidth(rt.elem.scalar) > 1 && isIntConst(operand(1), 1)) return Rewrite::existing(operand(0));
      if (isFloat && isFloatConst(operand(1), 1.0)) return Rewrite::existing(operand(0));
      break;
    case OpKind::And:
      if (isIntConst(operand(1), 0)) return Rewrite::intConst(0);
      if (isIntConst(operand(1), allOnes) || operand(0) == operand(1)) return Rewrite::existing(operand(0));
      break;
    case OpKind::Or:
      if (isIntConst(operand(1), 0) || operand(0) == operand(1)) return Rewrite::existing(operand(0));
      if (isIntConst(operand(1), allOnes)) return Rewrite::intConst(allOnes);
      break;
    case OpKind::Xor:
      if (isIntConst(operand(1), 0)) return Rewrite::existing(operand(0));
      if (operand(0) == operand(1)) return Rewrite::intConst(0);
      break;
    case OpKind::Shl:
    case OpKind::Shr:
      if (isIntConst(operand(1), 0)) return Rewrite::existing(operand(0));
      break;
    case OpKind::Max:
    case OpKind::Min:
      if (operand(0) == operand(1)) return Rewrite::existing(operand(0));
      break;
    case OpKind::Neg:
    case OpKind::Not: {
      const Op *inner = operand(0)->definingOp();
      if (inner && inner->kind() == op.kind() && wellFormed(*inner) && inner->operand(0)->type() == rt)
        return Rewrite::existing(inner->operand(0));
      break;
    }
    case OpKind::Select:
      if (operand(1) == operand(2)) return Rewrite::existing(operand(1));
      if (auto c = constantOf(operand(0))) return Rewrite::existing(operand(c->i ? 1 : 2));
      break;
    case OpKind::IntToPtr:
    case OpKind::PtrToInt:
    case OpKind::Bitcast: {
      // Reinterpreting casts lose no bits: a round trip (`p as i64 as *f16`
      // back to a *f16, bitcast there and back) is the value it started from.
      if (same(0)) return Rewrite::existing(operand(0));
      const Op *inner = operand(0)->definingOp();
      if (inner && (inner->is(OpKind::IntToPtr) || inner->is(OpKind::PtrToInt) || inner->is(OpKind::Bitcast)) &&
          wellFormed(*inner) && inner->operand(0)->type() == rt)
        return Rewrite::existing(inner->operand(0));
      break;
    }
    case OpKind::Cast:
    case OpKind::ConvertLayout:
    case OpKind::Broadcast:
      if (same(0)) return Rewrite::existing(operand(0));
      [[fallthrough]];
    case OpKind::ExpandDims: {
      // A shape op of a splat is a splat of the result's shape.
      const Op *inner = operand(0)->definingOp();
      if (!op.is(OpKind::Cast) && inner && inner->is(OpKind::Splat) && wellFormed(*inner))
        return Rewrite::splat(inner->operand(0));
      break;
    }
    default:
      break;
  }
  return {};
}

class Canonicalizer {
 public:
  explicit Canonicalizer(Function &fn) : fn_(fn) {}

  bool run() {
    bool changed = false;
    // Each round can expose more (a fold feeds the next op); the IR only
    // shrinks or swaps operands into a fixed order, so this terminates.
    for (int round = 0; round < 100 && runBlock(fn_.body); ++round) changed = true;
    return changed;
  }

 private:
  bool runBlock(Block &block) {
    bool changed = false;
    for (auto it = block.ops().begin(); it != block.ops().end();) {
      Op &op = **it;
      for (auto &region : op.regions()) changed |= runBlock(*region);
      if (op.numResults() != 1 || !op.hasTrait(OpTrait::Pure) || !op.regions().empty() || !wellFormed(op)) {
        ++it;
        continue;
      }
      // Constants to the right: `add c, x` becomes `add x, c`.
      if (isCommutative(op.kind()) && op.numOperands() == 2 && constantOf(op.operand(0)) && !constantOf(op.operand(1))) {
        Value *lhs = op.operand(0);
        op.setOperand(0, op.operand(1));
        op.setOperand(1, lhs);
        changed = true;
      }
      Rewrite rw = foldConstants(op);
      if (rw.kind == Rewrite::None) rw = simplify(op);
      Value *replacement = materialize(block, it, op, rw);
      if (!replacement) {
        ++it;
        continue;
      }
      if (replacement->nameHint().empty()) replacement->setNameHint(op.result()->nameHint());
      replaceAllUses(fn_, op.result(), replacement);
      it = block.erase(it);
      changed = true;
    }
    return changed;
  }

  // Creates what `rw` needs before `op` and returns the value replacing it.
  Value *materialize(Block &block, Block::iterator at, const Op &op, const Rewrite &rw) {
    const Type &rt = op.result()->type();
    Builder b(&block, at);
    b.setLoc(op.loc());
    switch (rw.kind) {
      case Rewrite::None:
        return nullptr;
      case Rewrite::Existing:
        return rw.value->type() == rt ? rw.value : nullptr;
      case Rewrite::Constant: {
        Attr value = rw.constant;
        if (rt.isFloat() && std::holds_alternative<int64_t>(value)) value = static_cast<double>(std::get<int64_t>(value));
        if (rt.isInt() && std::holds_alternative<double>(value)) return nullptr;
        if (auto *i = std::get_if<int64_t>(&value)) value = normalize(*i, rt.elem.scalar);
        return b.value(OpKind::Constant, {}, rt, {{"value", value}});
      }
      case Rewrite::Splat:
        if (!rt.isTile() || !rw.value->type().isScalar() || rw.value->type().elem != rt.elem) return nullptr;
        return b.value(OpKind::Splat, {rw.value}, rt);
    }
    return nullptr;
  }

  Function &fn_;
};

}  // namespace

bool canonicalize(Function &fn) { return Canonicalizer(fn).run(); }

}  // namespace tk::ir
