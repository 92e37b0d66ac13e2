// Each pass on builder-made IR, and the pipeline: registry, order, verifier
// between passes, dumps, custom passes.
#include <gtest/gtest.h>

#include <sstream>

#include "ir/IR.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "ir/passes/Passes.h"
#include "tk/error.h"

namespace tk::ir {
namespace {

std::unique_ptr<Module> parse(const std::string &text) {
  std::string error;
  auto m = parseModule(text, "p.tir", error);
  EXPECT_TRUE(m) << error;
  return m;
}

// Runs `pass` on the one kernel of `text` and returns it printed.
std::string runPass(bool (*pass)(Function &), const std::string &text, bool *changed = nullptr) {
  auto m = parse(text);
  if (!m) return "";
  bool c = pass(*m->functions[0]);
  if (changed) *changed = c;
  return printModule(*m);
}

int countOps(const Function &fn, OpKind kind) {
  int n = 0;
  for (Op *op : const_cast<Function &>(fn).walk()) n += op->is(kind);
  return n;
}

TEST(IrPasses, CanonicalizeFoldsIntsWithWrapAround) {
  Function fn;
  fn.name = "k";
  Value *out = fn.addParam("out", Type::ptr(ScalarKind::I8));
  Builder b(&fn.body);
  Type i8 = Type::scalar(ScalarKind::I8);
  Value *sum = b.value(OpKind::Add, {b.constInt(100, i8), b.constInt(100, i8)}, i8);
  Value *shifted = b.value(OpKind::Shl, {b.constInt(1, i8), b.constInt(7, i8)}, i8);
  Value *tooFar = b.value(OpKind::Shl, {b.constInt(1, i8), b.constInt(8, i8)}, i8);
  b.create(OpKind::Store, {out, sum}, std::nullopt);
  b.create(OpKind::Store, {out, shifted}, std::nullopt);
  b.create(OpKind::Store, {out, tooFar}, std::nullopt);
  b.create(OpKind::Return, {}, std::nullopt);
  EXPECT_TRUE(canonicalize(fn));
  auto ops = fn.walk();
  std::vector<int64_t> stored;
  for (Op *op : ops)
    if (op->is(OpKind::Store) && op->operand(1)->definingOp()->is(OpKind::Constant))
      stored.push_back(op->operand(1)->definingOp()->intAttr("value"));
  EXPECT_EQ(stored, (std::vector<int64_t>{-56, -128}));  // 200 and 128 wrap in i8
  EXPECT_EQ(countOps(fn, OpKind::Shl), 1) << "a shift by the width is not folded";
  EXPECT_FALSE(canonicalize(fn)) << "a second run finds nothing";
}

TEST(IrPasses, CanonicalizeSimplifiesSplatsAndIdentities) {
  const char *text = R"(kernel @k(%s: i32, %out: ptr<i32>) {
  %0 = constant {value = 0} : i32
  %1 = splat %s : tile<16xi32>
  %2 = expand_dims %1 {axis = 1} : tile<16x1xi32>
  %3 = broadcast %2 : tile<16x8xi32>
  %4 = constant {value = 0} : tile<16x8xi32>
  %5 = add %4, %3 : tile<16x8xi32>
  %6 = not %s : i32
  %7 = not %6 : i32
  %8 = splat %out : tile<16x8xptr<i32>>
  store %8, %5
  store %out, %7
  return
}
)";
  bool changed = false;
  std::string result = runPass(canonicalize, text, &changed);
  EXPECT_TRUE(changed);
  EXPECT_NE(result.find("= splat %s : tile<16x8xi32>"), std::string::npos) << result;
  EXPECT_EQ(result.find("add"), std::string::npos) << result;
  EXPECT_NE(result.find("store %out, %s\n"), std::string::npos) << result;
}

