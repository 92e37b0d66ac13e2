// Tensor descriptors (tests/kernels/descriptors.tk) on the sim against
// references computed here: a matmul written with them at ragged sizes on
// mma.sync (sm_80) and wgmma (sm_90a), and a rank-3 window whose edges leave
// the tensor on every side (NaN-filled on load, cut on store). Buffers are
// exactly their tensors' sizes, so the sim fails a launch that touches
// anything outside; outputs start poisoned.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "runtime_TestUtil.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/descriptors.tk";

// c [m, n] == A [m, k] @ B [k, n] (row-major): exactHalfInputs' products
// and sums are exact in f32 in any order.
void expectProduct(const std::vector<float> &c, const std::vector<float> &a, const std::vector<float> &b, int m, int n,
                   int k, const std::string &what) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int q = 0; q < k; ++q) want += double(a[size_t(i) * k + q]) * b[size_t(q) * n + j];
      ASSERT_EQ(c[size_t(i) * n + j], want) << what << " at " << i << "," << j;
    }
}

TEST(TensorDescriptor, MatmulAtRaggedSizesOnEveryTensorCore) {
  auto dev = tk::Device::open("sim");
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  for (const char *arch : {"sm_80", "sm_90a"}) {
    tk::CompileOptions opts;
    opts.archs = {arch};
    tk::Bundle bundle = tk::Compiler::compileFile(kFile, "matmul_desc", opts);
    if (toolkit.hasPtxas()) {
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(bundle.ptx.at(arch), arch, toolkit);
      EXPECT_TRUE(info.ran) << info.log;
      EXPECT_EQ(info.spillStoreBytes, 0) << arch << "\n" << info.log;
    }
    tk::Kernel k = dev->load(bundle);
    for (auto [m, n, kk] : {std::tuple{1, 1, 1}, std::tuple{64, 64, 32}, std::tuple{130, 67, 100}}) {
      const std::string what = std::string(arch) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                               std::to_string(kk);
      auto a = tk::test::exactHalfInputs(size_t(m) * kk), b = tk::test::exactHalfInputs(size_t(kk) * n);
      tk::Buffer da = dev->upload(tk::test::f16Values(a)), db = dev->upload(tk::test::f16Values(b)),
                 dc = dev->upload(std::vector<float>(size_t(m) * n, NAN));
      (*dev)(k, {tk::test::cdiv(m, 64), tk::test::cdiv(n, 64)}, da, db, dc, int32_t(m), int32_t(n), int32_t(kk));
      expectProduct(dev->download<float>(dc, size_t(m) * n), a, b, m, n, kk, what);
    }
  }
}

// Tutorial 09's persistent form: one program per multiprocessor (the sim's
// workers: Dim3::perSm, NUM_SMS the same count) walks 3 x 2 tiles, and 1 x 1
// (the others find no tile); and 3 programs by hand. sm_80 and sm_90a code.
TEST(TensorDescriptor, PersistentMatmulWalksEveryTile) {
  auto dev = tk::Device::open("sim");
  const tk::Dim3 perSm = tk::Dim3::perSm(*dev);
  ASSERT_EQ(perSm.x, uint32_t(dev->properties().multiprocessors));
  EXPECT_EQ(tk::Dim3::perSm(*dev, 2).x, 2 * perSm.x);
  EXPECT_THROW(tk::Dim3::perSm(*dev, 0), tk::Error);
  for (uint32_t programs : {perSm.x, 3u})
  for (const char *arch : {"sm_80", "sm_90a"}) {
    tk::CompileOptions opts;
    opts.archs = {arch};
    opts.defines = {{"NUM_SMS", std::to_string(programs)}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "matmul_persistent", opts));
    for (auto [m, n, kk] : {std::tuple{130, 100, 70}, std::tuple{5, 3, 2}}) {
      const std::string what = std::string(arch) + " " + std::to_string(programs) + " programs " +
                               std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(kk);
      auto a = tk::test::exactHalfInputs(size_t(m) * kk), b = tk::test::exactHalfInputs(size_t(kk) * n);
      tk::Buffer da = dev->upload(tk::test::f16Values(a)), db = dev->upload(tk::test::f16Values(b)),
                 dc = dev->upload(std::vector<float>(size_t(m) * n, NAN));
      (*dev)(k, {programs}, da, db, dc, int32_t(m), int32_t(n), int32_t(kk));
      expectProduct(dev->download<float>(dc, size_t(m) * n), a, b, m, n, kk, what);
    }
  }
}

TEST(TensorDescriptor, RankThreeWindowPadsWithNanAndStoresOnlyInside) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::test::compileForSim(kFile, "window", 4));
  const int D0 = 3, D1 = 4, D2 = 6;
  struct Offsets {
    int o0, o1, o2;
  };
  for (Offsets o : {Offsets{0, 0, 0}, Offsets{-1, -2, -3}, Offsets{2, 3, 4}, Offsets{1, 1, 1}, Offsets{5, 0, 0}}) {
    const std::string what = "at (" + std::to_string(o.o0) + ", " + std::to_string(o.o1) + ", " + std::to_string(o.o2) + ")";
    auto x = tk::test::randomFloats(size_t(D0) * D1 * D2, -4, 4);
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(30, -1.0f));
    (*dev)(k, {1}, dx, out, int32_t(D0), int32_t(D1), int32_t(D2), int32_t(o.o0), int32_t(o.o1), int32_t(o.o2));
    auto got = dev->download<float>(out, 30), back = dev->download<float>(dx, x.size());
    std::vector<float> want = x;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int l = 0; l < 5; ++l) {
          const int a = o.o0 + i, b = o.o1 + j, c = o.o2 + l;
          const bool inside = a >= 0 && a < D0 && b >= 0 && b < D1 && c >= 0 && c < D2;
          const float g = got[size_t(i) * 15 + j * 5 + l];
          if (!inside) {
            ASSERT_TRUE(std::isnan(g)) << what << " element " << i << "," << j << "," << l << " = " << g;
            continue;
          }
          const size_t at = (size_t(a) * D1 + b) * D2 + c;
          ASSERT_EQ(g, x[at]) << what << " element " << i << "," << j << "," << l;
          want[at] = 2 * x[at];
        }
    EXPECT_EQ(back, want) << what << ": the store wrote the block's inside, doubled, and nothing else";
  }
}

}  // namespace
