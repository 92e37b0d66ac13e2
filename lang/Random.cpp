// rand, randn, randint: Triton's counter-based random numbers, Philox with 10
// rounds, expanded here into ordinary integer and float tile IR ops (as
// Triton's random.py is a library in its own language). Every element is a
// pure function of (seed, offset), so the stream does not depend on the
// block size, the number of warps or the device: the sim and the GPU run the
// same integer IR and get the same bits for randint and rand.
//
// The stream, as Triton defines it. i32 offsets take Philox 4x32: the key is
// the seed as 64 bits (signed seeds sign-extend), low word k0 and high word
// k1. i64 offsets take Philox 4x64: the key is (seed, 0). The counter is
// (offset, 0, 0, 0); a round maps (c0, c1, c2, c3) to
//   (hi(B*c2) ^ c1 ^ k0, lo(B*c2), hi(A*c0) ^ c3 ^ k1, lo(A*c0))
// with double-width unsigned products, then adds the Weyl constants to the
// key. randint is word 0 of the result; rand maps it to [0, 1); randn takes
// words 0 and 1 through Box-Muller.
#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

namespace {
// Philox's multipliers and key increments (Salmon et al., SC'11, as Triton
// and Random123 use them), and Triton's uint-to-uniform scale rounded to
// f32: the largest f32 s with f32(INT_MAX) * s < 1, so rand never returns 1.
struct Variant {
  ScalarKind word;
  uint64_t roundA, roundB, keyA, keyB;
  double uniformScale;
};
constexpr Variant kPhilox4x32 = {ScalarKind::I32, 0xD2511F53u, 0xCD9E8D57u, 0x9E3779B9u, 0xBB67AE85u,
                                 0x1.fffffep-32};  // 4.6566127342e-10
constexpr Variant kPhilox4x64 = {ScalarKind::I64,         0xD2E7470EE14C6C93u, 0xCA5A826395121157u,
                                 0x9E3779B97F4A7C15u,     0xBB67AE8584CAA73Bu,
                                 0x1.fffffcp-64};  // 1.0842020432385337e-19
constexpr int64_t kDefaultRounds = 10, kMaxRounds = 64;
// Box-Muller's clamp of the first uniform away from 0 (log(0) = -inf), and
// 2*pi, both rounded to f32 as Triton's constants are.
constexpr double kMinUniform = 1.0e-7;
constexpr double kTwoPi = 6.283185307179586;

const Variant &variantOf(ScalarKind offsets) { return offsets == ScalarKind::I64 ? kPhilox4x64 : kPhilox4x32; }

// A word-sized constant as the IR holds it: the same bits, signed.
int64_t asWord(uint64_t v, ScalarKind k) {
  return k == ScalarKind::I32 ? int64_t(static_cast<int32_t>(uint32_t(v))) : static_cast<int64_t>(v);
}
}  // namespace

