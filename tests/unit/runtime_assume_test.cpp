// Integer specialisation (CompileOptions::assume): a variant compiled for
// D % 16 == 0 or for a stride of 1 computes what the general one does, on
// the sim, at sizes with the fact; a launch whose value breaks an assumed
// fact is refused before anything runs, never computed wrong.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "runtime_TestUtil.h"
#include "tk/jit.h"
#include "tk/runtime.h"

namespace {

const std::string kNorm = TK_SOURCE_DIR + "/stdlib/normalization.tk";

std::vector<float> softmaxRef(const std::vector<float> &x, int rows, int D) {
  std::vector<float> out(x.size());
  for (int r = 0; r < rows; ++r) {
    double m = -1e300, s = 0;
    for (int c = 0; c < D; ++c) m = std::max(m, double(x[size_t(r) * D + c]));
    for (int c = 0; c < D; ++c) s += std::exp(x[size_t(r) * D + c] - m);
    for (int c = 0; c < D; ++c) out[size_t(r) * D + c] = float(std::exp(x[size_t(r) * D + c] - m) / s);
  }
  return out;
}

void runSoftmax(tk::Device &dev, const tk::Kernel &k, int rows, int D) {
  const auto x = tk::test::randomFloats(size_t(rows) * D, -4, 4);
  tk::Buffer dx = dev.upload(x), dout = dev.upload(std::vector<float>(x.size(), NAN));
  const int64_t br = k.bundle().constInt("BLOCK_R");
  dev(k, {uint32_t((rows + br - 1) / br)}, dx, dout, int32_t(rows), int32_t(D));
  const auto got = dev.download<float>(dout, x.size());
  const auto ref = softmaxRef(x, rows, D);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(got[i], ref[i], 1e-5 * std::max(1e-3f, ref[i])) << i;
}

TEST(Assume, DivisibleBy16) {
  auto dev = tk::Device::open("sim");
  tk::CompileOptions o;
  o.assume = {{"D", 768}};
  tk::Bundle b = tk::Compiler::compileFile(kNorm, "softmax", o);
  EXPECT_EQ(b.assumed.at("D"), "16");
  EXPECT_NE(b.tir.find("%D: i32 {div = 16}"), std::string::npos);
  tk::Kernel k = dev->load(b);
  for (int D : {16, 256, 768, 1024}) runSoftmax(*dev, k, 37, D);  // one variant for every multiple of 16
  // 781 breaks the fact: refused, nothing written.
  tk::Buffer dx = dev->upload(std::vector<float>(781, 1.0f)), dout = dev->upload(std::vector<float>(781, NAN));
  try {
    (*dev)(k, {1}, dx, dout, int32_t(1), int32_t(781));
    FAIL() << "a launch breaking D % 16 == 0 ran";
  } catch (const tk::Error &e) {
    EXPECT_NE(std::string(e.what()).find("D % 16 == 0"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::isnan(dev->download<float>(dout, 1)[0]));
  // The general variant takes it.
  runSoftmax(*dev, dev->load(tk::Compiler::compileFile(kNorm, "softmax")), 37, 781);
}

TEST(Assume, ValuesWithTheSameFactsShareOneVariant) {
  std::string dir = (std::filesystem::temp_directory_path() / "tk-assume-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  tk::CompileOptions a, b;
  a.cacheDir = b.cacheDir = dir;
  a.assume = {{"D", 32}};
  b.assume = {{"D", 4096}};
  tk::Compiler::CacheStats s0 = tk::Compiler::cacheStats();
  tk::Compiler::compileFile(kNorm, "rmsnorm", a);
  tk::Compiler::compileFile(kNorm, "rmsnorm", b);
  EXPECT_EQ(tk::Compiler::cacheStats().hits - s0.hits, 1u) << "the second is a compile-cache hit";
  EXPECT_EQ(tk::Compiler::cacheStats().compiled - s0.compiled, 1u);
  std::filesystem::remove_all(dir);
}

// matmul with unit inner strides: the operand loads vectorise; still exact.
TEST(Assume, UnitStridesInMatmul) {
  auto dev = tk::Device::open("sim");
  const int M = 100, N = 72, K = 64;
  tk::CompileOptions o;
  o.assume = {{"stride_ak", 1}, {"stride_bn", 1}, {"stride_cn", 1}};
  tk::Bundle b = tk::Compiler::compileFile(TK_SOURCE_DIR + "/stdlib/matmul.tk", "matmul", o);
  EXPECT_EQ(b.assumed.at("stride_ak"), "1");
  const auto a = tk::test::exactHalfInputs(size_t(M) * K), w = tk::test::exactHalfInputs(size_t(K) * N);
  tk::Buffer da = dev->upload(tk::test::f16Values(a)), dw = dev->upload(tk::test::f16Values(w)), dc = dev->upload(std::vector<float>(size_t(M) * N, NAN));
  const int64_t bm = b.constInt("BLOCK_M"), bn = b.constInt("BLOCK_N");
  tk::Kernel k = dev->load(b);
  (*dev)(k, {uint32_t(((M + bm - 1) / bm) * ((N + bn - 1) / bn))}, da, dw, dc, dc, int32_t(M), int32_t(N), int32_t(K),
         int32_t(K), int32_t(1), int32_t(N), int32_t(1), int32_t(N), int32_t(1));
  const auto got = dev->download<float>(dc, size_t(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0;
      for (int kk = 0; kk < K; ++kk) ref += double(a[size_t(i) * K + kk]) * w[size_t(kk) * N + j];
      ASSERT_EQ(got[size_t(i) * N + j], ref) << i << ", " << j;
    }
  // A stride of 2 is refused by this variant.
  EXPECT_THROW((*dev)(k, {1}, da, dw, dc, dc, int32_t(M), int32_t(N), int32_t(K), int32_t(K), int32_t(2), int32_t(N),
                      int32_t(1), int32_t(N), int32_t(1)),
               tk::Error);
}

// JitKernel: each launch runs the variant for its values' facts, compiled
// once per set of facts; every variant computes the same softmax.
TEST(JitKernel, PicksTheVariantForEachLaunch) {
  auto dev = tk::Device::open("sim");
  tk::JitKernel softmax(*dev, kNorm, "softmax");
  const std::vector<tk::Arg> at256 = {tk::Buffer(), tk::Buffer(), int32_t(37), int32_t(256)};
  EXPECT_EQ(softmax.specialisation(at256), (std::map<std::string, int64_t>{{"D", 256}}));
  EXPECT_EQ(softmax.variant(at256).bundle().assumed, (std::map<std::string, std::string>{{"D", "16"}}));
  EXPECT_EQ(softmax.variantCount(), 1u);
  for (auto [rows, D] : {std::pair{37, 256}, {37, 768}, {1, 781}, {16, 1}, {3, 1023}}) {
    const auto x = tk::test::randomFloats(size_t(rows) * D, -4, 4);
    tk::Buffer dx = dev->upload(x), dout = dev->upload(std::vector<float>(x.size(), NAN));
    const std::vector<tk::Arg> args = {dx, dout, int32_t(rows), int32_t(D)};
    const int64_t br = softmax.variant(args).bundle().constInt("BLOCK_R");
    softmax.launch({uint32_t((rows + br - 1) / br)}, args);
    const auto got = dev->download<float>(dout, x.size());
    const auto ref = softmaxRef(x, rows, D);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(got[i], ref[i], 1e-5 * std::max(1e-3f, ref[i])) << D << " " << i;
  }
  // Facts seen: rows % 16 with D % 16; D % 16; none; rows % 16 with D == 1; none (again).
  EXPECT_EQ(softmax.variantCount(), 4u);
  EXPECT_TRUE(softmax.specialisation({tk::Buffer(), tk::Buffer(), int32_t(3), int32_t(1023)}).empty());
}

const char *kAnnotated = R"(
kernel scale(x: *f32, out: *f32, n: i32 @multiple_of(64), m: i32 @no_specialize, const BLOCK: i32 = 64) {
    let offs = program_id(0) * BLOCK + arange(BLOCK);
    store(out + offs, load(x + offs, mask: offs < n, other: 0.0) * m as f32, mask: offs < n);
}
)";

// @multiple_of(N) holds in every variant and is checked at launch;
// @no_specialize parameters are never specialised on.
TEST(JitKernel, ParameterAnnotations) {
  std::string dir = (std::filesystem::temp_directory_path() / "tk-jit-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/scale.tk";
  { std::ofstream(path) << kAnnotated; }
  auto dev = tk::Device::open("sim");
  tk::JitKernel k(*dev, path, "scale");
  const int n = 128;
  const auto x = tk::test::randomFloats(n, -2, 2);
  tk::Buffer dx = dev->upload(x), dout = dev->upload(std::vector<float>(n, NAN));
  EXPECT_TRUE(k.specialisation({dx, dout, int32_t(n), int32_t(16)}).empty());
  k.launch({2}, {dx, dout, int32_t(n), int32_t(16)});
  k.launch({2}, {dx, dout, int32_t(n), int32_t(1)});
  EXPECT_EQ(k.variantCount(), 1u);
  const tk::Bundle &b = k.variant({dx, dout, int32_t(n), int32_t(1)}).bundle();
  EXPECT_EQ(b.assumed, (std::map<std::string, std::string>{{"n", "64"}}));
  EXPECT_NE(b.tir.find("%n: i32 {div = 64}"), std::string::npos) << b.tir;
  const auto got = dev->download<float>(dout, n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], x[i]) << i;
  try {
    k.launch({2}, {dx, dout, int32_t(100), int32_t(1)});
    FAIL() << "n = 100 ran in a kernel declaring @multiple_of(64)";
  } catch (const tk::Error &e) {
    EXPECT_NE(std::string(e.what()).find("is not a multiple of 64, as the kernel declares (@multiple_of(64))"),
              std::string::npos)
        << e.what();
  }
  tk::CompileOptions o;
  o.assume = {{"m", 16}};
  EXPECT_THROW(tk::Compiler::compileFile(path, "scale", o), tk::CompileError);
  std::filesystem::remove_all(dir);
}

}  // namespace