TEST(IrPasses, CanonicalizeMovesConstantsRightSoCseMerges) {
  const char *text = R"(kernel @k(%a: i32, %out: ptr<i32>) {
  %0 = constant {value = 5} : i32
  %1 = mul %0, %a : i32
  %2 = mul %a, %0 : i32
  store %out, %1
  store %out, %2
  return
}
)";
  auto m = parse(text);
  Function &fn = *m->functions[0];
  PassPipeline p;
  p.add("canonicalize", canonicalize).add("cse", eliminateCommonSubexpressions);
  EXPECT_TRUE(p.run(*m));
  EXPECT_EQ(countOps(fn, OpKind::Mul), 1) << printModule(*m);
}

TEST(IrPasses, CseKeepsValuesOfRegionsInside) {
  // A value computed inside a region must not replace one after it.
  Function fn;
  fn.name = "k";
  Value *a = fn.addParam("a", Type::scalar(ScalarKind::I32));
  Builder b(&fn.body);
  Op *holder = b.create(OpKind::Neg, {a}, Type::scalar(ScalarKind::I32));
  auto region = std::make_unique<Block>();
  Builder rb(region.get());
  rb.value(OpKind::Add, {a, a}, Type::scalar(ScalarKind::I32));
  region->setParentOp(holder);
  holder->regions().push_back(std::move(region));
  Value *outer = b.value(OpKind::Add, {a, a}, Type::scalar(ScalarKind::I32));
  b.value(OpKind::Add, {a, a}, Type::scalar(ScalarKind::I32));
  b.create(OpKind::Return, {}, std::nullopt);
  EXPECT_TRUE(eliminateCommonSubexpressions(fn));
  EXPECT_EQ(countOps(fn, OpKind::Add), 2) << printFunction(fn);  // one in the region, one outside
  EXPECT_EQ(fn.body.ops().size(), 3u);
  EXPECT_EQ((*std::next(fn.body.ops().begin()))->result(), outer);
}

TEST(IrPasses, DceRemovesChainsAndKeepsEffects) {
  const char *text = R"(kernel @k(%p: ptr<f32>) {
  %0 = constant {value = 1.0} : f32
  %1 = exp %0 : f32
  %2 = sqrt %1 : f32
  %3 = load %p : f32
  store %p, %0
  return
}
)";
  bool changed = false;
  std::string result = runPass(eliminateDeadCode, text, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(result,
            "kernel @k(%p: ptr<f32>) {\n  %0 = constant {value = 1.0} : f32\n  %1 = load %p : f32\n  store %p, %0\n  "
            "return\n}\n");
  runPass(eliminateDeadCode, result, &changed);
  EXPECT_FALSE(changed);
}

TEST(IrPasses, LicmMovesOpsWithTheirValuesAndParents) {
  // Nested loops: %0 * %n leaves both, %i * %n only the inner one.
  const char *text = R"(kernel @k(%p: ptr<i32>, %n: i32) {
  %0 = constant {value = 0} : i32
  %1 = constant {value = 1} : i32
  %2 = for %0, %n, %1, %0 ({
  ^(%i: i32, %s: i32):
    %3 = for %0, %n, %1, %s ({
    ^(%j: i32, %t: i32):
      %4 = mul %1, %n : i32
      %5 = mul %i, %n : i32
      %6 = add %4, %5 : i32
      %7 = add %t, %6 : i32
      %8 = add %7, %j : i32
      yield %8
    }) : i32
    yield %3
  }) : i32
  store %p, %2
  return
}
)";
  auto m = parse(text);
  Function &fn = *m->functions[0];
  Op *outer = std::next(fn.body.ops().begin(), 2)->get();
  Op *inner = outer->regions()[0]->ops().front().get();
  std::vector<Op *> innerOps;
  for (auto &op : inner->regions()[0]->ops()) innerOps.push_back(op.get());
  ASSERT_EQ(innerOps.size(), 6u);
  EXPECT_TRUE(loopInvariantCodeMotion(fn));
  std::string error;
  EXPECT_TRUE(verifyFunction(fn, error)) << error << printFunction(fn);

  // The same op objects, now owned by the block they sit in.
  EXPECT_EQ(innerOps[0]->parentBlock(), &fn.body);
  EXPECT_EQ(std::prev(fn.body.find(outer))->get(), innerOps[0]);  // right before the loop
  Block *outerBody = outer->regions()[0].get();
  for (Op *op : {innerOps[1], innerOps[2]}) EXPECT_EQ(op->parentBlock(), outerBody);
  EXPECT_EQ(outerBody->ops().size(), 4u);  // %5, %6, the inner for, yield
  EXPECT_EQ(outerBody->ops().front().get(), innerOps[1]);
  for (size_t i = 3; i < innerOps.size(); ++i) EXPECT_EQ(innerOps[i]->parentBlock(), inner->regions()[0].get());
  EXPECT_EQ(inner->regions()[0]->ops().size(), 3u);
  EXPECT_EQ(innerOps[3]->operand(1), innerOps[2]->result());

  // A second run finds nothing left to move.
  EXPECT_FALSE(loopInvariantCodeMotion(fn));
}

