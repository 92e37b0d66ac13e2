// tests/kernels/builtins.tk on the sim: inf and nan literals, two-argument
// min/max, cdiv, clamp, erf log1p expm1 pow atan2, isnan isinf signbit, and
// f16/bf16 math through f32, each against a double reference on fresh random
// inputs with outputs poisoned, at sizes that exercise the masks.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <fstream>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "runtime_TestUtil.h"
#include "tk/half.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/builtins.tk";
const int kSizes[] = {1, 781, 1023, 98433};

uint32_t blocks(int n, int block = 256) { return uint32_t((n + block - 1) / block); }

// |got - want| within `tol` of max(1, |want|): f32 math of a few ulp (libm
// on the sim, libdevice on a GPU), held to an absolute bound near 0.
void expectClose(float got, double want, double tol, const std::string &what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": want NaN, got " << got;
    return;
  }
  ASSERT_LE(std::abs(got - want), tol * std::max(1.0, std::abs(want))) << what << ": got " << got << " want " << want;
}

// A file's own fns named cdiv, clamp, exp and max shadow the built-ins in
// that file, while the stdlib's softplus it imports keeps the built-in exp:
// adding a built-in never breaks a program that defines a fn of its name.
TEST(Builtins, UserFnsShadowBuiltins) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(TK_SOURCE_DIR + "/tests/kernels/shadow_builtins.tk", "shadow"));
  for (int n : kSizes) {
    auto x = tk::test::randomFloats(n, -4, 4);
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(n, NAN));
    (*dev)(k, {blocks(n, 128)}, dx, out, int32_t(n));
    auto got = dev->download<float>(out, n);
    for (int i = 0; i < n; ++i) {
      const double v = x[i];
      const double softplus = std::max(v, 0.0) + std::log1p(std::exp(-std::abs(v)));
      expectClose(got[i], 2 * v + (v + 3) + 304 + (v - 1) + softplus, 1e-5, "x=" + std::to_string(v));
    }
  }
}

// Kernel and fn parameters can be reassigned (`x_ptr += row * stride`), a
// fn's without touching the caller's value.
TEST(Builtins, ParametersAreVariables) {
  auto dev = tk::Device::open("sim");
  tk::CompileOptions opts;
  opts.defines = {{"BLOCK", "1024"}};
  tk::Kernel k = dev->load(tk::Compiler::compileFile(TK_SOURCE_DIR + "/tests/kernels/mutable_params.tk", "row_axpy", opts));
  const int rows = 3;
  for (int cols : {1, 781, 1023}) {
    const int stride = cols + 5;
    auto x = tk::test::randomFloats(size_t(rows) * stride, -4, 4);
    const float scale = 0.75f;
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(x.size(), NAN));
    (*dev)(k, {uint32_t(rows)}, dx, out, int32_t(stride), int32_t(cols), scale, int32_t(rows));
    auto got = dev->download<float>(out, x.size());
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < stride; ++c) {
        const size_t i = size_t(r) * stride + c;
        if (c >= cols) {
          EXPECT_TRUE(std::isnan(got[i])) << "wrote past the row at " << r << ", " << c;
          continue;
        }
        expectClose(got[i], 2.0 * x[i] + 1 + 2 * scale, 1e-6, "row " + std::to_string(r) + " col " + std::to_string(c));
      }
  }
}

// range(..., num_stages: 3, loop_unroll_factor: 2, flatten: true): ported
// as written, the same sums.
TEST(Builtins, RangeTakesTritonsLoopOptions) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(TK_SOURCE_DIR + "/tests/kernels/range_options.tk", "row_sum"));
  const int rows = 3;
  for (int cols : {1, 781, 1023}) {
    auto x = tk::test::randomFloats(size_t(rows) * cols, -1, 1);
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(rows, NAN));
    (*dev)(k, {uint32_t(rows)}, dx, out, int32_t(cols));
    auto got = dev->download<float>(out, rows);
    for (int r = 0; r < rows; ++r) {
      double want = 0;
      for (int c = 0; c < cols; ++c) want += x[size_t(r) * cols + c];
      expectClose(got[r], want, 1e-5, "row " + std::to_string(r) + " of " + std::to_string(cols));
    }
  }
}

// debug_barrier() orders a program's own global accesses: a store, then a
// load of those elements by other threads, then a store over them. On the
// sim without the barriers the mirrored reads see the poison (checked below
// by compiling the kernel with the barriers taken out), and on a GPU bar.sync.
TEST(Builtins, DebugBarrierOrdersTheProgramsAccesses) {
  auto dev = tk::Device::open("sim");
  const std::string path = TK_SOURCE_DIR + "/tests/kernels/debug_barrier.tk";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string source = text.str(), without = source;
  for (size_t at; (at = without.find("debug_barrier();")) != std::string::npos;) without.erase(at, 16);
  ASSERT_NE(without, source);
  auto run = [&](const std::string &src, int n) {
    tk::Kernel k = dev->load(tk::Compiler::compileSource(src, path, "mirror_in_place"));
    auto x = tk::test::randomFloats(n, -4, 4);
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(n, NAN));
    (*dev)(k, {blocks(n, 1024)}, dx, out, int32_t(n));
    auto got = dev->download<float>(out, n);
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
      const int mirror = i / 1024 * 1024 + (1023 - i % 1024);
      const double want = mirror < n ? 2.0 * x[mirror] + 1 : 1.0;
      wrong += !(std::abs(got[i] - want) <= 1e-6 * std::max(1.0, std::abs(want)));
    }
    return wrong;
  };
  for (int n : kSizes) EXPECT_EQ(run(source, n), 0) << "n=" << n;
  EXPECT_GT(run(without, 98433), 0) << "without its barriers the kernel should read stale values on the sim";
}

