// rand, randn, randint: Triton's counter-based random numbers, Philox 4x32
// with 10 rounds, expanded here into ordinary integer and float tile IR ops
// (as Triton's random.py is a library in its own language). Every element is
// a pure function of (seed, offset), so the stream does not depend on the
// block size, the number of warps or the device: the sim and the GPU run
// the same integer IR and get the same bits for randint and rand.
//
// The stream, as Triton defines it: the key is the seed as 64 bits (signed
// seeds sign-extend), low word k0 and high word k1; the counter is (offset,
// 0, 0, 0). A round maps (c0, c1, c2, c3) to
//   (hi(B*c2) ^ c1 ^ k0, lo(B*c2), hi(A*c0) ^ c3 ^ k1, lo(A*c0))
// with 32x32->64-bit unsigned products, then adds the Weyl constants to the
// key. randint is word 0 of the result; rand maps it to [0, 1); randn takes
// words 0 and 1 through Box-Muller.
#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

namespace {
// Philox's multipliers and key increments (Salmon et al., SC'11), as Triton
// and Random123 use them.
constexpr uint32_t kRoundA = 0xD2511F53u, kRoundB = 0xCD9E8D57u;
constexpr uint32_t kKeyA = 0x9E3779B9u, kKeyB = 0xBB67AE85u;
constexpr int64_t kDefaultRounds = 10, kMaxRounds = 64;
// Triton's uint-to-uniform scale, 4.6566127342e-10 rounded to f32: the
// largest f32 s with f32(2^31 - 1) * s < 1, so rand never returns 1.0.
constexpr double kUniformScale = 0x1.fffffep-32;
// Box-Muller's clamp of the first uniform away from 0 (log(0) = -inf), and
// 2*pi, both rounded to f32 as Triton's constants are.
constexpr double kMinUniform = 1.0e-7;
constexpr double kTwoPi = 6.283185307179586;

int64_t asI32(uint32_t v) { return static_cast<int32_t>(v); }
}  // namespace

// The four output words of Philox 4x32 for counters (c0, 0, 0, 0) and the
// key of a 64-bit seed (a scalar): `counter` is an i32 scalar or tile, each
// word has its type. Words nobody reads are removed by DCE.
std::array<ir::Value *, 4> IRGen::philox(ir::Value *seed, ir::Value *counter, int64_t rounds, const ast::Loc &loc) {
  const Type t = counter->type();
  const Type i32 = Type::scalar(ScalarKind::I32), i64 = t.withScalar(ScalarKind::I64);
  auto cst = [&](int64_t v, const Type &ty) { return emitConst(ConstValue::ofInt(v), ty, loc); };
  auto op = [&](OpKind k, ir::Value *a, ir::Value *b) { return emit(k, {a, b}, a->type(), loc); };
  auto splat = [&](ir::Value *s) { return t.isTile() ? emit(OpKind::Splat, {s}, t, loc) : s; };
  // The high and low words of the unsigned product m * x: x zero-extended
  // to 64 bits (sign-extend, then mask), an i64 multiply, the top half.
  auto mulHiLo = [&](uint32_t m, ir::Value *x) -> std::pair<ir::Value *, ir::Value *> {
    ir::Value *wide = op(OpKind::And, emit(OpKind::Cast, {x}, i64, loc), cst(0xFFFFFFFF, i64));
    ir::Value *product = op(OpKind::Mul, wide, cst(m, i64));
    ir::Value *hi = emit(OpKind::Cast, {op(OpKind::Shr, product, cst(32, i64))}, t, loc);
    return {hi, op(OpKind::Mul, x, cst(asI32(m), t))};
  };
  const Type s64 = Type::scalar(ScalarKind::I64);
  ir::Value *k0 = emit(OpKind::Cast, {seed}, i32, loc);
  ir::Value *k1 = emit(OpKind::Cast, {op(OpKind::Shr, seed, cst(32, s64))}, i32, loc);
  std::array<ir::Value *, 4> c = {counter, cst(0, t), cst(0, t), cst(0, t)};
  for (int64_t r = 0; r < rounds; ++r) {
    if (r > 0) {
      k0 = op(OpKind::Add, k0, cst(asI32(kKeyA), i32));
      k1 = op(OpKind::Add, k1, cst(asI32(kKeyB), i32));
    }
    auto [hi0, lo0] = mulHiLo(kRoundA, c[0]);
    auto [hi1, lo1] = mulHiLo(kRoundB, c[2]);
    c = {op(OpKind::Xor, op(OpKind::Xor, hi1, c[1]), splat(k0)), lo1,
         op(OpKind::Xor, op(OpKind::Xor, hi0, c[3]), splat(k1)), lo0};
  }
  return c;
}

