// Constant folding of scalar operations: the semantics are stated in ir/Fold.h.
#include "ir/Fold.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tk/fp8.h"

namespace tk::ir {

int64_t wrapInt(int64_t v, int bits) {
  if (bits >= 64) return v;
  if (bits == 1) return v & 1;
  uint64_t u = static_cast<uint64_t>(v) & ((uint64_t(1) << bits) - 1);
  uint64_t sign = uint64_t(1) << (bits - 1);
  return static_cast<int64_t>((u ^ sign) - sign);
}

IntFold foldInt(FoldOp op, int64_t a, int64_t b, int bits) {
  IntFold f;
  int64_t r = 0;
  const int64_t minValue = bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1));
  switch (op) {
    case FoldOp::Add: f.overflowed = __builtin_add_overflow(a, b, &r); break;
    case FoldOp::Sub: f.overflowed = __builtin_sub_overflow(a, b, &r); break;
    case FoldOp::Mul: f.overflowed = __builtin_mul_overflow(a, b, &r); break;
    case FoldOp::Div:
    case FoldOp::Rem:
      if (b == 0) return {IntFold::DivByZero};
      if (a == minValue && b == -1) {
        f.overflowed = true;
        r = op == FoldOp::Div ? minValue : 0;
      } else {
        r = op == FoldOp::Div ? a / b : a % b;
      }
      break;
    case FoldOp::And: r = a & b; break;
    case FoldOp::Or: r = a | b; break;
    case FoldOp::Xor: r = a ^ b; break;
    case FoldOp::Shl:
    case FoldOp::Shr:
      if (b < 0 || b >= bits) return {IntFold::ShiftOutOfRange};
      r = op == FoldOp::Shl ? static_cast<int64_t>(static_cast<uint64_t>(a) << b) : a >> b;
      break;
    case FoldOp::Max: r = std::max(a, b); break;
    case FoldOp::Min: r = std::min(a, b); break;
  }
  f.value = wrapInt(r, bits);
  if (f.value != r && op != FoldOp::Shl && op != FoldOp::Shr && op != FoldOp::Div && op != FoldOp::Rem)
    f.overflowed = true;
  return f;
}

std::optional<double> foldFloat(FoldOp op, double a, double b) {
  switch (op) {
    case FoldOp::Add: return a + b;
    case FoldOp::Sub: return a - b;
    case FoldOp::Mul: return a * b;
    case FoldOp::Div: return a / b;
    case FoldOp::Rem: return std::fmod(a, b);
    case FoldOp::Max: return std::fmax(a, b);
    case FoldOp::Min: return std::fmin(a, b);
    default: return std::nullopt;
  }
}

std::optional<double> roundFloat(double d, ScalarKind k) {
  if (k == ScalarKind::F64) return d;
  if (k == ScalarKind::F32) return static_cast<double>(static_cast<float>(d));
  if (isFp8(k)) {  // include/tk/fp8.h: nearest even, saturating
    const Fp8Format &f = k == ScalarKind::F8E4M3 ? kE4M3 : kE5M2;
    return static_cast<double>(fp8BitsToFloat(doubleToFp8Bits(d, f), f));
  }
  return std::nullopt;
}

}  // namespace tk::ir
