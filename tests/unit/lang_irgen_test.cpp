// Typing and IR generation: every op sees operands of identical type, with
// the casts, splats and broadcasts spelled out; weak literals; constant
// folding; const specialisation through defines.
#include <gtest/gtest.h>

#include "ir/Verifier.h"
#include "lang_TestUtil.h"

namespace tk::lang {
namespace {

using ir::OpKind;
using ir::ScalarKind;
using test::lower;
using test::opNames;
using test::opsOf;

// Lowers `body` inside a kernel with a few typical parameters.
std::unique_ptr<test::Lowered> body(const std::string &stmts) {
  auto l = lower("kernel k(x: *f32, h: *f16, p: *i64, n: i32, m: i64, f: f32, g: f16, bb: bf16, d: f64, s: i8,\n"
                 "         flag: bool, const B: i32 = 64) {\n" + stmts + "\n}\n");
  if (l->fn) {
    std::string err;
    EXPECT_TRUE(ir::verifyFunction(*l->fn, err)) << err << "\n" << ir::printFunction(*l->fn);
  }
  return l;
}

// The type of the value stored by the kernel's single store.
std::string storedType(ir::Function &fn) {
  auto stores = opsOf(fn, OpKind::Store);
  EXPECT_EQ(stores.size(), 1u);
  return stores.empty() ? "" : stores[0]->operand(1)->type().str();
}

// The result type of the last op of kind `k`.
std::string lastType(ir::Function &fn, OpKind k) {
  auto ops = opsOf(fn, k);
  return ops.empty() ? "<none>" : ops.back()->result()->type().str();
}

TEST(LangTyping, ElementwiseOpsSeeIdenticalTypes) {
  auto l = body("let a = arange(B);\n"
                "let v = load(x + a) * 2 + a[:, None] * f - (n + g) / 3.0;\n"
                "store(x + a[None, :] + a[:, None] * B, v);");
  ASSERT_TRUE(l->fn) << l->errors();
  for (ir::Op *op : l->fn->walk()) {
    if (!op->hasTrait(ir::OpTrait::Elementwise) || op->is(OpKind::Cast) || op->is(OpKind::AddPtr)) continue;
    for (ir::Value *v : op->operands()) {
      if (op->is(OpKind::Select) && v == op->operand(0)) continue;
      EXPECT_EQ(v->type(), op->operand(op->numOperands() - 1)->type()) << op->info().mnemonic;
    }
  }
  EXPECT_EQ(storedType(*l->fn), "tile<64x64xf32>");
}

TEST(LangTyping, PromotionRules) {
  struct Case {
    const char *expr;
    const char *type;
  } cases[] = {
      {"arange(B) + 1", "tile<64xi32>"},           // weak int takes the other's type
      {"arange(B) + m", "tile<64xi64>"},           // mixed ints: the wider
      {"arange(B) * 0.5", "tile<64xf32>"},         // int op weak float: f32
      {"arange(B) + g", "tile<64xf16>"},           // int op float: the float
      {"g + bb + arange(B)", "tile<64xf32>"},      // f16 op bf16: f32
      {"d * arange(B)", "tile<64xf64>"},           // the wider float
      {"g * 2.0 + arange(B) as f16", "tile<64xf16>"},  // weak float takes f16
      {"s + arange(B) as i8", "tile<64xi8>"},
      {"exp(arange(B))", "tile<64xf32>"},          // math on ints: f32
      {"exp(arange(B) as f16)", "tile<64xf16>"},   // f16 math keeps f16
      {"abs(arange(B))", "tile<64xi32>"},          // abs keeps ints
      {"sigmoid(arange(B) as bf16)", "tile<64xbf16>"},
      {"arange(B) < n", "tile<64xi1>"},
      {"(arange(B) < n) && flag", "tile<64xi1>"},
      {"where(arange(B) < n, 1.0, g)", "tile<64xf16>"},
      {"maximum(arange(B), 3)", "tile<64xi32>"},
      {"relu(arange(B) as f64)", "tile<64xf64>"},
      {"fma(arange(B), 2, 1.0)", "tile<64xf32>"},
      {"cast(arange(B), bf16)", "tile<64xbf16>"},
      {"arange(B) % 3 / 2", "tile<64xi32>"},
      {"(arange(B) << 2) ^ 5 | 1 & ~n", "tile<64xi32>"},
      {"m + 4000000000", "i64"},
  };
  for (const Case &c : cases) {
    if (!*c.type) continue;
    auto l = body(std::string("let r = ") + c.expr + ";\nlet q = r;");
    ASSERT_TRUE(l->fn) << c.expr << "\n" << l->errors();
    // The value bound to `r` is the last op with that name hint.
    std::string type;
    for (ir::Op *op : l->fn->walk())
      if (op->result() && op->result()->nameHint() == "r") type = op->result()->type().str();
    EXPECT_EQ(type, c.type) << c.expr << "\n" << ir::printFunction(*l->fn);
  }
}

TEST(LangTyping, BroadcastingIsExplicit) {
  auto l = body("let i = arange(16);\nlet j = arange(32);\nlet r = i[:, None] + j[None, :];");
  ASSERT_TRUE(l->fn) << l->errors();
  std::vector<std::string> expected = {"arange", "arange", "expand_dims", "expand_dims",
                                       "broadcast", "broadcast", "add", "return"};
  EXPECT_EQ(opNames(*l->fn), expected) << ir::printFunction(*l->fn);
  auto ex = opsOf(*l->fn, OpKind::ExpandDims);
  EXPECT_EQ(ex[0]->intAttr("axis"), 1);
  EXPECT_EQ(ex[0]->result()->type().str(), "tile<16x1xi32>");
  EXPECT_EQ(ex[1]->intAttr("axis"), 0);
  EXPECT_EQ(ex[1]->result()->type().str(), "tile<1x32xi32>");
  EXPECT_EQ(lastType(*l->fn, OpKind::Add), "tile<16x32xi32>");

  // A rank-1 operand against rank 2: a leading size-1 dim, then broadcast.
  auto m = body("let r = zeros([8, 16], f32) + arange(16);");
  ASSERT_TRUE(m->fn) << m->errors();
  std::vector<std::string> expected2 = {"constant", "arange", "cast", "expand_dims", "broadcast", "add", "return"};
  EXPECT_EQ(opNames(*m->fn), expected2) << ir::printFunction(*m->fn);
}

TEST(LangTyping, PointerArithmetic) {
  auto l = body("let o = arange(B);\nlet a = load(x + o);\nlet b = load(p - 1);\nlet c = load(o + x + m);");
  ASSERT_TRUE(l->fn) << l->errors();
  auto adds = opsOf(*l->fn, OpKind::AddPtr);
  ASSERT_EQ(adds.size(), 4u);
  EXPECT_EQ(adds[0]->operand(0)->type().str(), "tile<64xptr<f32>>");  // splatted pointer
  EXPECT_EQ(adds[0]->operand(1)->type().str(), "tile<64xi32>");
  EXPECT_EQ(adds[1]->result()->type().str(), "ptr<i64>");  // scalar pointer arithmetic
  EXPECT_EQ(adds[1]->operand(1)->definingOp()->floatAttr("value"), -1);
  EXPECT_EQ(adds[3]->operand(1)->type().str(), "tile<64xi64>");  // i64 offsets stay i64
  EXPECT_EQ(lastType(*l->fn, OpKind::Load), "tile<64xf32>");
}

TEST(LangTyping, LoadAndStoreOperands) {
  auto l = body("let o = arange(B);\nlet msk = o < n;\n"
                "let a = load(h + o, mask: msk, other: 1.5);\n"
                "let b = load(h + o, mask: msk);\n"
                "store(h + o, a * b + f, mask: msk);");
  ASSERT_TRUE(l->fn) << l->errors();
  auto loads = opsOf(*l->fn, OpKind::Load);
  ASSERT_EQ(loads.size(), 2u);
  for (ir::Op *ld : loads) {
    ASSERT_EQ(ld->numOperands(), 3u);
    EXPECT_EQ(ld->operand(1)->type().str(), "tile<64xi1>");
    EXPECT_EQ(ld->operand(2)->type().str(), "tile<64xf16>");
  }
  EXPECT_EQ(loads[0]->operand(2)->definingOp()->floatAttr("value"), 1.5);
  EXPECT_EQ(loads[1]->operand(2)->definingOp()->floatAttr("value"), 0.0);
  // a * b + f is f32 (f16 op f32); the store converts it back to f16.
  auto stores = opsOf(*l->fn, OpKind::Store);
  ASSERT_EQ(stores.size(), 1u);
  EXPECT_EQ(stores[0]->operand(1)->type().str(), "tile<64xf16>");
  EXPECT_TRUE(stores[0]->operand(1)->definingOp()->is(OpKind::Cast));
  EXPECT_EQ(stores[0]->numOperands(), 3u);
}

TEST(LangTyping, BuiltinsExpandToOps) {
  auto l = body("let o = arange(B) as f32;\nlet r = relu(o);\nlet s = sigmoid(o);\nlet w = where(o > 0.0, o, -o);");
  ASSERT_TRUE(l->fn) << l->errors();
  std::vector<std::string> expected = {"arange", "cast", "constant", "max",              // relu
                                       "neg", "exp", "constant", "add", "constant", "div",  // sigmoid
                                       "constant", "cmp", "neg", "select", "return"};
  EXPECT_EQ(opNames(*l->fn), expected) << ir::printFunction(*l->fn);
  EXPECT_EQ(opsOf(*l->fn, OpKind::Cmp)[0]->strAttr("predicate"), "gt");
}

TEST(LangTyping, LocationsAndNames) {
  auto l = lower("kernel k(x: *f32) {\n  let offs = arange(8);\n  store(x + offs, offs);\n}\n");
  ASSERT_TRUE(l->fn) << l->errors();
  EXPECT_EQ(l->fn->loc.line, 1);
  EXPECT_EQ(std::get<std::string>(l->fn->attrs.at("source")), "test.tk");
  for (ir::Op *op : l->fn->walk()) {
    EXPECT_TRUE(op->loc().known()) << op->info().mnemonic;
    EXPECT_EQ(op->loc().file, "test.tk");
  }
  auto ar = opsOf(*l->fn, OpKind::Arange)[0];
  EXPECT_EQ(ar->loc().line, 2);
  EXPECT_EQ(ar->loc().col, 14);
  EXPECT_EQ(ar->result()->nameHint(), "offs");
  EXPECT_EQ(opsOf(*l->fn, OpKind::AddPtr)[0]->loc().col, 11);  // the '+'
  EXPECT_TRUE(l->fn->body.ops().back()->is(OpKind::Return));
}

TEST(LangConsts, FoldingAndDefines) {
  const char *src =
      "kernel k(x: *f32, const B: i32 = 32, const H: i32 = B * 2 + 1 - 1, const S: f32 = 0.5,\n"
      "         const F: bool = true) {\n"
      "  let o = arange(H / 2 * 2);\n"
      "  store(x + o, o * S + (1 << 4));\n"
      "}\n";
  auto l = lower(src);
  ASSERT_TRUE(l->fn) << l->errors();
  EXPECT_EQ(std::get<int64_t>(l->fn->attrs.at("const.B")), 32);
  EXPECT_EQ(std::get<int64_t>(l->fn->attrs.at("const.H")), 64);
  EXPECT_EQ(std::get<double>(l->fn->attrs.at("const.S")), 0.5);
  EXPECT_EQ(std::get<int64_t>(l->fn->attrs.at("const.F")), 1);
  EXPECT_EQ(l->fn->params.size(), 1u);  // consts are not parameters
  EXPECT_EQ(lastType(*l->fn, OpKind::Arange), "tile<64xi32>");
  // (1 << 4) folds: no shl op, one constant 16.0 after conversion to f32.
  EXPECT_TRUE(opsOf(*l->fn, OpKind::Shl).empty());

  // A define overrides B, and H's default follows it.
  auto d = lower(src, "k", {{"B", "128"}, {"S", "2.5"}, {"F", "false"}});
  ASSERT_TRUE(d->fn) << d->errors();
  EXPECT_EQ(std::get<int64_t>(d->fn->attrs.at("const.H")), 256);
  EXPECT_EQ(lastType(*d->fn, OpKind::Arange), "tile<256xi32>");
  EXPECT_EQ(std::get<double>(d->fn->attrs.at("const.S")), 2.5);
  EXPECT_EQ(std::get<int64_t>(d->fn->attrs.at("const.F")), 0);
}

TEST(LangConsts, KernelSignatures) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  ASSERT_TRUE(fe.loadSource("kernel a(x: *f16 align(2), n: i64, const B: i32 = 4 * 8, const E: f32 = 1e-5) {}\n"
                            "kernel b(const T: bool = false) {}\n",
                            "s.tk"))
      << diags.render();
  auto ks = fe.kernels();
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].name, "a");
  ASSERT_EQ(ks[0].params.size(), 4u);
  EXPECT_EQ(ks[0].params[0].type, "*f16");
  EXPECT_EQ(ks[0].params[0].align, 2);
  EXPECT_EQ(ks[0].params[1].type, "i64");
  EXPECT_FALSE(ks[0].params[1].isConst);
  EXPECT_TRUE(ks[0].params[2].isConst);
  EXPECT_EQ(ks[0].params[2].constValue, "32");
  EXPECT_EQ(ks[0].params[3].constValue, "1e-05");
  EXPECT_EQ(ks[1].params[0].constValue, "false");
  KernelSig sig;
  auto fn = fe.lowerKernel("a", {{"B", "16"}}, 2, &sig);
  ASSERT_TRUE(fn) << diags.render();
  EXPECT_EQ(sig.params[2].constValue, "16");
  EXPECT_EQ(fn->params[0].align, 2);
  EXPECT_EQ(fn->numWarps(), 2);
}

