// Reductions compiled from tests/kernels/reductions.tk and run on the sim,
// against double-precision CPU references on random inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tk/runtime.h"
#include "runtime_TestUtil.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/reductions.tk";

using tk::test::randomFloats;

uint32_t blocks(int64_t n, const tk::Bundle &b, const char *param) {
  int64_t block = b.constInt(param);
  return uint32_t((n + block - 1) / block);
}

}  // namespace

TEST(Reductions, RowStatistics) {
  auto dev = tk::Device::open("sim");
  for (int numWarps : {1, 4}) {
    tk::CompileOptions opts;
    opts.numWarps = numWarps;
    tk::Bundle b = tk::Compiler::compileFile(kFile, "row_stats", opts);
    tk::Kernel k = dev->load(b);
    for (int rows : {1, 13, 781}) {
      const int C = 256;
      auto x = randomFloats(size_t(rows) * C, -5, 5);
      tk::Buffer dx = dev->upload(x);
      tk::Buffer sums = dev->upload(std::vector<float>(rows, NAN)), maxs = dev->upload(std::vector<float>(rows, NAN)),
                 mins = dev->upload(std::vector<float>(rows, NAN));
      tk::Buffer amax = dev->upload(std::vector<int32_t>(rows, -1)), amin = dev->upload(std::vector<int32_t>(rows, -1));
      (*dev)(k, {blocks(rows, b, "BR")}, dx, sums, maxs, mins, amax, amin, int32_t(rows));
      auto s = dev->download<float>(sums, rows), mx = dev->download<float>(maxs, rows),
           mn = dev->download<float>(mins, rows);
      auto ax = dev->download<int32_t>(amax, rows), an = dev->download<int32_t>(amin, rows);
      for (int r = 0; r < rows; ++r) {
        const float *row = &x[size_t(r) * C];
        double ref = 0, mag = 0;
        for (int c = 0; c < C; ++c) ref += row[c], mag += std::fabs(row[c]);
        ASSERT_NEAR(s[r], ref, 1e-5 * mag) << "warps " << numWarps << " row " << r;
        ASSERT_EQ(mx[r], *std::max_element(row, row + C)) << r;
        ASSERT_EQ(mn[r], *std::min_element(row, row + C)) << r;
        ASSERT_EQ(ax[r], std::max_element(row, row + C) - row) << r;
        ASSERT_EQ(an[r], std::min_element(row, row + C) - row) << r;
      }
    }
  }
}

TEST(Reductions, ArgmaxTakesTheFirstOfEqualValues) {
  auto dev = tk::Device::open("sim");
  tk::Bundle b = tk::Compiler::compileFile(kFile, "row_stats");
  tk::Kernel k = dev->load(b);
  const int rows = 8, C = 256;
  std::vector<float> x(rows * C, 1.0f);
  for (int r = 0; r < rows; ++r) x[r * C + 200] = x[r * C + 37 + r] = 9.0f, x[r * C + 255 - r] = x[r * C + 3] = -2.0f;
  tk::Buffer dx = dev->upload(x), f1 = dev->alloc(rows * 4), f2 = dev->alloc(rows * 4), f3 = dev->alloc(rows * 4);
  tk::Buffer amax = dev->alloc(rows * 4), amin = dev->alloc(rows * 4);
  (*dev)(k, {1}, dx, f1, f2, f3, amax, amin, int32_t(rows));
  auto ax = dev->download<int32_t>(amax, rows), an = dev->download<int32_t>(amin, rows);
  for (int r = 0; r < rows; ++r) {
    EXPECT_EQ(ax[r], 37 + r);
    EXPECT_EQ(an[r], 3);
  }
}

