// gather, flip, sort, topk, interleave and cat (tests/kernels/selection.tk) on
// the sim: sorts against std::stable_sort (NaNs last ascending, first
// descending; ties by the column carried beside the key), over layouts whose
// bitonic partners are in the thread's registers, other lanes, other warps
// and replicated layouts; topk against the sorted prefix; gather and flip
// against direct indexing; and the PTX through ptxas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "runtime_TestUtil.h"
#include "tk/runtime.h"
#include "TestSeed.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/selection.tk";

using tk::test::cdiv;
using tk::test::randomInts;

// Few distinct values (ties), with NaNs and both zeros among them.
std::vector<float> keys(size_t n) {
  std::vector<float> v;
  for (int32_t k : randomInts(n, -6, 6)) v.push_back(k == 6 ? NAN : k == -6 ? -0.0f : float(k) / 2);
  return v;
}

tk::Bundle compile(const std::string &kernel, int numWarps, std::map<std::string, std::string> defines = {}) {
  return tk::test::compileForSim(kFile, kernel, numWarps, std::move(defines));
}

// The columns of one row in sorted order: NaN after every number (before,
// descending), equal keys (-0.0 and 0.0 too) by column.
std::vector<int> sortedColumns(const float *row, int n, bool desc) {
  std::vector<int> cols(n);
  std::iota(cols.begin(), cols.end(), 0);
  auto less = [](float a, float b) { return (!std::isnan(a) && std::isnan(b)) || a < b; };
  std::stable_sort(cols.begin(), cols.end(),
                   [&](int a, int b) { return desc ? less(row[b], row[a]) : less(row[a], row[b]); });
  return cols;
}

bool sameFloat(float a, float b) { return std::memcmp(&a, &b, 4) == 0 || (std::isnan(a) && std::isnan(b)); }

}  // namespace

TEST(Selection, SortRowsWithTheirColumns) {
  auto dev = tk::Device::open("sim");
  struct Shape {
    int br, bc, warps;
  };
  // Registers, lanes, warps and repetitions along the row; a row shorter
  // than the block's footprint (replicated); one long row.
  for (Shape sh : {Shape{4, 256, 4}, Shape{32, 16, 4}, Shape{1, 1024, 8}, Shape{2, 64, 1}})
    for (bool desc : {false, true}) {
      const std::string what = "BR " + std::to_string(sh.br) + " BC " + std::to_string(sh.bc) + " warps " +
                               std::to_string(sh.warps) + (desc ? " descending" : "");
      tk::Kernel k = dev->load(compile("sort_rows", sh.warps,
                                       {{"BR", std::to_string(sh.br)}, {"BC", std::to_string(sh.bc)},
                                        {"DESC", desc ? "true" : "false"}}));
      const int rows = 2 * sh.br + 1;
      auto x = keys(size_t(rows) * sh.bc);
      tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(x.size(), 99.0f)),
                 from = dev->upload(std::vector<int32_t>(x.size(), -1));
      (*dev)(k, {uint32_t((rows + sh.br - 1) / sh.br)}, dx, out, from, int32_t(rows));
      auto got = dev->download<float>(out, x.size());
      auto gotFrom = dev->download<int32_t>(from, x.size());
      for (int r = 0; r < rows; ++r) {
        std::vector<int> want = sortedColumns(&x[size_t(r) * sh.bc], sh.bc, desc);
        for (int j = 0; j < sh.bc; ++j) {
          ASSERT_EQ(gotFrom[size_t(r) * sh.bc + j], want[j]) << what << " row " << r << " pos " << j;
          ASSERT_TRUE(sameFloat(got[size_t(r) * sh.bc + j], x[size_t(r) * sh.bc + want[j]])) << what;
        }
      }
    }
}

TEST(Selection, SortI32AloneAcrossWarpCounts) {
  auto dev = tk::Device::open("sim");
  for (int warps : {1, 4, 8})
    for (bool desc : {false, true}) {
      tk::Kernel k = dev->load(compile("sort_i32", warps, {{"DESC", desc ? "true" : "false"}}));
      auto x = randomInts(1024, INT32_MIN, INT32_MAX);
      tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<int32_t>(1024, 0));
      (*dev)(k, {1}, dx, out);
      auto want = x;
      if (desc) std::sort(want.begin(), want.end(), std::greater<>());
      else std::sort(want.begin(), want.end());
      ASSERT_EQ(dev->download<int32_t>(out, 1024), want) << "warps " << warps << (desc ? " descending" : "");
    }
}

TEST(Selection, TopkIsTheSortedPrefix) {
  auto dev = tk::Device::open("sim");
  for (int kk : {1, 8, 64}) {
    tk::Kernel k = dev->load(compile("topk_rows", 4, {{"K", std::to_string(kk)}}));
    const int rows = 3;
    auto x = keys(size_t(rows) * 1024);
    tk::Buffer dx = dev->upload(x), vals = dev->upload(std::vector<float>(rows * kk, 99.0f)),
               idx = dev->upload(std::vector<int32_t>(rows * kk, -1));
    (*dev)(k, {2}, dx, vals, idx, int32_t(rows));
    auto gotV = dev->download<float>(vals, rows * kk);
    auto gotI = dev->download<int32_t>(idx, rows * kk);
    for (int r = 0; r < rows; ++r) {
      std::vector<int> want = sortedColumns(&x[size_t(r) * 1024], 1024, /*desc=*/true);
      for (int j = 0; j < kk; ++j) {
        ASSERT_EQ(gotI[r * kk + j], want[j]) << "K " << kk << " row " << r << " pos " << j;
        ASSERT_TRUE(sameFloat(gotV[r * kk + j], x[size_t(r) * 1024 + want[j]]));
      }
    }
  }
}