// grammar (a call): rand(seed, offsets [, n_rounds: N]) | randn(...) | randint(...)
TV IRGen::randomCall(const ast::Expr &e) {
  const std::string &name = e.text;
  const std::string usage = " (usage: " + name + "(seed, offsets), optionally n_rounds: N)";
  if (name == "randint4x" || name == "rand4x" || name == "randn4x") {
    error(e.loc, quoted(name) + " returns four tiles, and tk has no tuples; " +
                     name.substr(0, name.size() - 2) + "(seed, offsets) gives the first of them");
    return invalid();
  }
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
  if (offsets.type.isPtr() || !(offsets.weak ? !offsets.cst->isFloat : offsets.type.elem.scalar == ScalarKind::I32)) {
    std::string hint = !offsets.type.isPtr() && offsets.type.elem.scalar == ScalarKind::I64
                           ? " (Triton takes i64 offsets to its Philox 4x64 stream, which tk does not have; "
                             "convert them with 'as i32')"
                           : "";
    error(pos[1]->loc, "the offsets of " + quoted(name) + " must be i32, a tile or a scalar, not " + typeName(offsets) +
                           hint);
    return invalid();
  }
  if (!checkWeakFits(offsets, ScalarKind::I32, pos[1]->loc)) return invalid();

  const Type t = Type::scalar(ScalarKind::I32).withShape(offsets.type.shape);
  auto c = philox(coerce(seed, Type::scalar(ScalarKind::I64), e.loc), coerce(offsets, t, e.loc), *rounds, e.loc);
  if (name == "randint") return value(c[0]);

  // Triton's uint_to_uniform_float: the bits as i32, negatives folded onto
  // [0, 2^31) by ~x, converted to f32 and scaled into [0, 1).
  const Type f = t.withScalar(ScalarKind::F32);
  auto uniform = [&](ir::Value *x) {
    ir::Value *negative = emit(OpKind::Cmp, {x, emitConst(ConstValue::ofInt(0), t, e.loc)}, t.withScalar(ScalarKind::I1),
                               e.loc, {{"predicate", std::string("lt")}});
    ir::Value *folded = emit(OpKind::Select, {negative, emit(OpKind::Not, {x}, t, e.loc), x}, t, e.loc);
    ir::Value *asFloat = emit(OpKind::Cast, {folded}, f, e.loc);
    return emit(OpKind::Mul, {asFloat, emitConst(ConstValue::ofFloat(kUniformScale), f, e.loc)}, f, e.loc);
  };
  if (name == "rand") return value(uniform(c[0]));

  // randn: Box-Muller on words 0 and 1, the cosine branch:
  // sqrt(-2 log(max(u1, 1e-7))) * cos(2 pi u2).
  auto fconst = [&](double v) { return emitConst(ConstValue::ofFloat(v), f, e.loc); };
  ir::Value *u1 = emit(OpKind::Max, {uniform(c[0]), fconst(kMinUniform)}, f, e.loc);
  ir::Value *theta = emit(OpKind::Mul, {fconst(kTwoPi), uniform(c[1])}, f, e.loc);
  ir::Value *logU = emit(OpKind::Log, {u1}, f, e.loc);
  ir::Value *radius = emit(OpKind::Sqrt, {emit(OpKind::Mul, {fconst(-2.0), logU}, f, e.loc)}, f, e.loc);
  return value(emit(OpKind::Mul, {radius, emit(OpKind::Cos, {theta}, f, e.loc)}, f, e.loc));
}

}  // namespace tk::lang