// The four output words of Philox for counters (c0, 0, 0, 0) and the key of
// a 64-bit seed (a scalar): `counter` is an i32 (Philox 4x32) or i64 (4x64)
// scalar or tile, and each word has its type. Words nobody reads are
// removed by DCE.
std::array<ir::Value *, 4> IRGen::philox(ir::Value *seed, ir::Value *counter, int64_t rounds, const ast::Loc &loc) {
  const Type t = counter->type();
  const ScalarKind w = t.elem.scalar;
  const Variant &v = variantOf(w);
  const Type word = Type::scalar(w), wide = t.withScalar(ScalarKind::I64), s64 = Type::scalar(ScalarKind::I64);
  auto cst = [&](int64_t c, const Type &ty) { return emitConst(ConstValue::ofInt(c), ty, loc); };
  auto op = [&](OpKind k, ir::Value *a, ir::Value *b) { return emit(k, {a, b}, a->type(), loc); };
  auto splat = [&](ir::Value *s) { return t.isTile() ? emit(OpKind::Splat, {s}, t, loc) : s; };
  // The low 32 bits of an i64, zero-extended; its high 32 bits, shifted down.
  auto low = [&](ir::Value *x) { return op(OpKind::And, x, cst(0xFFFFFFFF, x->type())); };
  auto high = [&](ir::Value *x) { return low(op(OpKind::Shr, x, cst(32, x->type()))); };
  // hi and lo of the unsigned double-width product m * x. 32 bits: one i64
  // multiply of the zero-extended operands (mul.hi.u32 on the GPU). 64 bits:
  // schoolbook on 32-bit halves, each partial product exact in 64 bits.
  auto mulHiLo = [&](uint64_t m, ir::Value *x) -> std::pair<ir::Value *, ir::Value *> {
    ir::Value *lo = op(OpKind::Mul, x, cst(asWord(m, w), t));
    if (w == ScalarKind::I32) {
      ir::Value *product = op(OpKind::Mul, low(emit(OpKind::Cast, {x}, wide, loc)), cst(int64_t(m), wide));
      return {emit(OpKind::Cast, {op(OpKind::Shr, product, cst(32, wide))}, t, loc), lo};
    }
    ir::Value *xl = low(x), *xh = high(x);
    ir::Value *ml = cst(int64_t(m & 0xFFFFFFFF), t), *mh = cst(int64_t(m >> 32), t);
    ir::Value *ll = op(OpKind::Mul, xl, ml), *lh = op(OpKind::Mul, xl, mh), *hl = op(OpKind::Mul, xh, ml);
    ir::Value *hh = op(OpKind::Mul, xh, mh);
    ir::Value *mid = op(OpKind::Add, op(OpKind::Add, high(ll), low(lh)), low(hl));
    ir::Value *hi = op(OpKind::Add, op(OpKind::Add, hh, high(lh)), op(OpKind::Add, high(hl), high(mid)));
    return {hi, lo};
  };
  ir::Value *k0 = w == ScalarKind::I32 ? emit(OpKind::Cast, {seed}, word, loc) : seed;
  ir::Value *k1 = w == ScalarKind::I32 ? emit(OpKind::Cast, {op(OpKind::Shr, seed, cst(32, s64))}, word, loc)
                                       : cst(0, word);
  std::array<ir::Value *, 4> c = {counter, cst(0, t), cst(0, t), cst(0, t)};
  for (int64_t r = 0; r < rounds; ++r) {
    if (r > 0) {
      k0 = op(OpKind::Add, k0, cst(asWord(v.keyA, w), word));
      k1 = op(OpKind::Add, k1, cst(asWord(v.keyB, w), word));
    }
    auto [hi0, lo0] = mulHiLo(v.roundA, c[0]);
    auto [hi1, lo1] = mulHiLo(v.roundB, c[2]);
    c = {op(OpKind::Xor, op(OpKind::Xor, hi1, c[1]), splat(k0)), lo1,
         op(OpKind::Xor, op(OpKind::Xor, hi0, c[3]), splat(k1)), lo0};
  }
  return c;
}

