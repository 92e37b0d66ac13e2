// f32 <-> fp8 in LLVM IR (lower/Fp8.h), step for step include/tk/fp8.h's
// floatToFp8Bits and fp8BitsToFloat. Both arms of each choice are computed
// and selected, so the code is straight-line (no branches per element);
// fptoui.sat keeps the unselected arms free of poison.
// sm_89 and newer have cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 and
// cvt.rn.f16x2.{e4m3x2,e5m2x2}, which NvptxTarget uses there (Target's
// floatToFp8 / fp8ToFloat); this generic form is every other target's, and
// what the sim checks bit for bit against tk/fp8.h.
#include "lower/Fp8.h"

#include "lower/Target.h"

#include <bit>
#include <cmath>

#include "tk/error.h"
#include "tk/fp8.h"

namespace tk::lower {

namespace {

const Fp8Format &formatOf(ir::ScalarKind k) { return k == ir::ScalarKind::F8E4M3 ? kE4M3 : kE5M2; }

uint32_t bitsOf(float f) { return std::bit_cast<uint32_t>(f); }

}  // namespace

llvm::Value *floatToFp8(llvm::IRBuilderBase &b, llvm::Value *f, ir::ScalarKind k) {
  const Fp8Format &fmt = formatOf(k);
  const int minExp = 1 - fmt.bias, shift = 23 - fmt.manBits;
  llvm::Type *i32 = b.getInt32Ty();
  llvm::Value *x = b.CreateBitCast(f, i32);
  llvm::Value *sign = b.CreateTrunc(b.CreateAnd(b.CreateLShr(x, 24), 0x80), b.getInt8Ty());
  llvm::Value *a = b.CreateAnd(x, 0x7fffffffu);
  llvm::Value *isNan = b.CreateICmpUGT(a, b.getInt32(0x7f800000u));
  llvm::Value *saturates = b.CreateICmpUGE(a, b.getInt32(bitsOf(fmt.maxValue)));
  llvm::Value *subnormal = b.CreateICmpULT(a, b.getInt32(bitsOf(std::ldexp(1.0f, minExp))));
  // Subnormal or zero: a count of 2^(minExp - manBits), scaled exactly and
  // rounded to nearest even.
  llvm::Value *scaled = b.CreateFMul(b.CreateBitCast(a, b.getFloatTy()),
                                     llvm::ConstantFP::get(b.getFloatTy(), std::ldexp(1.0, fmt.manBits - minExp)));
  llvm::Value *rounded = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, scaled);
  llvm::Value *small = b.CreateIntrinsic(llvm::Intrinsic::fptoui_sat, {i32, b.getFloatTy()}, {rounded});
  // Normal: rebias the exponent, round the mantissa to nearest even (below
  // the largest value the carry never overflows).
  llvm::Value *v = b.CreateSub(a, b.getInt32(uint32_t(127 - fmt.bias) << 23));
  llvm::Value *r = b.CreateLShr(v, shift);
  llvm::Value *rem = b.CreateAnd(v, (1u << shift) - 1);
  llvm::Value *half = b.getInt32(1u << (shift - 1));
  llvm::Value *up = b.CreateOr(b.CreateICmpUGT(rem, half),
                               b.CreateAnd(b.CreateICmpEQ(rem, half), b.CreateICmpNE(b.CreateAnd(r, 1), b.getInt32(0))));
  llvm::Value *normal = b.CreateAdd(r, b.CreateZExt(up, i32));
  llvm::Value *mag = b.CreateSelect(subnormal, small, normal);
  mag = b.CreateSelect(saturates, b.getInt32(fmt.maxCode), mag);
  llvm::Value *code = b.CreateOr(b.CreateTrunc(mag, b.getInt8Ty()), sign);
  return b.CreateSelect(isNan, b.getInt8(kFp8NaN), code);
}

llvm::Value *fp8ToFloat(llvm::IRBuilderBase &b, llvm::Value *code, ir::ScalarKind k) {
  const Fp8Format &fmt = formatOf(k);
  const uint32_t expMask = (1u << fmt.expBits) - 1, manMask = (1u << fmt.manBits) - 1;
  llvm::Type *i32 = b.getInt32Ty();
  llvm::Value *c = b.CreateZExt(code, i32);
  llvm::Value *sign = b.CreateShl(b.CreateAnd(c, 0x80), 24);
  llvm::Value *e = b.CreateAnd(b.CreateLShr(c, fmt.manBits), expMask);
  llvm::Value *m = b.CreateAnd(c, manMask);
  llvm::Value *normal = b.CreateOr(
      b.CreateOr(sign, b.CreateShl(b.CreateAdd(e, b.getInt32(uint32_t(127 - fmt.bias))), 23)),
      b.CreateShl(m, 23 - fmt.manBits));
  llvm::Value *subValue = b.CreateFMul(b.CreateUIToFP(m, b.getFloatTy()),
                                       llvm::ConstantFP::get(b.getFloatTy(), std::ldexp(1.0, 1 - fmt.bias - fmt.manBits)));
  llvm::Value *sub = b.CreateOr(b.CreateBitCast(subValue, i32), sign);
  llvm::Value *bits = b.CreateSelect(b.CreateICmpEQ(e, b.getInt32(0)), sub, normal);
  llvm::Value *nanBits = b.getInt32(0x7fc00000u);
  if (fmt.hasInf) {  // e5m2: exponent all ones is inf (mantissa 0) or NaN
    llvm::Value *inf = b.CreateOr(sign, b.getInt32(0x7f800000u));
    llvm::Value *special = b.CreateSelect(b.CreateICmpEQ(m, b.getInt32(0)), inf, nanBits);
    bits = b.CreateSelect(b.CreateICmpEQ(e, b.getInt32(expMask)), special, bits);
  } else {  // e4m3: only S.1111.111 is NaN
    bits = b.CreateSelect(b.CreateICmpEQ(b.CreateAnd(c, 0x7f), b.getInt32(0x7f)), nanBits, bits);
  }
  return b.CreateBitCast(bits, b.getFloatTy());
}

llvm::Value *Target::floatToFp8(llvm::IRBuilderBase &b, llvm::Value *f, ir::ScalarKind k) const {
  return lower::floatToFp8(b, f, k);
}

llvm::Value *Target::fp8ToFloat(llvm::IRBuilderBase &b, llvm::Value *code, ir::ScalarKind k) const {
  return lower::fp8ToFloat(b, code, k);
}

std::vector<llvm::Value *> Target::mmaM16N8K32Fp8(llvm::IRBuilderBase &, ir::ScalarKind, ir::ScalarKind,
                                                  const std::vector<llvm::Value *> &,
                                                  const std::vector<llvm::Value *> &,
                                                  const std::vector<llvm::Value *> &) const {
  throw tk::InternalError("this target does not multiply fp8 on mma.sync (usesFp8Mma() is false)");
}

}  // namespace tk::lower