// The optimisation passes in the order tk::pipeline::optimizationPasses()
// runs them (driver/Pipeline.cpp; pipeline_test checks that order).
PassPipeline optimizationPasses() {
  PassPipeline p;
  p.add("canonicalize", canonicalize).add("cse", eliminateCommonSubexpressions);
  p.add("licm", loopInvariantCodeMotion).add("cse", eliminateCommonSubexpressions).add("dce", eliminateDeadCode);
  p.add("canonicalize", canonicalize).add("dce", eliminateDeadCode);
  return p;
}

// pad-tiles rebuilds a combine region (a new block, the old ops moved into
// it) and replaces a reshape by a gather: run under ASan (make asan), and
// the padded kernel verifies, and prints and parses back the same.
TEST(IrPasses, PadTilesRebuildsRegionsAndReshapesSafely) {
  const std::string text = R"(kernel @k(%x: ptr<f32>) {
  %i = arange {end = 100, start = 0} : tile<100xi32>
  %p = splat %x : tile<100xptr<f32>>
  %a = addptr %p, %i : tile<100xptr<f32>>
  %v = load %a : tile<100xf32>
  %r, %j = reduce_combine %v, %i ({
  ^(%lv: f32, %li: i32, %rv: f32, %ri: i32):
    %s = add %lv, %rv : f32
    %m = max %li, %ri : i32
    yield %s, %m
  }) {axis = 0} : f32, i32
  store %x, %r
  %t = load %p : tile<100xf32>
  %h = scan_combine %t ({
  ^(%l: f32, %rr: f32):
    %q = mul %l, %rr : f32
    yield %q
  }) {axis = 0, reverse = 1} : tile<100xf32>
  store %a, %h
  %q2 = splat %x : tile<4x25xptr<f32>>
  %w = load %q2 : tile<4x25xf32>
  %f = reshape %w : tile<100xf32>
  store %a, %f
  return
}
)";
  auto m = parse(text);
  ASSERT_TRUE(m);
  EXPECT_TRUE(padTiles(*m->functions[0]));
  std::string error;
  EXPECT_TRUE(verifyModule(*m, error)) << error;
  const std::string printed = printModule(*m);
  EXPECT_EQ(countOps(*m->functions[0], OpKind::Gather), 1) << printed;
  EXPECT_NE(printed.find("tile<128xf32>"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("tile<100x"), std::string::npos) << printed;
  auto again = parse(printed);
  ASSERT_TRUE(again);
  EXPECT_EQ(printModule(*again), printed);
  EXPECT_FALSE(padTiles(*again->functions[0])) << "a padded kernel has nothing left to pad";
}

