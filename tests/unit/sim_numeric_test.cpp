// tk sim numerics: f16/bf16 conversions in JIT'd code (the libcalls x86 may
// emit resolve to the runtime and round to nearest even, once), and
// SimTarget's libm math against the host's.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "backend/sim/Runtime.h"
#include "tests/unit/sim_KernelBuilder.h"

namespace tk::sim::test {
namespace {

using llvm::Type;
using llvm::Value;

// Reference bf16 rounding by brute force: the nearer of the two neighbours,
// ties to the even one (0x7f80 stands for 2^128, so overflow rounds to inf).
uint16_t refBf16(double d) {
  if (std::isnan(d)) return 0x7fc0;
  double a = std::fabs(d);
  uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  if (std::isinf(a)) return sign | 0x7f80;
  auto value = [](uint32_t b) { return b >= 0x7f80 ? std::ldexp(1.0, 128) : double(std::bit_cast<float>(b << 16)); };
  uint32_t lo = 0;
  for (uint32_t step = 1u << 15; step; step >>= 1)  // the largest bf16 <= a
    if (lo + step <= 0x7f80 && value(lo + step) <= a) lo += step;
  if (value(lo) == a || lo == 0x7f80) return sign | uint16_t(lo);
  double dl = a - value(lo), dh = value(lo + 1) - a;
  uint32_t r = dl < dh ? lo : dh < dl ? lo + 1 : (lo & 1 ? lo + 1 : lo);
  return sign | uint16_t(r);
}

uint16_t refHalf(double d) { return std::bit_cast<uint16_t>(static_cast<_Float16>(d)); }  // libgcc, correctly rounded
uint16_t refHalf(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }

std::vector<float> floatInputs(size_t n) {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          65504.0f,
                          65519.996f,
                          65520.0f,
                          70000.0f,
                          0x1p-24f,
                          0x1p-25f,
                          0x1.8p-25f,
                          0x1p-26f,
                          0x1p-14f,
                          0x1.ffcp-15f,
                          1.0f + 0x1p-11f,
                          1.0f + 0x1.8p-10f,
                          1.0f + 0x1p-8f,
                          1.0f + 0x3p-8f,
                          3.3895313892515355e38f,
                          std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()};
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> unit(-1, 1);
  std::uniform_int_distribution<uint32_t> bits;
  while (v.size() < n) {
    switch (v.size() % 3) {
      case 0:
        v.push_back(std::bit_cast<float>(bits(rng)));
        break;
      case 1:
        v.push_back(std::ldexp(unit(rng), int(v.size() % 50) - 30));
        break;
      default:
        v.push_back(unit(rng) * 70000.0f);
        break;
    }
  }
  v.resize(n);
  return v;
}

std::vector<double> doubleInputs(size_t n) {
  // Values just past a tie of the narrow type: rounding twice (via float) gets them wrong.
  std::vector<double> v = {1.0 + 0x1p-11 + 0x1p-40,
                           1.0 + 0x1p-11,
                           1.0 + 0x1p-8 + 0x1p-40,
                           1.0 + 0x1p-8,
                           -(1.0 + 0x1p-8 + 0x1p-30),
                           65520.0,
                           65519.99999,
                           0x1p-25,
                           0x1p-25 + 0x1p-60,
                           1e300,
                           -1e-300,
                           std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::uniform_int_distribution<uint64_t> bits;
  while (v.size() < n) {
    if (v.size() % 2)
      v.push_back(std::ldexp(unit(rng), int(v.size() % 60) - 35));
    else
      v.push_back(std::bit_cast<double>(bits(rng)));
  }
  v.resize(n);
  return v;
}

bool sameHalf(uint16_t a, uint16_t b, uint16_t expMask) {
  bool nanA = (a & expMask) == expMask && (a & ~expMask & 0x7fff),
       nanB = (b & expMask) == expMask && (b & ~expMask & 0x7fff);
  return nanA || nanB ? nanA == nanB : a == b;
}

TEST(SimConversions, RuntimeRoundingMatchesReferences) {
  for (float f : floatInputs(1 << 18)) {
    ASSERT_TRUE(sameHalf(floatToHalfBits(f), refHalf(f), 0x7c00)) << f;
    ASSERT_TRUE(sameHalf(floatToBf16Bits(f), refBf16(f), 0x7f80)) << f;
  }
  for (double d : doubleInputs(1 << 18)) {
    ASSERT_TRUE(sameHalf(doubleToHalfBits(d), refHalf(d), 0x7c00)) << d;
    ASSERT_TRUE(sameHalf(doubleToBf16Bits(d), refBf16(d), 0x7f80)) << d;
  }
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float ref = float(std::bit_cast<_Float16>(uint16_t(h)));
    float got = halfBitsToFloat(uint16_t(h));
    if (std::isnan(ref)) {
      ASSERT_TRUE(std::isnan(got)) << h;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(ref)) << h;
    }
  }
}

