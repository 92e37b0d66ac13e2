// The front end's newer built-ins as tile IR: inf and nan literals, min/max
// of two values, cdiv and clamp (folded when constant), and the types of
// the math and classification ops. Their numerics run in
// runtime_builtins_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "lang_TestUtil.h"
#include "lang/IRGen.h"
#include "parser/Lexer.h"
#include "parser/TritonHints.h"

namespace tk::lang {
namespace {

using test::lower;
using test::opsOf;

double floatValue(ir::Op *op) { return std::get<double>(op->attrs().at("value")); }

TEST(LangBuiltins, InfAndNanAreFloatLiterals) {
  auto l = lower(R"(
kernel k(x: *f16, n: i32) {
    let i = arange(64);
    let v = load(x + i, mask: i < n, other: -inf);
    store(x + i, where(v > 0.0, v, nan), mask: i < n);
})");
  ASSERT_TRUE(l->fn) << l->errors();
  std::vector<double> values;
  for (ir::Op *op : opsOf(*l->fn, ir::OpKind::Constant))
    if (op->result()->type().elem.scalar == ir::ScalarKind::F16) values.push_back(floatValue(op));
  ASSERT_FALSE(values.empty());
  EXPECT_TRUE(std::any_of(values.begin(), values.end(), [](double v) { return std::isinf(v) && v < 0; }));
  EXPECT_TRUE(std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); }));
}

TEST(LangBuiltins, FloatDivisionByZeroFoldsToInf) {
  auto l = lower(R"(
kernel k(x: *f32, const BIG: f32 = 1.0 / 0.0, const SMALL: f32 = -inf) {
    static_assert(BIG == inf && SMALL < -1e38 && nan != nan);
    store(x, BIG);
})");
  EXPECT_TRUE(l->fn) << l->errors();
  auto d = lower("kernel k(x: *f32, const V: f32 = 1.0) { store(x, V); }", "", {{"V", "-inf"}});
  ASSERT_TRUE(d->fn) << d->errors();
  EXPECT_TRUE(std::isinf(floatValue(opsOf(*d->fn, ir::OpKind::Constant)[0])));
}

TEST(LangBuiltins, MinMaxOfTwoValuesAreElementwise) {
  auto l = lower(R"(
kernel k(x: *f32, n: i32) {
    let v = load(x + arange(64));
    store(x + arange(64), max(v, 0.0) + min(v, n));
    store(x, max(v, axis: 0) + min(v));
})");
  ASSERT_TRUE(l->fn) << l->errors();
  EXPECT_EQ(opsOf(*l->fn, ir::OpKind::Max).size(), 1u);
  EXPECT_EQ(opsOf(*l->fn, ir::OpKind::Min).size(), 1u);
  EXPECT_EQ(opsOf(*l->fn, ir::OpKind::Reduce).size(), 2u);
}

TEST(LangBuiltins, CdivClampAndMinMaxFoldOnConstants) {
  auto l = lower(R"(
kernel k(x: *i32, const N: i32 = 1000, const NB: i32 = cdiv(N, 256)) {
    static_assert(NB == 4 && cdiv(-7, 2) == -3 && cdiv(7, -2) == -3 && cdiv(-8, -2) == 4 && cdiv(0, 5) == 0);
    static_assert(max(3, 9) == 9 && min(-1, 2) == -1 && clamp(12, 0, 10) == 10 && clamp(-3, 0, 10) == 0);
    store(x, NB);
})");
  ASSERT_TRUE(l->fn) << l->errors();
  EXPECT_TRUE(opsOf(*l->fn, ir::OpKind::Div).empty());
}

