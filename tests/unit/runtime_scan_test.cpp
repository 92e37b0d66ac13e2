// cumsum compiled from tests/kernels/scans.tk and run on the sim against
// double-precision CPU references on random inputs, over layouts that put
// registers, lanes (whole warps and lane groups), warps and repetitions along
// the scan axis, and layouts that replicate the tile; then under the race
// check, and through ptxas.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "runtime_TestUtil.h"
#include "tk/runtime.h"
#include "TestSeed.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/scans.tk";

using tk::test::cdiv;
using tk::test::randomFloats;
using tk::test::randomInts;

tk::Bundle compile(const std::string &kernel, int numWarps, std::map<std::string, std::string> defines = {}) {
  return tk::test::compileForSim(kFile, kernel, numWarps, std::move(defines));
}

// Scans a 1-D array in blocks of `block` and checks `got`: exact for ints,
// within a bound relative to the running sum of magnitudes for floats.
template <typename T, typename G>
void checkBlocks1d(const std::vector<T> &x, const std::vector<G> &got, int64_t block, const std::string &what) {
  double sum = 0, mag = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (int64_t(i) % block == 0) sum = mag = 0;
    sum += double(x[i]), mag += std::fabs(double(x[i]));
    if constexpr (std::is_floating_point_v<G>)
      ASSERT_NEAR(got[i], sum, 2e-5 * mag + 1e-6) << what << " i " << i;
    else
      ASSERT_EQ(got[i], G(sum)) << what << " i " << i;
  }
}

}  // namespace

TEST(Scan, OneDimensionalF32AndI32WithMasks) {
  auto dev = tk::Device::open("sim");
  for (int numWarps : {1, 4, 8}) {
    tk::Kernel kf = dev->load(compile("cumsum_f32", numWarps)), ki = dev->load(compile("cumsum_i32", numWarps));
    for (int n : {1, 781, 1023, 2500}) {
      const std::string what = "warps " + std::to_string(numWarps) + " n " + std::to_string(n);
      auto x = randomFloats(n, -1, 1);
      tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(n + 64, NAN));
      (*dev)(kf, {cdiv(n, 1024)}, dx, out, int32_t(n));
      auto got = dev->download<float>(out, n + 64);
      checkBlocks1d(x, got, 1024, "f32 " + what);
      for (int i = n; i < n + 64; ++i) ASSERT_TRUE(std::isnan(got[i])) << "wrote past n: " << what;

      auto xi = randomInts(n, -1000, 1000);
      tk::Buffer dxi = dev->upload(xi), outi = dev->upload(std::vector<int32_t>(n, INT32_MIN));
      (*dev)(ki, {cdiv(n, 1024)}, dxi, outi, int32_t(n));
      checkBlocks1d(xi, dev->download<int32_t>(outi, n), 1024, "i32 " + what);
    }
  }
}

// Tiles smaller than the block: 16 elements over 4 warps are held by 16
// lanes of every warp (the rest are copies); 64 over 1 warp by all lanes
// twice (registers and lanes); 2048 over 4 warps by 4 registers x 32 lanes x
// 4 warps x 4 repetitions.
TEST(Scan, OneDimensionalBlockSizes) {
  auto dev = tk::Device::open("sim");
  for (auto [block, numWarps] : std::vector<std::pair<int, int>>{{16, 4}, {16, 1}, {2, 4}, {64, 1}, {2048, 4}, {128, 8}}) {
    tk::Kernel kf = dev->load(compile("cumsum_f32", numWarps, {{"BLOCK", std::to_string(block)}}));
    for (int n : {1, 781, 1023}) {
      const std::string what = "block " + std::to_string(block) + " warps " + std::to_string(numWarps) + " n " +
                               std::to_string(n);
      auto x = randomFloats(n, -1, 1);
      tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(n, NAN));
      (*dev)(kf, {cdiv(n, block)}, dx, out, int32_t(n));
      checkBlocks1d(x, dev->download<float>(out, n), block, what);
    }
  }
}

