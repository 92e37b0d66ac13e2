// Host expressions (lang/HostExpr.h): parsing through the grammar's
// expression entry, i64 evaluation with its errors, canonical printing; and
// @tune spaces: expansion order, defaults, key and prune, and the errors
// that tests/errors/tune.tk cannot hold (imports, mode-dependent ones).
#include <gtest/gtest.h>

#include <cmath>

#include "syntax/AST.h"
#include "lang/Frontend.h"
#include "lang/HostExpr.h"

namespace tk::lang {
namespace {

using Kind = HostValue::Kind;

std::unique_ptr<HostExpr> parsed(const std::string &text) {
  std::string error;
  auto e = HostExpr::parse(text, "--grid", error);
  EXPECT_TRUE(e) << error;
  EXPECT_EQ(error, "");
  return e;
}

HostValue eval(const std::string &text, const std::map<std::string, HostValue> &values = {}) {
  return parsed(text)->eval(values);
}

int64_t evalInt(const std::string &text, const std::map<std::string, HostValue> &values = {}) {
  HostValue v = eval(text, values);
  EXPECT_EQ(v.kind, Kind::Int) << text;
  return v.i;
}

std::string evalError(const std::string &text, const std::map<std::string, HostValue> &values = {}) {
  try {
    HostValue v = eval(text, values);
    return "no error: " + v.str();
  } catch (const HostExprError &e) {
    return e.what();
  }
}

TEST(HostExpr, IntegerArithmeticTruncatesLikeC) {
  EXPECT_EQ(evalInt("1 + 2 * 3 - 4"), 3);
  EXPECT_EQ(evalInt("7 / 2"), 3);
  EXPECT_EQ(evalInt("-7 / 2"), -3);
  EXPECT_EQ(evalInt("7 / -2"), -3);
  EXPECT_EQ(evalInt("-7 % 3"), -1);
  EXPECT_EQ(evalInt("7 % -3"), 1);
  EXPECT_EQ(evalInt("(rows + BLOCK_R - 1) / BLOCK_R", {{"rows", HostValue::ofInt(1000)}, {"BLOCK_R", HostValue::ofInt(64)}}),
            16);
  EXPECT_EQ(evalInt("-(2 - 5) * 2"), 6);
  EXPECT_EQ(evalInt("9223372036854775807 - 1 + 1"), INT64_MAX);
}

TEST(HostExpr, CdivMinMaxAbs) {
  EXPECT_EQ(evalInt("cdiv(1000, 64)"), 16);
  EXPECT_EQ(evalInt("cdiv(1024, 64)"), 16);
  EXPECT_EQ(evalInt("cdiv(0, 64)"), 0);
  EXPECT_EQ(evalInt("cdiv(1, 1)"), 1);
  // The ceiling of the exact quotient, whatever the signs.
  EXPECT_EQ(evalInt("cdiv(-7, 2)"), -3);
  EXPECT_EQ(evalInt("cdiv(7, -2)"), -3);
  EXPECT_EQ(evalInt("cdiv(-7, -2)"), 4);
  EXPECT_EQ(evalInt("min(3, -5)"), -5);
  EXPECT_EQ(evalInt("max(3, -5)"), 3);
  EXPECT_EQ(evalInt("abs(-4)"), 4);
  HostValue m = eval("max(2, 2.5)");
  EXPECT_EQ(m.kind, Kind::Float);
  EXPECT_EQ(m.f, 2.5);
  EXPECT_EQ(eval("min(2, 2.5)").f, 2.0);
  EXPECT_EQ(eval("min(2, 2.5)").kind, Kind::Float);
  EXPECT_EQ(eval("abs(-1.5)").f, 1.5);
}

// num_sms(): the caller's device count under the reserved name; none
// known, a precise error (a prune predicate has no device).
TEST(HostExpr, NumSmsIsTheCallersDevice) {
  const std::map<std::string, HostValue> h100 = {{tk::lang::kNumSmsName, HostValue::ofInt(132)},
                                                 {"M", HostValue::ofInt(4096)}};
  EXPECT_EQ(evalInt("num_sms()", h100), 132);
  EXPECT_EQ(evalInt("min(num_sms(), cdiv(M, 128) * cdiv(M, 128))", h100), 132);
  EXPECT_EQ(evalInt("min(num_sms(), cdiv(M, 1024))", h100), 4);
  EXPECT_EQ(evalError("num_sms() * 2"),
            "num_sms() needs the device the kernel launches on, and none is known here, in 'num_sms()'");
  EXPECT_EQ(evalError("num_sms(1)", h100), "num_sms takes 0 arguments, not 1, in 'num_sms(1)'");
  // Not a name a user can write.
  EXPECT_EQ(evalError("num_sms", h100).rfind("unknown name 'num_sms'", 0), 0u);
}

TEST(HostExpr, IntOpFloatPromotes) {
  HostValue v = eval("n / 2.0", {{"n", HostValue::ofInt(5)}});
  EXPECT_EQ(v.kind, Kind::Float);
  EXPECT_EQ(v.f, 2.5);
  EXPECT_EQ(eval("1 + 0.5").f, 1.5);
  EXPECT_EQ(eval("7.5 % 2").f, 1.5);
  EXPECT_EQ(eval("-x", {{"x", HostValue::ofFloat(0.25)}}).f, -0.25);
  EXPECT_EQ(eval("1.0 / 0.0").f, HUGE_VAL);  // floats follow IEEE, as in a kernel
}

TEST(HostExpr, ComparisonsAndLogic) {
  std::map<std::string, HostValue> v = {
      {"BLOCK", HostValue::ofInt(64)}, {"num_warps", HostValue::ofInt(4)}, {"n", HostValue::ofInt(10)}};
  EXPECT_TRUE(eval("BLOCK < 32 * num_warps || BLOCK > 4 * n", v).i);
  v["BLOCK"] = HostValue::ofInt(128);
  EXPECT_EQ(eval("BLOCK < 32 * num_warps || BLOCK > 4 * n", v).kind, Kind::Bool);
  EXPECT_TRUE(eval("BLOCK < 32 * num_warps || BLOCK > 4 * n", v).i);
  v["n"] = HostValue::ofInt(1000);
  EXPECT_FALSE(eval("BLOCK < 32 * num_warps || BLOCK > 4 * n", v).i);
  EXPECT_TRUE(eval("2 < 2.5 && 3 >= 3 && 2 != 3 && !(1 == 2) && true == !false").i);
  EXPECT_FALSE(eval("2 <= 1.5").i);
  // && and || stop early, so a guard protects the division after it.
  EXPECT_TRUE(eval("n == 0 || 10 / n > 1", {{"n", HostValue::ofInt(0)}}).i);
  EXPECT_FALSE(eval("n != 0 && 10 / n > 1", {{"n", HostValue::ofInt(0)}}).i);
}

TEST(HostExpr, UnknownNames) {
  EXPECT_EQ(evalError("x + 1", {{"b", HostValue::ofInt(1)}, {"a", HostValue::ofInt(2)}}), "unknown name 'x' (known: a, b)");
  EXPECT_EQ(evalError("x"), "unknown name 'x' (known: none)");
  auto e = parsed("n + BLOCK");
  try {
    e->eval([](const std::string &name) -> std::optional<HostValue> {
      if (name == "n") return HostValue::ofInt(1);
      return std::nullopt;
    });
    FAIL() << "no error";
  } catch (const HostExprError &err) {
    EXPECT_STREQ(err.what(), "unknown name 'BLOCK'");
    EXPECT_EQ(err.loc().str(), "--grid:1:5");
  }
}

TEST(HostExpr, DivisionByZeroAndOverflow) {
  std::map<std::string, HostValue> v = {{"n", HostValue::ofInt(10)}, {"B", HostValue::ofInt(0)}};
  EXPECT_EQ(evalError("n / B", v), "integer division by zero in 'n / B'");
  EXPECT_EQ(evalError("n % B", v), "integer remainder by zero in 'n % B'");
  EXPECT_EQ(evalError("cdiv(n, B)", v), "integer division by zero in 'cdiv(n, B)'");
  v["a"] = HostValue::ofInt(int64_t{1} << 62);
  EXPECT_EQ(evalError("a * 4", v), "integer overflow (beyond i64) in 'a * 4'");
  EXPECT_EQ(evalError("a + a", v), "integer overflow (beyond i64) in 'a + a'");
  EXPECT_EQ(evalError("-a - a - a", v), "integer overflow (beyond i64) in '-a - a - a'");
  EXPECT_EQ(evalError("9223372036854775807 + 1"), "integer overflow (beyond i64) in '9223372036854775807 + 1'");
  v["m"] = HostValue::ofInt(INT64_MIN);
  EXPECT_EQ(evalError("-m", v), "integer overflow (beyond i64) in '-m'");
  EXPECT_EQ(evalError("abs(m)", v), "integer overflow (beyond i64) in 'abs(m)'");
  EXPECT_EQ(evalError("m / -1", v), "integer overflow (beyond i64) in 'm / -1'");
  EXPECT_EQ(evalInt("m % -1", v), 0);
}

TEST(HostExpr, TypeErrorsAndUnsupportedConstructs) {
  EXPECT_EQ(evalError("cdiv(n, 2.5)", {{"n", HostValue::ofInt(3)}}), "cdiv needs integers, not float, in 'cdiv(n, 2.5)'");
  EXPECT_EQ(evalError("true + 1"), "operator '+' needs numbers, not bool, in 'true + 1'");
  EXPECT_EQ(evalError("1 && true"), "operator '&&' needs bools, not int, in '1 && true'");
  EXPECT_EQ(evalError("!3"), "operator '!' needs a bool, not int, in '!3'");
  EXPECT_EQ(evalError("1 == true"), "cannot compare int with bool in '1 == true'");
  EXPECT_EQ(evalError("true < false"), "operator '<' needs numbers, not bool, in 'true < false'");
  EXPECT_EQ(evalError("min(1)"), "min takes 2 arguments, not 1, in 'min(1)'");
  EXPECT_EQ(evalError("cdiv(1, b: 2)"), "cdiv takes its arguments by position, in 'cdiv(1, b: 2)'");
  for (auto [text, what] : std::vector<std::pair<std::string, std::string>>{
           {"load(x)", "'load'"}, {"x[0]", "'indexing'"}, {"\"s\"", "'string'"}, {"x as f32", "'as f32'"},
           {"1 << 2", "'<<'"}, {"~1", "'~'"}, {"[1, 2]", "'list'"}, {"f32", "'f32'"}}) {
    std::string msg = evalError(text, {{"x", HostValue::ofInt(1)}});
    EXPECT_EQ(msg.rfind("unsupported construct " + what, 0), 0u) << text << ": " << msg;
  }
}

TEST(HostExpr, SyntaxErrorsRenderWithCaret) {
  std::string error;
  EXPECT_EQ(HostExpr::parse("n +", "--grid", error), nullptr);
  EXPECT_EQ(error, "--grid:1:4: error: unexpected end of the expression, expected an expression\nn +\n   ^\n");
  EXPECT_EQ(HostExpr::parse("cdiv(n, BLOCK) BLOCK", "--grid", error), nullptr);
  EXPECT_EQ(error,
            "--grid:1:16: error: unexpected identifier 'BLOCK', expected the end of the expression or an operator\n"
            "cdiv(n, BLOCK) BLOCK\n"
            "               ^\n");
  EXPECT_EQ(HostExpr::parse("n @ 2", "prune", error), nullptr);
  EXPECT_EQ(error.rfind("prune:1:3: error: unexpected character '@'", 0), 0u) << error;
  EXPECT_EQ(HostExpr::parse("", "--grid", error), nullptr);
  EXPECT_EQ(error.rfind("--grid:1:1: error: unexpected end of the expression", 0), 0u) << error;
  EXPECT_EQ(HostExpr::parse("kernel k() {}", "--grid", error), nullptr);
  EXPECT_EQ(error.rfind("--grid:1:1: error: unexpected 'kernel'", 0), 0u) << error;
}

// Two trees are the same when they differ only in locations.
bool sameTree(const ast::Expr &a, const ast::Expr &b) {
  if (a.kind != b.kind || a.text != b.text || a.intValue != b.intValue || a.floatValue != b.floatValue ||
      a.type.str() != b.type.str() || a.argNames != b.argNames || a.args.size() != b.args.size())
    return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!sameTree(*a.args[i], *b.args[i])) return false;
  return true;
}

TEST(HostExpr, StrIsCanonicalAndParsesBack) {
  for (auto [text, canonical] : std::vector<std::pair<std::string, std::string>>{
           {"(a+b)*c", "(a + b) * c"},
           {"a-(b-c)", "a - (b - c)"},
           {"(a-b)-c", "a - b - c"},
           {"-(a+b)", "-(a + b)"},
           {"- -a", "--a"},
           {"!(x&&y)||z", "!(x && y) || z"},
           {"x && (y || z)", "x && (y || z)"},
           {"cdiv(n,BLOCK)*2", "cdiv(n, BLOCK) * 2"},
           {"1.0 + 2.5e-3 + 1e20 + 2.0", "1.0 + 0.0025 + 1e+20 + 2.0"},
           {"a < (b < c)", "a < (b < c)"},
           {"(a * b) % (c / d)", "a * b % (c / d)"},
           {"-(x as f16)", "-(x as f16)"},
           {"(-x) as f16 + 1", "-x as f16 + 1"},
           {"load(p, mask: m)[:, None]", "load(p, mask: m)[:, None]"},
           {"(a + b)[0]", "(a + b)[0]"},
           {"[1, \"s\\n\\\"\"]", "[1, \"s\\n\\\"\"]"}}) {
    auto e = parsed(text);
    ASSERT_TRUE(e) << text;
    EXPECT_EQ(e->str(), canonical) << text;
    auto back = parsed(e->str());
    ASSERT_TRUE(back) << e->str();
    EXPECT_TRUE(sameTree(e->ast(), back->ast())) << text;
    EXPECT_EQ(back->str(), canonical);
  }
}

TEST(HostExpr, NamesAndFromAst) {
  auto e = parsed("cdiv(n, B) + n * B - m + max(n, 1)");
  EXPECT_EQ(e->names(), (std::vector<std::string>{"B", "m", "n"}));
  auto copy = HostExpr::fromAst(e->ast());
  EXPECT_EQ(copy->str(), e->str());
  EXPECT_EQ(copy->eval({{"n", HostValue::ofInt(10)}, {"B", HostValue::ofInt(4)}, {"m", HostValue::ofInt(1)}}).i, 3 + 40 - 1 + 10);
}

TEST(HostExpr, CheckFindsKindsWithoutValues) {
  auto kinds = [](const std::string &n) -> std::optional<Kind> {
    if (n == "BLOCK" || n == "n") return Kind::Int;
    if (n == "eps") return Kind::Float;
    return std::nullopt;
  };
  EXPECT_EQ(parsed("BLOCK < 32 * n")->check(kinds), Kind::Bool);
  EXPECT_EQ(parsed("cdiv(n, BLOCK)")->check(kinds), Kind::Int);
  EXPECT_EQ(parsed("n * eps")->check(kinds), Kind::Float);
  // Both sides are checked, though eval would stop after the first.
  EXPECT_THROW(parsed("true || 1 + true > 0")->check(kinds), HostExprError);
  try {
    parsed("BLOCK + m")->check(kinds);
    FAIL() << "no error";
  } catch (const HostExprError &err) {
    EXPECT_STREQ(err.what(), "unknown name 'm'");
    EXPECT_EQ(err.loc().col, 9);
  }
}

TEST(HostValue, LiteralsAndText) {
  EXPECT_EQ(HostValue::parseLiteral("256")->i, 256);
  EXPECT_EQ(HostValue::parseLiteral("-3")->i, -3);
  EXPECT_EQ(HostValue::parseLiteral("+4")->i, 4);
  EXPECT_EQ(HostValue::parseLiteral("1.5e-3")->kind, Kind::Float);
  EXPECT_EQ(HostValue::parseLiteral("1.5e-3")->f, 1.5e-3);
  EXPECT_EQ(HostValue::parseLiteral("2.0")->kind, Kind::Float);
  EXPECT_EQ(HostValue::parseLiteral("true")->kind, Kind::Bool);
  EXPECT_EQ(HostValue::parseLiteral("false")->i, 0);
  for (const char *bad : {"", "abc", "1x", " 1", "99999999999999999999", "1e999", "nan", "inf", "0x10", "-", "True"})
    EXPECT_FALSE(HostValue::parseLiteral(bad)) << bad;
  EXPECT_EQ(HostValue::ofInt(-3).str(), "-3");
  EXPECT_EQ(HostValue::ofFloat(2.0).str(), "2.0");
  EXPECT_EQ(HostValue::ofFloat(0.5).str(), "0.5");
  EXPECT_EQ(HostValue::ofFloat(1e-5).str(), "1e-05");
  EXPECT_EQ(HostValue::ofBool(true).str(), "true");
  for (const char *text : {"256", "-3", "0.5", "1e-05", "true", "2.0"})
    EXPECT_EQ(HostValue::parseLiteral(text)->str(), text);
}

// ---- @tune ------------------------------------------------------------------

const char *kTuned = R"(
@tune(configs: [product(BLOCK: [256, 512], num_warps: [2, 4, 8]),
                config(BLOCK: 4096, num_warps: 16, num_stages: 2),
                config(SCALE: 0.5, ON: false, SHIFT: -3, HALF: 7)],
      key: [n, eps],
      prune: BLOCK < 32 * num_warps || BLOCK > 4 * n && eps > 0.0)
kernel k(x: *f32, n: i32, eps: f32, const BLOCK: i32 = 1024, const HALF: i32 = BLOCK / 2,
         const SCALE: f32 = 1.0, const ON: bool = true, const SHIFT: i64 = 0) {
    let tune = 1;  // not a keyword
    let offs = program_id(0) * BLOCK + arange(BLOCK);
    store(x + offs, load(x + offs, mask: offs < n) * SCALE, mask: offs < n);
}
kernel plain(x: *f32) { }
)";