// NaN: max and min ignore it (as fmaxf), and so do argmax and argmin, in
// every position and whatever the reduction's tree (1 or 4 warps): the index
// is the first of the largest (smallest) number; a row of NaN only gives 0.
// (NumPy's and PyTorch's argmax return the first NaN's index instead.)
TEST(Reductions, ArgmaxIgnoresNaNAsMaxDoes) {
  auto dev = tk::Device::open("sim");
  const int rows = 6, C = 256;
  std::vector<float> x(size_t(rows) * C);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-5, 5);
  for (float &v : x) v = u(rng);
  const float nan = std::nanf("");
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < C; c += r + 2) x[size_t(r) * C + c] = nan;  // NaN at 0 and then every r + 2
  for (int c = 0; c < C; ++c) x[size_t(5) * C + c] = nan;           // a row of NaN only
  for (int numWarps : {1, 4}) {
    tk::CompileOptions opts;
    opts.numWarps = numWarps;
    tk::Bundle b = tk::Compiler::compileFile(kFile, "row_stats", opts);
    tk::Kernel k = dev->load(b);
    tk::Buffer dx = dev->upload(x), f1 = dev->alloc(rows * 4), maxs = dev->alloc(rows * 4), mins = dev->alloc(rows * 4);
    tk::Buffer amax = dev->upload(std::vector<int32_t>(rows, -1)), amin = dev->upload(std::vector<int32_t>(rows, -1));
    (*dev)(k, {1}, dx, f1, maxs, mins, amax, amin, int32_t(rows));
    auto mx = dev->download<float>(maxs, rows), mn = dev->download<float>(mins, rows);
    auto ax = dev->download<int32_t>(amax, rows), an = dev->download<int32_t>(amin, rows);
    for (int r = 0; r < 5; ++r) {
      const float *row = &x[size_t(r) * C];
      int best = -1, worst = -1;
      for (int c = 0; c < C; ++c) {
        if (std::isnan(row[c])) continue;
        if (best < 0 || row[c] > row[best]) best = c;
        if (worst < 0 || row[c] < row[worst]) worst = c;
      }
      EXPECT_EQ(mx[r], row[best]) << "warps " << numWarps << " row " << r;
      EXPECT_EQ(ax[r], best) << "warps " << numWarps << " row " << r;
      EXPECT_EQ(mn[r], row[worst]) << "warps " << numWarps << " row " << r;
      EXPECT_EQ(an[r], worst) << "warps " << numWarps << " row " << r;
    }
    EXPECT_TRUE(std::isnan(mx[5]));
    EXPECT_EQ(ax[5], 0);
    EXPECT_EQ(an[5], 0);
  }
}

TEST(Reductions, ColumnSumsCrossWarps) {
  auto dev = tk::Device::open("sim");
  tk::Bundle b = tk::Compiler::compileFile(kFile, "col_sums");
  tk::Kernel k = dev->load(b);
  for (int cols : {1, 33, 1023}) {
    auto x = randomFloats(size_t(64) * cols, -3, 3);
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(cols, NAN));
    tk::LaunchStats s = (*dev)(k, {blocks(cols, b, "BC")}, dx, out, int32_t(cols));
    auto got = dev->download<float>(out, cols);
    for (int c = 0; c < cols; ++c) {
      double ref = 0, mag = 0;
      for (int r = 0; r < 64; ++r) ref += x[size_t(r) * cols + c], mag += std::fabs(x[size_t(r) * cols + c]);
      ASSERT_NEAR(got[c], ref, 1e-5 * mag) << "cols " << cols << " c " << c;
    }
    EXPECT_GT(s.barriers, 0u);
  }
}

TEST(Reductions, WholeTileToAScalar) {
  auto dev = tk::Device::open("sim");
  tk::Bundle b = tk::Compiler::compileFile(kFile, "block_sums");
  tk::Kernel k = dev->load(b);
  for (int n : {1, 781, 1023, 98433}) {
    auto x = randomFloats(n, -1, 1);
    uint32_t grid = blocks(n, b, "BLOCK");
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(grid, NAN));
    tk::LaunchStats s = (*dev)(k, {grid}, dx, out, int32_t(n));
    auto got = dev->download<float>(out, grid);
    for (uint32_t p = 0; p < grid; ++p) {
      double ref = 0, mag = 0;
      for (int i = p * 1024; i < std::min<int>(n, (p + 1) * 1024); ++i) ref += x[i], mag += std::fabs(x[i]);
      ASSERT_NEAR(got[p], ref, 1e-5 * mag) << "n " << n << " program " << p;
    }
    // A scalar store is one 4-byte store per program, not one per thread.
    EXPECT_EQ(s.globalStoreBytes, uint64_t(grid) * 4);
  }
}