// grammar (a call): rand(seed, offsets [, n_rounds: N]) | randn(...) | randint(...)
//                   | rand4x(...) | randn4x(...) | randint4x(...), each a tuple of four
TV IRGen::randomCall(const ast::Expr &e) {
  const std::string &name = e.text;
  const std::string usage = " (usage: " + name + "(seed, offsets), optionally n_rounds: N)";
  std::vector<const ast::Expr *> pos;
  const ast::Expr *roundsE = nullptr;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const std::string &n = e.argNames[i];
    if (n.empty() && !roundsE) {
      pos.push_back(e.args[i].get());
    } else if (n == "n_rounds" && !roundsE) {
      roundsE = e.args[i].get();
    } else {
      error(e.args[i]->loc, "unexpected argument to " + quoted(name) + usage);
      return invalid();
    }
  }
  if (pos.size() != 2) {
    error(e.loc, quoted(name) + " takes 2 arguments, not " + std::to_string(pos.size()) + usage);
    return invalid();
  }
  TV seed = genValue(*pos[0]), offsets = genValue(*pos[1]);
  std::optional<int64_t> rounds = kDefaultRounds;
  if (roundsE) rounds = constInt(*roundsE, genValue(*roundsE), "'n_rounds'");
  if (!seed.ok() || !offsets.ok() || !rounds) return invalid();
  if (*rounds < 1 || *rounds > kMaxRounds) {
    error(roundsE->loc, "'n_rounds' must be in [1, " + std::to_string(kMaxRounds) + "], not " + std::to_string(*rounds));
    return invalid();
  }
  if (seed.type.isTile() || !seed.type.isInt() || seed.type.isBool()) {
    error(pos[0]->loc, "the seed of " + quoted(name) + " must be an integer scalar (i32 or i64), not " + typeName(seed));
    return invalid();
  }
  // A literal offset takes i32 when it fits, else i64 (as in Triton).
  const ScalarKind k = offsets.type.elem.scalar;
  if (offsets.type.isPtr() || (k != ScalarKind::I32 && k != ScalarKind::I64)) {
    error(pos[1]->loc, "the offsets of " + quoted(name) + " must be i32 or i64, a tile or a scalar, not " +
                           typeName(offsets));
    return invalid();
  }

  const Type t = Type::scalar(k).withShape(offsets.type.shape);
  auto c = philox(coerce(seed, Type::scalar(ScalarKind::I64), e.loc), coerce(offsets, t, e.loc), *rounds, e.loc);
  // The four-result variants give a tuple of the four words (or of what
  // each maps to), as Triton's random.py returns them.
  const bool four = name.size() > 2 && name.compare(name.size() - 2, 2, "4x") == 0;
  auto tuple = [](std::vector<ir::Value *> vals, const IRGen &g) {
    TV out;
    out.k = TV::K::Tuple;
    for (ir::Value *v : vals) out.elems.push_back(g.value(v));
    return out;
  };
  if (name == "randint") return value(c[0]);
  if (name == "randint4x") return tuple({c[0], c[1], c[2], c[3]}, *this);

  // Triton's uint_to_uniform_float: the bits as a signed word, negatives
  // folded onto [0, INT_MAX] by ~x, converted to f32 and scaled into [0, 1).
  const Type f = t.withScalar(ScalarKind::F32);
  auto uniform = [&](ir::Value *x) {
    ir::Value *negative = emit(OpKind::Cmp, {x, emitConst(ConstValue::ofInt(0), t, e.loc)}, t.withScalar(ScalarKind::I1),
                               e.loc, {{"predicate", ir::attrOf(ir::CmpPredicate::Lt)}});
    ir::Value *folded = emit(OpKind::Select, {negative, emit(OpKind::Not, {x}, t, e.loc), x}, t, e.loc);
    ir::Value *asFloat = emit(OpKind::Cast, {folded}, f, e.loc);
    return emit(OpKind::Mul, {asFloat, emitConst(ConstValue::ofFloat(variantOf(k).uniformScale), f, e.loc)}, f, e.loc);
  };
  if (name == "rand") return value(uniform(c[0]));
  if (name == "rand4x") return tuple({uniform(c[0]), uniform(c[1]), uniform(c[2]), uniform(c[3])}, *this);

  // randn: Box-Muller on words 0 and 1: sqrt(-2 log(max(u1, 1e-7))) times
  // cos(2 pi u2) (randn), and times sin(2 pi u2) too (randn4x's second;
  // its third and fourth from words 2 and 3).
  auto fconst = [&](double v) { return emitConst(ConstValue::ofFloat(v), f, e.loc); };
  auto normals = [&](ir::Value *a, ir::Value *b) -> std::array<ir::Value *, 2> {
    ir::Value *u1 = emit(OpKind::Max, {uniform(a), fconst(kMinUniform)}, f, e.loc);
    ir::Value *theta = emit(OpKind::Mul, {fconst(kTwoPi), uniform(b)}, f, e.loc);
    ir::Value *logU = emit(OpKind::Log, {u1}, f, e.loc);
    ir::Value *radius = emit(OpKind::Sqrt, {emit(OpKind::Mul, {fconst(-2.0), logU}, f, e.loc)}, f, e.loc);
    ir::Value *n0 = emit(OpKind::Mul, {radius, emit(OpKind::Cos, {theta}, f, e.loc)}, f, e.loc);
    ir::Value *n1 = four ? emit(OpKind::Mul, {radius, emit(OpKind::Sin, {theta}, f, e.loc)}, f, e.loc) : nullptr;
    return {n0, n1};
  };
  auto n01 = normals(c[0], c[1]);
  if (!four) return value(n01[0]);
  auto n23 = normals(c[2], c[3]);
  return tuple({n01[0], n01[1], n23[0], n23[1]}, *this);
}

}  // namespace tk::lang
