// Kernels compiled from .tk source and run on the sim through the public
// API, each compared with a double-precision CPU reference on fresh random
// inputs, outputs poisoned before the run, at sizes that exercise the masks.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "TestSeed.h"
#include "runtime_TestUtil.h"
#include "runtime_Variants.h"
#include "tk/runtime.h"

namespace {

const std::string kStdlib = TK_SOURCE_DIR + "/stdlib/elementwise.tk";
const std::string kCasts = TK_SOURCE_DIR + "/tests/kernels/casts.tk";
// 1 and 98304 (a multiple of 16) give facts a launch specialises on.
const int kSizes[] = {1, 781, 1023, 98304, 98433};

std::unique_ptr<tk::Device> sim() { return tk::Device::open("sim"); }

using tk::test::randomFloats;

uint32_t blocks(int n, const tk::Bundle &b, const char *param = "BLOCK") {
  int64_t block = b.constInt(param);
  return uint32_t((n + block - 1) / block);
}

// L2 error of `got` against `ref`, relative to ||ref|| but never to less
// than a unit-sized element per entry: a lone result that f32 arithmetic
// computes by cancellation (gelu(-4), sin(x)cos(y) + x near 0) is held to
// f32's absolute precision, not to a relative one no f32 code can meet.
double relError(const std::vector<float> &got, const std::vector<double> &ref) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    err += (got[i] - ref[i]) * (got[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  return std::sqrt(err / std::max(norm, double(ref.size())));
}

// A unary or binary f32 stdlib kernel against its reference at every size,
// as the general variant and as the one each size specialises (n == 1, n a
// multiple of 16: runtime_Variants.h).
void checkElementwise(const std::string &kernel, int inputs, const std::function<double(double, double)> &ref,
                      const std::map<std::string, std::string> &defines = {}) {
  auto dev = sim();
  tk::CompileOptions opts;
  opts.defines = defines;
  for (tk::test::Variant v : tk::test::kVariants) {
    tk::test::VariantKernel k(*dev, kStdlib, kernel, opts, v);
    for (int n : kSizes) {
      SCOPED_TRACE(kernel + " n=" + std::to_string(n) + " " + tk::test::variantName(v));
      std::vector<std::vector<float>> in;
      std::vector<tk::Arg> args;
      for (int i = 0; i < inputs; ++i) {
        in.push_back(randomFloats(n, -4, 4));
        args.push_back(dev->upload(in.back()));
      }
      tk::Buffer out = dev->upload(std::vector<float>(n, NAN));
      args.push_back(out);
      args.push_back(int32_t(n));
      if (!k.differs(args)) continue;
      tk::LaunchStats s = k.launch({blocks(n, k.kernel(args).bundle())}, args);
      std::vector<float> got = dev->download<float>(out, n);
      std::vector<double> want(n);
      for (int i = 0; i < n; ++i) want[i] = ref(in[0][i], inputs > 1 ? in[1][i] : 0.0);
      for (int i = 0; i < n; ++i) ASSERT_FALSE(std::isnan(got[i])) << " i=" << i;
      EXPECT_LT(relError(got, want), 1e-5);
      // Every element read once per input and written once: nothing more.
      EXPECT_EQ(s.bytesMoved(), uint64_t(n) * 4 * (inputs + 1));
    }
  }
}

}  // namespace

TEST(StdlibElementwise, ComplexActivation) {
  checkElementwise("complex_activation", 2,
                   [](double x, double y) { return std::max(0.0, (std::sin(x) * std::cos(y) + x) * y); });
}

TEST(StdlibElementwise, ComplexActivationAtOtherBlockSizes) {
  for (const char *block : {"128", "256", "4096"})
    checkElementwise("complex_activation", 2,
                     [](double x, double y) { return std::max(0.0, (std::sin(x) * std::cos(y) + x) * y); },
                     {{"BLOCK", block}});
}

TEST(StdlibElementwise, SinCosChainOfEveryLength) {
  for (int chain : {1, 4, 7}) {
    checkElementwise("sincos_chain", 1,
                     [chain](double x, double) {
                       for (int i = 0; i < chain; ++i) x = i % 2 == 0 ? std::sin(x) : std::cos(x);
                       return x;
                     },
                     {{"CHAIN", std::to_string(chain)}});
  }
}

TEST(StdlibElementwise, Gelu) {
  checkElementwise("gelu", 1, [](double x, double) {
    return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  });
}

TEST(Kernels, CastsBetweenElementTypes) {
  auto dev = sim();
  tk::Bundle bundle = tk::Compiler::compileFile(kCasts, "casts");
  tk::Kernel k = dev->load(bundle);
  for (int n : kSizes) {
    auto x = randomFloats(n, -300, 300);
    tk::Buffer dx = dev->upload(x);
    tk::Buffer h = dev->upload(std::vector<uint16_t>(n, 0x7e00)), b = dev->upload(std::vector<uint16_t>(n, 0x7fc0));
    tk::Buffer back = dev->upload(std::vector<float>(n, NAN));
    tk::Buffer oi = dev->upload(std::vector<int32_t>(n, -1)), ol = dev->upload(std::vector<int64_t>(n, -1));
    (*dev)(k, {blocks(n, bundle)}, dx, h, b, back, oi, ol, int32_t(n));
    auto hb = dev->download<uint16_t>(h, n), bb = dev->download<uint16_t>(b, n);
    auto bk = dev->download<float>(back, n);
    auto iv = dev->download<int32_t>(oi, n);
    auto lv = dev->download<int64_t>(ol, n);
    for (int i = 0; i < n; ++i) {
      // bf16 is the top half of an f32 (rounded to nearest even).
      uint32_t bits;
      std::memcpy(&bits, &x[i], 4);
      uint32_t rounded = bits + 0x7fff + ((bits >> 16) & 1);
      ASSERT_EQ(bb[i], uint16_t(rounded >> 16)) << i;
      uint32_t bfBits = uint32_t(bb[i]) << 16;
      float bfValue;
      std::memcpy(&bfValue, &bfBits, 4);
      // f16 keeps 11 significant bits.
      ASSERT_NEAR(bk[i] - bfValue, x[i], std::fabs(x[i]) * 1e-3) << i;
      ASSERT_NE(hb[i], 0x7e00) << i;
      ASSERT_EQ(iv[i], int32_t(x[i] * 100.0f)) << i;
      ASSERT_EQ(lv[i], int64_t(iv[i]) * 3) << i;
    }
  }
}

// fp_downcast_rounding: "rtz" (tests/kernels/casts.tk casts_rtz) against
// references of their own: bf16 toward zero is an f32's top 16 bits; f16
// toward zero is the largest-magnitude finite f16 not above |x|, found in a
// table of every positive finite f16, or infinity for an infinite x.
TEST(Kernels, CastsTowardZero) {
  auto dev = sim();
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kCasts, "casts_rtz"));
  std::vector<float> halves;  // every positive finite f16, ascending
  for (uint32_t h = 0; h < 0x7c00; ++h) halves.push_back(tk::halfBitsToFloat(uint16_t(h)));
  auto halfTowardZero = [&](float x) -> uint16_t {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    if (std::isinf(x)) return sign | 0x7c00;
    auto it = std::upper_bound(halves.begin(), halves.end(), std::fabs(x));
    return sign | uint16_t(it - halves.begin() - 1);
  };
  std::mt19937 rng(tk::test::testSeed());
  for (int n : kSizes) {
    std::vector<float> x = randomFloats(n, -70000, 70000);
    // Small, subnormal, exact, overflowing and special values among them.
    const float special[] = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 65519.0f, 65520.0f, -1e6f, 1e-7f, -3e-8f, 5.9e-8f,
                             0.3334f, INFINITY, -INFINITY, std::nanf("")};
    for (size_t i = 0; i < std::size(special) && i < size_t(n); ++i) x[i] = special[i];
    for (int i = int(std::size(special)); i < n; i += 3) x[i] = std::ldexp(x[i], -int(rng() % 40));
    tk::Buffer dx = dev->upload(x), h = dev->upload(std::vector<uint16_t>(n + 1, 0x7e01)),
               b = dev->upload(std::vector<uint16_t>(n, 0x7fc1));
    (*dev)(k, {uint32_t((n + 255) / 256)}, dx, h, b, int32_t(n));
    auto hb = dev->download<uint16_t>(h, n + 1), bb = dev->download<uint16_t>(b, n);
    for (int i = 0; i < n; ++i) {
      const uint32_t bits = std::bit_cast<uint32_t>(x[i]);
      if (std::isnan(x[i])) {
        EXPECT_TRUE(std::isnan(tk::halfBitsToFloat(hb[i])) && std::isnan(tk::bf16BitsToFloat(bb[i]))) << i;
        continue;
      }
      EXPECT_EQ(bb[i], uint16_t(bits >> 16)) << "bf16 of " << x[i];
      EXPECT_EQ(hb[i], halfTowardZero(x[i])) << "f16 of " << x[i];
    }
    EXPECT_EQ(hb[n], halfTowardZero(0.3334f)) << "the constant, rounded toward zero";
    EXPECT_NE(hb[n], tk::floatToHalfBits(0.3334f)) << "nearest even rounds 0.3334 up: the test would not tell";
  }
}

