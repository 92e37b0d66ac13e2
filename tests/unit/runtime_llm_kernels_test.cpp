// The stdlib's training-step kernels on the sim: dropout (stdlib/dropout.tk;
// its mask against a C++ Philox, its keep rate at 2^20 elements, the same
// mask from every block size and warp count), swiglu (stdlib/elementwise.tk)
// and cross_entropy (stdlib/loss.tk, vocabularies longer than one tile),
// against double references on fresh random inputs with poisoned outputs.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>

#include "runtime_TestUtil.h"
#include "runtime_Variants.h"
#include "tk/runtime.h"

namespace {

const std::string kStdlib = TK_SOURCE_DIR + "/stdlib/";
// 1 and 98304 (a multiple of 16) give facts a launch specialises on.
const int kSizes[] = {1, 781, 1023, 98304, 98433};

uint32_t blocks(int64_t n, int64_t block) { return uint32_t((n + block - 1) / block); }

// Word 0 of Philox 4x32-10 for counter (offset, 0, 0, 0) and the seed's
// 64 bits as key: Triton's randint (tests/unit/runtime_random_test.cpp
// checks the same function against Random123's vectors).
uint32_t randint(int64_t seed, int32_t offset) {
  std::array<uint32_t, 4> c = {uint32_t(offset), 0, 0, 0};
  std::array<uint32_t, 2> k = {uint32_t(uint64_t(seed)), uint32_t(uint64_t(seed) >> 32)};
  for (int r = 0; r < 10; ++r) {
    if (r > 0) k = {k[0] + 0x9E3779B9u, k[1] + 0xBB67AE85u};
    uint64_t p0 = uint64_t{0xD2511F53u} * c[0], p1 = uint64_t{0xCD9E8D57u} * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
  }
  return c[0];
}

float rand01(int64_t seed, int32_t offset) {
  int32_t x = int32_t(randint(seed, offset));
  return float(x < 0 ? ~x : x) * 0x1.fffffep-32f;
}

int64_t freshSeed() {
  static std::mt19937_64 rng(tk::test::testSeed());
  return int64_t(rng());
}

tk::CompileOptions options(const std::map<std::string, std::string> &defines, int warps) {
  tk::CompileOptions opts;
  opts.defines = defines;
  opts.numWarps = warps;
  return opts;
}

tk::Kernel load(tk::Device &dev, const std::string &file, const std::string &kernel,
                const std::map<std::string, std::string> &defines = {}, int warps = 4) {
  return dev.load(tk::Compiler::compileFile(kStdlib + file, kernel, options(defines, warps)));
}

// `kernel` as variant `v` (runtime_Variants.h).
tk::test::VariantKernel load(tk::Device &dev, const std::string &file, const std::string &kernel, tk::test::Variant v,
                             const std::map<std::string, std::string> &defines = {}) {
  return tk::test::VariantKernel(dev, kStdlib + file, kernel, options(defines, 4), v);
}

// The kept elements are exactly those where the reference rand(seed, i)
// exceeds p, each x * (1 / (1 - p)) in f32.
TEST(Dropout, MaskAndScaleMatchReference) {
  auto dev = tk::Device::open("sim");
  for (tk::test::Variant v : tk::test::kVariants) {
    tk::test::VariantKernel k = load(*dev, "dropout.tk", "dropout", v);
    for (int n : kSizes)
      for (float p : {0.0f, 0.25f, 0.5f, 1.0f}) {
        const int64_t seed = freshSeed();
        auto x = tk::test::randomFloats(n, -4, 4);
        tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(n, NAN));
        const std::vector<tk::Arg> args = {dx, out, int32_t(n), p, seed};
        if (!k.differs(args)) continue;
        k.launch({blocks(n, 1024)}, args);
        auto got = dev->download<float>(out, n);
        const float scale = 1.0f / (1.0f - p);
        for (int i = 0; i < n; ++i) {
          const bool keep = rand01(seed, i) > p;
          ASSERT_EQ(got[i], keep ? x[i] * scale : 0.0f)
              << tk::test::variantName(v) << " n=" << n << " p=" << p << " i=" << i << " seed=" << seed;
        }
      }
  }
}

// Over 2^20 elements the kept fraction is 1 - p within 1 % (and within 5
// standard errors of the binomial).
TEST(Dropout, KeepRateAtTwoToTheTwenty) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = load(*dev, "dropout.tk", "dropout");
  const int n = 1 << 20;
  tk::Buffer dx = dev->upload(std::vector<float>(n, 1.0f)), out = dev->upload(std::vector<float>(n, NAN));
  for (float p : {0.1f, 0.5f, 0.8f}) {
    (*dev)(k, {blocks(n, 1024)}, dx, out, int32_t(n), p, freshSeed());
    auto got = dev->download<float>(out, n);
    int64_t kept = 0;
    for (float v : got) {
      ASSERT_TRUE(v == 0.0f || v == 1.0f / (1.0f - p)) << v;
      kept += v != 0.0f;
    }
    const double rate = double(kept) / n, want = 1.0 - p;
    EXPECT_NEAR(rate, want, 0.01 * want) << "p=" << p;
    EXPECT_NEAR(rate, want, 5 * std::sqrt(want * p / n)) << "p=" << p;
  }
}

