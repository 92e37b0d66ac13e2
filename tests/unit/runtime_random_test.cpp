// tests/kernels/random.tk on the sim: randint, rand and randn against a plain
// C++ Philox 4x32 and 4x64 written here (itself checked against Random123's
// published known-answer vectors), the first word of those vectors through a kernel,
// the statistics of rand and randn at 2^20 elements, bit-identical streams
// across block sizes and warp counts, and PTX that ptxas accepts.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>

#include "backend/nvptx/Ptxas.h"
#include "TestSeed.h"
#include "backend/nvptx/Toolkit.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/random.tk";
const int kSizes[] = {1, 781, 1023, 98433};

uint32_t blocks(int n, int block = 256) { return uint32_t((n + block - 1) / block); }

// Philox 4x32 as Salmon et al. define it: 32x32->64 products, the Weyl key
// schedule, `rounds` rounds.
std::array<uint32_t, 4> philoxRef(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k, int rounds = 10) {
  for (int r = 0; r < rounds; ++r) {
    if (r > 0) k = {k[0] + 0x9E3779B9u, k[1] + 0xBB67AE85u};
    uint64_t p0 = uint64_t{0xD2511F53u} * c[0], p1 = uint64_t{0xCD9E8D57u} * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
  }
  return c;
}

// Philox 4x64: the same rounds on 64-bit words, 64x64->128 products.
std::array<uint64_t, 4> philox64Ref(std::array<uint64_t, 4> c, std::array<uint64_t, 2> k, int rounds = 10) {
  for (int r = 0; r < rounds; ++r) {
    if (r > 0) k = {k[0] + 0x9E3779B97F4A7C15u, k[1] + 0xBB67AE8584CAA73Bu};
    unsigned __int128 p0 = (unsigned __int128)0xD2E7470EE14C6C93u * c[0];
    unsigned __int128 p1 = (unsigned __int128)0xCA5A826395121157u * c[2];
    c = {uint64_t(p1 >> 64) ^ c[1] ^ k[0], uint64_t(p1), uint64_t(p0 >> 64) ^ c[3] ^ k[1], uint64_t(p0)};
  }
  return c;
}

// Triton's stream: key = the seed's 64 bits, counter = (offset, 0, 0, 0).
std::array<uint32_t, 4> stream(int64_t seed, int32_t offset, int rounds = 10) {
  return philoxRef({uint32_t(offset), 0, 0, 0}, {uint32_t(uint64_t(seed)), uint32_t(uint64_t(seed) >> 32)}, rounds);
}

// i64 offsets: key = (seed, 0), Philox 4x64.
std::array<uint64_t, 4> stream64(int64_t seed, int64_t offset) {
  return philox64Ref({uint64_t(offset), 0, 0, 0}, {uint64_t(seed), 0});
}

// uint32 -> [0, 1) as Triton maps it: negatives folded by ~x, then one f32
// conversion and one f32 multiply (both exact IEEE operations, so the
// kernel's result is bit-identical).
float uniformRef(uint32_t bits) {
  int32_t x = int32_t(bits);
  if (x < 0) x = ~x;
  return float(x) * 0x1.fffffep-32f;
}

// uint64 -> [0, 1): the same with i64 and Triton's 64-bit scale.
float uniform64Ref(uint64_t bits) {
  int64_t x = int64_t(bits);
  if (x < 0) x = ~x;
  return float(x) * 0x1.fffffcp-64f;
}

// Box-Muller in double from the kernel's f32 inputs: the f32 angle and the
// clamped f32 uniform, so the comparison measures only f32 log/sqrt/cos.
double normalRef(float uniform0, float uniform1) {
  float u1 = std::max(uniform0, 1.0e-7f);
  float theta = 6.283185307179586f * uniform1;
  return std::sqrt(-2.0 * std::log(double(u1))) * std::cos(double(theta));
}