TEST(Kernels, HalfMathComputesInF32) {
  auto dev = sim();
  tk::Bundle bundle = tk::Compiler::compileFile(kCasts, "half_math");
  tk::Kernel k = dev->load(bundle);
  const int n = 1023;
  // f16 inputs: small integers and halves are exact.
  std::vector<uint16_t> x(n);
  std::vector<double> xv(n);
  auto toHalf = [](float f) {  // exact for the values used here
    uint32_t b;
    std::memcpy(&b, &f, 4);
    uint32_t sign = (b >> 16) & 0x8000, exp = (b >> 23) & 0xff, man = b & 0x7fffff;
    if (exp == 0) return uint16_t(sign);
    return uint16_t(sign | ((exp - 127 + 15) << 10) | (man >> 13));
  };
  auto fromHalf = [](uint16_t h) {
    int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    double v = exp == 0 ? man * std::pow(2.0, -24) : (1 + man / 1024.0) * std::pow(2.0, exp - 15);
    return (h & 0x8000) ? -v : v;
  };
  for (int i = 0; i < n; ++i) {
    float f = float((i % 13) - 6) * 0.5f;
    x[i] = toHalf(f);
    xv[i] = f;
  }
  tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<uint16_t>(n, 0x7e00));
  (*dev)(k, {blocks(n, bundle)}, dx, out, int32_t(n));
  auto got = dev->download<uint16_t>(out, n);
  for (int i = 0; i < n; ++i) {
    double want = std::exp(xv[i]) * 0.5 + std::sqrt(std::fabs(xv[i]));
    ASSERT_NEAR(fromHalf(got[i]), want, std::fabs(want) * 1e-2 + 1e-3) << i << " x=" << xv[i];
  }
}