TEST(Builtins, MathF32) {
  auto dev = tk::Device::open("sim");
  tk::Bundle bundle = tk::Compiler::compileFile(kFile, "math_f32");
  tk::Kernel k = dev->load(bundle);
  const std::function<double(double, double)> refs[] = {
      [](double a, double) { return std::erf(a); },
      [](double a, double) { return std::log1p(std::abs(a)); },
      [](double a, double) { return std::expm1(a); },
      [](double a, double b) { return std::pow(std::abs(a), b); },
      [](double a, double b) { return std::atan2(a, b); },
      [](double a, double b) { return std::min(a, b) + std::max(a, 0.0); },
      [](double a, double b) { return std::min(std::max(a, -0.5), b); },
      [](double a, double) { return a * a * a; },
  };
  for (int n : kSizes) {
    auto x = tk::test::randomFloats(n, -4, 4), y = tk::test::randomFloats(n, -3, 3);
    if (n > 4) x[0] = 1e-6f, x[1] = -3e-7f, y[2] = 0.0f;  // log1p/expm1 near 0, atan2 on an axis
    tk::Buffer dx = dev->upload(x), dy = dev->upload(y), out = dev->upload(std::vector<float>(8 * n, NAN));
    (*dev)(k, {blocks(n)}, dx, dy, out, int32_t(n));
    auto got = dev->download<float>(out, 8 * n);
    for (int f = 0; f < 8; ++f)
      for (int i = 0; i < n; ++i) {
        double want = refs[f](x[i], y[i]);
        std::string what = "fn " + std::to_string(f) + " n=" + std::to_string(n) + " x=" + std::to_string(x[i]) +
                           " y=" + std::to_string(y[i]);
        // Near 0, log1p and expm1 keep their relative precision.
        if ((f == 1 || f == 2) && std::abs(want) < 1)
          ASSERT_LE(std::abs(got[f * n + i] - want), 4e-7 * std::abs(want)) << what << ": got " << got[f * n + i];
        else
          expectClose(got[f * n + i], want, 4e-6, what);
      }
  }
}

TEST(Builtins, MathHalfThroughF32) {
  auto dev = tk::Device::open("sim");
  tk::Bundle bundle = tk::Compiler::compileFile(kFile, "math_half");
  tk::Kernel k = dev->load(bundle);
  for (int n : kSizes) {
    auto x = tk::test::randomFloats(n, -3, 3), y = tk::test::randomFloats(n, -3, 3);
    std::vector<uint16_t> hx, by;
    for (int i = 0; i < n; ++i) {
      hx.push_back(tk::floatToHalfBits(x[i]));
      by.push_back(tk::floatToBf16Bits(y[i]));
      x[i] = tk::halfBitsToFloat(hx[i]);  // the values the kernel sees
      y[i] = tk::bf16BitsToFloat(by[i]);
    }
    tk::Buffer dx = dev->upload(hx), dy = dev->upload(by);
    tk::Buffer oh = dev->upload(std::vector<uint16_t>(3 * n, 0x7e00)), ob = dev->upload(std::vector<uint16_t>(3 * n, 0x7fc0));
    (*dev)(k, {blocks(n)}, dx, dy, oh, ob, int32_t(n));
    auto gh = dev->download<uint16_t>(oh, 3 * n), gb = dev->download<uint16_t>(ob, 3 * n);
    for (int i = 0; i < n; ++i) {
      // One rounding to f16 (2^-11 relative) or bf16 (2^-8) of an f32 result.
      const double a = x[i], b = y[i];
      expectClose(tk::halfBitsToFloat(gh[i]), std::exp(a), 1.1 * 0x1p-11, "f16 exp");
      // abs(a) + 0.5 is an f16 sum, rounded before the log.
      const double u = tk::halfBitsToFloat(tk::floatToHalfBits(float(std::abs(a) + 0.5)));
      expectClose(tk::halfBitsToFloat(gh[n + i]), std::log(u), 1.1 * 0x1p-11, "f16 log");
      expectClose(tk::halfBitsToFloat(gh[2 * n + i]), std::erf(a), 1.1 * 0x1p-11, "f16 erf");
      expectClose(tk::bf16BitsToFloat(gb[i]), std::exp(b), 1.1 * 0x1p-8, "bf16 exp");
      expectClose(tk::bf16BitsToFloat(gb[n + i]), std::expm1(b), 1.1 * 0x1p-8, "bf16 expm1");
      expectClose(tk::bf16BitsToFloat(gb[2 * n + i]), std::atan2(b, 1.0), 1.1 * 0x1p-8, "bf16 atan2");
    }
  }
}