TEST(Reductions, SoftmaxRowsSumToOne) {
  auto dev = tk::Device::open("sim");
  tk::Bundle b = tk::Compiler::compileFile(kFile, "softmax_rows");
  tk::Kernel k = dev->load(b);
  for (int rows : {1, 7, 781}) {
    const int C = 128;
    auto x = randomFloats(size_t(rows) * C, -10, 10);
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(size_t(rows) * C, NAN));
    tk::LaunchStats s = (*dev)(k, {blocks(rows, b, "BR")}, dx, out, int32_t(rows));
    auto got = dev->download<float>(out, size_t(rows) * C);
    for (int r = 0; r < rows; ++r) {
      const float *row = &x[size_t(r) * C];
      double m = *std::max_element(row, row + C), z = 0;
      for (int c = 0; c < C; ++c) z += std::exp(row[c] - m);
      for (int c = 0; c < C; ++c) ASSERT_NEAR(got[size_t(r) * C + c], std::exp(row[c] - m) / z, 1e-6) << r << "," << c;
    }
    EXPECT_EQ(s.bytesMoved(), uint64_t(rows) * C * 8) << "softmax reads and writes each element once";
  }
}

TEST(Reductions, SumsOfBoolsCount) {
  auto dev = tk::Device::open("sim");
  tk::Bundle b = tk::Compiler::compileFile(kFile, "count_positive");
  tk::Kernel k = dev->load(b);
  const int n = 98433;
  auto x = randomFloats(n, -1, 1);
  uint32_t grid = blocks(n, b, "BLOCK");
  tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<int32_t>(grid, -1));
  (*dev)(k, {grid}, dx, out, int32_t(n));
  auto got = dev->download<int32_t>(out, grid);
  for (uint32_t p = 0; p < grid; ++p) {
    int ref = 0;
    for (int i = p * 512; i < std::min<int>(n, (p + 1) * 512); ++i) ref += x[i] > 0;
    ASSERT_EQ(got[p], ref) << p;
  }
}

// Every kernel that goes through shared memory (cross-warp reductions,
// layout conversions, atomics' old values) runs clean under the sim's race
// check: owners write, barriers separate the phases.
TEST(Reductions, SharedMemoryUseIsRaceFree) {
  auto dev = tk::Device::open("sim:racecheck");
  EXPECT_NE(dev->name().find("race check"), std::string::npos);
  const int rows = 100, C = 256;
  auto x = randomFloats(size_t(rows) * C, -1, 1);
  tk::Buffer dx = dev->upload(x);
  {
    tk::Bundle b = tk::Compiler::compileFile(kFile, "row_stats");
    tk::Buffer f1 = dev->alloc(rows * 4), f2 = dev->alloc(rows * 4), f3 = dev->alloc(rows * 4),
               i1 = dev->alloc(rows * 4), i2 = dev->alloc(rows * 4);
    tk::LaunchStats s = (*dev)(dev->load(b), {blocks(rows, b, "BR")}, dx, f1, f2, f3, i1, i2, int32_t(rows));
    EXPECT_GT(s.sharedRequests, 0u);
  }
  {
    tk::Bundle b = tk::Compiler::compileFile(kFile, "col_sums");
    tk::Buffer out = dev->alloc(C * 4);
    (*dev)(dev->load(b), {blocks(C, b, "BC")}, dx, out, int32_t(C));
  }
  for (const char *k : {"layernorm_tanh_linear_relu", "softmax"}) {
    tk::Bundle b = tk::Compiler::compileFile(TK_SOURCE_DIR + "/stdlib/normalization.tk", k);
    tk::Buffer w = dev->upload(randomFloats(C, -1, 1)), out = dev->alloc(size_t(rows) * C * 4);
    uint32_t grid = blocks(rows, b, "BLOCK_R");
    if (std::string(k) == "softmax")
      (*dev)(dev->load(b), {grid}, dx, out, int32_t(rows), int32_t(C));
    else
      (*dev)(dev->load(b), {grid}, dx, w, 0.5f, out, int32_t(rows), int32_t(C), 1e-5f);
  }
  {
    tk::Bundle b = tk::Compiler::compileFile(TK_SOURCE_DIR + "/tests/kernels/atomics.tk", "total_and_max");
    tk::Buffer v = dev->upload(std::vector<int32_t>(rows * C, 3)), total = dev->upload(std::vector<float>{0}),
               best = dev->upload(std::vector<int32_t>{0});
    (*dev)(dev->load(b), {uint32_t(rows * C / 512)}, dx, v, total, best, int32_t(rows * C));
  }
  tk::Device::open("sim")->setRaceCheck(false);  // turning it off is always allowed
}