TEST(Kernels, TwoDimensionalBroadcasting) {
  auto dev = sim();
  tk::Bundle bundle = tk::Compiler::compileFile(kCasts, "rows");
  tk::Kernel k = dev->load(bundle);
  for (int rows : {1, 3, 781}) {
    auto x = randomFloats(size_t(rows) * 64, -2, 2), w = randomFloats(64, -2, 2);
    tk::Buffer dx = dev->upload(x), dw = dev->upload(w), out = dev->upload(std::vector<float>(rows * 64, NAN));
    (*dev)(k, {blocks(rows, bundle, "BR")}, dx, dw, out, int32_t(rows));
    auto got = dev->download<float>(out, rows * 64);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < 64; ++c)
        ASSERT_NEAR(got[r * 64 + c], double(x[r * 64 + c]) * w[c] + r, 1e-5 * (1 + r)) << r << "," << c;
  }
}

TEST(Kernels, IntegerOpsIncludingDivisionByARuntimeValue) {
  auto dev = sim();
  tk::Bundle bundle = tk::Compiler::compileFile(kCasts, "int_ops");
  tk::Kernel k = dev->load(bundle);
  std::mt19937 rng(42 + tk::test::testSeed());
  std::uniform_int_distribution<int32_t> dist(-100000, 100000);
  for (int n : kSizes) {
    for (int32_t d : {7, -3}) {
      std::vector<int32_t> a(n);
      for (auto &v : a) v = dist(rng);
      tk::Buffer da = dev->upload(a), out = dev->upload(std::vector<int32_t>(n, -12345));
      (*dev)(k, {blocks(n, bundle)}, da, out, int32_t(n), d);
      auto got = dev->download<int32_t>(out, n);
      for (int i = 0; i < n; ++i) {
        int32_t v = a[i], q = v / d + v % d;
        int32_t want = (v > 0 ? std::max(q, 7) : std::min(q, -7)) + (v << 2) - (v >> 1);
        ASSERT_EQ(got[i], want) << "n=" << n << " i=" << i << " v=" << v << " d=" << d;
      }
    }
  }
}

TEST(Kernels, ImportedFnHelpersFromStdlibMath) {
  auto dev = sim();
  tk::Bundle bundle = tk::Compiler::compileFile(TK_SOURCE_DIR + "/tests/kernels/use_math.tk", "activations");
  tk::Kernel k = dev->load(bundle);
  for (int n : kSizes) {
    // A single element stays where f32 has no cancellation (gelu and silu
    // of large negative x lose every digit in f32, as in any f32 code);
    // across many elements those are a vanishing part of the L2 error.
    auto x = n == 1 ? randomFloats(n, -2, 2) : randomFloats(n, -30, 30);
    tk::Buffer dx = dev->upload(x);
    std::vector<tk::Buffer> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(dev->upload(std::vector<float>(n, NAN)));
    (*dev)(k, {blocks(n, bundle)}, dx, outs[0], outs[1], outs[2], outs[3], int32_t(n));
    const std::function<double(double)> refs[] = {
        [](double v) { return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))); },
        [](double v) { return v / (1.0 + std::exp(-v)); },
        [](double v) { return std::log1p(std::exp(v)); },
        [](double v) { return v > 0 ? v : 0.01 * v; },
    };
    for (int f = 0; f < 4; ++f) {
      auto got = dev->download<float>(outs[f], n);
      std::vector<double> want(n);
      for (int i = 0; i < n; ++i) want[i] = refs[f](x[i]);
      EXPECT_LT(relError(got, want), 1e-5) << "fn " << f << " n=" << n;
    }
  }
}