// Random123's tests/kat_vectors, the philox4x32 lines: counter, key, result.
struct Kat {
  int rounds;
  std::array<uint32_t, 4> ctr;
  std::array<uint32_t, 2> key;
  std::array<uint32_t, 4> want;
};
const Kat kKats[] = {
    {7, {0, 0, 0, 0}, {0, 0}, {0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48}},
    {7, {~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}, {0x5207ddc2, 0x45165e59, 0x4d8ee751, 0x8c52f662}},
    {7, {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0x4dfccaba, 0x190a87f0, 0xc47362ba, 0xb6b5242a}},
    {10, {0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {10, {~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {10, {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

// The philox4x64 lines of the same file.
struct Kat64 {
  int rounds;
  std::array<uint64_t, 4> ctr;
  std::array<uint64_t, 2> key;
  std::array<uint64_t, 4> want;
};
const Kat64 kKats64[] = {
    {7, {0, 0, 0, 0}, {0, 0}, {0x5dc8ee6268ec62cd, 0x139bc570b6c125a0, 0x84d6deb4fb65f49e, 0xaff7583376d378c2}},
    {7, {~0ull, ~0ull, ~0ull, ~0ull}, {~0ull, ~0ull},
     {0x071dd84367903154, 0x48e2bbdc722b37d1, 0x6afa9890bb89f76c, 0x9194c8d8ada56ac7}},
    {7, {0x243f6a8885a308d3, 0x13198a2e03707344, 0xa4093822299f31d0, 0x082efa98ec4e6c89},
     {0x452821e638d01377, 0xbe5466cf34e90c6c},
     {0x513a366704edf755, 0xf05d9924c07044d3, 0xbef2cb9cbea74c6c, 0x8db948de4caa1f8a}},
    {10, {0, 0, 0, 0}, {0, 0}, {0x16554d9eca36314c, 0xdb20fe9d672d0fdc, 0xd7e772cee186176b, 0x7e68b68aec7ba23b}},
    {10, {~0ull, ~0ull, ~0ull, ~0ull}, {~0ull, ~0ull},
     {0x87b092c3013fe90b, 0x438c3c67be8d0224, 0x9cc7d7c69cd777b6, 0xa09caebf594f0ba0}},
    {10, {0x243f6a8885a308d3, 0x13198a2e03707344, 0xa4093822299f31d0, 0x082efa98ec4e6c89},
     {0x452821e638d01377, 0xbe5466cf34e90c6c},
     {0xa528f45403e61d95, 0x38c72dbd566e9788, 0xa5a1610e72fd18b5, 0x57bd43b5e52b7fe6}},
};

int64_t freshSeed() {
  static std::mt19937_64 rng(tk::test::testSeed());
  return int64_t(rng());
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(Random, ReferenceMatchesRandom123Vectors) {
  for (const Kat &k : kKats) EXPECT_EQ(philoxRef(k.ctr, k.key, k.rounds), k.want) << k.rounds << " rounds";
  for (const Kat64 &k : kKats64) EXPECT_EQ(philox64Ref(k.ctr, k.key, k.rounds), k.want) << k.rounds << " rounds";
}

// Seed 0 and offset 0 are Random123's all-zero vectors: word 0 of the
// 10-round one is randint (and rand's source), of the 7-round one randint
// with n_rounds: 7.
TEST(Random, KernelGivesRandom123Vectors) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k10 = dev->load(tk::Compiler::compileFile(kFile, "streams"));
  tk::Buffer bits = dev->upload(std::vector<int32_t>(1, 0)), u = dev->upload(std::vector<float>(1, NAN)),
             g = dev->upload(std::vector<float>(1, NAN));
  (*dev)(k10, {1}, bits, u, g, int32_t(1), int64_t(0), int32_t(0));
  EXPECT_EQ(uint32_t(dev->download<int32_t>(bits, 1)[0]), 0x6627e8d5u);
  EXPECT_EQ(dev->download<float>(u, 1)[0], uniformRef(0x6627e8d5u));

  tk::Kernel k7 = dev->load(tk::Compiler::compileFile(kFile, "seed32"));
  (*dev)(k7, {1}, bits, u, int32_t(1), int32_t(0));
  EXPECT_EQ(uint32_t(dev->download<int32_t>(bits, 1)[0]), 0x5f6fb709u);
}

TEST(Random, StreamsMatchReference) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "streams"));
  for (int n : kSizes) {
    const int64_t seed = freshSeed();
    const int32_t base = int32_t(uint32_t(freshSeed()) >> 1) - (1 << 30);  // negative offsets too
    tk::Buffer bits = dev->upload(std::vector<int32_t>(n, 0x7eadbeef)), u = dev->upload(std::vector<float>(n, NAN)),
               g = dev->upload(std::vector<float>(n, NAN));
    (*dev)(k, {blocks(n)}, bits, u, g, int32_t(n), seed, base);
    auto gotBits = dev->download<int32_t>(bits, n);
    auto gotU = dev->download<float>(u, n), gotG = dev->download<float>(g, n);
    for (int i = 0; i < n; ++i) {
      auto w = stream(seed, base + i);
      const std::string what = "seed=" + std::to_string(seed) + " offset=" + std::to_string(base + i);
      ASSERT_EQ(uint32_t(gotBits[i]), w[0]) << what;
      ASSERT_EQ(bitsOf(gotU[i]), bitsOf(uniformRef(w[0]))) << what;
      double want = normalRef(uniformRef(w[0]), uniformRef(w[1]));
      ASSERT_LE(std::abs(gotG[i] - want), 2e-6 * std::max(1.0, std::abs(want))) << what << " randn " << gotG[i];
    }
  }
}

// randint4x, rand4x, randn4x: tuples of all four words, their uniforms,
// and Box-Muller's cosine and sine of words (0, 1) and (2, 3), as Triton's
// random.py pairs them.
TEST(Random, FourResultVariantsGiveTuples) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "four"));
  for (int n : {1, 781}) {
    const int64_t seed = freshSeed();
    const int32_t base = int32_t(uint32_t(freshSeed()) >> 1) - (1 << 30);
    tk::Buffer bits = dev->upload(std::vector<int32_t>(4 * n, 0x7eadbeef)), u = dev->upload(std::vector<float>(4 * n, NAN)),
               g = dev->upload(std::vector<float>(4 * n, NAN));
    (*dev)(k, {blocks(n)}, bits, u, g, int32_t(n), seed, base);
    auto gotBits = dev->download<int32_t>(bits, 4 * n);
    auto gotU = dev->download<float>(u, 4 * n), gotG = dev->download<float>(g, 4 * n);
    for (int i = 0; i < n; ++i) {
      auto w = stream(seed, base + i);
      const std::string what = "seed=" + std::to_string(seed) + " offset=" + std::to_string(base + i);
      for (int j = 0; j < 4; ++j) {
        ASSERT_EQ(uint32_t(gotBits[j * n + i]), w[j]) << what << " word " << j;
        ASSERT_EQ(bitsOf(gotU[j * n + i]), bitsOf(uniformRef(w[j]))) << what << " uniform " << j;
      }
      for (int pair = 0; pair < 2; ++pair) {
        const float u1 = std::max(uniformRef(w[2 * pair]), 1.0e-7f), theta = 6.283185307179586f * uniformRef(w[2 * pair + 1]);
        const double r = std::sqrt(-2.0 * std::log(double(u1)));
        const double want[2] = {r * std::cos(double(theta)), r * std::sin(double(theta))};
        for (int j = 0; j < 2; ++j) {
          const float got = gotG[(2 * pair + j) * n + i];
          ASSERT_LE(std::abs(got - want[j]), 2e-6 * std::max(1.0, std::abs(want[j]))) << what << " normal " << 2 * pair + j;
        }
      }
    }
  }
}

// i64 offsets: Philox 4x64 with key (seed, 0), offsets past 2^32 and
// negative ones; seed 0 at offset 0 is Random123's all-zero 4x64 vector.
TEST(Random, I64OffsetsTakePhilox4x64) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "streams64"));
  for (int n : kSizes) {
    const int64_t seed = n == 1 ? 0 : freshSeed();
    const int64_t base = n == 1 ? 0 : freshSeed() >> 8;
    tk::Buffer bits = dev->upload(std::vector<int64_t>(n, 0x7eadbeef)), u = dev->upload(std::vector<float>(n, NAN)),
               g = dev->upload(std::vector<float>(n, NAN));
    (*dev)(k, {blocks(n)}, bits, u, g, int32_t(n), seed, base);
    auto gotBits = dev->download<int64_t>(bits, n);
    auto gotU = dev->download<float>(u, n), gotG = dev->download<float>(g, n);
    if (n == 1) {
      EXPECT_EQ(uint64_t(gotBits[0]), 0x16554d9eca36314cu);
    }
    for (int i = 0; i < n; ++i) {
      auto w = stream64(seed, base + i);
      const std::string what = "seed=" + std::to_string(seed) + " offset=" + std::to_string(base + i);
      ASSERT_EQ(uint64_t(gotBits[i]), w[0]) << what;
      ASSERT_EQ(bitsOf(gotU[i]), bitsOf(uniform64Ref(w[0]))) << what;
      double want = normalRef(uniform64Ref(w[0]), uniform64Ref(w[1]));
      ASSERT_LE(std::abs(gotG[i] - want), 2e-6 * std::max(1.0, std::abs(want))) << what << " randn " << gotG[i];
    }
  }
}

