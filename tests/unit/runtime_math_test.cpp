// tests/kernels/math.tk on the sim: tan ... fmod, div_rn, sqrt_rn and fdiv in
// f32, f64, f16 and bf16, umulhi in i32 and i64, and Triton's tutorial 07
// (asin_kernel), each against a reference in long double on fresh random
// inputs over the function's domain, outputs poisoned, at sizes that exercise
// the masks; cumprod and xor_sum; and ptxas accepts every kernel for sm_80
// and sm_90, with libdevice and with the approx fallback.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "TestSeed.h"
#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "runtime_TestUtil.h"
#include "tk/half.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/math.tk";
const int kSizes[] = {1, 781, 1023, 98433};
const char *kFloats[] = {"f32", "f64", "f16", "bf16"};

uint32_t blocks(int n) { return uint32_t((n + 255) / 256); }

std::mt19937_64 &rng() {
  static std::mt19937_64 r(tk::test::testSeed());
  return r;
}

// A float type's values travel as double on the host: the value `v` rounds
// to in type `t`, uploads and downloads of such values.
double representable(const std::string &t, double v) {
  if (t == "f64") return v;
  if (t == "f32") return float(v);
  if (t == "f16") return tk::halfBitsToFloat(tk::floatToHalfBits(float(v)));
  return tk::bf16BitsToFloat(tk::floatToBf16Bits(float(v)));
}

tk::Buffer upload(tk::Device &dev, const std::string &t, const std::vector<double> &v) {
  if (t == "f64") return dev.upload(v);
  if (t == "f32") return dev.upload(std::vector<float>(v.begin(), v.end()));
  std::vector<uint16_t> bits;
  for (double d : v) bits.push_back(t == "f16" ? tk::floatToHalfBits(float(d)) : tk::floatToBf16Bits(float(d)));
  return dev.upload(bits);
}

std::vector<double> download(tk::Device &dev, const std::string &t, const tk::Buffer &b, size_t n) {
  if (t == "f64") return dev.download<double>(b, n);
  if (t == "f32") {
    auto f = dev.download<float>(b, n);
    return {f.begin(), f.end()};
  }
  std::vector<double> out;
  for (uint16_t h : dev.download<uint16_t>(b, n))
    out.push_back(t == "f16" ? tk::halfBitsToFloat(h) : tk::bf16BitsToFloat(h));
  return out;
}

// How far a result may be from the exact value: libm's f32 and f64 functions
// (the sim's) within a few ulp; f16 and bf16 are computed in f32 and rounded
// once (half an ulp, 2^-11 and 2^-8 relative; f16's subnormals are 2^-24
// apart). `exact` functions must round the exact value once, bit for bit.
struct Tolerance {
  double rel, abs;
};
Tolerance tolerance(const std::string &t, bool exact) {
  if (t == "f16") return exact ? Tolerance{0, 0} : Tolerance{1.1 * 0x1p-11, 0x1p-25};
  if (t == "bf16") return exact ? Tolerance{0, 0} : Tolerance{1.1 * 0x1p-8, 0x1p-130};
  if (exact) return {0, 0};
  return t == "f32" ? Tolerance{0x1p-21, 0x1p-140} : Tolerance{0x1p-48, 0x1p-1060};
}

// NaN wants NaN, an infinity itself; else within the tolerance of `exact`,
// or with no tolerance `exact` rounded to the type (a poisoned NaN fails).
::testing::AssertionResult near(double got, long double exact, const std::string &t, Tolerance tol,
                                const std::string &what) {
  const double want = representable(t, double(exact));
  bool ok = std::isnan(want)                             ? std::isnan(got)
            : std::isinf(want) || (tol.rel == 0 && tol.abs == 0) ? got == want
                                                         : std::abs(got - double(exact)) <= tol.rel * std::abs(double(exact)) + tol.abs;
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": got " << got << " want " << double(exact) << " (" << want
                                       << " in " << t << ")";
}

// An IEEE quotient or square root, exact once rounded to `t`: long double
// then f32 (or f16, bf16) rounds once in effect (64 >= 2 * 24 + 2 bits), but
// long double then f64 may round twice, so f64 takes the double operation.
long double quotient(const std::string &t, double a, double b) {
  return t == "f64" ? (long double)(a / b) : (long double)a / b;
}

