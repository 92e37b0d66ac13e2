// trans(t) on the sim: a transposed store through a layout change, and
// x @ w^T with the transpose free (a relabelling of the layout's dims) on
// tensor cores and on FMA units, against references.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime_TestUtil.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/trans.tk";

TEST(Trans, TransposesTiles) {
  auto dev = tk::Device::open("sim:racecheck");
  for (auto [R, C] : std::vector<std::pair<int, int>>{{64, 32}, {1, 16}, {16, 1}, {128, 128}, {8, 4}})
    for (int warps : {1, 4}) {
      SCOPED_TRACE(std::to_string(R) + "x" + std::to_string(C) + ", " + std::to_string(warps) + " warps");
      tk::CompileOptions o;
      o.numWarps = warps;
      o.defines = {{"R", std::to_string(R)}, {"C", std::to_string(C)}};
      tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "transpose", o));
      const auto x = tk::test::randomFloats(size_t(R) * C, -1, 1);
      tk::Buffer dx = dev->upload(x), dout = dev->upload(std::vector<float>(x.size(), NAN));
      (*dev)(k, {1}, dx, dout);
      auto got = dev->download<float>(dout, x.size());
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) ASSERT_EQ(got[size_t(c) * R + r], 2 * x[size_t(r) * C + c]) << r << ", " << c;
    }
}

TEST(Trans, LinearLayerWithTransposedWeight) {
  auto dev = tk::Device::open("sim");
  const int M = 64, N = 32, K = 64;
  for (bool half : {true, false}) {
    SCOPED_TRACE(half ? "f16 (tensor cores)" : "f32 (FMA)");
    tk::Bundle b = tk::Compiler::compileFile(kFile, half ? "linear_f16" : "linear_f32");
    // The transpose itself moves nothing: no layout conversion before the dot.
    const std::string tir = b.tir.substr(0, b.tir.find(" dot "));
    EXPECT_EQ(tir.find("convert_layout"), std::string::npos) << b.tir;
    const auto x = tk::test::exactHalfInputs(size_t(M) * K), w = tk::test::exactHalfInputs(size_t(N) * K);
    tk::Buffer dx, dw;
    if (half) {
      dx = dev->upload(tk::test::f16Values(x)), dw = dev->upload(tk::test::f16Values(w));
    } else {
      dx = dev->upload(x), dw = dev->upload(w);
    }
    tk::Buffer dout = dev->upload(std::vector<float>(size_t(M) * N, NAN));
    (*dev)(dev->load(b), {1}, dx, dw, dout);
    auto got = dev->download<float>(dout, size_t(M) * N);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double ref = 0;
        for (int k = 0; k < K; ++k) ref += double(x[size_t(i) * K + k]) * w[size_t(j) * K + k];
        ASSERT_EQ(got[size_t(i) * N + j], ref) << i << ", " << j;
      }
  }
}

}  // namespace