// An i32 seed sign-extends into the key (-1 keys (0xffffffff, 0xffffffff));
// n_rounds picks the round count.
TEST(Random, I32SeedsAndRoundCounts) {
  auto dev = tk::Device::open("sim");
  for (int rounds : {7, 10, 1}) {
    tk::CompileOptions opts;
    opts.defines = {{"ROUNDS", std::to_string(rounds)}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "seed32", opts));
    for (int32_t seed : {-1, 0x1234567, int32_t(freshSeed())}) {
      const int n = 781;
      tk::Buffer bits = dev->upload(std::vector<int32_t>(n, 0)), u = dev->upload(std::vector<float>(n, NAN));
      (*dev)(k, {blocks(n)}, bits, u, int32_t(n), seed);
      auto gotBits = dev->download<int32_t>(bits, n);
      auto gotU = dev->download<float>(u, n);
      for (int i = 0; i < n; ++i) {
        ASSERT_EQ(uint32_t(gotBits[i]), stream(seed, i, rounds)[0]) << "seed " << seed << " rounds " << rounds;
        ASSERT_EQ(bitsOf(gotU[i]), bitsOf(uniformRef(stream(seed, i)[0]))) << "seed " << seed;
      }
    }
  }
}

TEST(Random, TwoDimensionalOffsetsAndScalars) {
  auto dev = tk::Device::open("sim");
  tk::Kernel grid = dev->load(tk::Compiler::compileFile(kFile, "grid"));
  const int32_t seed = int32_t(freshSeed());
  for (auto [rows, cols] : {std::pair{1, 1}, std::pair{37, 781}, std::pair{5, 1023}}) {
    tk::Buffer out = dev->upload(std::vector<float>(size_t(rows) * cols, NAN));
    (*dev)(grid, {blocks(rows, 4), blocks(cols, 64)}, out, int32_t(rows), int32_t(cols), seed);
    auto got = dev->download<float>(out, size_t(rows) * cols);
    for (int i = 0; i < rows * cols; ++i) ASSERT_EQ(bitsOf(got[i]), bitsOf(uniformRef(stream(seed, i)[0]))) << i;
  }
  tk::Kernel scalar = dev->load(tk::Compiler::compileFile(kFile, "scalar"));
  tk::Buffer out = dev->upload(std::vector<int32_t>(100, 0));
  (*dev)(scalar, {100}, out, seed);
  auto got = dev->download<int32_t>(out, 100);
  for (int p = 0; p < 100; ++p) ASSERT_EQ(uint32_t(got[p]), stream(seed, 3 * p)[0]) << p;
}