TEST(Scan, SixtyFourBitValuesAndBools) {
  auto dev = tk::Device::open("sim");
  const int n = 1000;
  {
    tk::Kernel k = dev->load(compile("cumsum_i64", 4));
    std::vector<int64_t> x(n);
    auto lo = randomInts(n, -1000000, 1000000);
    for (int i = 0; i < n; ++i) x[i] = (int64_t(lo[i]) << 20) + lo[(i + 1) % n];  // past 32 bits
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<int64_t>(n, -1));
    (*dev)(k, {cdiv(n, 256)}, dx, out, int32_t(n));
    auto got = dev->download<int64_t>(out, n);
    int64_t sum = 0;
    for (int i = 0; i < n; ++i) {
      sum = i % 256 == 0 ? x[i] : sum + x[i];
      ASSERT_EQ(got[i], sum) << i;
    }
  }
  {
    tk::Kernel k = dev->load(compile("running_count", 4));
    auto x = randomFloats(n, -1, 1);
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<int32_t>(n, -1));
    (*dev)(k, {cdiv(n, 512)}, dx, out, int32_t(n));
    auto got = dev->download<int32_t>(out, n);
    int32_t count = 0;
    for (int i = 0; i < n; ++i) {
      count = (i % 512 == 0 ? 0 : count) + (x[i] > 0);
      ASSERT_EQ(got[i], count) << i;
    }
  }
}

namespace {

struct TileCase {
  int br, bc, axis, numWarps;
  std::string str() const {
    return "[" + std::to_string(br) + "x" + std::to_string(bc) + "] axis " + std::to_string(axis) + " warps " +
           std::to_string(numWarps);
  }
};

// Shapes whose default layouts put, along the scan axis: lanes in groups of
// 16 and 4 warps ([64x4] axis 0), lanes and repetitions ([4x256] axis 1),
// warps ([2x1024] axis 1, 8 warps), one element per thread ([32x32]),
// copies across lanes and warps ([4x8], [8x2], [1x16]).
const std::vector<TileCase> kTileCases = {
    {64, 4, 0, 4}, {64, 4, 0, 8}, {64, 4, 0, 1}, {4, 256, 1, 1}, {4, 256, 1, 4}, {4, 256, 1, 8},
    {2, 1024, 1, 8}, {32, 32, 0, 4}, {32, 32, 1, 4}, {32, 32, 0, 1}, {4, 8, 0, 4}, {4, 8, 1, 4},
    {8, 2, 0, 4}, {1, 16, 1, 4}, {128, 2, 0, 8}, {16, 64, 0, 8},
};

// Runs one case of cumsum_tile_<T> on a ragged [rows, cols] array and
// compares every element with the per-tile prefix sum.
template <typename T>
void runTileCase(tk::Device &dev, const TileCase &tc, int rows, int cols) {
  constexpr bool isFloat = std::is_floating_point_v<T>;
  tk::Bundle b = compile(isFloat ? "cumsum_tile_f32" : "cumsum_tile_i32", tc.numWarps,
                         {{"BR", std::to_string(tc.br)}, {"BC", std::to_string(tc.bc)}, {"AXIS", std::to_string(tc.axis)}});
  const size_t total = size_t(rows) * cols;
  std::vector<T> x;
  if constexpr (isFloat) x = randomFloats(total, -1, 1);
  else x = randomInts(total, -1000, 1000);
  T poison;
  if constexpr (isFloat) poison = NAN;
  else poison = INT32_MIN;
  tk::Buffer dx = dev.upload(x), out = dev.upload(std::vector<T>(total, poison));
  dev(dev.load(b), {cdiv(rows, tc.br), cdiv(cols, tc.bc)}, dx, out, int32_t(rows), int32_t(cols));
  auto got = dev.download<T>(out, total);
  const std::string what = tc.str() + " rows " + std::to_string(rows) + " cols " + std::to_string(cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      // The tile's elements before (r, c) along the axis.
      double sum = 0, mag = 0;
      if (tc.axis == 1)
        for (int cc = c - c % tc.bc; cc <= c; ++cc) sum += double(x[size_t(r) * cols + cc]), mag += std::fabs(double(x[size_t(r) * cols + cc]));
      else
        for (int rr = r - r % tc.br; rr <= r; ++rr) sum += double(x[size_t(rr) * cols + c]), mag += std::fabs(double(x[size_t(rr) * cols + c]));
      if constexpr (isFloat)
        ASSERT_NEAR(got[size_t(r) * cols + c], sum, 2e-5 * mag + 1e-6) << what << " at " << r << "," << c;
      else
        ASSERT_EQ(got[size_t(r) * cols + c], T(sum)) << what << " at " << r << "," << c;
    }
}

}  // namespace