// One row of `unary`: the function's domain and its exact value.
struct Unary {
  const char *name;
  double lo, hi;
  long double (*ref)(long double);
  bool exact;  // correctly rounded by definition: compared bit for bit
};
const Unary kUnary[] = {
    {"tan", -3, 3, [](long double x) { return std::tan(x); }, false},
    {"asin", -1, 1, [](long double x) { return std::asin(x); }, false},
    {"acos", -1, 1, [](long double x) { return std::acos(x); }, false},
    {"atan", -20, 20, [](long double x) { return std::atan(x); }, false},
    {"sinh", -10, 10, [](long double x) { return std::sinh(x); }, false},
    {"cosh", -10, 10, [](long double x) { return std::cosh(x); }, false},
    {"asinh", -100, 100, [](long double x) { return std::asinh(x); }, false},
    {"acosh", 1, 100, [](long double x) { return std::acosh(x); }, false},
    {"atanh", -0.999, 0.999, [](long double x) { return std::atanh(x); }, false},
    {"log10", 1e-3, 1000, [](long double x) { return std::log10(x); }, false},
    {"exp10", -3, 4, [](long double x) { return std::pow(10.0L, x); }, false},
    {"cbrt", -1000, 1000, [](long double x) { return std::cbrt(x); }, false},
    {"erfc", -3, 9, [](long double x) { return std::erfc(x); }, false},
    {"trunc", -10, 10, [](long double x) { return std::trunc(x); }, true},
    {"round", -10, 10, [](long double x) { return std::round(x); }, true},  // halves away from zero
    {"rint", -10, 10, [](long double x) { return std::nearbyint(x); }, true},  // halves to even
    {"sqrt_rn", 0, 1000, [](long double x) { return std::sqrt(x); }, true},
};

// Inputs for row `f` of `unary`: uniform over the domain, with its edges
// (asin's +-1, acosh's 1, 0) and, for the rounding functions, exact halves
// -9.5 ... 10.5 (round and rint part there) in every other element.
std::vector<double> unaryInputs(const Unary &u, int n, const std::string &t) {
  std::uniform_real_distribution<double> d(u.lo, u.hi);
  std::vector<double> x(n);
  for (int i = 0; i < n; ++i) x[i] = d(rng());
  const bool rounding = std::string(u.name) == "round" || std::string(u.name) == "rint" || std::string(u.name) == "trunc";
  for (int i = 0; rounding && i < n; i += 2) x[i] = (i / 2) % 21 - 10 + 0.5;
  if (n > 4) x[1] = u.lo, x[2] = u.hi;
  for (double &v : x) v = representable(t, v);
  return x;
}

TEST(Math, UnaryFunctionsInEveryFloatType) {
  auto dev = tk::Device::open("sim");
  const int nf = int(std::size(kUnary));
  for (const std::string t : kFloats) {
    tk::CompileOptions o;
    o.defines = {{"T", t}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "unary", o));
    for (int n : kSizes) {
      std::vector<double> x;
      for (const Unary &u : kUnary) {
        auto row = unaryInputs(u, n, t);
        x.insert(x.end(), row.begin(), row.end());
      }
      tk::Buffer dx = upload(*dev, t, x), out = upload(*dev, t, std::vector<double>(size_t(nf) * n, NAN));
      (*dev)(k, {blocks(n)}, dx, out, int32_t(n));
      auto got = download(*dev, t, out, size_t(nf) * n);
      for (int f = 0; f < nf; ++f)
        for (int i = 0; i < n; ++i) {
          const size_t at = size_t(f) * n + i;
          const bool sqrtF64 = t == "f64" && std::string(kUnary[f].name) == "sqrt_rn";  // see quotient()
          const long double want = sqrtF64 ? (long double)std::sqrt(x[at]) : kUnary[f].ref(x[at]);
          ASSERT_TRUE(near(got[at], want, t, tolerance(t, kUnary[f].exact),
                           std::string(kUnary[f].name) + " " + t + " n=" + std::to_string(n) + " x=" + std::to_string(x[at])));
        }
    }
  }
}

