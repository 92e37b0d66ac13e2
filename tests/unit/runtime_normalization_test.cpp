// stdlib/normalization.tk on the sim against double-precision references:
// the Puzzler's fused layernorm-tanh-linear-relu, softmax, layernorm,
// rmsnorm, at row counts and widths that exercise both masks; each with the
// row in one tile (BLOCK_D = D rounded up) and walked in chunks of 64, as
// the general variant and as the one each launch specialises on (rows or
// D equal to 1 or multiples of 16: runtime_Variants.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "runtime_TestUtil.h"
#include "runtime_Variants.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/stdlib/normalization.tk";

using tk::test::randomFloats;

int nextPow2(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

struct Shape {
  int rows, D;
};
const Shape kShapes[] = {{1, 256}, {781, 256}, {1023, 100}, {37, 1}, {5, 1000}, {48, 768}};

// BLOCK_D = `chunk`, or D rounded up to a power of two when `chunk` is 0.
const int kChunks[] = {0, 64};

using tk::test::Variant;

tk::test::VariantKernel load(tk::Device &dev, const std::string &kernel, int D, int chunk, Variant v) {
  tk::CompileOptions opts;
  opts.defines = {{"BLOCK_D", std::to_string(chunk ? chunk : nextPow2(D))}};
  return tk::test::VariantKernel(dev, kFile, kernel, opts, v);
}

uint32_t programs(int rows, const tk::Kernel &k) {
  const int64_t br = k.bundle().constInt("BLOCK_R");
  return uint32_t((rows + br - 1) / br);
}

// Runs `body(dev, k, chunk, rows, D)` on every shape at both chunkings, as both
// variants (skipping a specialised launch that is the general one).
template <class Body>
void forEachCase(const std::string &kernel, const Body &body) {
  auto dev = tk::Device::open("sim");
  for (Variant v : tk::test::kVariants)
    for (int chunk : kChunks)
      for (auto [rows, D] : kShapes) {
        SCOPED_TRACE(kernel + " " + std::to_string(rows) + "x" + std::to_string(D) + " chunk " + std::to_string(chunk) +
                     " " + tk::test::variantName(v));
        tk::test::VariantKernel k = load(*dev, kernel, D, chunk, v);
        body(*dev, k, chunk, rows, D);
      }
}

// Row statistics in double.
void meanRstd(const float *row, int D, double eps, double &mean, double &rstd) {
  mean = 0;
  for (int c = 0; c < D; ++c) mean += row[c];
  mean /= D;
  double var = 0;
  for (int c = 0; c < D; ++c) var += (row[c] - mean) * (row[c] - mean);
  rstd = 1.0 / std::sqrt(var / D + eps);
}

}  // namespace

TEST(Normalization, LayernormTanhLinearRelu) {
  forEachCase("layernorm_tanh_linear_relu",
              [](tk::Device &dev, tk::test::VariantKernel &vk, int chunk, int rows, int D) {
                auto x = randomFloats(size_t(rows) * D, -3, 3), w = randomFloats(D, -1, 1);
                const float bias = 0.25f, eps = 1e-5f;
                tk::Buffer dx = dev.upload(x), dw = dev.upload(w), out = dev.upload(std::vector<float>(rows, NAN));
                const std::vector<tk::Arg> args = {dx, dw, bias, out, int32_t(rows), int32_t(D), eps};
                if (!vk.differs(args)) return;
                const tk::Kernel &k = vk.kernel(args);
                tk::LaunchStats s = vk.launch({programs(rows, k)}, args);
                auto got = dev.download<float>(out, rows);
                // The error is measured against each row's sum of |terms| (bias and
                // tanh * w), the scale f32 accumulation errs at: relative to y itself
                // a row whose terms cancel failed at 1.15e-5 with seed 284966973.
                double err = 0, scale = 0;
                for (int r = 0; r < rows; ++r) {
                  const float *row = &x[size_t(r) * D];
                  double mean, rstd;
                  meanRstd(row, D, eps, mean, rstd);
                  double y = bias, magnitude = std::abs(bias);
                  for (int c = 0; c < D; ++c) {
                    const double term = std::tanh((row[c] - mean) * rstd) * w[c];
                    y += term, magnitude += std::abs(term);
                  }
                  double ref = std::max(0.0, y);
                  ASSERT_FALSE(std::isnan(got[r])) << r;
                  err += (got[r] - ref) * (got[r] - ref);
                  scale += magnitude * magnitude;
                }
                EXPECT_LT(std::sqrt(err / scale), 1e-5);
                // x once, the output once, w once per program when its tile has more
                // elements than the block has threads. A smaller w tile is loaded where
                // it is used (replicated over the 4 warps, counted once per copy) rather
                // than exchanged through shared memory; x's tile is then small too. So
                // is a larger one in the variant that knows D % 16 == 0 when the slice
                // gives each thread wider vectors of it than its own layout (fewer
                // than 4 elements a thread there; AssignLayouts.cpp,
                // loadSmallTilesWhereUsed): one copy per warp.
                const int64_t threads = 32 * int64_t(k.bundle().numWarps);
                const bool wFromSlice = chunk == 0 && k.bundle().assumed.count("D") && nextPow2(D) / threads < 4;
                const uint64_t wCopies = wFromSlice ? uint64_t(k.bundle().numWarps) : 1;
                const uint64_t once = uint64_t(rows) * D * 4 + uint64_t(programs(rows, k)) * D * 4 * wCopies;
                const bool xTileFillsTheBlock = k.bundle().constInt("BLOCK_R") * nextPow2(D) >= 128;
                if (chunk == 0 && xTileFillsTheBlock && nextPow2(D) > 128) {
                  EXPECT_EQ(s.globalLoadBytes, once);
                } else if (chunk == 0 && xTileFillsTheBlock) {
                  EXPECT_LE(s.globalLoadBytes, uint64_t(rows) * D * 4 + uint64_t(programs(rows, k)) * D * 4 * 4);
                }
                EXPECT_EQ(s.globalStoreBytes, uint64_t(rows) * 4);
              });
}