// One thread per element: f32 and f64 -> f16 / bf16, and f16 / bf16 -> f32.
TEST(SimConversions, JitCodeRoundTripsHalfAndBfloat) {
  const int threads = 256, n = 1 << 16;
  KernelBuilder k;
  auto &b = k.b();
  Type *h = b.getHalfTy(), *bf = b.getBFloatTy(), *f = k.f32(), *d = b.getDoubleTy();
  // (xf, xd, hin, bin, oh, ob, ohd, obd, ohf, obf)
  k.kernel("convert", std::vector<Type *>(10, k.ptr()), threads);
  Value *i = k.globalId(threads);
  Value *xf = k.load(f, k.gep(f, k.arg(0), i), "c.tk:1:1", 4);
  Value *xd = k.load(d, k.gep(d, k.arg(1), i), "c.tk:2:1", 8);
  k.store(b.CreateFPTrunc(xf, h), k.gep(h, k.arg(4), i), "c.tk:3:1", 2);
  k.store(b.CreateFPTrunc(xf, bf), k.gep(bf, k.arg(5), i), "c.tk:4:1", 2);
  k.store(b.CreateFPTrunc(xd, h), k.gep(h, k.arg(6), i), "c.tk:5:1", 2);
  k.store(b.CreateFPTrunc(xd, bf), k.gep(bf, k.arg(7), i), "c.tk:6:1", 2);
  k.store(b.CreateFPExt(k.load(h, k.gep(h, k.arg(2), i), "c.tk:7:1", 2), f), k.gep(f, k.arg(8), i), "c.tk:8:1", 4);
  k.store(b.CreateFPExt(k.load(bf, k.gep(bf, k.arg(3), i), "c.tk:9:1", 2), f), k.gep(f, k.arg(9), i), "c.tk:10:1", 4);
  b.CreateRetVoid();
  auto prog = k.compile();

  Simulator sim;
  std::vector<float> fin = floatInputs(n);
  std::vector<double> din = doubleInputs(n);
  Buffer<float> xf_(sim.memory(), n), ohf(sim.memory(), n), obf(sim.memory(), n);
  Buffer<double> xd_(sim.memory(), n);
  Buffer<uint16_t> hin(sim.memory(), n), bin(sim.memory(), n), oh(sim.memory(), n), ob(sim.memory(), n),
      ohd(sim.memory(), n), obd(sim.memory(), n);
  for (int j = 0; j < n; ++j) xf_[j] = fin[j], xd_[j] = din[j], hin[j] = uint16_t(j), bin[j] = uint16_t(j);
  std::vector<void *> ptrs = {xf_.p, xd_.p, hin.p, bin.p, oh.p, ob.p, ohd.p, obd.p, ohf.p, obf.p};
  std::vector<const void *> args;
  for (void *&p : ptrs) args.push_back(&p);
  LaunchConfig cfg;
  cfg.grid[0] = n / threads;
  cfg.blockThreads = threads;
  sim.launch(*prog, "convert", cfg, args);
  for (int j = 0; j < n; ++j) {
    ASSERT_TRUE(sameHalf(oh[j], refHalf(fin[j]), 0x7c00)) << "f32->f16 " << fin[j];
    ASSERT_TRUE(sameHalf(ob[j], refBf16(fin[j]), 0x7f80)) << "f32->bf16 " << fin[j];
    ASSERT_TRUE(sameHalf(ohd[j], refHalf(din[j]), 0x7c00)) << "f64->f16 " << din[j];
    ASSERT_TRUE(sameHalf(obd[j], refBf16(din[j]), 0x7f80)) << "f64->bf16 " << din[j];
    float hf = float(std::bit_cast<_Float16>(uint16_t(j))), bff = std::bit_cast<float>(uint32_t(j) << 16);
    if (std::isnan(hf)) {
      ASSERT_TRUE(std::isnan(ohf[j])) << j;
    } else {
      ASSERT_EQ(ohf[j], hf) << j;
    }
    if (std::isnan(bff)) {
      ASSERT_TRUE(std::isnan(obf[j])) << j;
    } else {
      ASSERT_EQ(obf[j], bff) << j;
    }
  }
}

