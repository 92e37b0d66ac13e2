// stdlib/similarity.tk on the sim against an exact CPU count: out[i, j] =
// #{s : |x[s, i] - y[s, j]| < 1}, at ragged sizes, under the race check, and
// with the global traffic its 2-D tiling implies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "runtime_TestUtil.h"
#include "runtime_Variants.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/stdlib/similarity.tk";

using tk::test::randomFloats;

// The same f32 steps as the kernel (subtract, abs, compare with 1.0f), so the
// counts must match exactly (x86-64 computes f32 in f32: no excess precision).
std::vector<int32_t> referenceCounts(const std::vector<float> &x, const std::vector<float> &y, int nSamples, int nDim) {
  std::vector<int32_t> out(size_t(nDim) * nDim, 0);
  for (int s = 0; s < nSamples; ++s) {
    const float *xs = &x[size_t(s) * nDim], *ys = &y[size_t(s) * nDim];
    for (int i = 0; i < nDim; ++i)
      for (int j = 0; j < nDim; ++j) {
        out[size_t(i) * nDim + j] += std::fabs(xs[i] - ys[j]) < 1.0f;
      }
  }
  return out;
}

uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

struct Result {
  std::vector<int32_t> out;
  tk::LaunchStats stats;
};

// Random x, y uniform in [-2, 2) (about 44% of pairs are within 1, so counts
// spread over 0..n_samples), an output poisoned with -1, one launch over the
// 2-D grid of output tiles.
// Empty when the variant `k` would run is the general one, already run.
std::optional<Result> runSimilarity(tk::Device &dev, tk::test::VariantKernel &k, int nSamples, int nDim,
                                    std::vector<float> &x, std::vector<float> &y) {
  const tk::Bundle &b = k.general().bundle();
  x = randomFloats(size_t(nSamples) * nDim, -2, 2);
  y = randomFloats(size_t(nSamples) * nDim, -2, 2);
  // A zero-sample input still needs a valid (never read) pointer.
  tk::Buffer dx = x.empty() ? dev.alloc(16) : dev.upload(x), dy = y.empty() ? dev.alloc(16) : dev.upload(y);
  tk::Buffer out = dev.upload(std::vector<int32_t>(size_t(nDim) * nDim, -1));
  const tk::Dim3 grid{uint32_t(cdiv(nDim, b.constInt("BLOCK_I"))), uint32_t(cdiv(nDim, b.constInt("BLOCK_J")))};
  const std::vector<tk::Arg> args = {dx, dy, out, int32_t(nSamples), int32_t(nDim)};
  if (!k.differs(args)) return std::nullopt;
  Result r;
  r.stats = k.launch(grid, args);
  r.out = dev.download<int32_t>(out, size_t(nDim) * nDim);
  return r;
}

void expectCounts(const Result &r, const std::vector<float> &x, const std::vector<float> &y, int nSamples, int nDim) {
  const std::vector<int32_t> ref = referenceCounts(x, y, nSamples, nDim);
  for (size_t e = 0; e < ref.size(); ++e)
    ASSERT_EQ(r.out[e], ref[e]) << nSamples << " samples x " << nDim << " dims, out[" << e / nDim << ", " << e % nDim
                                << "]";
}

}  // namespace

// As the general variant and as the one each launch specialises on
// (n_samples or n_dim equal to 1 or multiples of 16: runtime_Variants.h).
TEST(Similarity, ExactCountsAtRaggedSizes) {
  auto dev = tk::Device::open("sim");
  for (tk::test::Variant v : tk::test::kVariants) {
    tk::test::VariantKernel k(*dev, kFile, "similarity", {}, v);
    for (int nDim : {1, 33, 127, 200, 256})
      for (int nSamples : {1, 5, 64}) {
        SCOPED_TRACE(std::string(tk::test::variantName(v)) + " " + std::to_string(nSamples) + "x" +
                     std::to_string(nDim));
        std::vector<float> x, y;
        std::optional<Result> r = runSimilarity(*dev, k, nSamples, nDim, x, y);
        if (!r) continue;
        expectCounts(*r, x, y, nSamples, nDim);
        // The counts spread (all 0 or all n_samples would hide a wrong
        // comparison): 7/16 of the pairs are within 1 on average.
        if (nDim >= 33) {
          const auto [lo, hi] = std::minmax_element(r->out.begin(), r->out.end());
          EXPECT_LT(*lo, *hi);
        }
      }
  }
}

