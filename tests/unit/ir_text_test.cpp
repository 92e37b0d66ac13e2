// The tile IR's text form: builder-made functions print as documented, parse
// back, and print identically; malformed text gives a located error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/IR.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "ir/passes/Passes.h"

namespace tk::ir {
namespace {

// The elementwise kernel of DESIGN.md, as lang/ would build it.
std::unique_ptr<Module> buildComplexActivation(bool withLayouts) {
  auto m = std::make_unique<Module>();
  auto fn = std::make_unique<Function>();
  fn->name = "complex_activation";
  fn->attrs["num_warps"] = int64_t(4);
  fn->attrs["const.BLOCK"] = int64_t(1024);
  fn->loc = {"stdlib/elementwise.tk", 2, 1};
  Value *x = fn->addParam("x", Type::ptr(ScalarKind::F32), 16);
  Value *y = fn->addParam("y", Type::ptr(ScalarKind::F32), 16);
  Value *out = fn->addParam("out", Type::ptr(ScalarKind::F32), 16);
  Value *n = fn->addParam("n", Type::scalar(ScalarKind::I32));
  LayoutRef l = withLayouts ? Layout::blocked({4}, {32}, {4}, {0}) : nullptr;
  Type i32 = Type::scalar(ScalarKind::I32);
  Type ti = Type::tile({ScalarKind::I32, false}, {1024}, l);
  Type tf = Type::tile({ScalarKind::F32, false}, {1024}, l);
  Type tp = Type::tile({ScalarKind::F32, true}, {1024}, l);
  Type tb = Type::tile({ScalarKind::I1, false}, {1024}, l);
  Builder b(&fn->body);
  b.setLoc({"stdlib/elementwise.tk", 3, 16});
  Value *pid = b.value(OpKind::ProgramId, {}, i32, {{"axis", int64_t(0)}});
  Value *block = b.constInt(1024, i32);
  Value *base = b.value(OpKind::Mul, {pid, block}, i32);
  Value *range = b.value(OpKind::Arange, {}, ti, {{"start", int64_t(0)}, {"end", int64_t(1024)}});
  Value *offs = b.value(OpKind::Add, {b.value(OpKind::Splat, {base}, ti), range}, ti);
  offs->setNameHint("offs");
  b.setLoc({"stdlib/elementwise.tk", 4, 13});
  Value *mask = b.value(OpKind::Cmp, {offs, b.value(OpKind::Splat, {n}, ti)}, tb, {{"predicate", std::string("lt")}});
  Value *a = b.value(OpKind::Load, {b.value(OpKind::AddPtr, {b.value(OpKind::Splat, {x}, tp), offs}, tp), mask}, tf);
  Value *c = b.value(OpKind::Load, {b.value(OpKind::AddPtr, {b.value(OpKind::Splat, {y}, tp), offs}, tp), mask}, tf);
  Value *s = b.value(OpKind::Fma, {b.value(OpKind::Sin, {a}, tf), b.value(OpKind::Cos, {c}, tf), a}, tf);
  Value *zero = b.constFloat(0.0, tf);
  Value *r = b.value(OpKind::Max, {b.value(OpKind::Mul, {s, c}, tf), zero}, tf);
  b.create(OpKind::Store, {b.value(OpKind::AddPtr, {b.value(OpKind::Splat, {out}, tp), offs}, tp), r, mask}, std::nullopt);
  b.create(OpKind::Return, {}, std::nullopt);
  m->functions.push_back(std::move(fn));
  return m;
}

std::string roundTrip(const std::string &text, const PrintOptions &opts = {}) {
  std::string error;
  auto m = parseModule(text, "t.tir", error);
  EXPECT_TRUE(m) << error;
  return m ? printModule(*m, opts) : "";
}

TEST(IrText, PrintsTheDocumentedForm) {
  auto m = buildComplexActivation(false);
  std::string text = printModule(*m);
  EXPECT_NE(text.find("kernel @complex_activation(%x: ptr<f32> {align = 16}, %y: ptr<f32> {align = 16}, "
                      "%out: ptr<f32> {align = 16}, %n: i32) {const.BLOCK = 1024, num_warps = 4} {\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  %0 = program_id {axis = 0} : i32\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  %3 = arange {end = 1024, start = 0} : tile<1024xi32>\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  %5 = add %4, %3 : tile<1024xi32>  // offs\n"), std::string::npos) << text;
  EXPECT_NE(text.find("cmp %5, %6 {predicate = \"lt\"} : tile<1024xi1>"), std::string::npos) << text;
  EXPECT_NE(text.find("  store %21, %19, %7\n  return\n}\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("loc("), std::string::npos) << "locations only on request";
}

TEST(IrText, RoundTripsWithAndWithoutLocationsAndLayouts) {
  for (bool layouts : {false, true}) {
    for (bool locs : {false, true}) {
      PrintOptions opts;
      opts.locations = locs;
      std::string text = printModule(*buildComplexActivation(layouts), opts);
      if (locs) {
        EXPECT_NE(text.find("loc(\"stdlib/elementwise.tk\":4:13)"), std::string::npos) << text;
      }
      if (layouts) {
        EXPECT_NE(text.find("tile<1024xf32, #blocked<[4],[32],[4],[0]>>"), std::string::npos) << text;
      }
      EXPECT_EQ(roundTrip(text, opts), text);
    }
  }
}

TEST(IrText, ParsedModuleKeepsParamsAttrsLocationsAndHints) {
  PrintOptions opts;
  opts.locations = true;
  std::string error;
  auto m = parseModule(printModule(*buildComplexActivation(true), opts), "t.tir", error);
  ASSERT_TRUE(m) << error;
  Function *fn = m->lookup("complex_activation");
  ASSERT_TRUE(fn);
  ASSERT_EQ(fn->params.size(), 4u);
  EXPECT_EQ(fn->params[0].name, "x");
  EXPECT_EQ(fn->params[0].align, 16);
  EXPECT_EQ(fn->params[3].align, 0);
  EXPECT_EQ(fn->numWarps(), 4);
  EXPECT_EQ(std::get<int64_t>(fn->attrs.at("const.BLOCK")), 1024);
  EXPECT_EQ(fn->loc.str(), "stdlib/elementwise.tk:2:1");
  std::vector<Op *> ops = fn->walk();
  ASSERT_GT(ops.size(), 6u);
  EXPECT_EQ(ops[5]->kind(), OpKind::Add);
  EXPECT_EQ(ops[5]->result()->nameHint(), "offs");
  EXPECT_EQ(ops[5]->operand(1), ops[3]->result());
  EXPECT_EQ(ops[6]->loc().str(), "stdlib/elementwise.tk:4:13");
  EXPECT_EQ(ops[5]->result()->type().layout->str(), "#blocked<[4],[32],[4],[0]>");
}

TEST(IrText, FloatsAndStringsRoundTripExactly) {
  auto fn = std::make_unique<Function>();
  fn->name = "consts";
  fn->attrs["source"] = std::string("a \"quoted\"\\ name\nwith\ttabs \x01");
  fn->attrs["not an identifier!"] = std::vector<int64_t>{1, -2, 3};
  fn->attrs["empty"] = std::vector<int64_t>{};
  Builder b(&fn->body);
  Type f64 = Type::scalar(ScalarKind::F64);
  std::vector<double> values = {0.1, -0.0, 1e300, 5e-324, 1.0 / 3.0, 2.0, -1.5e-7,
                                std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (double v : values) b.constFloat(v, f64);
  b.constFloat(std::numeric_limits<double>::quiet_NaN(), f64);
  b.create(OpKind::Return, {}, std::nullopt);
  Module m;
  m.functions.push_back(std::move(fn));
  std::string text = printModule(m);
  std::string error;
  auto back = parseModule(text, "t.tir", error);
  ASSERT_TRUE(back) << error << "\n" << text;
  EXPECT_EQ(printModule(*back), text);
  EXPECT_NE(text.find("{empty = [], \"not an identifier!\" = [1, -2, 3], source = "), std::string::npos) << text;
  EXPECT_EQ(std::get<std::string>(back->functions[0]->attrs.at("source")),
            std::get<std::string>(m.functions[0]->attrs.at("source")));
  auto ops = back->functions[0]->walk();
  for (size_t i = 0; i < values.size(); ++i) {
    double got = ops[i]->floatAttr("value");
    EXPECT_EQ(std::memcmp(&got, &values[i], sizeof got), 0) << "value " << i << ": " << text;
  }
  EXPECT_TRUE(std::isnan(ops[values.size()]->floatAttr("value")));
}

TEST(IrText, ParamNamesAreMadeUniqueAndRegionsPrint) {
  auto fn = std::make_unique<Function>();
  fn->name = "weird name";
  Value *a = fn->addParam("a", Type::scalar(ScalarKind::I32));
  fn->addParam("a", Type::scalar(ScalarKind::I32));
  fn->addParam("", Type::scalar(ScalarKind::I32));
  fn->addParam("7", Type::scalar(ScalarKind::I32));
  Builder b(&fn->body);
  // No op has regions yet; the text form already carries them.
  Op *withRegion = b.create(OpKind::Neg, {a}, Type::scalar(ScalarKind::I32));
  auto region = std::make_unique<Block>();
  Value *ra = region->addArgument(Type::scalar(ScalarKind::I32));
  Builder rb(region.get());
  rb.value(OpKind::Add, {ra, a}, Type::scalar(ScalarKind::I32));
  region->setParentOp(withRegion);
  withRegion->regions().push_back(std::move(region));
  withRegion->regions().push_back(std::make_unique<Block>());
  b.create(OpKind::Return, {}, std::nullopt);
  Module m;
  m.functions.push_back(std::move(fn));
  std::string text = printModule(m);
  EXPECT_NE(text.find("kernel @\"weird name\"(%a: i32, %a_1: i32, %arg2: i32, %arg7: i32) {"), std::string::npos) << text;
  EXPECT_NE(text.find("  %0 = neg %a ({\n  ^(%1: i32):\n    %2 = add %1, %a : i32\n  }, {\n  }) : i32\n"), std::string::npos) << text;
  EXPECT_EQ(roundTrip(text), text);
}

TEST(IrText, ParsesHandWrittenText) {
  std::string text = R"(// a comment
kernel @k(%p: ptr<f16> {align = 8}) {   // trailing
  %c = constant {value = 2.5} : f16
  %t = splat %c : tile<2x4xf16>   // not an identifier: ignored
  %q = splat %p
      : tile<2x4xptr<f16>, #slice<1, #blocked<[1,1,1],[1,8,4],[1,1,4],[2,1,0]>>>
  return
}
kernel @empty() { return }
)";
  std::string error;
  auto m = parseModule(text, "h.tir", error);
  ASSERT_TRUE(m) << error;
  ASSERT_EQ(m->functions.size(), 2u);
  auto ops = m->functions[0]->walk();
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[1]->result()->nameHint(), "");
  EXPECT_EQ(ops[2]->result()->type().str(), "tile<2x4xptr<f16>, #slice<1, #blocked<[1,1,1],[1,8,4],[1,1,4],[2,1,0]>>>");
  EXPECT_EQ(roundTrip(printModule(*m)), printModule(*m));
}

struct BadInput {
  const char *text;
  const char *error;
};

TEST(IrText, MalformedInputGivesLocatedErrors) {
  const BadInput cases[] = {
      {"kernel @k() {\n  %0 = frob : i32\n  return\n}\n", "t.tir:2:8: error: unknown op 'frob'"},
      {"kernel @k() {\n  %0 = add %1, %1 : i32\n}\n", "t.tir:2:12: error: use of undefined value %1"},
      {"kernel @k() {\n  %0 = program_id {axis = 0}\n  return\n}\n", "t.tir:3:3: error: expected ': type' after op 'program_id'"},
      {"kernel @k() {\n  %0 = constant {value = 1} : tile<4xq32>\n}\n", "t.tir:2:38: error: unknown element type 'q32'"},
      {"kernel @k() {\n  %0 = constant {value = 1} : i32\n  %0 = constant {value = 1} : i32\n}\n",
       "t.tir:3:3: error: redefinition of value %0"},
      {"kernel @k() {\n  store\n", "t.tir:3:1: error: expected '}' to close the block, found end of input"},
      {"kernel @k() {\n  %0 = constant {value = 99999999999999999999} : i64\n}\n", "t.tir:2:26: error: integer out of range"},
      {"kernel @k() {\n  return : i32\n}\n", "t.tir:2:10: error: op 'return' has no result, so no type"},
      {"kernel @k() {\n  %1 = return\n}\n", "t.tir:2:3: error: op 'return' has no result"},
      {"kernel @k() {\n  add\n}\n", "t.tir:2:3: error: op 'add' has a result"},
      {"kernel @k(%a: i32 {bogus = 1}) {\n}\n", "t.tir:1:20: error: unknown parameter attribute"},
      {"kernel @k() {}\nkernel @k() {}\n", "t.tir:2:1: error: redefinition of kernel @k"},
      {"kernel @k() {\n  %0 = constant {value = \"abc} : i32\n}\n", "t.tir:2:26: error: unterminated string"},
      {"kernel @k() {\n  %0 = constant {value = 1} : tile<4xi32, #grid<1>>\n}\n", "t.tir:2:43: error: unknown layout '#grid'"},
      {"func @k() {}", "t.tir:1:1: error: expected 'kernel', found 'func'"},
  };
  for (const auto &c : cases) {
    std::string error;
    auto m = parseModule(c.text, "t.tir", error);
    EXPECT_FALSE(m) << c.text;
    EXPECT_EQ(error.rfind(c.error, 0), 0u) << "input:\n" << c.text << "\ngot: " << error << "\nwant: " << c.error;
  }
}

// Every prefix of valid text, and the text with bytes flipped, must give an
// error or a module, never a crash.
TEST(IrText, SurvivesTruncationAndGarbage) {
  PrintOptions opts;
  opts.locations = true;
  std::string text = printModule(*buildComplexActivation(true), opts);
  for (size_t n = 0; n < text.size(); ++n) {
    std::string error;
    auto m = parseModule(text.substr(0, n), "t.tir", error);
    if (!m) {
      EXPECT_NE(error.find(": error: "), std::string::npos);
    }
  }
  const char garbage[] = {'\0', '%', '{', '}', '<', '>', '#', '"', '\\', '(', ')', ',', ':', 'x', '9', '-', '\n', '\xff'};
  uint32_t seed = 12345;
  for (int round = 0; round < 3000; ++round) {
    std::string t = text;
    for (int k = 0; k < 3; ++k) {
      seed = seed * 1664525u + 1013904223u;
      size_t at = (seed >> 8) % t.size();
      t[at] = garbage[(seed >> 3) % sizeof garbage];
    }
    std::string error;
    auto m = parseModule(t, "t.tir", error);
    if (m) {
      std::string again = printModule(*m, opts);
      EXPECT_EQ(roundTrip(again, opts), again);
      // Whatever parses, valid or not, the verifier and the passes survive.
      verifyModule(*m, error);
      for (auto &fn : m->functions) {
        canonicalize(*fn);
        eliminateCommonSubexpressions(*fn);
        eliminateDeadCode(*fn);
      }
    } else {
      EXPECT_NE(error.find(": error: "), std::string::npos);
    }
  }
  std::string deep = "kernel @k(%a: i32) {\n";
  for (int i = 0; i < 600; ++i) deep += "%v" + std::to_string(i) + " = neg %a ({\n";
  std::string error;
  EXPECT_FALSE(parseModule(deep, "t.tir", error));
  EXPECT_NE(error.find("nested too deeply"), std::string::npos) << error;
}

}  // namespace
}  // namespace tk::ir