// Whatever the host CPU has (F16C, AVX512-BF16 or neither), the libcalls x86
// codegen falls back to must resolve to the runtime with the right ABI: call
// them by name.
TEST(SimConversions, LibcallsResolveWithTheRightAbi) {
  KernelBuilder k;
  auto &b = k.b();
  Type *h = b.getHalfTy(), *bf = b.getBFloatTy(), *f = k.f32(), *d = b.getDoubleTy();
  k.kernel("libcalls", {k.ptr(), k.ptr(), k.ptr()}, 1);  // (in: {f32, pad, f64}, out16[4], outf[1])
  Value *x = k.load(f, k.arg(0));
  Value *y = k.load(d, b.CreateConstGEP1_32(b.getInt8Ty(), k.arg(0), 8), "l.tk:1:1", 8);
  auto call = [&](const char *name, Type *ret, Value *arg) {
    return b.CreateCall(k.module().getOrInsertFunction(name, ret, arg->getType()), {arg});
  };
  Value *outs[4] = {call("__truncsfhf2", h, x), call("__truncdfhf2", h, y), call("__truncsfbf2", bf, x),
                    call("__truncdfbf2", bf, y)};
  for (int j = 0; j < 4; ++j) k.store(outs[j], k.gep(outs[j]->getType(), k.arg(1), b.getInt32(j)), "l.tk:2:1", 2);
  k.store(call("__extendhfsf2", f, outs[0]), k.arg(2));
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<double> in(sim.memory(), 2);
  Buffer<uint16_t> out16(sim.memory(), 4);
  Buffer<float> outf(sim.memory(), 1);
  LaunchConfig cfg;
  cfg.blockThreads = 1;
  for (auto [xf, xd] : std::vector<std::pair<float, double>>{{1.0f + 0x1p-11f, 1.0 + 0x1p-11 + 0x1p-40},
                                                             {-3.14159f, 2.718281828},
                                                             {0x1p-20f, -0x1.8p-25},
                                                             {1e-40f, 1e-39}}) {
    std::memcpy(in.p, &xf, 4);
    in[1] = xd;
    void *p[3] = {in.p, out16.p, outf.p};
    sim.launch(*prog, "libcalls", cfg, {&p[0], &p[1], &p[2]});
    EXPECT_EQ(out16[0], refHalf(xf)) << xf;
    EXPECT_EQ(out16[1], refHalf(xd)) << xd;
    EXPECT_EQ(out16[2], refBf16(xf)) << xf;
    EXPECT_EQ(out16[3], refBf16(xd)) << xd;
    EXPECT_EQ(outf[0], float(std::bit_cast<_Float16>(refHalf(xf)))) << xf;
  }
}