TEST(Normalization, Softmax) {
  forEachCase("softmax", [](tk::Device &dev, tk::test::VariantKernel &vk, int chunk, int rows, int D) {
    auto x = randomFloats(size_t(rows) * D, -20, 20);
    tk::Buffer dx = dev.upload(x), out = dev.upload(std::vector<float>(size_t(rows) * D, NAN));
    const std::vector<tk::Arg> args = {dx, out, int32_t(rows), int32_t(D)};
    if (!vk.differs(args)) return;
    const tk::Kernel &k = vk.kernel(args);
    tk::LaunchStats s = vk.launch({programs(rows, k)}, args);
    auto got = dev.download<float>(out, size_t(rows) * D);
    for (int r = 0; r < rows; ++r) {
      const float *row = &x[size_t(r) * D];
      double m = *std::max_element(row, row + D), z = 0;
      for (int c = 0; c < D; ++c) z += std::exp(double(row[c]) - m);
      for (int c = 0; c < D; ++c)
        ASSERT_NEAR(got[size_t(r) * D + c], std::exp(double(row[c]) - m) / z, 1e-6) << r << "," << c;
    }
    if (chunk == 0 && k.bundle().constInt("BLOCK_R") * nextPow2(D) >= 128) {
      EXPECT_EQ(s.bytesMoved(), uint64_t(rows) * D * 8);
    }
  });
}

TEST(Normalization, LayernormWithWeightAndBias) {
  forEachCase("layernorm", [](tk::Device &dev, tk::test::VariantKernel &vk, int, int rows, int D) {
    auto x = randomFloats(size_t(rows) * D, -3, 3), w = randomFloats(D, -2, 2), b = randomFloats(D, -1, 1);
    const float eps = 1e-5f;
    tk::Buffer dx = dev.upload(x), dw = dev.upload(w), db = dev.upload(b);
    tk::Buffer out = dev.upload(std::vector<float>(size_t(rows) * D, NAN));
    const std::vector<tk::Arg> args = {dx, dw, db, out, int32_t(rows), int32_t(D), eps};
    if (!vk.differs(args)) return;
    vk.launch({programs(rows, vk.kernel(args))}, args);
    auto got = dev.download<float>(out, size_t(rows) * D);
    for (int r = 0; r < rows; ++r) {
      const float *row = &x[size_t(r) * D];
      double mean, rstd;
      meanRstd(row, D, eps, mean, rstd);
      for (int c = 0; c < D; ++c) {
        double ref = (row[c] - mean) * rstd * w[c] + b[c];
        ASSERT_NEAR(got[size_t(r) * D + c], ref, 1e-5 * (1 + std::fabs(ref))) << r << "," << c;
      }
    }
  });
}

TEST(Normalization, Rmsnorm) {
  forEachCase("rmsnorm", [](tk::Device &dev, tk::test::VariantKernel &vk, int, int rows, int D) {
    auto x = randomFloats(size_t(rows) * D, -3, 3), w = randomFloats(D, -2, 2);
    const float eps = 1e-6f;
    tk::Buffer dx = dev.upload(x), dw = dev.upload(w), out = dev.upload(std::vector<float>(size_t(rows) * D, NAN));
    const std::vector<tk::Arg> args = {dx, dw, out, int32_t(rows), int32_t(D), eps};
    if (!vk.differs(args)) return;
    vk.launch({programs(rows, vk.kernel(args))}, args);
    auto got = dev.download<float>(out, size_t(rows) * D);
    for (int r = 0; r < rows; ++r) {
      const float *row = &x[size_t(r) * D];
      double ms = 0;
      for (int c = 0; c < D; ++c) ms += double(row[c]) * row[c];
      double rstd = 1.0 / std::sqrt(ms / D + eps);
      for (int c = 0; c < D; ++c) {
        double ref = row[c] * rstd * w[c];
        ASSERT_NEAR(got[size_t(r) * D + c], ref, 1e-5 * (1 + std::fabs(ref))) << r << "," << c;
      }
    }
  });
}