TEST(LangConsts, BadDefinesAreErrors) {
  const char *src = "kernel k(x: *f32, const B: i32 = 8, const F: bool = true) { store(x, 1.0); }\n";
  struct Case {
    std::map<std::string, std::string> defines;
    const char *message;
  } cases[] = {
      {{{"Q", "1"}}, "kernel 'k' has no parameter named 'Q' to define"},
      {{{"x", "1"}}, "parameter 'x' is not const, so it cannot be defined"},
      {{{"B", "abc"}}, "invalid value 'abc' for const parameter 'B' of type i32"},
      {{{"B", "1.5"}}, "invalid value '1.5'"},
      {{{"B", "99999999999"}}, "invalid value '99999999999'"},
      {{{"F", "maybe"}}, "invalid value 'maybe' for const parameter 'F' of type bool"},
  };
  for (const Case &c : cases) {
    auto l = lower(src, "k", c.defines);
    EXPECT_FALSE(l->fn);
    ASSERT_EQ(l->diags.diagnostics().size(), 1u) << l->errors();
    EXPECT_NE(l->diags.diagnostics()[0].message.find(c.message), std::string::npos) << l->errors();
  }
  auto w = lower(src, "nope");
  EXPECT_FALSE(w->fn);
  EXPECT_EQ(w->diags.diagnostics()[0].message, "no kernel named 'nope' in test.tk");
  DiagnosticEngine diags;
  Frontend fe(diags);
  fe.loadSource(src, "t.tk");
  EXPECT_FALSE(fe.lowerKernel("k", {}, 3));
  EXPECT_NE(diags.render().find("num_warps must be a power of two from 1 to 32, not 3"), std::string::npos);
}

}  // namespace
}  // namespace tk::lang