TEST(LangTune, SpaceExpandsInOrderWithDefaults) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  ASSERT_TRUE(fe.loadSource(kTuned, "t.tk")) << diags.render();
  std::vector<KernelSig> ks = fe.kernels();
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_FALSE(ks[1].tune);
  ASSERT_TRUE(ks[0].tune);
  const TuneSig &t = *ks[0].tune;
  EXPECT_EQ(t.loc.line, 2);
  EXPECT_EQ(t.loc.col, 1);
  ASSERT_EQ(t.configs.size(), 8u);
  std::vector<std::pair<std::string, int>> got;
  for (size_t i = 0; i < 6; ++i) {
    got.push_back({t.configs[i].consts.at("BLOCK"), t.configs[i].numWarps});
    EXPECT_EQ(t.configs[i].consts.size(), 1u);
    EXPECT_EQ(t.configs[i].numStages, 3);
    EXPECT_EQ(t.configs[i].loc.line, 2);
  }
  EXPECT_EQ(got, (std::vector<std::pair<std::string, int>>{
                     {"256", 2}, {"256", 4}, {"256", 8}, {"512", 2}, {"512", 4}, {"512", 8}}));
  EXPECT_EQ(t.configs[6].consts, (std::map<std::string, std::string>{{"BLOCK", "4096"}}));
  EXPECT_EQ(t.configs[6].numWarps, 16);
  EXPECT_EQ(t.configs[6].numStages, 2);
  EXPECT_EQ(t.configs[6].loc.line, 3);
  // Values as -D takes them, canonical for the const's type.
  EXPECT_EQ(t.configs[7].consts, (std::map<std::string, std::string>{
                                     {"SCALE", "0.5"}, {"ON", "false"}, {"SHIFT", "-3"}, {"HALF", "7"}}));
  EXPECT_EQ(t.configs[7].numWarps, 4);
  EXPECT_EQ(t.configs[7].numStages, 3);
  EXPECT_EQ(t.key, (std::vector<std::string>{"n", "eps"}));
  EXPECT_EQ(t.prune, "BLOCK < 32 * num_warps || BLOCK > 4 * n && eps > 0.0");

  // The prune text reads back and evaluates; each config lowers with its values.
  auto prune = parsed(t.prune);
  ASSERT_TRUE(prune);
  EXPECT_TRUE(prune->eval({{"BLOCK", HostValue::ofInt(256)}, {"num_warps", HostValue::ofInt(16)},
                           {"n", HostValue::ofInt(1)}, {"eps", HostValue::ofFloat(0)}}).i);
  EXPECT_FALSE(prune->eval({{"BLOCK", HostValue::ofInt(256)}, {"num_warps", HostValue::ofInt(8)},
                            {"n", HostValue::ofInt(1)}, {"eps", HostValue::ofFloat(0)}}).i);
  for (const TuneConfigSig &c : t.configs) EXPECT_TRUE(fe.lowerKernel("k", c.consts, c.numWarps)) << diags.render();
}