TEST(Similarity, NoSamplesGiveZeroCounts) {
  auto dev = tk::Device::open("sim");
  tk::test::VariantKernel k(*dev, kFile, "similarity", {}, tk::test::Variant::General);
  for (int nDim : {1, 127}) {
    std::vector<float> x, y;
    Result r = *runSimilarity(*dev, k, 0, nDim, x, y);
    for (size_t e = 0; e < r.out.size(); ++e) ASSERT_EQ(r.out[e], 0) << nDim << " dims, element " << e;
    EXPECT_EQ(r.stats.globalLoadBytes, 0u);
    EXPECT_EQ(r.stats.globalStoreBytes, uint64_t(nDim) * nDim * 4);
  }
}

TEST(Similarity, NoRaceUnderTheRaceCheck) {
  auto dev = tk::Device::open("sim:racecheck");
  tk::test::VariantKernel k(*dev, kFile, "similarity", {}, tk::test::Variant::General);
  std::vector<float> x, y;
  Result r = *runSimilarity(*dev, k, 5, 127, x, y);
  expectCounts(r, x, y, 5, 127);
}

// Global traffic as the sim counts it: bytes requested by active lanes (a
// value that several lanes load counts once per lane). With gi x gj programs
// (gi = cdiv(n_dim, BLOCK_I), gj = cdiv(n_dim, BLOCK_J)) each program loads
// its BLOCK_I values of x and BLOCK_J of y per sample, so at the tile level x
// is read gj times and y gi times:
//   tile bytes = 4 n_samples n_dim (gj + gi)                  (a lower bound)
// The default layout of the [BLOCK_I, BLOCK_J] counts is blocked with
// threadsPerWarp [1, 32], warpsPerCTA [W, 1] (W = num_warps): the x slice is
// replicated over the 32 lanes of the warp that owns a row, the y slice over
// the W warps. Masked lanes do not count, so exactly
//   lane bytes = 4 n_samples n_dim (32 gj + W gi)             (the upper bound)
// (both at most 32x the tile bytes). A layout that replicates less may only
// go down from there. The output is written once, n_dim^2 i32.
TEST(Similarity, TrafficOfTheTiling) {
  auto dev = tk::Device::open("sim");
  tk::test::VariantKernel k(*dev, kFile, "similarity", {}, tk::test::Variant::General);
  const tk::Bundle &b = k.general().bundle();
  const uint64_t W = b.numWarps;
  for (auto [nSamples, nDim] : {std::pair{64, 200}, std::pair{5, 33}, std::pair{3, 130}}) {
    std::vector<float> x, y;
    Result r = *runSimilarity(*dev, k, nSamples, nDim, x, y);
    expectCounts(r, x, y, nSamples, nDim);
    const uint64_t gi = cdiv(nDim, b.constInt("BLOCK_I")), gj = cdiv(nDim, b.constInt("BLOCK_J"));
    const uint64_t tileBytes = 4ull * nSamples * nDim * (gj + gi);
    const uint64_t laneBytes = 4ull * nSamples * nDim * (32 * gj + W * gi);
    EXPECT_EQ(r.stats.globalStoreBytes, uint64_t(nDim) * nDim * 4) << nSamples << "x" << nDim;
    EXPECT_LE(r.stats.globalLoadBytes, laneBytes) << nSamples << "x" << nDim;
    EXPECT_GE(r.stats.globalLoadBytes, tileBytes) << nSamples << "x" << nDim;
    // A warp's request touches at most 4 sectors per 32 lanes of f32 (plus
    // one when a row of y is not 128-byte aligned); the broadcasts 1.
    ASSERT_GT(r.stats.loadRequests, 0u);
    EXPECT_LE(double(r.stats.loadSectors) / r.stats.loadRequests, 5.0);
  }
}