TEST(Builtins, ClassifyAndSpecialValues) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "classify"));
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float special[] = {inf, -inf, nan, -nan, 0.0f, -0.0f, 1.0f, -1.0f, 1e-40f, -3e38f};
  for (int n : kSizes) {
    auto x = tk::test::randomFloats(n, -10, 10);
    static std::mt19937 rng(std::random_device{}());
    for (int i = 0; i < n; ++i)
      if (rng() % 3 == 0) x[i] = special[rng() % std::size(special)];
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<int32_t>(n, -1));
    (*dev)(k, {blocks(n)}, dx, out, int32_t(n));
    auto got = dev->download<int32_t>(out, n);
    for (int i = 0; i < n; ++i) {
      int want = int(std::isnan(x[i])) + 2 * int(std::isinf(x[i])) + 4 * int(std::signbit(x[i]));
      ASSERT_EQ(got[i], want) << "x=" << x[i] << " i=" << i;
    }
  }
}

TEST(Builtins, InfAndNanLiterals) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "row_max"));
  const float inf = std::numeric_limits<float>::infinity();
  for (int d : {1, 100, 256}) {
    const int rows = 37;
    auto x = tk::test::randomFloats(size_t(rows) * d, -100, -1);  // all negative: a 0 fill would win
    x[size_t(3) * d] = NAN;
    x[size_t(5) * d + d - 1] = inf;
    x[size_t(6) * d] = -inf;
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(rows, 12345.0f)),
               infs = dev->upload(std::vector<int32_t>(rows, -1));
    (*dev)(k, {uint32_t(rows)}, dx, out, infs, int32_t(rows), int32_t(d));
    auto got = dev->download<float>(out, rows);
    auto gotInfs = dev->download<int32_t>(infs, rows);
    for (int r = 0; r < rows; ++r) {
      bool hasNan = false;
      double want = -INFINITY;
      int wantInfs = 0;
      for (int c = 0; c < d; ++c) {
        float v = x[size_t(r) * d + c];
        hasNan |= std::isnan(v);
        if (!std::isnan(v)) want = std::max<double>(want, v);
        wantInfs += std::isinf(v);
      }
      if (hasNan) EXPECT_TRUE(std::isnan(got[r])) << "row " << r << " d=" << d;
      else EXPECT_EQ(got[r], want) << "row " << r << " d=" << d;
      EXPECT_EQ(gotInfs[r], wantInfs) << "row " << r << " d=" << d;
    }
  }
}

TEST(Builtins, CdivAndIntegerMinMax) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "int_ops"));
  static std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int32_t> da(-1000000, 1000000), db(-70, 70);
  for (int n : kSizes) {
    std::vector<int32_t> a(n), b(n);
    for (int i = 0; i < n; ++i) {
      a[i] = da(rng);
      do b[i] = db(rng);
      while (b[i] == 0);
    }
    tk::Buffer dA = dev->upload(a), dB = dev->upload(b), q = dev->upload(std::vector<int32_t>(n, -12345)),
               mm = dev->upload(std::vector<int64_t>(n, -12345));
    (*dev)(k, {blocks(n)}, dA, dB, q, mm, int32_t(n));
    auto gq = dev->download<int32_t>(q, n);
    auto gm = dev->download<int64_t>(mm, n);
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(gq[i], int32_t(std::ceil(double(a[i]) / b[i]))) << a[i] << " / " << b[i];
      ASSERT_EQ(gm[i], int64_t(std::max(a[i], b[i])) - std::min(a[i], 7)) << a[i] << ", " << b[i];
    }
  }
}

// Every kernel of builtins.tk (libdevice's erf, log1p, expm1, pow, atan2 in
// f32, f16 and bf16; isnan/isinf/signbit; inf literals) is PTX that ptxas
// accepts for sm_80 and sm_90, with libdevice and with the approx fallback.
TEST(Builtins, PtxasAcceptsSm80AndSm90) {
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "no ptxas: the CUDA toolkit was not found (CUDA_HOME, /usr/local/cuda)";
  for (bool libdevice : {true, false})
    for (const auto &[name, params] : tk::Compiler::kernels(kFile)) {
      tk::CompileOptions opts;
      opts.archs = {"sm_80", "sm_90"};
      opts.useLibdevice = libdevice;
      opts.cache = false;
      tk::Bundle b = tk::Compiler::compileFile(kFile, name, opts);
      for (const std::string &arch : opts.archs) {
        EXPECT_EQ(b.ptx.at(arch).find(".extern .func"), std::string::npos) << name << " " << arch;  // all linked
        tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(b.ptx.at(arch), arch, toolkit);
        ASSERT_TRUE(info.ran) << name << " " << arch << "\n" << info.log;
        EXPECT_EQ(info.spillStoreBytes, 0) << name << " " << arch << "\n" << info.log;
        EXPECT_FALSE(info.cubin.empty()) << name << " " << arch;
      }
    }
}

}  // namespace