// Mean and variance of 2^20 draws, each within 5 standard errors of the
// distribution's; rand stays in [0, 1) and fills 16 equal bins evenly.
TEST(Random, StatisticsAtTwoToTheTwenty) {
  auto dev = tk::Device::open("sim");
  tk::CompileOptions opts;
  opts.defines = {{"BLOCK", "1024"}};
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "streams", opts));
  const int n = 1 << 20;
  tk::Buffer bits = dev->upload(std::vector<int32_t>(n, 0)), u = dev->upload(std::vector<float>(n, NAN)),
             g = dev->upload(std::vector<float>(n, NAN));
  (*dev)(k, {blocks(n, 1024)}, bits, u, g, int32_t(n), freshSeed(), int32_t(0));
  auto gotU = dev->download<float>(u, n), gotG = dev->download<float>(g, n);
  double su = 0, suu = 0, sg = 0, sgg = 0;
  std::array<int, 16> bins{};
  for (int i = 0; i < n; ++i) {
    ASSERT_GE(gotU[i], 0.0f);
    ASSERT_LT(gotU[i], 1.0f);
    ASSERT_TRUE(std::isfinite(gotG[i]));
    su += gotU[i], suu += double(gotU[i]) * gotU[i], sg += gotG[i], sgg += double(gotG[i]) * gotG[i];
    ++bins[int(gotU[i] * 16)];
  }
  const double N = n, meanU = su / N, varU = suu / N - meanU * meanU, meanG = sg / N, varG = sgg / N - meanG * meanG;
  EXPECT_NEAR(meanU, 0.5, 5 * std::sqrt(1.0 / 12 / N));
  EXPECT_NEAR(varU, 1.0 / 12, 5 * std::sqrt((1.0 / 80 - 1.0 / 144) / N));
  EXPECT_NEAR(meanG, 0.0, 5 * std::sqrt(1.0 / N));
  EXPECT_NEAR(varG, 1.0, 5 * std::sqrt(2.0 / N));
  for (int b : bins) EXPECT_NEAR(b, N / 16, 5 * std::sqrt(N / 16 * 15 / 16));
}

