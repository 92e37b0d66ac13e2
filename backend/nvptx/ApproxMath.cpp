// The libdevice-free math of NvptxTarget, used when the CUDA toolkit has no
// libdevice or CodegenOptions::useLibdevice is off: PTX approx instructions
// for exp2, lg2, rsqrt, sin, cos and tanh, and for the other functions short
// sequences around them whose error bounds docs/backends.md states.
#include "backend/nvptx/ApproxMath.h"
#include "tk/error.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include <numbers>
#include <stdexcept>

namespace tk::nvptx {

using namespace llvm;
using lower::MathFn;

namespace {

Value *approxCall(IRBuilderBase &b, Intrinsic::ID id, Value *x) {
  Function *fn = Intrinsic::getDeclaration(b.GetInsertBlock()->getModule(), id);
  return b.CreateCall(fn, {x});
}

Value *f32(IRBuilderBase &b, double v) { return ConstantFP::get(b.getFloatTy(), v); }

// x - k*2pi with k = rint(x / 2pi) (Cody-Waite, two terms): sin.approx and
// cos.approx have no range reduction of their own.
Value *reduceTwoPi(IRBuilderBase &b, Value *x) {
  Type *f = b.getFloatTy();
  Value *k = b.CreateUnaryIntrinsic(Intrinsic::rint, b.CreateFMul(x, f32(b, 0.5 / std::numbers::pi)));
  Value *fma1 = b.CreateIntrinsic(Intrinsic::fma, {f}, {b.CreateFNeg(k), f32(b, 6.28125), x});
  double lo = 2 * std::numbers::pi - 6.28125;
  return b.CreateIntrinsic(Intrinsic::fma, {f}, {b.CreateFNeg(k), f32(b, lo), fma1});
}

Value *tanhApprox(IRBuilderBase &b, Value *x) {
  auto *fty = FunctionType::get(b.getFloatTy(), {b.getFloatTy()}, false);
  auto *asmFn = InlineAsm::get(fty, "tanh.approx.f32 $0, $1;", "=f,f", /*hasSideEffects=*/false);
  CallInst *call = b.CreateCall(asmFn, {x});
  call->setDoesNotAccessMemory();
  return call;
}

Value *exp2Approx(IRBuilderBase &b, Value *x) { return approxCall(b, Intrinsic::nvvm_ex2_approx_f, x); }
Value *expApprox(IRBuilderBase &b, Value *x) { return exp2Approx(b, b.CreateFMul(x, f32(b, std::numbers::log2e))); }
Value *logApprox(IRBuilderBase &b, Value *x) {
  return b.CreateFMul(approxCall(b, Intrinsic::nvvm_lg2_approx_f, x), f32(b, std::numbers::ln2));
}

// c[0] + x * (c[1] + x * (...)), by Horner's rule with fused multiply-adds.
Value *poly(IRBuilderBase &b, Value *x, std::initializer_list<double> c) {
  const double *hi = std::data(c) + c.size() - 1;
  Value *p = f32(b, *hi);
  for (const double *k = hi - 1; k >= std::data(c); --k)
    p = b.CreateIntrinsic(Intrinsic::fma, {b.getFloatTy()}, {p, x, f32(b, *k)});
  return p;
}

Value *fabs(IRBuilderBase &b, Value *x) { return b.CreateUnaryIntrinsic(Intrinsic::fabs, x); }
Value *copysign(IRBuilderBase &b, Value *mag, Value *sign) {
  return b.CreateBinaryIntrinsic(Intrinsic::copysign, mag, sign);
}

// erf: Abramowitz & Stegun 7.1.26, 1 - poly(t) e^(-x^2) with t = 1 / (1 +
// 0.3275911 |x|), with the sign of x (within 1e-6 of erf).
Value *erfApprox(IRBuilderBase &b, Value *x) {
  Value *a = fabs(b, x);
  Value *t = b.CreateFDiv(f32(b, 1.0), b.CreateIntrinsic(Intrinsic::fma, {b.getFloatTy()}, {a, f32(b, 0.3275911), f32(b, 1.0)}));
  Value *p = b.CreateFMul(poly(b, t, {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429}), t);
  Value *e = expApprox(b, b.CreateFNeg(b.CreateFMul(a, a)));
  return copysign(b, b.CreateFSub(f32(b, 1.0), b.CreateFMul(p, e)), x);
}

// log1p: near 0 (|x| < 1/4) 2 atanh(s) with s = x / (2 + x), a series in s^2
// that keeps the digits 1 + x would round away; elsewhere log(1 + x).
Value *log1pApprox(IRBuilderBase &b, Value *x) {
  Value *s = b.CreateFDiv(x, b.CreateFAdd(f32(b, 2.0), x));
  Value *series = b.CreateFMul(b.CreateFMul(f32(b, 2.0), s), poly(b, b.CreateFMul(s, s), {1.0, 1.0 / 3, 1.0 / 5, 1.0 / 7}));
  Value *small = b.CreateFCmpOLT(fabs(b, x), f32(b, 0.25));
  return b.CreateSelect(small, series, logApprox(b, b.CreateFAdd(f32(b, 1.0), x)));
}

// expm1: near 0 (|x| < 1/4) its Taylor series to x^7 (relative error below
// 1e-7 there), elsewhere e^x - 1.
Value *expm1Approx(IRBuilderBase &b, Value *x) {
  Value *series = b.CreateFMul(x, poly(b, x, {1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720}));
  Value *small = b.CreateFCmpOLT(fabs(b, x), f32(b, 0.25));
  return b.CreateSelect(small, series, b.CreateFSub(expApprox(b, x), f32(b, 1.0)));
}

// pow: 2^(y log2|x|) (CUDA's __powf), then C's rules for the cases that
// formula misses: x^0 = 1, a negative x gives NaN unless y is an integer,
// then the sign of x^y is x's for an odd y.
Value *powApprox(IRBuilderBase &b, Value *x, Value *y) {
  Value *lg = approxCall(b, Intrinsic::nvvm_lg2_approx_f, fabs(b, x));
  Value *r = exp2Approx(b, b.CreateFMul(y, lg));
  Value *isInt = b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(Intrinsic::floor, y), y);
  Value *half = b.CreateFMul(y, f32(b, 0.5));
  Value *odd = b.CreateAnd(isInt, b.CreateFCmpUNE(b.CreateUnaryIntrinsic(Intrinsic::floor, half), half));
  Value *neg = b.CreateFCmpOLT(x, f32(b, 0.0));
  r = b.CreateSelect(b.CreateAnd(neg, odd), b.CreateFNeg(r), r);
  r = b.CreateSelect(b.CreateAnd(neg, b.CreateNot(isInt)), ConstantFP::getNaN(b.getFloatTy()), r);
  return b.CreateSelect(b.CreateFCmpOEQ(y, f32(b, 0.0)), f32(b, 1.0), r);
}

// atan2: atan of min/max(|x|, |y|) in [0, 1] by Abramowitz & Stegun 4.4.47
// (error 2e-8), moved to the right octant and quadrant.
Value *atan2Approx(IRBuilderBase &b, Value *y, Value *x) {
  Value *ax = fabs(b, x), *ay = fabs(b, y);
  Value *hi = b.CreateBinaryIntrinsic(Intrinsic::maxnum, ax, ay);
  Value *lo = b.CreateBinaryIntrinsic(Intrinsic::minnum, ax, ay);
  Value *z = b.CreateSelect(b.CreateFCmpOEQ(hi, f32(b, 0.0)), f32(b, 0.0), b.CreateFDiv(lo, hi));
  Value *r = b.CreateFMul(z, poly(b, b.CreateFMul(z, z),
                                  {1.0, -0.3333314528, 0.1999355085, -0.1420889944, 0.1065626393, -0.0752896400,
                                   0.0429096138, -0.0161657367, 0.0028662257}));
  r = b.CreateSelect(b.CreateFCmpOGT(ay, ax), b.CreateFSub(f32(b, std::numbers::pi / 2), r), r);
  r = b.CreateSelect(b.CreateFCmpOLT(x, f32(b, 0.0)), b.CreateFSub(f32(b, std::numbers::pi), r), r);
  return copysign(b, r, y);
}

Value *approxF32(IRBuilderBase &b, MathFn f, Value *x, Value *y) {
  switch (f) {
    case MathFn::Exp: return expApprox(b, x);
    case MathFn::Exp2: return exp2Approx(b, x);
    case MathFn::Log: return logApprox(b, x);
    case MathFn::Log2: return approxCall(b, Intrinsic::nvvm_lg2_approx_f, x);
    case MathFn::Sqrt: return b.CreateUnaryIntrinsic(Intrinsic::sqrt, x);  // sqrt.rn.f32
    case MathFn::Rsqrt: return approxCall(b, Intrinsic::nvvm_rsqrt_approx_f, x);
    case MathFn::Sin: return approxCall(b, Intrinsic::nvvm_sin_approx_f, reduceTwoPi(b, x));
    case MathFn::Cos: return approxCall(b, Intrinsic::nvvm_cos_approx_f, reduceTwoPi(b, x));
    case MathFn::Tanh: return tanhApprox(b, x);
    case MathFn::Floor: return b.CreateUnaryIntrinsic(Intrinsic::floor, x);  // cvt.rmi
    case MathFn::Ceil: return b.CreateUnaryIntrinsic(Intrinsic::ceil, x);    // cvt.rpi
    case MathFn::Erf: return erfApprox(b, x);
    case MathFn::Log1p: return log1pApprox(b, x);
    case MathFn::Expm1: return expm1Approx(b, x);
    case MathFn::Pow: return powApprox(b, x, y);
    case MathFn::Atan2: return atan2Approx(b, x, y);
  }
  throw tk::InternalError("unknown MathFn");
}

}  // namespace

Value *approxMath(IRBuilderBase &b, MathFn f, Value *x, Value *y) {
  if (x->getType()->isFloatTy()) return approxF32(b, f, x, y);
  switch (f) {
    case MathFn::Sqrt: return b.CreateUnaryIntrinsic(Intrinsic::sqrt, x);
    case MathFn::Rsqrt: return b.CreateFDiv(ConstantFP::get(x->getType(), 1.0), b.CreateUnaryIntrinsic(Intrinsic::sqrt, x));
    case MathFn::Floor: return b.CreateUnaryIntrinsic(Intrinsic::floor, x);
    case MathFn::Ceil: return b.CreateUnaryIntrinsic(Intrinsic::ceil, x);
    default: {
      Type *f32Ty = b.getFloatTy();
      Value *ny = y ? b.CreateFPTrunc(y, f32Ty) : nullptr;
      return b.CreateFPExt(approxF32(b, f, b.CreateFPTrunc(x, f32Ty), ny), x->getType());
    }
  }
}

}  // namespace tk::nvptx