TEST(LangTune, IntLiteralForAFloatConstAndAFloatForAnInt) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  ASSERT_TRUE(fe.loadSource("@tune(configs: [config(S: 2, T: -0.25)])\n"
                            "kernel k(x: *f32, const S: f32 = 1.0, const T: f64 = 0.0) { }\n",
                            "t.tk"))
      << diags.render();
  EXPECT_EQ(fe.kernels()[0].tune->configs[0].consts,
            (std::map<std::string, std::string>{{"S", "2.0"}, {"T", "-0.25"}}));
  EXPECT_FALSE(fe.loadSource("@tune(configs: [config(N: 2.0)])\nkernel k(x: *f32, const N: i32 = 1) { }\n", "u.tk"));
  EXPECT_NE(diags.render().find("u.tk:1:27: error: invalid value '2.0' for const parameter 'N' of type i32"),
            std::string::npos)
      << diags.render();
}

TEST(LangTune, AstDumpShowsTheAttribute) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  ASSERT_TRUE(fe.loadSource("@tune(configs: [config(B: 2)], key: [n])\nkernel k(n: i32, const B: i32 = 1) { }\n", "t.tk"))
      << diags.render();
  EXPECT_EQ(fe.dumpAst(),
            "module \"t.tk\"\n"
            "  kernel k @2:8\n"
            "    attribute @tune @1:1\n"
            "      arg configs:\n"
            "        list @1:16\n"
            "          call config @1:17\n"
            "            arg B:\n"
            "              int 2 @1:27\n"
            "      arg key:\n"
            "        list @1:37\n"
            "          name n @1:38\n"
            "    param n: i32 @2:10\n"
            "    param const B: i32 @2:24\n"
            "      int 1 @2:33\n");
}

