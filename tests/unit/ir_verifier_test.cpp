// The verifier accepts what the front end builds and rejects each broken
// invariant with a message naming the op.
#include <gtest/gtest.h>

#include "ir/IR.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

namespace tk::ir {
namespace {

const Type kI32 = Type::scalar(ScalarKind::I32);
const Type kF32 = Type::scalar(ScalarKind::F32);

Type tile(ScalarKind k, std::vector<int64_t> shape, LayoutRef l = nullptr, bool ptr = false) {
  return Type::tile(ElemType{k, ptr}, std::move(shape), std::move(l));
}

// A valid 2-D kernel: out[i, j] = x[i] * y[j], with layouts.
std::unique_ptr<Function> buildOuter() {
  auto fn = std::make_unique<Function>();
  fn->name = "outer";
  fn->attrs["num_warps"] = int64_t(4);
  Value *x = fn->addParam("x", Type::ptr(ScalarKind::F32), 16);
  Value *out = fn->addParam("out", Type::ptr(ScalarKind::F32), 16);
  LayoutRef l2 = Layout::blocked({1, 4}, {4, 8}, {4, 1}, {1, 0});
  LayoutRef rows = Layout::slice(1, l2), cols = Layout::slice(0, l2);
  Builder b(&fn->body);
  Value *i = b.value(OpKind::Arange, {}, tile(ScalarKind::I32, {16}, rows), {{"start", int64_t(0)}, {"end", int64_t(16)}});
  Value *j = b.value(OpKind::Arange, {}, tile(ScalarKind::I32, {32}, cols), {{"start", int64_t(0)}, {"end", int64_t(32)}});
  Value *xi = b.value(OpKind::Load, {b.value(OpKind::AddPtr, {b.value(OpKind::Splat, {x}, tile(ScalarKind::F32, {16}, rows, true)), i},
                                             tile(ScalarKind::F32, {16}, rows, true))},
                      tile(ScalarKind::F32, {16}, rows));
  Value *col = b.value(OpKind::ExpandDims, {xi}, tile(ScalarKind::F32, {16, 1}, l2), {{"axis", int64_t(1)}});
  Value *row = b.value(OpKind::ExpandDims, {j}, tile(ScalarKind::I32, {1, 32}, l2), {{"axis", int64_t(0)}});
  Value *colB = b.value(OpKind::Broadcast, {col}, tile(ScalarKind::F32, {16, 32}, l2));
  Value *rowB = b.value(OpKind::Broadcast, {row}, tile(ScalarKind::I32, {16, 32}, l2));
  Value *prod = b.value(OpKind::Mul, {colB, b.value(OpKind::Cast, {rowB}, tile(ScalarKind::F32, {16, 32}, l2))},
                        tile(ScalarKind::F32, {16, 32}, l2));
  Value *ptrs = b.value(OpKind::AddPtr, {b.value(OpKind::Splat, {out}, tile(ScalarKind::F32, {16, 32}, l2, true)), rowB},
                        tile(ScalarKind::F32, {16, 32}, l2, true));
  Value *limit = b.value(OpKind::Splat, {b.constInt(20, kI32)}, tile(ScalarKind::I32, {16, 32}, l2));
  Value *mask = b.value(OpKind::Cmp, {rowB, limit}, tile(ScalarKind::I1, {16, 32}, l2), {{"predicate", std::string("lt")}});
  b.create(OpKind::Store, {ptrs, prod, mask}, std::nullopt);
  b.create(OpKind::Return, {}, std::nullopt);
  return fn;
}

TEST(IrVerifier, AcceptsAValidKernel) {
  auto fn = buildOuter();
  std::string error;
  EXPECT_TRUE(verifyFunction(*fn, error)) << error;
  EXPECT_EQ(error, "");
}

TEST(IrVerifier, RejectsUseBeforeDefinition) {
  auto fn = buildOuter();
  // Move the first op (arange i) to just before the return: its users now
  // come before it.
  auto &ops = fn->body.ops();
  std::unique_ptr<Op> first = std::move(ops.front());
  ops.pop_front();
  fn->body.insert(std::prev(ops.end()), std::move(first));
  std::string error;
  EXPECT_FALSE(verifyFunction(*fn, error));
  EXPECT_NE(error.find("'addptr' op: operand 1 (%15) is not defined before its use"), std::string::npos) << error;
}

TEST(IrVerifier, RejectsAMissingReturnAndNamesTheLocation) {
  auto fn = buildOuter();
  fn->body.ops().pop_back();
  fn->body.ops().back()->setLoc({"k.tk", 9, 5});
  Builder b(&fn->body);
  b.setLoc({"k.tk", 10, 3});
  b.value(OpKind::Add, {fn->body.argument(0), fn->body.argument(0)}, Type::ptr(ScalarKind::F32));
  std::string error;
  EXPECT_FALSE(verifyFunction(*fn, error));
  EXPECT_NE(error.find("@outer: error: kernel @outer: the body must end with 'return'"), std::string::npos) << error;
  EXPECT_NE(error.find("k.tk:10:3: error: 'add' op: works on numbers, not ptr<f32>"), std::string::npos) << error;
}

TEST(IrVerifier, RejectsWrongResultTypes) {
  struct Case {
    OpKind kind;
    std::vector<int> operands;  // indexes into {i32 a, i32 b, f32 c, i1 d}
    Type result;
    std::map<std::string, Attr> attrs;
    const char *error;
  };
  const Case cases[] = {
      {OpKind::Add, {0, 2}, kI32, {}, "operand 1 has type f32, expected the result type i32"},
      {OpKind::Shl, {2, 2}, kF32, {}, "'shl' op: works on integers, not f32"},
      {OpKind::Exp, {0}, kI32, {}, "'exp' op: works on floats, not i32"},
      {OpKind::Select, {3, 0, 2}, kI32, {}, "operand 2 has type f32, expected the result type i32"},
      {OpKind::Cmp, {0, 1}, Type::scalar(ScalarKind::I1), {}, "needs a 'predicate' attribute"},
      {OpKind::Cast, {0}, tile(ScalarKind::F32, {4}), {}, "must keep the shape and layout: i32 to tile<4xf32>"},
      {OpKind::Splat, {0}, kI32, {}, "result must be a tile of i32, not i32"},
      {OpKind::Load, {0}, kI32, {}, "operand 0 must be a pointer or a tile of pointers, not i32"},
      {OpKind::Neg, {0, 1}, kI32, {}, "'neg' op: expects 1 operands, has 2"},
      {OpKind::Arange, {}, tile(ScalarKind::I32, {8}), {{"start", int64_t(0)}}, "needs an integer 'end' attribute"},
  };
  for (const Case &c : cases) {
    Function fn;
    fn.name = "k";
    std::vector<Value *> vals = {fn.addParam("a", kI32), fn.addParam("b", kI32), fn.addParam("c", kF32),
                                 fn.addParam("d", Type::scalar(ScalarKind::I1))};
    Builder b(&fn.body);
    std::vector<Value *> operands;
    for (int i : c.operands) operands.push_back(vals[i]);
    b.create(c.kind, operands, c.result, c.attrs);
    b.create(OpKind::Return, {}, std::nullopt);
    std::string error;
    EXPECT_FALSE(verifyFunction(fn, error)) << c.error;
    EXPECT_NE(error.find(c.error), std::string::npos) << "got: " << error << "\nwant: " << c.error;
  }
}

// Cache hints are PTX's names (ir/MemoryHints.h); volatile excludes the others.
TEST(IrVerifier, ChecksLoadAndStoreCacheHints) {
  auto check = [](const std::string &loadAttrs, const std::string &storeAttrs) {
    std::string error;
    auto m = parseModule("kernel @k(%x: ptr<f32>) {\n  %0 = load %x " + loadAttrs + " : f32\n  store %x, %0 " +
                             storeAttrs + "\n  return\n}\n",
                         "m.tir", error);
    EXPECT_TRUE(m) << error;
    if (!m) return std::string("parse error");
    verifyModule(*m, error);
    return error;
  };
  EXPECT_EQ(check("{cache = \"cg\", evict = \"last\"}", "{cache = \"wt\", evict = \"first\"}"), "");
  EXPECT_EQ(check("{volatile = 1}", "{volatile = 1}"), "");
  const std::pair<std::pair<const char *, const char *>, const char *> bad[] = {
      {{"{cache = \"wb\"}", ""}, "'cache' must be \"ca\", \"cg\", \"cs\", \"lu\" or \"cv\", not \"wb\""},
      {{"", "{cache = \"cv\"}"}, "'cache' must be \"wb\", \"cg\", \"cs\" or \"wt\", not \"cv\""},
      {{"{evict = \"normal\"}", ""}, "'evict' must be \"first\" or \"last\", not \"normal\""},
      {{"{cache = 3}", ""}, "'cache' must be \"ca\", \"cg\", \"cs\", \"lu\" or \"cv\", not 3"},
      {{"{volatile = 2}", ""}, "'volatile' must be 0 or 1, not 2"},
      {{"", "{volatile = 1, cache = \"cs\"}"}, "a volatile access takes no cache operator or eviction policy"},
  };
  for (const auto &[attrs, want] : bad) {
    std::string error = check(attrs.first, attrs.second);
    EXPECT_NE(error.find(want), std::string::npos) << "got: " << error << "\nwant: " << want;
  }
}

TEST(IrVerifier, ChecksWholeModules) {
  std::string error;
  auto m = parseModule("kernel @a() {\n  return\n}\nkernel @b(%x: i32) {\n  %0 = neg %x : i64\n  return\n}\n", "m.tir", error);
  ASSERT_TRUE(m) << error;
  EXPECT_FALSE(verifyModule(*m, error));
  EXPECT_EQ(error,
            "@b: error: 'neg' op: operand 0 has type i32, expected the result type i64\n"
            "  in @b: %0 = neg %x : i64");
  m->functions.pop_back();
  EXPECT_TRUE(verifyModule(*m, error)) << error;
}

}  // namespace
}  // namespace tk::ir