// hypot over [-1000, 1000]^2; fmod with mixed signs; div_rn and fdiv
// (fdiv's div.full.f32 is within 2 ulp on a GPU, exact on the sim).
TEST(Math, BinaryFunctionsInEveryFloatType) {
  auto dev = tk::Device::open("sim");
  for (const std::string t : kFloats) {
    tk::CompileOptions o;
    o.defines = {{"T", t}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "binary", o));
    for (int n : kSizes) {
      std::uniform_real_distribution<double> dx(-1000, 1000), dy(-10, 10);
      std::vector<double> x(n), y(n);
      for (int i = 0; i < n; ++i) x[i] = representable(t, dx(rng())), y[i] = representable(t, dy(rng()));
      if (n > 4) x[0] = 0, y[1] = 0, x[2] = -7, y[2] = 3.5, x[3] = 7, y[3] = -2;  // fmod: -0.0, NaN, exact
      tk::Buffer bx = upload(*dev, t, x), by = upload(*dev, t, y), out = upload(*dev, t, std::vector<double>(5 * n, NAN));
      (*dev)(k, {blocks(n)}, bx, by, out, int32_t(n));
      auto got = download(*dev, t, out, 5 * n);
      Tolerance fdivTol = t == "f32" ? Tolerance{0x1p-22, 0} : tolerance(t, t == "f64");
      for (int i = 0; i < n; ++i) {
        const long double a = x[i], b = y[i];
        const std::string what = t + " n=" + std::to_string(n) + " x=" + std::to_string(x[i]) + " y=" + std::to_string(y[i]);
        ASSERT_TRUE(near(got[i], std::hypot(a, b), t, tolerance(t, false), "hypot " + what));
        ASSERT_TRUE(near(got[n + i], std::fmod(a, b), t, tolerance(t, true), "fmod " + what));
        if (y[i] != 0 && std::fmod(a, b) == 0) {
          ASSERT_EQ(std::signbit(got[n + i]), std::signbit(x[i])) << "fmod sign " << what;
        }
        const long double q = quotient(t, x[i], y[i]);
        ASSERT_TRUE(near(got[2 * n + i], q, t, tolerance(t, true), "div_rn " + what));
        ASSERT_TRUE(near(got[3 * n + i], q, t, fdivTol, "fdiv " + what));
        ASSERT_TRUE(near(got[4 * n + i], q, t, tolerance(t, true), "fdiv ieee " + what));
      }
    }
  }
}

// umulhi on bit patterns over the whole range (large unsigned values
// included: -1 is 2^32 - 1), against the double-width product.
TEST(Math, UmulhiI32AndI64) {
  auto dev = tk::Device::open("sim");
  for (const std::string t : {"i32", "i64"}) {
    tk::CompileOptions o;
    o.defines = {{"T", t}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "mulhi", o));
    for (int n : kSizes) {
      std::vector<uint64_t> a(n), b(n);
      for (int i = 0; i < n; ++i) a[i] = rng()(), b[i] = rng()();
      if (n > 4) a[0] = b[0] = ~uint64_t{0}, a[1] = 0, a[2] = 1;
      if (t == "i32") {
        std::vector<int32_t> a32(a.begin(), a.end()), b32(b.begin(), b.end());
        tk::Buffer da = dev->upload(a32), db = dev->upload(b32), out = dev->upload(std::vector<int32_t>(n, 12345));
        (*dev)(k, {blocks(n)}, da, db, out, int32_t(n));
        auto got = dev->download<int32_t>(out, n);
        for (int i = 0; i < n; ++i)
          ASSERT_EQ(uint32_t(got[i]), uint32_t((uint64_t(uint32_t(a32[i])) * uint32_t(b32[i])) >> 32))
              << "i32 " << uint32_t(a32[i]) << " * " << uint32_t(b32[i]);
      } else {
        tk::Buffer da = dev->upload(a), db = dev->upload(b), out = dev->upload(std::vector<uint64_t>(n, 12345));
        (*dev)(k, {blocks(n)}, da, db, out, int32_t(n));
        auto got = dev->download<uint64_t>(out, n);
        for (int i = 0; i < n; ++i)
          ASSERT_EQ(got[i], uint64_t((unsigned __int128)a[i] * b[i] >> 64)) << "i64 " << a[i] << " * " << b[i];
      }
    }
  }
}

