// The libdevice-free math of NvptxTarget, used when the CUDA toolkit has no
// libdevice or CodegenOptions::useLibdevice is off: PTX approx instructions
// for exp2, lg2, rsqrt, sin, cos and tanh, and for the other functions short
// sequences around them whose error bounds docs/backends.md states; the
// rounding functions, hypot and fmod are exact in both f32 and f64.
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
Value *signbitOf(IRBuilderBase &b, Value *x) {
  Type *bits = b.getIntNTy(x->getType()->getPrimitiveSizeInBits());
  return b.CreateICmpSLT(b.CreateBitCast(x, bits), ConstantInt::get(bits, 0));
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

Value *nanIf(IRBuilderBase &b, Value *cond, Value *v) {
  return b.CreateSelect(cond, ConstantFP::getNaN(v->getType()), v);
}

// asin and acos: the angle of (x, sqrt(1 - x^2)) by atan2 above, with
// 1 - x^2 as (1 - x)(1 + x) to keep its digits near |x| = 1; NaN past 1.
Value *asinApprox(IRBuilderBase &b, Value *x) {
  Value *c = b.CreateUnaryIntrinsic(Intrinsic::sqrt, b.CreateFMul(b.CreateFSub(f32(b, 1.0), x), b.CreateFAdd(f32(b, 1.0), x)));
  return nanIf(b, b.CreateFCmpOGT(fabs(b, x), f32(b, 1.0)), atan2Approx(b, x, c));
}
Value *acosApprox(IRBuilderBase &b, Value *x) {
  Value *s = b.CreateUnaryIntrinsic(Intrinsic::sqrt, b.CreateFMul(b.CreateFSub(f32(b, 1.0), x), b.CreateFAdd(f32(b, 1.0), x)));
  return nanIf(b, b.CreateFCmpOGT(fabs(b, x), f32(b, 1.0)), atan2Approx(b, s, x));
}

// e^|x| / 2 without overflowing before the result does (e^88.7 is f32's
// largest, cosh and sinh reach it at 89.4).
Value *halfExpAbs(IRBuilderBase &b, Value *a) {
  Value *big = expApprox(b, b.CreateFSub(a, f32(b, std::numbers::ln2)));
  return b.CreateSelect(b.CreateFCmpOGT(a, f32(b, 88.0)), big, b.CreateFMul(f32(b, 0.5), expApprox(b, a)));
}

// sinh: (u + u / (u + 1)) / 2 with u = expm1(|x|), which keeps the digits
// e^x - e^-x cancels near 0; past |x| = 9, e^-|x| is below f32's precision.
Value *sinhApprox(IRBuilderBase &b, Value *x) {
  Value *a = fabs(b, x);
  Value *u = expm1Approx(b, a);
  Value *mid = b.CreateFMul(f32(b, 0.5), b.CreateFAdd(u, b.CreateFDiv(u, b.CreateFAdd(u, f32(b, 1.0)))));
  return copysign(b, b.CreateSelect(b.CreateFCmpOGT(a, f32(b, 9.0)), halfExpAbs(b, a), mid), x);
}
Value *coshApprox(IRBuilderBase &b, Value *x) {
  Value *a = fabs(b, x);
  Value *e = expApprox(b, a);
  Value *mid = b.CreateFMul(f32(b, 0.5), b.CreateFAdd(e, b.CreateFDiv(f32(b, 1.0), e)));
  return b.CreateSelect(b.CreateFCmpOGT(a, f32(b, 9.0)), halfExpAbs(b, a), mid);
}

// asinh |x| = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), exact in form near 0;
// past 2^12, log(2|x|) (x^2 would overflow first).
Value *asinhApprox(IRBuilderBase &b, Value *x) {
  Value *a = fabs(b, x), *a2 = b.CreateFMul(a, a);
  Value *d = b.CreateFAdd(f32(b, 1.0), b.CreateUnaryIntrinsic(Intrinsic::sqrt, b.CreateFAdd(f32(b, 1.0), a2)));
  Value *mid = log1pApprox(b, b.CreateFAdd(a, b.CreateFDiv(a2, d)));
  Value *big = b.CreateFAdd(logApprox(b, a), f32(b, std::numbers::ln2));
  return copysign(b, b.CreateSelect(b.CreateFCmpOGT(a, f32(b, 4096.0)), big, mid), x);
}
// acosh x = log1p(t + sqrt(t (t + 2))) with t = x - 1 (exact near 1); past
// 2^12, log(2x); NaN below 1 by the sqrt.
Value *acoshApprox(IRBuilderBase &b, Value *x) {
  Value *t = b.CreateFSub(x, f32(b, 1.0));
  Value *r = b.CreateUnaryIntrinsic(Intrinsic::sqrt, b.CreateFMul(t, b.CreateFAdd(t, f32(b, 2.0))));
  Value *mid = log1pApprox(b, b.CreateFAdd(t, r));
  Value *big = b.CreateFAdd(logApprox(b, x), f32(b, std::numbers::ln2));
  return b.CreateSelect(b.CreateFCmpOGT(x, f32(b, 4096.0)), big, mid);
}
// atanh |x| = log1p(2|x| / (1 - |x|)) / 2, with x's sign: odd by
// construction, and near -1 it avoids log1p of a value near -1, whose
// 1 + q cancels (0.4% off at x = -0.999999 measured on the host).
Value *atanhApprox(IRBuilderBase &b, Value *x) {
  Value *a = fabs(b, x);
  Value *q = b.CreateFDiv(b.CreateFMul(f32(b, 2.0), a), b.CreateFSub(f32(b, 1.0), a));
  return copysign(b, b.CreateFMul(f32(b, 0.5), log1pApprox(b, q)), x);
}

// cbrt: 2^(log2|x| / 3) by the approx instructions, one Newton step
// r -= (r - |x| / r^2) / 3 (which 0 and inf skip), with x's sign.
Value *cbrtApprox(IRBuilderBase &b, Value *x) {
  Value *a = fabs(b, x);
  Value *r = exp2Approx(b, b.CreateFMul(approxCall(b, Intrinsic::nvvm_lg2_approx_f, a), f32(b, 1.0 / 3)));
  Value *step = b.CreateFMul(b.CreateFSub(r, b.CreateFDiv(a, b.CreateFMul(r, r))), f32(b, 1.0 / 3));
  Value *edge = b.CreateOr(b.CreateFCmpOEQ(a, f32(b, 0.0)), b.CreateFCmpOEQ(a, ConstantFP::getInfinity(b.getFloatTy())));
  return copysign(b, b.CreateSelect(edge, a, b.CreateFSub(r, step)), x);
}

// erfc: Numerical Recipes' erfcc (Chebyshev, fractional error below 1.2e-7
// for x >= 0): t e^(-z^2 + p(t)) with z = |x|, t = 1 / (1 + z/2); 2 - that
// for x < 0. Relative, unlike 1 - erf(x), so the tail keeps its digits.
Value *erfcApprox(IRBuilderBase &b, Value *x) {
  Value *z = fabs(b, x);
  Value *t = b.CreateFDiv(f32(b, 1.0), b.CreateIntrinsic(Intrinsic::fma, {b.getFloatTy()}, {z, f32(b, 0.5), f32(b, 1.0)}));
  Value *p = poly(b, t, {-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398,
                         1.48851587, -0.82215223, 0.17087277});
  Value *r = b.CreateFMul(t, expApprox(b, b.CreateFSub(p, b.CreateFMul(z, z))));
  return b.CreateSelect(b.CreateFCmpOLT(x, f32(b, 0.0)), b.CreateFSub(f32(b, 2.0), r), r);
}

// hypot (f32 or f64): m sqrt(1 + (n/m)^2) with m, n the larger and smaller
// of |x|, |y|, so nothing overflows or underflows on the way; inf if either
// is infinite (a NaN other operand included, as C's hypot), else NaN if
// either is NaN.
Value *hypotAny(IRBuilderBase &b, Value *x, Value *y) {
  Type *t = x->getType();
  Value *ax = fabs(b, x), *ay = fabs(b, y);
  Value *m = b.CreateBinaryIntrinsic(Intrinsic::maxnum, ax, ay), *n = b.CreateBinaryIntrinsic(Intrinsic::minnum, ax, ay);
  Value *zero = ConstantFP::get(t, 0.0), *one = ConstantFP::get(t, 1.0), *inf = ConstantFP::getInfinity(t);
  Value *q = b.CreateSelect(b.CreateFCmpOEQ(m, zero), zero, b.CreateFDiv(n, m));
  Value *r = b.CreateFMul(m, b.CreateUnaryIntrinsic(Intrinsic::sqrt, b.CreateIntrinsic(Intrinsic::fma, {t}, {q, q, one})));
  r = b.CreateSelect(b.CreateFCmpUNO(x, y), ConstantFP::getNaN(t), r);
  return b.CreateSelect(b.CreateOr(b.CreateFCmpOEQ(ax, inf), b.CreateFCmpOEQ(ay, inf)), inf, r);
}

// fmod (f32 or f64): x - q y with q = trunc(x / y), by one fma, which is
// exact when q is; where x / y rounded up to the next integer (r's sign is
// then not x's) one |y| goes back. Exact while |x / y| < 2^24 (f32) or 2^53
// (f64), approximate beyond. fmod(x, inf) is x, fmod(x, 0) and fmod(inf, y)
// NaN (from the division), the result has x's sign (-0.0 included).
Value *fmodAny(IRBuilderBase &b, Value *x, Value *y) {
  Type *t = x->getType();
  Value *q = b.CreateUnaryIntrinsic(Intrinsic::trunc, b.CreateFDiv(x, y));
  Value *r = b.CreateIntrinsic(Intrinsic::fma, {t}, {b.CreateFNeg(q), y, x});
  Value *overshot = b.CreateAnd(b.CreateFCmpONE(r, ConstantFP::get(t, 0.0)),
                                b.CreateICmpNE(signbitOf(b, r), signbitOf(b, x)));
  r = b.CreateSelect(overshot, b.CreateFAdd(r, copysign(b, y, x)), r);
  r = copysign(b, r, x);
  Value *inf = ConstantFP::getInfinity(t);
  Value *yInf = b.CreateAnd(b.CreateFCmpOEQ(fabs(b, y), inf), b.CreateFCmpOLT(fabs(b, x), inf));
  return b.CreateSelect(yInf, x, r);
}

// The functions that are exact in PTX for f32 and f64 alike: a rounding
// instruction, or a short sequence of correctly rounded ones. Null for the
// others.
Value *exactAny(IRBuilderBase &b, MathFn f, Value *x, Value *y) {
  switch (f) {
    case MathFn::Sqrt: return b.CreateUnaryIntrinsic(Intrinsic::sqrt, x);    // sqrt.rn
    case MathFn::Floor: return b.CreateUnaryIntrinsic(Intrinsic::floor, x);  // cvt.rmi
    case MathFn::Ceil: return b.CreateUnaryIntrinsic(Intrinsic::ceil, x);    // cvt.rpi
    case MathFn::Trunc: return b.CreateUnaryIntrinsic(Intrinsic::trunc, x);  // cvt.rzi
    case MathFn::Rint: return b.CreateUnaryIntrinsic(Intrinsic::rint, x);    // cvt.rni
    case MathFn::Round: return b.CreateUnaryIntrinsic(Intrinsic::round, x);  // LLVM's add-half-and-truncate
    case MathFn::Hypot: return hypotAny(b, x, y);
    case MathFn::Fmod: return fmodAny(b, x, y);
    default: return nullptr;
  }
}

Value *approxF32(IRBuilderBase &b, MathFn f, Value *x, Value *y) {
  switch (f) {
    case MathFn::Exp: return expApprox(b, x);
    case MathFn::Exp2: return exp2Approx(b, x);
    case MathFn::Log: return logApprox(b, x);
    case MathFn::Log2: return approxCall(b, Intrinsic::nvvm_lg2_approx_f, x);
    case MathFn::Rsqrt: return approxCall(b, Intrinsic::nvvm_rsqrt_approx_f, x);
    case MathFn::Sin: return approxCall(b, Intrinsic::nvvm_sin_approx_f, reduceTwoPi(b, x));
    case MathFn::Cos: return approxCall(b, Intrinsic::nvvm_cos_approx_f, reduceTwoPi(b, x));
    case MathFn::Tanh: return tanhApprox(b, x);
    case MathFn::Erf: return erfApprox(b, x);
    case MathFn::Log1p: return log1pApprox(b, x);
    case MathFn::Expm1: return expm1Approx(b, x);
    case MathFn::Pow: return powApprox(b, x, y);
    case MathFn::Atan2: return atan2Approx(b, x, y);
    case MathFn::Tan: {
      Value *r = reduceTwoPi(b, x);
      return b.CreateFDiv(approxCall(b, Intrinsic::nvvm_sin_approx_f, r), approxCall(b, Intrinsic::nvvm_cos_approx_f, r));
    }
    case MathFn::Asin: return asinApprox(b, x);
    case MathFn::Acos: return acosApprox(b, x);
    case MathFn::Atan: return atan2Approx(b, x, f32(b, 1.0));
    case MathFn::Sinh: return sinhApprox(b, x);
    case MathFn::Cosh: return coshApprox(b, x);
    case MathFn::Asinh: return asinhApprox(b, x);
    case MathFn::Acosh: return acoshApprox(b, x);
    case MathFn::Atanh: return atanhApprox(b, x);
    case MathFn::Log10:
      return b.CreateFMul(approxCall(b, Intrinsic::nvvm_lg2_approx_f, x), f32(b, std::numbers::ln2 / std::numbers::ln10));
    case MathFn::Exp10: return exp2Approx(b, b.CreateFMul(x, f32(b, std::numbers::ln10 / std::numbers::ln2)));
    case MathFn::Cbrt: return cbrtApprox(b, x);
    case MathFn::Erfc: return erfcApprox(b, x);
    // Exact for both types (exactAny) or an instruction (NvptxTarget::math).
    case MathFn::Sqrt: case MathFn::Floor: case MathFn::Ceil: case MathFn::Trunc: case MathFn::Round:
    case MathFn::Rint: case MathFn::Hypot: case MathFn::Fmod:
    case MathFn::DivRn: case MathFn::SqrtRn: case MathFn::Fdiv:
      break;
  }
  throw tk::InternalError(std::string("approxMath: no f32 rule for ") + lower::mathFnName(f));
}

}  // namespace

Value *approxMath(IRBuilderBase &b, MathFn f, Value *x, Value *y) {
  if (Value *exact = exactAny(b, f, x, y)) return exact;
  if (x->getType()->isFloatTy()) return approxF32(b, f, x, y);
  if (f == MathFn::Rsqrt)
    return b.CreateFDiv(ConstantFP::get(x->getType(), 1.0), b.CreateUnaryIntrinsic(Intrinsic::sqrt, x));
  Type *f32Ty = b.getFloatTy();
  Value *ny = y ? b.CreateFPTrunc(y, f32Ty) : nullptr;
  return b.CreateFPExt(approxF32(b, f, b.CreateFPTrunc(x, f32Ty), ny), x->getType());
}

}  // namespace tk::nvptx