TEST(LangBuiltins, MathTypes) {
  auto l = lower(R"(
kernel k(h: *f16, f: *f32, i: *i32) {
    let a = load(h + arange(32));
    let n = load(i + arange(32));
    store(h + arange(32), erf(a) + expm1(a) + log1p(a) + pow(a, 2) + atan2(a, 1.0));
    store(f + arange(32), pow(n, 2) + atan2(n, a));
    store(i + arange(32), (isnan(a) || isinf(n) || signbit(a)) as i32);
})");
  ASSERT_TRUE(l->fn) << l->errors();
  for (ir::OpKind k : {ir::OpKind::Erf, ir::OpKind::Expm1, ir::OpKind::Log1p})
    EXPECT_EQ(opsOf(*l->fn, k)[0]->result()->type().str(), "tile<32xf16>");
  auto pows = opsOf(*l->fn, ir::OpKind::Pow);
  ASSERT_EQ(pows.size(), 2u);
  EXPECT_EQ(pows[0]->result()->type().str(), "tile<32xf16>");  // f16 with a literal
  EXPECT_EQ(pows[1]->result()->type().str(), "tile<32xf32>");  // ints compute in f32
  auto atans = opsOf(*l->fn, ir::OpKind::Atan2);
  EXPECT_EQ(atans[1]->result()->type().str(), "tile<32xf16>");  // i32 with f16: f16
  EXPECT_EQ(opsOf(*l->fn, ir::OpKind::IsInf)[0]->operand(0)->type().str(), "tile<32xf32>");
  EXPECT_EQ(opsOf(*l->fn, ir::OpKind::Signbit)[0]->result()->type().str(), "tile<32xi1>");
}

// libdevice's functions and tl.math's take the same typing as exp and pow
// (ints compute in f32, f16 stays f16); umulhi keeps i32 or i64; fdiv with
// ieee_rounding is div_rn.
TEST(LangBuiltins, LibdeviceAndTlMathTypes) {
  auto l = lower(R"(
kernel k(h: *f16, f: *f32, d: *f64, i: *i32, w: *i64) {
    let a = load(h + arange(32));
    let n = load(i + arange(32));
    let x = load(d + arange(32));
    store(h + arange(32), asin(a) + hypot(a, 2) + round(a));
    store(f + arange(32), cbrt(n) + fmod(n, 3) + fdiv(n, 3.0) + fdiv(n, 3.0, ieee_rounding: true));
    store(d + arange(32), sqrt_rn(x) + div_rn(x, n));
    store(i + arange(32), umulhi(n, 7));
    store(w + arange(32), umulhi(n as i64, load(w + arange(32))));
})");
  ASSERT_TRUE(l->fn) << l->errors();
  auto type = [&](ir::OpKind k, size_t i = 0) { return opsOf(*l->fn, k).at(i)->result()->type().str(); };
  EXPECT_EQ(type(ir::OpKind::Asin), "tile<32xf16>");
  EXPECT_EQ(type(ir::OpKind::Hypot), "tile<32xf16>");  // f16 with a literal
  EXPECT_EQ(type(ir::OpKind::Round), "tile<32xf16>");
  EXPECT_EQ(type(ir::OpKind::Cbrt), "tile<32xf32>");  // ints compute in f32
  EXPECT_EQ(type(ir::OpKind::Fmod), "tile<32xf32>");
  EXPECT_EQ(opsOf(*l->fn, ir::OpKind::Fdiv).size(), 1u);
  ASSERT_EQ(opsOf(*l->fn, ir::OpKind::DivRn).size(), 2u);  // ieee_rounding: true, and div_rn
  EXPECT_EQ(type(ir::OpKind::DivRn, 1), "tile<32xf64>");      // i32 with f64: f64
  EXPECT_EQ(type(ir::OpKind::SqrtRn), "tile<32xf64>");
  EXPECT_EQ(type(ir::OpKind::UMulHi, 0), "tile<32xi32>");
  EXPECT_EQ(type(ir::OpKind::UMulHi, 1), "tile<32xi64>");
}

