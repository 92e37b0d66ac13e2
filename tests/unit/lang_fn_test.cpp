// fn helpers, imports, static_assert and kernel `return`: the IR they
// produce (inlined once per call, shapes generic, constants folded, source
// locations of the fn's lines) and how imports are found and reported.
#include <gtest/gtest.h>

#include "ir/Verifier.h"
#include "lang_TestUtil.h"
#include "lang/IRGen.h"

namespace tk::lang {
namespace {

using ir::OpKind;
using test::lower;
using test::opsOf;

void expectValid(test::Lowered &l) {
  ASSERT_TRUE(l.fn) << l.errors();
  std::string err;
  EXPECT_TRUE(ir::verifyFunction(*l.fn, err)) << err << "\n" << ir::printFunction(*l.fn);
}

TEST(LangFn, EachCallInlinesTheBody) {
  auto l = lower(
      "fn act(x: f32) -> f32 { let t = tanh(x); return t * 0.5; }\n"
      "kernel k(x: *f32, const B: i32 = 64) {\n"
      "  let v = load(x + arange(B));\n"
      "  store(x + arange(B), act(v) + act(v * 2.0));\n"
      "}\n");
  expectValid(*l);
  EXPECT_EQ(opsOf(*l->fn, OpKind::Tanh).size(), 2u);
}

TEST(LangFn, ShapesAreGenericElementTypesAreNot) {
  auto l = lower(
      "fn sq(x: f32) -> f32 { return x * x; }\n"
      "kernel k(x: *f32, f: f32, const B: i32 = 32) {\n"
      "  let tile = sq(load(x + arange(B)[:, None] * B + arange(B)[None, :]));\n"
      "  let scalar = sq(f);\n"
      "  store(x + arange(B)[:, None] * B + arange(B)[None, :], tile + scalar);\n"
      "}\n");
  expectValid(*l);
  auto muls = opsOf(*l->fn, OpKind::Mul);
  std::vector<std::string> types;
  for (ir::Op *op : muls)
    if (op->result()->type().isFloat()) types.push_back(op->result()->type().str());
  EXPECT_EQ(types, (std::vector<std::string>{"tile<32x32xf32>", "f32"}));

  auto bad = lower("fn sq(x: f32) -> f32 { return x * x; }\n"
                   "kernel k(x: *f16) { store(x, sq(load(x))); }\n");
  EXPECT_FALSE(bad->fn);
  EXPECT_NE(bad->errors().find("test.tk:2:33: error: argument 'x' of 'sq' must be f32"), std::string::npos)
      << bad->errors();
}

TEST(LangFn, LiteralsTakeTheParamTypeAndConstantsFold) {
  auto l = lower(
      "fn scale(x: f16, k: i64) -> f16 { return x * (k as f16); }\n"
      "fn area(w: i32, h: i32) -> i32 { return w * h; }\n"
      "kernel k(x: *f16, const B: i32 = 16) {\n"
      "  static_assert(area(B, 4) == 64, \"folded\");\n"
      "  store(x + arange(area(B, 2)), scale(load(x + arange(area(B, 2))), 3));\n"
      "}\n");
  expectValid(*l);
  // k: i64 from a literal, folded; the product stays f16.
  EXPECT_EQ(opsOf(*l->fn, OpKind::Mul).back()->result()->type().str(), "tile<32xf16>");
  EXPECT_EQ(opsOf(*l->fn, OpKind::Arange)[0]->result()->type().str(), "tile<32xi32>");
}

TEST(LangFn, NamedArgumentsBindByName) {
  auto l = lower(
      "fn sub(a: f32, b: f32) -> f32 { return a - b; }\n"
      "kernel k(x: *f32, y: *f32) { store(x, sub(b: load(x), a: load(y))); }\n");
  expectValid(*l);
  auto loads = opsOf(*l->fn, OpKind::Load);
  auto subs = opsOf(*l->fn, OpKind::Sub);
  ASSERT_EQ(loads.size(), 2u);
  ASSERT_EQ(subs.size(), 1u);
  EXPECT_EQ(subs[0]->operand(0), loads[1]->result());  // a = load(y)
  EXPECT_EQ(subs[0]->operand(1), loads[0]->result());
}

TEST(LangFn, InlinedOpsCarryTheFnsLines) {
  auto l = lower(
      "fn put(p: *f32, v: f32) {\n"
      "  store(p, exp(v));\n"
      "}\n"
      "kernel k(x: *f32) {\n"
      "  put(x, 1.0);\n"
      "  put(x + 1, 2.0);\n"
      "}\n");
  expectValid(*l);
  auto stores = opsOf(*l->fn, OpKind::Store);
  ASSERT_EQ(stores.size(), 2u);
  for (ir::Op *s : stores) EXPECT_EQ(s->loc().str(), "test.tk:2:3");
  for (ir::Op *e : opsOf(*l->fn, OpKind::Exp)) EXPECT_EQ(e->loc().line, 2);
}

TEST(LangFn, FnsCallFnsAndUseStaticControl) {
  auto l = lower(
      "fn poly(x: f32) -> f32 { var acc = x; for i in static_range(3) { acc = twice(acc); } return acc; }\n"
      "fn twice(x: f32) -> f32 { return x + x; }\n"
      "kernel k(x: *f32, const B: i32 = 8) { let o = arange(B); store(x + o, poly(load(x + o))); }\n");
  expectValid(*l);
  EXPECT_EQ(opsOf(*l->fn, OpKind::Add).size(), 3u);
}

TEST(LangFn, FnInAConstDefault) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  // The fn comes after the kernel: all decls of a file are visible.
  ASSERT_TRUE(fe.loadSource("kernel k(x: *f32, const B: i32 = dbl(64)) { store(x + arange(B), 1.0); }\n"
                            "fn dbl(n: i32) -> i32 { return 2 * n; }\n",
                            "c.tk"))
      << diags.render();
  ASSERT_EQ(fe.kernels().size(), 1u);
  EXPECT_EQ(fe.kernels()[0].params[1].constValue, "128");
}

TEST(LangFn, InliningIsBounded) {
  // f_i calls f_{i-1} twice: 2^15 inlined calls would hang; the cap stops it with one error.
  std::string src = "fn f0(x: f32) -> f32 { return x + 1.0; }\n";
  for (int i = 1; i <= 15; ++i)
    src += "fn f" + std::to_string(i) + "(x: f32) -> f32 { return f" + std::to_string(i - 1) + "(x) * f" +
           std::to_string(i - 1) + "(x); }\n";
  auto wide = lower(src + "kernel k(x: *f32) { store(x, f15(load(x))); }\n");
  EXPECT_FALSE(wide->fn);
  EXPECT_NE(wide->errors().find("error: more than 10000 fn calls inlined into this kernel"), std::string::npos)
      << wide->errors().substr(0, 2000);
  EXPECT_EQ(wide->diags.errorCount(), 1);

  // A chain deeper than 64 calls.
  std::string chain = "fn g0(x: f32) -> f32 { return x; }\n";
  for (int i = 1; i <= 70; ++i)
    chain += "fn g" + std::to_string(i) + "(x: f32) -> f32 { return g" + std::to_string(i - 1) + "(x); }\n";
  auto deep = lower(chain + "kernel k(x: *f32) { store(x, g70(1.0)); }\n");
  EXPECT_FALSE(deep->fn);
  EXPECT_NE(deep->errors().find("error: fn calls nested more than 64 deep"), std::string::npos);
  EXPECT_EQ(deep->diags.errorCount(), 1);
}

TEST(LangReturn, CompileTimeEarlyReturnEndsTheKernel) {
  const char *src =
      "kernel k(x: *f32, const SKIP: bool = false) {\n"
      "  store(x, 1.0);\n"
      "  if SKIP { return; }\n"
      "  store(x + 1, 2.0);\n"
      "  return;\n"
      "}\n";
  auto all = lower(src);
  expectValid(*all);
  EXPECT_EQ(opsOf(*all->fn, OpKind::Store).size(), 2u);
  auto skipped = lower(src, "", {{"SKIP", "true"}});
  expectValid(*skipped);
  EXPECT_EQ(opsOf(*skipped->fn, OpKind::Store).size(), 1u);
}

TEST(LangStaticAssert, PassingAssertsEmitNothing) {
  auto l = lower("kernel k(x: *f32, const B: i32 = 64) { static_assert(B % 32 == 0, \"B\"); store(x, 1.0); }\n");
  expectValid(*l);
  EXPECT_EQ(test::opNames(*l->fn), (std::vector<std::string>{"constant", "store", "return"}));
}

// Imports served from memory.
struct Files {
  std::map<std::string, std::string> files;
  std::vector<std::string> reads;
  Frontend::FileReader reader() {
    return [this](const std::string &path) -> std::optional<std::string> {
      reads.push_back(path);
      auto it = files.find(path);
      if (it == files.end()) return std::nullopt;
      return it->second;
    };
  }
};

TEST(LangImport, FnsOfImportsAreCallableKernelsAreNotEntries) {
  Files fs;
  fs.files["lib/a.tk"] = "import \"b.tk\";\nfn a1(x: f32) -> f32 { return b1(x) + 1.0; }\nkernel ka(x: *f32) {}\n";
  fs.files["lib/b.tk"] = "fn b1(x: f32) -> f32 { return x * 3.0; }\n";
  fs.files["lib/c.tk"] = "import \"b.tk\";\nfn c1(x: f32) -> f32 { return b1(x); }\n";
  DiagnosticEngine diags;
  Frontend fe(diags);
  fe.setFileReader(fs.reader());
  ASSERT_TRUE(fe.loadSource("import \"lib/a.tk\";\nimport \"lib/c.tk\";\n"
                            "kernel main(x: *f32) { store(x, a1(load(x)) + c1(2.0)); }\n",
                            "main.tk"))
      << diags.render();
  // b.tk is read once although two files import it.
  EXPECT_EQ(fs.reads, (std::vector<std::string>{"lib/a.tk", "lib/b.tk", "lib/c.tk"}));
  ASSERT_EQ(fe.kernels().size(), 1u);
  EXPECT_EQ(fe.kernels()[0].name, "main");
  auto fn = fe.lowerKernel("main", {}, 4);
  ASSERT_TRUE(fn) << diags.render();
  EXPECT_EQ(fe.lowerKernel("ka", {}, 4), nullptr);
}

TEST(LangImport, ErrorsInAnImportQuoteThatFile) {
  Files fs;
  fs.files["dir/helpers.tk"] = "// helpers\nfn h(x: f32) -> f32 {\n    return x * nope;\n}\n";
  DiagnosticEngine diags;
  Frontend fe(diags);
  fe.setFileReader(fs.reader());
  ASSERT_TRUE(fe.loadSource("import \"helpers.tk\";\nkernel k(x: *f32) { store(x, h(1.0)); }\n", "dir/main.tk"));
  EXPECT_EQ(fe.lowerKernel("k", {}, 4), nullptr);
  EXPECT_EQ(diags.render(),
            "dir/helpers.tk:3:16: error: unknown name 'nope'\n"
            "    return x * nope;\n"
            "               ^\n"
            "dir/main.tk:2:30: note: in 'h', inlined here\n"
            "kernel k(x: *f32) { store(x, h(1.0)); }\n"
            "                             ^\n");
}

TEST(LangImport, CyclesAndSelfImports) {
  Files fs;
  fs.files["a.tk"] = "import \"b.tk\";\nfn fa(x: f32) -> f32 { return x; }\n";
  fs.files["b.tk"] = "import \"a.tk\";\n";
  DiagnosticEngine diags;
  Frontend fe(diags);
  fe.setFileReader(fs.reader());
  EXPECT_FALSE(fe.loadSource("import \"a.tk\";\nkernel k(x: *f32) { store(x, fa(1.0)); }\n", "m.tk"));
  ASSERT_EQ(diags.diagnostics().size(), 1u) << diags.render();
  EXPECT_EQ(diags.diagnostics()[0].message, "import cycle: a.tk -> b.tk -> a.tk");
  EXPECT_EQ(diags.diagnostics()[0].loc.str(), "b.tk:1:1");

  DiagnosticEngine d2;
  Frontend self(d2);
  self.setFileReader(fs.reader());
  EXPECT_FALSE(self.loadSource("import \"./m.tk\";\n", "m.tk"));
  EXPECT_EQ(d2.diagnostics().at(0).message, "import cycle: m.tk -> m.tk");
}

TEST(LangImport, StdlibMathByRelativePathFromDisk) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  ASSERT_TRUE(fe.loadFile(TK_SOURCE_DIR + "/tests/unit/lang_inputs/uses_stdlib_math.tk")) << diags.render();
  ASSERT_EQ(fe.kernels().size(), 1u);
  auto fn = fe.lowerKernel("gelu_silu", {}, 4);
  ASSERT_TRUE(fn) << diags.render();
  std::string err;
  EXPECT_TRUE(ir::verifyFunction(*fn, err)) << err;
  EXPECT_EQ(opsOf(*fn, OpKind::Tanh).size(), 1u);
  // The ops of gelu_tanh point into stdlib/math.tk.
  EXPECT_NE(opsOf(*fn, OpKind::Tanh)[0]->loc().file.find("stdlib/math.tk"), std::string::npos);
}

}  // namespace
}  // namespace tk::lang