TEST(IrPasses, DefaultPipelineCleansUpAFrontEndKernel) {
  const char *text = R"(kernel @k(%x: ptr<f32>) {
  %0 = program_id {axis = 0} : i32
  %1 = constant {value = 64} : i32
  %2 = mul %0, %1 : i32
  %3 = program_id {axis = 0} : i32
  %4 = mul %3, %1 : i32
  %5 = sub %2, %4 : i32
  %6 = splat %5 : tile<64xi32>
  %7 = arange {end = 64, start = 0} : tile<64xi32>
  %8 = add %6, %7 : tile<64xi32>
  %9 = splat %x : tile<64xptr<f32>>
  %10 = addptr %9, %8 : tile<64xptr<f32>>
  %11 = load %10 : tile<64xf32>
  store %10, %11
  return
}
)";
  auto m = parse(text);
  EXPECT_TRUE(optimizationPasses().run(*m));
  // p*64 - p*64 is 0 once CSE makes both sides one value; then 0 + arange.
  EXPECT_EQ(printModule(*m),
            "kernel @k(%x: ptr<f32>) {\n"
            "  %0 = arange {end = 64, start = 0} : tile<64xi32>\n"
            "  %1 = splat %x : tile<64xptr<f32>>\n"
            "  %2 = addptr %1, %0 : tile<64xptr<f32>>\n"
            "  %3 = load %2 : tile<64xf32>\n"
            "  store %2, %3\n"
            "  return\n"
            "}\n");
}

TEST(IrPasses, PipelineVerifiesDumpsAndRunsCustomPasses) {
  const char *text = "kernel @k(%a: i32, %out: ptr<i32>) {\n  %0 = neg %a : i32\n  store %out, %0\n  return\n}\n";
  // A custom pass (as lower/ would add) that breaks the IR: the pipeline
  // names it.
  auto m = parse(text);
  PassPipeline broken;
  broken.add("dce", eliminateDeadCode).add("break-types", [](Function &fn) {
    fn.walk()[0]->result()->setType(Type::scalar(ScalarKind::I64));
    return true;
  });
  try {
    broken.run(*m);
    FAIL() << "expected a verifier failure";
  } catch (const tk::InternalError &e) {
    EXPECT_EQ(std::string(e.what()).rfind("verifier failed after pass 'break-types':\n@k: error: 'neg' op", 0), 0u)
        << e.what();
  }
  // Without verifying each pass, the result is still verified once, after
  // the last pass: the broken IR is caught, only the pass is not named.
  m = parse(text);
  PipelineOptions once;
  once.verifyEach = false;
  try {
    broken.run(*m, once);
    FAIL() << "expected a verifier failure after the pipeline";
  } catch (const tk::InternalError &e) {
    EXPECT_EQ(std::string(e.what()).rfind("verifier failed after the pipeline (run with --verify-each", 0), 0u)
        << e.what();
  }
  // A pipeline that changed nothing is not verified again.
  m = parse(text);
  PassPipeline idle;
  idle.add("dce", eliminateDeadCode);
  EXPECT_FALSE(idle.run(*m, once));

  // Broken input is refused before any pass runs.
  m = parse("kernel @k(%a: i32) {\n  %0 = neg %a : f32\n  return\n}\n");
  int runs = 0;
  PassPipeline counting;
  counting.add("count", [&](Function &) { return ++runs, false; });
  EXPECT_THROW(counting.run(*m), tk::InternalError);
  EXPECT_EQ(runs, 0);

  m = parse(text);
  std::ostringstream dump;
  PipelineOptions opts;
  opts.printAfter = {"cse"};
  opts.dump = &dump;
  PassPipeline p;
  p.add("canonicalize", canonicalize).add("cse", eliminateCommonSubexpressions).add("dce", eliminateDeadCode);
  EXPECT_FALSE(p.run(*m, opts));
  EXPECT_EQ(dump.str(), "// -----// IR Dump After cse //----- //\n" + std::string(text) + "\n");
}

}  // namespace
}  // namespace tk::ir