// The mask is a function of (seed, i): every block size and warp count
// writes the same bits.
TEST(Dropout, SameMaskAcrossBlockSizesAndWarps) {
  auto dev = tk::Device::open("sim");
  const int n = 98433;
  const int64_t seed = freshSeed();
  auto x = tk::test::randomFloats(n, -4, 4);
  tk::Buffer dx = dev->upload(x);
  std::vector<float> first;
  for (int block : {256, 1024, 4096})
    for (int warps : {1, 4, 8}) {
      tk::Kernel k = load(*dev, "dropout.tk", "dropout", {{"BLOCK", std::to_string(block)}}, warps);
      tk::Buffer out = dev->upload(std::vector<float>(n, NAN));
      (*dev)(k, {blocks(n, block)}, dx, out, int32_t(n), 0.3f, seed);
      auto got = dev->download<float>(out, n);
      if (first.empty()) first = got;
      EXPECT_EQ(std::memcmp(got.data(), first.data(), size_t(n) * 4), 0) << "BLOCK " << block << " num_warps " << warps;
    }
}

TEST(Swiglu, MatchesDoubleReference) {
  auto dev = tk::Device::open("sim");
  for (tk::test::Variant v : tk::test::kVariants) {
    tk::test::VariantKernel k = load(*dev, "elementwise.tk", "swiglu", v);
    for (int n : kSizes) {
      auto a = tk::test::randomFloats(n, -12, 12), b = tk::test::randomFloats(n, -3, 3);
      if (n > 2) a[0] = -100.0f, a[1] = 100.0f;  // exp(-a) under- and overflows
      tk::Buffer da = dev->upload(a), db = dev->upload(b), out = dev->upload(std::vector<float>(n, NAN));
      const std::vector<tk::Arg> args = {da, db, out, int32_t(n)};
      if (!k.differs(args)) continue;
      k.launch({blocks(n, 1024)}, args);
      auto got = dev->download<float>(out, n);
      for (int i = 0; i < n; ++i) {
        const double want = double(a[i]) / (1.0 + std::exp(-double(a[i]))) * b[i];
        ASSERT_NEAR(got[i], want, 2e-6 * std::max(1.0, std::abs(want)))
            << tk::test::variantName(v) << " n=" << n << " a=" << a[i] << " b=" << b[i];
      }
    }
  }
}

// Vocabularies of one element, shorter and longer than a tile (the default
// BLOCK_V is 2048), LLaMA's 32000, 4096 and an odd 98433; odd row counts;
// some targets ignored; as both variants (runtime_Variants.h). Logits span
// +-20 around a per-row offset of up to 1000, so an unshifted exp would
// overflow.
TEST(CrossEntropy, MatchesDoubleReference) {
  auto dev = tk::Device::open("sim");
  static std::mt19937 rng(tk::test::testSeed());
  const int32_t ignore = -100;
  for (tk::test::Variant v : tk::test::kVariants)
    for (auto [rows, V, defines] :
         {std::tuple{7, 1, std::map<std::string, std::string>{}},
          std::tuple{37, 781, std::map<std::string, std::string>{}},
          std::tuple{5, 1023, std::map<std::string, std::string>{{"BLOCK_R", "4"}, {"BLOCK_V", "256"}}},
          std::tuple{3, 32000, std::map<std::string, std::string>{}},
          std::tuple{16, 4096, std::map<std::string, std::string>{}},
          std::tuple{3, 98433, std::map<std::string, std::string>{{"BLOCK_R", "2"}, {"BLOCK_V", "4096"}}}}) {
      tk::test::VariantKernel k = load(*dev, "loss.tk", "cross_entropy", v, defines);
      auto x = tk::test::randomFloats(size_t(rows) * V, -20, 20);
      auto shift = tk::test::randomFloats(rows, -1000, 1000);
      std::vector<int32_t> t(rows);
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < V; ++c) x[size_t(r) * V + c] += shift[r];
        t[r] = rows > 1 && r % 5 == 2 ? ignore : int32_t(rng() % V);
      }
      tk::Buffer dx = dev->upload(x), dt = dev->upload(t), out = dev->upload(std::vector<float>(rows, NAN));
      const std::vector<tk::Arg> args = {dx, dt, out, int32_t(rows), int32_t(V), ignore};
      if (!k.differs(args)) continue;
      const int64_t br = k.general().bundle().constInt("BLOCK_R");
      k.launch({blocks(rows, br)}, args);
      auto got = dev->download<float>(out, rows);
      for (int r = 0; r < rows; ++r) {
        const float *row = &x[size_t(r) * V];
        double top = -INFINITY, sum = 0;
        for (int c = 0; c < V; ++c) top = std::max(top, double(row[c]));
        for (int c = 0; c < V; ++c) sum += std::exp(double(row[c]) - top);
        const double want = t[r] == ignore ? 0.0 : top + std::log(sum) - row[t[r]];
        // Two f32 roundings at the scale of the row's max (near 1000: 2^-14
        // each), plus the f32 sum's relative error in the log.
        const double tol = 4 * 0x1p-24 * std::max(1.0, std::abs(top)) + 2e-6 * std::max(1.0, std::abs(want));
        ASSERT_NEAR(got[r], want, tol) << tk::test::variantName(v) << " rows=" << rows << " V=" << V << " r=" << r
                                       << " target=" << t[r];
      }
    }
}

// A target outside [0, V) that is not ignore_index reads nothing and gives NaN.
TEST(CrossEntropy, TargetOutOfRangeIsNan) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = load(*dev, "loss.tk", "cross_entropy");
  const int rows = 3, V = 100;
  tk::Buffer dx = dev->upload(tk::test::randomFloats(rows * V, -1, 1)),
             dt = dev->upload(std::vector<int32_t>{V, -1, 5}), out = dev->upload(std::vector<float>(rows, 0.0f));
  (*dev)(k, {rows}, dx, dt, out, int32_t(rows), int32_t(V), int32_t(-100));
  auto got = dev->download<float>(out, rows);
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_TRUE(std::isnan(got[1]));
  EXPECT_TRUE(std::isfinite(got[2]));
}

}  // namespace
