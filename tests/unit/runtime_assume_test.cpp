// Integer specialisation (CompileOptions::assume): a variant compiled for
// D % 16 == 0 or for a stride of 1 computes what the general one does, on
// the sim, at sizes with the fact; a launch whose value breaks an assumed
// fact is refused before anything runs, never computed wrong.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <cmath>
#include <filesystem>

#include "runtime_TestUtil.h"
#include "tk/runtime.h"

namespace {

const std::string kNorm = TK_SOURCE_DIR "/stdlib/normalization.tk";

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
  tk::Bundle b = tk::Compiler::compileFile(TK_SOURCE_DIR "/stdlib/matmul.tk", "matmul", o);
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

}  // namespace