// @tune configs set type and string consts as -D does; each config is
// specialised (and a value the kernel's static_assert refuses is an error
// at the config).
TEST(LangBuiltins, TuneConfigsOfTypeAndStringConsts) {
  const char *src = R"(
@tune(configs: [product(T: [f16, f32], ACT: ["relu", "none"]), config(T: bf16, BLOCK: 512)])
kernel k(x: *T, n: i32, const T: type = f32, const ACT: str = "none", const BLOCK: i32 = 256) {
    static_assert(T != f64);
    let offs = program_id(0) * BLOCK + arange(BLOCK);
    store(x + offs, load(x + offs, mask: offs < n), mask: offs < n);
})";
  DiagnosticEngine diags;
  Frontend fe(diags);
  ASSERT_TRUE(fe.loadSource(src, "t.tk")) << diags.render();
  std::vector<KernelSig> ks = fe.kernels();
  ASSERT_TRUE(ks[0].tune);
  const TuneSig &t = *ks[0].tune;
  ASSERT_EQ(t.configs.size(), 5u);
  EXPECT_EQ(t.configs[0].consts, (std::map<std::string, std::string>{{"T", "f16"}, {"ACT", "relu"}}));
  EXPECT_EQ(t.configs[3].consts, (std::map<std::string, std::string>{{"T", "f32"}, {"ACT", "none"}}));
  EXPECT_EQ(t.configs[4].consts, (std::map<std::string, std::string>{{"T", "bf16"}, {"BLOCK", "512"}}));
  KernelSig sig;
  ASSERT_TRUE(fe.lowerKernel("k", t.configs[4].consts, 4, &sig)) << diags.render();
  EXPECT_EQ(sig.params[0].type, "*bf16");

  // A dtype the kernel refuses is refused when that config is compiled.
  EXPECT_FALSE(fe.lowerKernel("k", {{"T", "f64"}}, 4));
  EXPECT_NE(diags.render().find("static assertion failed"), std::string::npos) << diags.render();

  for (const char *bad : {"config(T: 3)", "config(ACT: relu)", "config(T: q8)", "config(ACT: 1)"}) {
    std::string text = src;
    text.replace(text.find("product("), text.find("config(T: bf16, BLOCK: 512)") + 27 - text.find("product("), bad);
    DiagnosticEngine d2;
    Frontend f2(d2);
    EXPECT_FALSE(f2.loadSource(text, "t.tk")) << bad;
    EXPECT_NE(d2.render().find(std::string(bad).rfind("config(T:", 0) == 0 ? "must be a type such as f16"
                                                                                 : "must be a string literal"),
              std::string::npos)
        << bad << "\n" << d2.render();
  }
}

// lang/BuiltinTable.def (and Ops.def's math ops) is the one list of built-ins:
// each is documented in docs/language.md (inside a code span), lexes as one
// identifier (no keyword or type name takes it), and is reserved from fns.
TEST(BuiltinTable, EveryBuiltinIsDocumentedLexedAsANameAndReserved) {
  std::ifstream in(TK_SOURCE_DIR + "/docs/language.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  std::vector<std::string> spans;
  static const std::regex span("`[^`\n]+`");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), span); it != std::sregex_iterator(); ++it)
    spans.push_back(it->str());
  std::vector<std::string> names = IRGen::builtinNames();
  names.push_back("static_assert");
  names.push_back("static_range");
  EXPECT_GE(names.size(), 60u);
  for (const std::string &n : names) {
    const std::regex word("(^|[^A-Za-z0-9_])" + n + "($|[^A-Za-z0-9_])");
    bool documented = false;
    for (const std::string &s : spans) documented = documented || std::regex_search(s, word);
    EXPECT_TRUE(documented) << n << " is not in a code span of docs/language.md";
    DiagnosticEngine diags;
    parser::LexResult r = parser::lex(n, "t.tk", diags);
    ASSERT_EQ(r.tokens.size(), 2u) << n;
    EXPECT_EQ(r.tokens[0].kind, parser::Tok::Ident) << n << " lexes as " << parser::tokName(r.tokens[0].kind);
    EXPECT_TRUE(IRGen::isBuiltinName(n)) << n;
    // The reductions are exactly the tile IR's reduce kinds.
    EXPECT_EQ(IRGen::builtinGroup(n) == BuiltinGroup::Reduce, ir::parseEnum<ir::ReduceKind>(n).has_value()) << n;
  }
}

// parser/TritonNames.def maps Triton's tl.NAME to tk's spelling: every
// spelling it gives is a tk built-in, and every name it says tk lacks is not
// one. Adding a built-in (tl.sort, say) fails here until the table says so,
// so the `tl.` notes never send a user to a name that does not exist.
TEST(BuiltinTable, TritonNameTableMatchesTk) {
  const auto names = parser::tritonNames();
  EXPECT_GE(names.size(), 80u);
  for (const auto &[triton, tk] : names) {
    if (tk.empty())
      EXPECT_FALSE(IRGen::isBuiltinName(triton))
          << "tk has '" << triton << "' now: give tl." << triton << " its spelling in parser/TritonNames.def";
    else
      EXPECT_TRUE(IRGen::isBuiltinName(tk)) << "tl." << triton << " maps to '" << tk << "', which is no tk built-in";
  }
}

}  // namespace
}  // namespace tk::lang