namespace tk::lang {
namespace {
// Every built-in name, present and future: a user's file that defines a fn
// (or binds a let, or names a parameter) of that name still compiles, and
// its own definition wins. The list is IRGen::builtinNames(), so a built-in
// added tomorrow is checked here the day it lands: adding a built-in never
// breaks a user's program again.
TEST(LangFn, AUserDefinitionOfAnyBuiltinNameWins) {
  std::vector<std::string> names = IRGen::builtinNames();
  names.push_back("static_assert");
  names.push_back("static_range");
  for (const std::string &n : names) {
    auto fnUser = test::lower("fn " + n + "(x: f32) -> f32 { return x * 3.0; }\n"
                              "kernel k(v: f32) { let r = " + n + "(v); }");
    ASSERT_TRUE(fnUser->fn) << n << ":\n" << fnUser->errors();
    EXPECT_FALSE(fnUser->diags.hasErrors()) << n << ":\n" << fnUser->errors();
    EXPECT_EQ(test::opsOf(*fnUser->fn, ir::OpKind::Mul).size(), 1u) << n << ": the user's fn was not the one called";
    auto letUser = test::lower("kernel k(p: *f32, " + n + ": f32) { let y = " + n + " * 2.0; store(p, y); }");
    EXPECT_TRUE(letUser->fn && !letUser->diags.hasErrors()) << n << " as a parameter:\n" << letUser->errors();
  }
}
}  // namespace
}  // namespace tk::lang