TEST(Scan, TwoDimensionalAlongEachAxis) {
  auto dev = tk::Device::open("sim");
  for (const TileCase &tc : kTileCases) {
    // Ragged: the last tile along each dim is partly masked.
    const int rows = tc.br * 2 - (tc.br > 1 ? 1 : 0), cols = tc.bc + (tc.bc > 1 ? tc.bc / 2 + 1 : 1);
    runTileCase<float>(*dev, tc, rows, cols);
    runTileCase<int32_t>(*dev, tc, rows, cols);
  }
}

TEST(Scan, OfAReductionInItsSliceLayout) {
  auto dev = tk::Device::open("sim");
  for (int numWarps : {1, 4}) {
    tk::Kernel k = dev->load(compile("row_sums_cumsum", numWarps));
    for (int rows : {1, 13, 100}) {
      const int BR = 16, C = 64;
      auto x = randomFloats(size_t(rows) * C, -1, 1);
      tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(size_t(rows) * C, NAN));
      (*dev)(k, {cdiv(rows, BR)}, dx, out, int32_t(rows));
      auto got = dev->download<float>(out, size_t(rows) * C);
      double running = 0, mag = 0;
      for (int r = 0; r < rows; ++r) {
        if (r % BR == 0) running = mag = 0;
        for (int c = 0; c < C; ++c) running += x[size_t(r) * C + c], mag += std::fabs(x[size_t(r) * C + c]);
        for (int c = 0; c < C; ++c)
          ASSERT_NEAR(got[size_t(r) * C + c], x[size_t(r) * C + c] + running, 2e-5 * mag + 1e-6)
              << "warps " << numWarps << " rows " << rows << " at " << r << "," << c;
      }
    }
  }
}

// Every layout above, under the sim's race check: one writer per shared
// slot, barriers between writing and reading and before the buffer's reuse.
TEST(Scan, SharedMemoryUseIsRaceFree) {
  auto dev = tk::Device::open("sim:racecheck");
  ASSERT_NE(dev->name().find("race check"), std::string::npos);
  for (const TileCase &tc : kTileCases) runTileCase<float>(*dev, tc, tc.br * 2, tc.bc * 2);
  for (auto [block, numWarps] : std::vector<std::pair<int, int>>{{1024, 4}, {2048, 4}, {16, 4}, {1024, 8}}) {
    tk::Kernel k = dev->load(compile("cumsum_f32", numWarps, {{"BLOCK", std::to_string(block)}}));
    const int n = 3000;
    auto x = randomFloats(n, -1, 1);
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(n, NAN));
    tk::LaunchStats s = (*dev)(k, {cdiv(n, block)}, dx, out, int32_t(n));
    checkBlocks1d(x, dev->download<float>(out, n), block, "racecheck block " + std::to_string(block));
    if (block >= 1024) {
      EXPECT_GT(s.barriers, 0u) << "warps along the axis exchange totals through shared memory";
    }
  }
  tk::Kernel k = dev->load(compile("row_sums_cumsum", 4));
  tk::Buffer dx = dev->upload(randomFloats(64 * 64, -1, 1)), out = dev->alloc(64 * 64 * 4);
  (*dev)(k, {4}, dx, out, int32_t(64));
}

TEST(Scan, PtxAssemblesWithPtxas) {
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "no ptxas: the CUDA toolkit was not found (CUDA_HOME, /usr/local/cuda)";
  for (const char *kernel : {"cumsum_f32", "cumsum_i64", "cumsum_tile_f32"}) {
    tk::CompileOptions opts;
    opts.archs = {"sm_80", "sm_90"};
    opts.defines = std::string(kernel) == "cumsum_tile_f32" ? std::map<std::string, std::string>{{"BR", "64"}, {"BC", "4"}, {"AXIS", "0"}}
                                                             : std::map<std::string, std::string>{};
    tk::Bundle b = tk::Compiler::compileFile(kFile, kernel, opts);
    for (const std::string &arch : opts.archs) {
      const std::string &ptx = b.ptx.at(arch);
      EXPECT_NE(ptx.find("shfl.sync.bfly"), std::string::npos) << kernel << " " << arch;  // lanes scan by butterfly
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(ptx, arch, toolkit);
      ASSERT_TRUE(info.ran) << info.log;
      EXPECT_FALSE(info.cubin.empty()) << kernel << " " << arch;
      EXPECT_EQ(info.spillStoreBytes, 0) << kernel << " " << arch << "\n" << info.log;
    }
  }
}