TEST(SimMath, LibmFunctionsForF32AndF64) {
  using lower::MathFn;
  // The functions defined on all of [0.05, 18) (asin, acos, acosh and atanh
  // are not: tests/unit/runtime_math_test.cpp covers them on their domains).
  const std::vector<MathFn> fns = {MathFn::Exp,   MathFn::Exp2,  MathFn::Log,   MathFn::Log2,  MathFn::Sqrt,
                                   MathFn::Rsqrt, MathFn::Sin,   MathFn::Cos,   MathFn::Tanh,  MathFn::Floor,
                                   MathFn::Ceil,  MathFn::Erf,   MathFn::Log1p, MathFn::Expm1, MathFn::Pow,
                                   MathFn::Atan2, MathFn::Tan,   MathFn::Atan,  MathFn::Sinh,  MathFn::Cosh,
                                   MathFn::Asinh, MathFn::Log10, MathFn::Exp10, MathFn::Cbrt,  MathFn::Erfc,
                                   MathFn::Trunc, MathFn::Round, MathFn::Rint,  MathFn::Hypot, MathFn::Fmod,
                                   MathFn::DivRn, MathFn::SqrtRn, MathFn::Fdiv};
  const int threads = 64, n = 256, nf = int(fns.size());
  KernelBuilder k;
  auto &b = k.b();
  Type *f = k.f32(), *d = b.getDoubleTy();
  k.kernel("math", {k.ptr(), k.ptr(), k.ptr(), k.ptr()}, threads);  // (xf, xd, of[nf*n], od[nf*n])
  Value *i = k.globalId(threads);
  Value *xf = k.load(f, k.gep(f, k.arg(0), i)), *xd = k.load(d, k.gep(d, k.arg(1), i), "m.tk:1:1", 8);
  for (int j = 0; j < nf; ++j) {
    Value *slot = b.CreateAdd(i, b.getInt32(j * n));
    // Binary functions take x twice: pow(x, x), atan2(x, x).
    bool binary = lower::mathFnArity(fns[j]) == 2;
    k.store(k.target().math(b, fns[j], xf, binary ? xf : nullptr), k.gep(f, k.arg(2), slot));
    k.store(k.target().math(b, fns[j], xd, binary ? xd : nullptr), k.gep(d, k.arg(3), slot), "m.tk:2:1", 8);
  }
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(2);
  Buffer<float> xf_(sim.memory(), n), of(sim.memory(), n * nf);
  Buffer<double> xd_(sim.memory(), n), od(sim.memory(), n * nf);
  for (int j = 0; j < n; ++j) xf_[j] = 0.05f + 0.07f * j, xd_[j] = 0.05 + 0.07 * j;
  void *p[4] = {xf_.p, xd_.p, of.p, od.p};
  LaunchConfig cfg;
  cfg.grid[0] = n / threads;
  cfg.blockThreads = threads;
  sim.launch(*prog, "math", cfg, {&p[0], &p[1], &p[2], &p[3]});
  auto ref = [](MathFn fn, double x) {
    switch (fn) {
      case MathFn::Exp:
        return std::exp(x);
      case MathFn::Exp2:
        return std::exp2(x);
      case MathFn::Log:
        return std::log(x);
      case MathFn::Log2:
        return std::log2(x);
      case MathFn::Sqrt:
        return std::sqrt(x);
      case MathFn::Rsqrt:
        return 1 / std::sqrt(x);
      case MathFn::Sin:
        return std::sin(x);
      case MathFn::Cos:
        return std::cos(x);
      case MathFn::Tanh:
        return std::tanh(x);
      case MathFn::Floor:
        return std::floor(x);
      case MathFn::Ceil:
        return std::ceil(x);
      case MathFn::Erf:
        return std::erf(x);
      case MathFn::Log1p:
        return std::log1p(x);
      case MathFn::Expm1:
        return std::expm1(x);
      case MathFn::Pow:
        return std::pow(x, x);
      case MathFn::Atan2:
        return std::atan2(x, x);
      case MathFn::Tan: return std::tan(x);
      case MathFn::Asin: return std::asin(x);
      case MathFn::Acos: return std::acos(x);
      case MathFn::Atan: return std::atan(x);
      case MathFn::Sinh: return std::sinh(x);
      case MathFn::Cosh: return std::cosh(x);
      case MathFn::Asinh: return std::asinh(x);
      case MathFn::Acosh: return std::acosh(x);
      case MathFn::Atanh: return std::atanh(x);
      case MathFn::Log10: return std::log10(x);
      case MathFn::Exp10: return std::pow(10.0, x);
      case MathFn::Cbrt: return std::cbrt(x);
      case MathFn::Erfc: return std::erfc(x);
      case MathFn::Trunc: return std::trunc(x);
      case MathFn::Round: return std::round(x);
      case MathFn::Rint: return std::nearbyint(x);
      case MathFn::Hypot: return std::hypot(x, x);
      case MathFn::Fmod: return std::fmod(x, x);
      case MathFn::DivRn: case MathFn::Fdiv: return 1.0;
      case MathFn::SqrtRn: return std::sqrt(x);
    }
    return 0.0;
  };
  for (int j = 0; j < nf; ++j)
    for (int e = 0; e < n; ++e) {
      double rf = ref(fns[j], double(xf_[e])), rd = ref(fns[j], xd_[e]);
      // libm's f32 functions: within 2 ulp (glibc's erff, expm1f, powf: 1-2).
      ASSERT_NEAR(of[j * n + e], rf, 2.4e-7 * std::max(1.0, std::fabs(rf))) << "fn #" << j << " " << xf_[e];
      ASSERT_NEAR(od[j * n + e], rd, 1e-15 * std::max(1.0, std::fabs(rd))) << "fn #" << j << " " << xd_[e];
    }
}

}  // namespace
}  // namespace tk::sim::test