TEST(LangTune, TuneIsNotAKeyword) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  ASSERT_TRUE(fe.loadSource("fn tune(v: f32) -> f32 { return v; }\n"
                            "kernel k(x: *f32) { let tune2 = 1.0; store(x, tune(tune2)); }\n",
                            "t.tk"))
      << diags.render();
  EXPECT_TRUE(fe.lowerKernel("k", {}, 4)) << diags.render();
}

// Errors that tests/errors/tune.tk cannot hold: an @tune on an import, and a
// const without a default that a config leaves unset (lowering with the
// defaults reports that const again, so the count depends on the driver).
TEST(LangTune, ErrorsOnImportsAndUnsetConsts) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  fe.setFileReader([](const std::string &path) -> std::optional<std::string> {
    if (path == "lib.tk") return std::string("fn one() -> i32 { return 1; }\n");
    return std::nullopt;
  });
  EXPECT_FALSE(fe.loadSource("@tune(configs: [config(B: 1)])\nimport \"lib.tk\";\n"
                             "@tune(configs: [config(num_warps: 8), config(B: 2)])\n"
                             "kernel k(x: *f32, const B: i32) { }\n",
                             "t.tk"));
  EXPECT_EQ(diags.render(),
            "t.tk:1:1: error: @tune applies to a kernel, not to an import\n"
            "@tune(configs: [config(B: 1)])\n"
            "^\n"
            "t.tk:4:25: error: const parameter 'B' has no default value and none was defined\n"
            "kernel k(x: *f32, const B: i32) { }\n"
            "                        ^\n"
            "t.tk:3:17: note: while specialising the @tune config (num_warps: 8, num_stages: 3)\n"
            "@tune(configs: [config(num_warps: 8), config(B: 2)])\n"
            "                ^\n");
}

TEST(LangTune, ErrorsAreLocatedAtTheNameOrValue) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  EXPECT_FALSE(fe.loadSource("@tune(configs: [config(BLOCK: 64)], prune: BLOCK > m)\n"
                             "kernel k(x: *f32, m: i32, const BLOCK: i32 = 32) { }\n",
                             "t.tk"));
  ASSERT_EQ(diags.diagnostics().size(), 1u) << diags.render();
  EXPECT_EQ(diags.diagnostics()[0].loc.str(), "t.tk:1:52");
  EXPECT_EQ(diags.diagnostics()[0].message,
            "'m' in prune: is not a const parameter, num_warps, num_stages or a key argument");
  EXPECT_FALSE(fe.kernels()[0].tune);
}

}  // namespace
}  // namespace tk::lang