// Triton's tutorial 07, ported: y = asin(x) for x in [-1, 1] (and past it,
// NaN, as libdevice.asin gives).
TEST(Math, Tutorial07AsinKernel) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "asin_kernel"));
  for (int n : kSizes) {
    auto x = tk::test::randomFloats(n, -1, 1);
    if (n > 4) x[0] = 1, x[1] = -1, x[2] = 1.5f;
    tk::Buffer dx = dev->upload(x), dy = dev->upload(std::vector<float>(n, NAN));
    (*dev)(k, {uint32_t((n + 1023) / 1024)}, dx, dy, int32_t(n));
    auto y = download(*dev, "f32", dy, n);
    for (int i = 0; i < n; ++i)
      ASSERT_TRUE(near(y[i], std::asin((long double)x[i]), "f32", tolerance("f32", false), "asin x=" + std::to_string(x[i])));
  }
}

// tl.cumprod: each program's block, f32 near 1 (so a product of 1024 stays
// in range; within 1e-4, the scan multiplies in another order than the
// reference) and i32 (wrapping, compared exactly); and along each axis of
// 2-D tiles with masks on both.
TEST(Math, CumprodF32AndI32) {
  auto dev = tk::Device::open("sim");
  for (const std::string t : {"f32", "i32"}) {
    tk::CompileOptions o;
    o.defines = {{"T", t}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "cumprod_1d", o));
    for (int n : kSizes) {
      if (t == "f32") {
        auto x = tk::test::randomFloats(n, 0.99f, 1.01f);
        tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(n, NAN));
        (*dev)(k, {uint32_t((n + 1023) / 1024)}, dx, out, int32_t(n));
        auto got = dev->download<float>(out, n);
        double p = 1;
        for (int i = 0; i < n; ++i) {
          p = (i % 1024 == 0 ? 1.0 : p) * x[i];
          ASSERT_NEAR(got[i], p, 1e-4 * p) << "f32 n=" << n << " i=" << i;
        }
      } else {
        std::uniform_int_distribution<int32_t> d(-3, 3);
        std::vector<int32_t> x(n);
        for (int32_t &v : x) v = d(rng());
        tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<int32_t>(n, 12345));
        (*dev)(k, {uint32_t((n + 1023) / 1024)}, dx, out, int32_t(n));
        auto got = dev->download<int32_t>(out, n);
        uint32_t p = 1;
        for (int i = 0; i < n; ++i) {
          p = (i % 1024 == 0 ? 1u : p) * uint32_t(x[i]);
          ASSERT_EQ(uint32_t(got[i]), p) << "i32 n=" << n << " i=" << i;
        }
      }
    }
  }
  const int rows = 37, cols = 100;  // masks along both axes of 16 x 64 tiles
  for (int axis : {0, 1}) {
    tk::CompileOptions o;
    o.defines = {{"AXIS", std::to_string(axis)}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "cumprod_tile", o));
    auto x = tk::test::randomFloats(rows * cols, 0.5f, 1.5f);
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(rows * cols, NAN));
    (*dev)(k, {3, 2}, dx, out, int32_t(rows), int32_t(cols));
    auto got = dev->download<float>(out, rows * cols);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        double p = 1;  // the product along the axis from the tile's start
        if (axis == 1)
          for (int j = c / 64 * 64; j <= c; ++j) p *= x[r * cols + j];
        else
          for (int i = r / 16 * 16; i <= r; ++i) p *= x[i * cols + c];
        ASSERT_NEAR(got[r * cols + c], p, 1e-5 * p) << "axis " << axis << " at " << r << ", " << c;
      }
  }
}