// Every element is a function of (seed, offset) alone: the same bits from
// every block size and warp count.
TEST(Random, BitIdenticalAcrossBlockSizesAndWarps) {
  auto dev = tk::Device::open("sim");
  const int n = 98433;
  const int64_t seed = freshSeed();
  std::vector<int32_t> firstBits;
  std::vector<float> firstU, firstG;
  for (int block : {32, 256, 2048})
    for (int warps : {1, 4, 8}) {
      tk::CompileOptions opts;
      opts.defines = {{"BLOCK", std::to_string(block)}};
      opts.numWarps = warps;
      tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "streams", opts));
      tk::Buffer bits = dev->upload(std::vector<int32_t>(n, 0)), u = dev->upload(std::vector<float>(n, NAN)),
                 g = dev->upload(std::vector<float>(n, NAN));
      (*dev)(k, {blocks(n, block)}, bits, u, g, int32_t(n), seed, int32_t(17));
      auto gotBits = dev->download<int32_t>(bits, n);
      auto gotU = dev->download<float>(u, n), gotG = dev->download<float>(g, n);
      if (firstBits.empty()) {
        firstBits = gotBits, firstU = gotU, firstG = gotG;
        continue;
      }
      const std::string what = "BLOCK " + std::to_string(block) + " num_warps " + std::to_string(warps);
      EXPECT_EQ(gotBits, firstBits) << what;
      EXPECT_EQ(std::memcmp(gotU.data(), firstU.data(), n * 4), 0) << what;
      EXPECT_EQ(std::memcmp(gotG.data(), firstG.data(), n * 4), 0) << what;
    }
}

// The 32x32->64 products become mul.hi.u32 (or mul.wide.u32 where both
// halves are used), not 64-bit multiplies: 19 per Philox call (round 1 has
// one, its other operand is the zero counter word), of which LLVM may fold
// one. ptxas accepts every kernel for sm_80 and sm_90.
size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Random, PtxUsesHighMultiplies) {
  tk::CompileOptions opts;
  opts.archs = {"sm_80", "sm_90"};
  opts.cache = false;
  tk::Bundle b = tk::Compiler::compileFile(kFile, "scalar", opts);
  for (const std::string &arch : opts.archs) {
    const std::string &ptx = b.ptx.at(arch);
    EXPECT_GE(count(ptx, "mul.hi.u32") + count(ptx, "mul.wide.u32"), 18u) << arch << "\n" << ptx;
    EXPECT_EQ(count(ptx, "mul.lo.s64"), 0u) << arch << "\n" << ptx;
  }
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "no ptxas: the CUDA toolkit was not found (CUDA_HOME, /usr/local/cuda)";
  for (const auto &[name, params] : tk::Compiler::kernels(kFile))
    for (const std::string &arch : opts.archs) {
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(tk::Compiler::compileFile(kFile, name, opts).ptx.at(arch), arch,
                                                      toolkit);
      ASSERT_TRUE(info.ran) << name << " " << arch << "\n" << info.log;
      EXPECT_EQ(info.spillStoreBytes, 0) << name << " " << arch;
    }
}

}  // namespace
