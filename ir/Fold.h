// Constant folding of scalar operations, declared once: the front end folds
// constant expressions with it (lang/Typing.cpp, foldBinary) and
// canonicalize folds ops with constant operands (ir/passes/Canonicalize.cpp).
// The semantics, stated here only (docs/language.md, "Constant folding",
// says them for users):
//  - Integers are computed at their width (1 to 64 bits, two's complement;
//    results sign-extended, i1 zero-extended: 0 or 1). add, sub, mul and shl
//    wrap; `overflowed` says that the exact result of add, sub, mul, or of
//    div and rem of MIN by -1, did not fit. The front end makes that an
//    error for untyped literals (folded as i64) and keeps the wrapped value
//    for typed ones, as the device computes it.
//  - div and rem truncate toward zero (C's). By zero: DivByZero, no value
//    (the front end reports it, canonicalize leaves the op). MIN / -1 and
//    MIN % -1: the wrapped value (MIN, 0) and `overflowed`; canonicalize
//    leaves them, since the device's answer is undefined.
//  - shl, and shr (arithmetic), by a negative amount or by the width or more:
//    ShiftOutOfRange, no value (an error in the front end; canonicalize
//    leaves the op).
//  - Floats: computed in double (rem is fmod; max and min return the other
//    operand for a NaN), then rounded to f32 for f32. f16 and bf16 are not
//    folded: the host cannot round as the device does.
//  - Comparisons order as IEEE and C do: every comparison with a NaN is
//    false except !=. (Canonicalize leaves float comparisons with a NaN
//    operand alone.)
#pragma once

#include <cstdint>
#include <optional>

#include "ir/IR.h"

namespace tk::ir {

enum class FoldOp { Add, Sub, Mul, Div, Rem, And, Or, Xor, Shl, Shr, Max, Min };

// `v` wrapped to `bits` (1 to 64): sign-extended, i1 as 0 or 1.
int64_t wrapInt(int64_t v, int bits);

struct IntFold {
  enum Status { Ok, DivByZero, ShiftOutOfRange, NotFoldable } status = Ok;
  int64_t value = 0;        // when Ok
  bool overflowed = false;  // the exact result did not fit (value is wrapped)
};
// `a op b` on integers of `bits` bits (operands already wrapped to it).
IntFold foldInt(FoldOp op, int64_t a, int64_t b, int bits);

// `a op b` on floats, in double (nullopt for the bitwise ops and shifts);
// roundFloat gives the value of type `k`.
std::optional<double> foldFloat(FoldOp op, double a, double b);
// `d` as an f64, f32 or fp8 holds it (fp8: nearest even, saturating, as
// tk/fp8.h); nullopt for f16 and bf16 (not folded).
std::optional<double> roundFloat(double d, ScalarKind k);

template <typename T>
bool foldCompare(CmpPredicate p, T a, T b) {
  switch (p) {
    case CmpPredicate::Eq: return a == b;
    case CmpPredicate::Ne: return a != b;
    case CmpPredicate::Lt: return a < b;
    case CmpPredicate::Le: return a <= b;
    case CmpPredicate::Gt: return a > b;
    case CmpPredicate::Ge: return a >= b;
  }
  return false;
}

}  // namespace tk::ir
