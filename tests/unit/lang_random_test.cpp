// Property test: random expressions over tiles and scalars of many types
// either lower to IR the verifier accepts, with identical operand types on
// every elementwise op, or fail with located errors. Never a crash.
#include <gtest/gtest.h>

#include <random>

#include "ir/Verifier.h"
#include "lang_TestUtil.h"

namespace tk::lang {
namespace {

class ExprGen {
 public:
  explicit ExprGen(uint32_t seed) : rng_(seed) {}

  std::string expr(int depth) {
    if (depth == 0 || pick(4) == 0) return leaf();
    static const char *binops[] = {"+", "-", "*", "/", "%", "<", "<=", "==", "!=", "&&", "||",
                                   "&", "|", "^", "<<", ">>"};
    static const char *unary[] = {"exp", "sqrt", "sin", "abs", "relu", "sigmoid", "floor", "tanh"};
    static const char *types[] = {"i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "bool"};
    switch (pick(9)) {
      case 0: return "-" + expr(depth - 1);
      case 1: return "(" + expr(depth - 1) + " as " + types[pick(9)] + ")";
      case 2: return std::string(unary[pick(8)]) + "(" + expr(depth - 1) + ")";
      case 3: return "where(" + expr(depth - 1) + ", " + expr(depth - 1) + ", " + expr(depth - 1) + ")";
      case 4: return std::string(pick(2) ? "maximum(" : "minimum(") + expr(depth - 1) + ", " + expr(depth - 1) + ")";
      case 5: return "fma(" + expr(depth - 1) + ", " + expr(depth - 1) + ", " + expr(depth - 1) + ")";
      case 6: return "(" + expr(depth - 1) + ")" + (pick(2) ? "[:, None]" : "[None, :]");
      default: return "(" + expr(depth - 1) + " " + binops[pick(16)] + " " + expr(depth - 1) + ")";
    }
  }

 private:
  std::string leaf() {
    static const char *leaves[] = {"t", "u", "v", "w", "n", "m", "f", "g", "b", "B", "1", "3", "0.5",
                                   "true", "s", "load(p + t)", "zeros([4, B], i16)", "x + t"};
    return leaves[pick(18)];
  }
  uint32_t pick(uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_); }
  std::mt19937 rng_;
};

TEST(LangRandom, ExpressionsLowerOrFailCleanly) {
  ExprGen gen(20261122);
  int lowered = 0, failed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string src =
        "kernel k(x: *f32, h: *f16, p: *i64, n: i32, m: i64, f: f32, g: f16, b: bool, s: i8, const B: i32 = 16) {\n"
        "  let t = arange(B);\n  let u = t[:, None];\n  let v = load(x + t);\n  let w = load(h + t)[None, :];\n"
        "  let r = " + gen.expr(5) + ";\n"
        "  store(x + t[:, None] * B + t[None, :], r);\n}\n";
    auto l = test::lower(src);
    if (!l->fn) {
      ++failed;
      ASSERT_TRUE(l->diags.hasErrors()) << src;
      for (const Diagnostic &d : l->diags.diagnostics()) ASSERT_TRUE(d.loc.known()) << d.message << "\n" << src;
      continue;
    }
    ++lowered;
    std::string err;
    ASSERT_TRUE(ir::verifyFunction(*l->fn, err)) << err << "\n" << src << ir::printFunction(*l->fn);
    for (ir::Op *op : l->fn->walk()) {
      if (!op->hasTrait(ir::OpTrait::Elementwise) || op->is(ir::OpKind::Cast) || op->is(ir::OpKind::AddPtr)) continue;
      size_t first = op->is(ir::OpKind::Select) ? 1 : 0;
      for (size_t k = first; k < op->numOperands(); ++k)
        ASSERT_EQ(op->operand(k)->type(), op->operand(first)->type()) << op->info().mnemonic << "\n" << src;
    }
  }
  // Both outcomes are exercised.
  EXPECT_GT(lowered, 300);
  EXPECT_GT(failed, 300);
}

}  // namespace
}  // namespace tk::lang
