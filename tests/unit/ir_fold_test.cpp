// ir/Fold.h, the one constant folder of the front end and canonicalize: each
// rule its header states, checked here once.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/Fold.h"

namespace tk::ir {
namespace {

constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();

TEST(Fold, IntegersWrapAtTheirWidthAndSayTheyOverflowed) {
  IntFold f = foldInt(FoldOp::Add, 2147483647, 1, 32);
  EXPECT_EQ(f.status, IntFold::Ok);
  EXPECT_EQ(f.value, -2147483648);
  EXPECT_TRUE(f.overflowed);
  f = foldInt(FoldOp::Mul, 100, 3, 8);
  EXPECT_EQ(f.value, 44);  // 300 - 256
  EXPECT_TRUE(f.overflowed);
  f = foldInt(FoldOp::Add, kMax64, 1, 64);
  EXPECT_EQ(f.value, kMin64);
  EXPECT_TRUE(f.overflowed);
  f = foldInt(FoldOp::Sub, 5, 7, 32);
  EXPECT_EQ(f.value, -2);
  EXPECT_FALSE(f.overflowed);
  EXPECT_EQ(foldInt(FoldOp::Xor, 1, 1, 1).value, 0);
  EXPECT_EQ(foldInt(FoldOp::Or, 1, 0, 1).value, 1);  // i1 is 0 or 1, not -1
  EXPECT_EQ(wrapInt(255, 8), -1);
  EXPECT_EQ(wrapInt(3, 1), 1);
  EXPECT_EQ(wrapInt(kMin64, 64), kMin64);
}

TEST(Fold, DivisionTruncatesAndLeavesZeroAndMinByMinusOne) {
  EXPECT_EQ(foldInt(FoldOp::Div, -7, 2, 32).value, -3);
  EXPECT_EQ(foldInt(FoldOp::Rem, -7, 2, 32).value, -1);
  EXPECT_EQ(foldInt(FoldOp::Div, 1, 0, 32).status, IntFold::DivByZero);
  EXPECT_EQ(foldInt(FoldOp::Rem, 1, 0, 64).status, IntFold::DivByZero);
  IntFold f = foldInt(FoldOp::Div, -2147483648, -1, 32);
  EXPECT_EQ(f.status, IntFold::Ok);
  EXPECT_EQ(f.value, -2147483648);
  EXPECT_TRUE(f.overflowed);
  f = foldInt(FoldOp::Rem, kMin64, -1, 64);
  EXPECT_EQ(f.value, 0);
  EXPECT_TRUE(f.overflowed);
}

TEST(Fold, ShiftsByTheWidthOrMoreAreNotFolded) {
  EXPECT_EQ(foldInt(FoldOp::Shl, 1, 31, 32).value, -2147483648);
  EXPECT_FALSE(foldInt(FoldOp::Shl, 1, 31, 32).overflowed);
  EXPECT_EQ(foldInt(FoldOp::Shr, -8, 1, 32).value, -4);  // arithmetic
  EXPECT_EQ(foldInt(FoldOp::Shl, 1, 32, 32).status, IntFold::ShiftOutOfRange);
  EXPECT_EQ(foldInt(FoldOp::Shr, 1, -1, 64).status, IntFold::ShiftOutOfRange);
  EXPECT_EQ(foldInt(FoldOp::Shl, 1, 63, 64).value, kMin64);
}

TEST(Fold, FloatsFoldInDoubleRoundToF32AndLeaveHalfTypes) {
  EXPECT_EQ(*foldFloat(FoldOp::Div, 1.0, 0.0), INFINITY);
  EXPECT_TRUE(std::isnan(*foldFloat(FoldOp::Div, 0.0, 0.0)));
  EXPECT_EQ(*foldFloat(FoldOp::Rem, 7.5, 2.0), 1.5);
  EXPECT_EQ(*foldFloat(FoldOp::Max, NAN, 2.0), 2.0);
  EXPECT_FALSE(foldFloat(FoldOp::Shl, 1.0, 2.0));
  EXPECT_EQ(*roundFloat(0.1, ScalarKind::F32), double(0.1f));
  EXPECT_EQ(*roundFloat(0.1, ScalarKind::F64), 0.1);
  EXPECT_FALSE(roundFloat(0.1, ScalarKind::F16));
  EXPECT_FALSE(roundFloat(0.1, ScalarKind::BF16));
}

TEST(Fold, ComparisonsOrderAsIeee) {
  EXPECT_TRUE(foldCompare(CmpPredicate::Lt, -1, 0));
  EXPECT_FALSE(foldCompare(CmpPredicate::Eq, double(NAN), double(NAN)));
  EXPECT_TRUE(foldCompare(CmpPredicate::Ne, double(NAN), double(NAN)));
  EXPECT_FALSE(foldCompare(CmpPredicate::Ge, double(NAN), 1.0));
}

}  // namespace
}  // namespace tk::ir