TEST(Selection, GatherAndFlip) {
  auto dev = tk::Device::open("sim");
  for (int warps : {1, 4}) {
    tk::Kernel k = dev->load(compile("gather_flip", warps));
    auto x = tk::test::randomFloats(16 * 64, -1, 1);
    auto index = randomInts(16 * 32, 0, 63);
    tk::Buffer dx = dev->upload(x), di = dev->upload(index), picked = dev->upload(std::vector<float>(16 * 32, NAN)),
               f0 = dev->upload(std::vector<float>(16 * 64, NAN)), f1 = dev->upload(std::vector<float>(16 * 64, NAN));
    (*dev)(k, {1}, dx, di, picked, f0, f1);
    auto p = dev->download<float>(picked, 16 * 32), g0 = dev->download<float>(f0, 16 * 64),
         g1 = dev->download<float>(f1, 16 * 64);
    for (int r = 0; r < 16; ++r) {
      for (int j = 0; j < 32; ++j) ASSERT_EQ(p[r * 32 + j], x[r * 64 + index[r * 32 + j]]) << "gather " << r << " " << j;
      for (int c = 0; c < 64; ++c) {
        ASSERT_EQ(g0[r * 64 + c], x[(15 - r) * 64 + c]) << "flip dim 0";
        ASSERT_EQ(g1[r * 64 + c], x[r * 64 + 63 - c]) << "flip dim 1";
      }
    }
  }
}

TEST(Selection, InterleaveAndCat) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(compile("interleave_cat", 4));
  auto a = randomInts(8 * 32, -1000, 1000), b = randomInts(8 * 32, -1000, 1000);
  tk::Buffer da = dev->upload(a), db = dev->upload(b), inter = dev->upload(std::vector<int32_t>(512, 0)),
             c0 = dev->upload(std::vector<int32_t>(512, 0)), c1 = dev->upload(std::vector<int32_t>(512, 0));
  (*dev)(k, {1}, da, db, inter, c0, c1);
  auto gi = dev->download<int32_t>(inter, 512), g0 = dev->download<int32_t>(c0, 512), g1 = dev->download<int32_t>(c1, 512);
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 32; ++c) {
      ASSERT_EQ(gi[r * 64 + 2 * c], a[r * 32 + c]);
      ASSERT_EQ(gi[r * 64 + 2 * c + 1], b[r * 32 + c]);
      ASSERT_EQ(g0[r * 32 + c], a[r * 32 + c]);
      ASSERT_EQ(g0[(8 + r) * 32 + c], b[r * 32 + c]);
      ASSERT_EQ(g1[r * 64 + c], a[r * 32 + c]);
      ASSERT_EQ(g1[r * 64 + 32 + c], b[r * 32 + c]);
    }
}

TEST(Selection, PtxAssemblesWithPtxas) {
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "no ptxas: the CUDA toolkit was not found (CUDA_HOME, /usr/local/cuda)";
  for (const char *kernel : {"sort_rows", "topk_rows", "sort_i32", "gather_flip", "interleave_cat", "histogram_of"}) {
    tk::CompileOptions opts;
    opts.archs = {"sm_80", "sm_90"};
    tk::Bundle b = tk::Compiler::compileFile(kFile, kernel, opts);
    for (const std::string &arch : opts.archs) {
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(b.ptx.at(arch), arch, toolkit);
      ASSERT_TRUE(info.ran) << info.log;
      EXPECT_FALSE(info.cubin.empty()) << kernel << " " << arch;
      EXPECT_EQ(info.spillStoreBytes, 0) << kernel << " " << arch << "\n" << info.log;
    }
  }
}

TEST(Selection, HistogramCountsEveryValueOnce) {
  auto dev = tk::Device::open("sim");
  for (int warps : {1, 4})
    for (int bins : {1, 64, 256})
      for (int n : {1, 781, 98433}) {
        tk::Kernel k = dev->load(compile("histogram_of", warps, {{"BINS", std::to_string(bins)}}));
        // Values a little outside 0..bins-1 on both sides: those count nowhere.
        auto x = randomInts(n, -2, bins + 1);
        tk::Buffer dx = dev->upload(x), counts = dev->upload(std::vector<int32_t>(bins, 0));
        (*dev)(k, {cdiv(n, 1024)}, dx, counts, int32_t(n));
        std::vector<int32_t> want(bins, 0);
        for (int32_t v : x)
          if (v >= 0 && v < bins) ++want[v];
        ASSERT_EQ(dev->download<int32_t>(counts, bins), want) << "warps " << warps << " bins " << bins << " n " << n;
      }
}