// tl.xor_sum of rows (1, 77 and 128 columns of a 128-wide tile) and of whole
// tiles, i32 and i64 over all bit patterns.
TEST(Math, XorSumI32AndI64) {
  auto dev = tk::Device::open("sim");
  const int rows = 37, br = 8, programs = (rows + br - 1) / br;
  for (const std::string t : {"i32", "i64"}) {
    tk::CompileOptions o;
    o.defines = {{"T", t}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "xor_rows", o));
    for (int cols : {1, 77, 128}) {
      std::vector<uint64_t> x(size_t(rows) * cols);
      for (uint64_t &v : x) v = rng()();
      if (t == "i32")
        for (uint64_t &v : x) v = uint32_t(v);
      std::vector<uint64_t> wantRow(rows, 0), wantAll(programs, 0);
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) wantRow[r] ^= x[size_t(r) * cols + c], wantAll[r / br] ^= x[size_t(r) * cols + c];
      std::vector<uint64_t> gotRow, gotAll;
      if (t == "i32") {
        std::vector<int32_t> x32(x.begin(), x.end());
        tk::Buffer dx = dev->upload(x32), out = dev->upload(std::vector<int32_t>(rows, 12345)),
                   all = dev->upload(std::vector<int32_t>(programs, 12345));
        (*dev)(k, {uint32_t(programs)}, dx, out, all, int32_t(rows), int32_t(cols));
        for (int32_t v : dev->download<int32_t>(out, rows)) gotRow.push_back(uint32_t(v));
        for (int32_t v : dev->download<int32_t>(all, programs)) gotAll.push_back(uint32_t(v));
      } else {
        tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<uint64_t>(rows, 12345)),
                   all = dev->upload(std::vector<uint64_t>(programs, 12345));
        (*dev)(k, {uint32_t(programs)}, dx, out, all, int32_t(rows), int32_t(cols));
        gotRow = dev->download<uint64_t>(out, rows);
        gotAll = dev->download<uint64_t>(all, programs);
      }
      EXPECT_EQ(gotRow, wantRow) << t << " cols=" << cols;
      EXPECT_EQ(gotAll, wantAll) << t << " cols=" << cols;
    }
  }
}

// Every kernel of math.tk, in each type, is PTX that ptxas 13.0 accepts for
// sm_80 and sm_90 with libdevice and without, all libdevice calls linked; the
// instructions tl.math's functions name are there.
TEST(Math, PtxasAcceptsSm80AndSm90) {
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "no ptxas: the CUDA toolkit was not found (CUDA_HOME, /usr/local/cuda)";
  struct Variant {
    const char *kernel, *type;
    std::vector<const char *> want;
  };
  const Variant variants[] = {
      {"unary", "f32", {"sqrt.rn.f32"}},
      {"unary", "f64", {"sqrt.rn.f64"}},
      {"unary", "f16", {"sqrt.rn.f32"}},
      {"unary", "bf16", {"sqrt.rn.f32"}},
      {"binary", "f32", {"div.rn.f32", "div.full.f32"}},
      {"binary", "f64", {"div.rn.f64"}},
      {"binary", "f16", {"div.full.f32"}},
      {"binary", "bf16", {"div.full.f32"}},
      {"mulhi", "i32", {"mul.hi.u32"}},
      {"mulhi", "i64", {"mul.hi.u64"}},
      {"asin_kernel", "", {}},
      {"cumprod_1d", "f32", {"mul.rn.f32"}},
      {"cumprod_1d", "i32", {"mul.lo.s32"}},
      {"cumprod_tile", "", {"shfl.sync.bfly"}},
      {"xor_rows", "i32", {"xor.b32", "shfl.sync.bfly"}},
      {"xor_rows", "i64", {"xor.b64"}},
  };
  for (bool libdevice : {true, false})
    for (const Variant &v : variants) {
      tk::CompileOptions opts;
      opts.archs = {"sm_80", "sm_90"};
      opts.useLibdevice = libdevice;
      opts.cache = false;
      if (*v.type) opts.defines = {{"T", v.type}};
      tk::Bundle b = tk::Compiler::compileFile(kFile, v.kernel, opts);
      const std::string what = std::string(v.kernel) + " " + v.type + (libdevice ? " libdevice " : " approx ");
      for (const std::string &arch : opts.archs) {
        const std::string &ptx = b.ptx.at(arch);
        EXPECT_EQ(ptx.find(".extern .func"), std::string::npos) << what << arch;
        for (const char *insn : v.want) EXPECT_NE(ptx.find(insn), std::string::npos) << what << arch << ": no " << insn;
        tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(ptx, arch, toolkit);
        ASSERT_TRUE(info.ran) << what << arch << "\n" << info.log;
        EXPECT_FALSE(info.cubin.empty()) << what << arch;
      }
    }
}

}  // namespace
