// stdlib/normalization.tk on the sim against double-precision references:
// the Puzzler's fused layernorm-tanh-linear-relu, softmax, layernorm,
// rmsnorm, at row counts and widths that exercise both masks; each with the
// row in one tile (BLOCK_D = D rounded up) and walked in chunks of 64.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tk/runtime.h"
#include "runtime_TestUtil.h"

namespace {

const std::string kFile = TK_SOURCE_DIR "/stdlib/normalization.tk";

using tk::test::randomFloats;

int nextPow2(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

struct Shape {
  int rows, D;
};
const Shape kShapes[] = {{1, 256}, {781, 256}, {1023, 100}, {37, 1}, {5, 1000}};

// BLOCK_D = `chunk`, or D rounded up to a power of two when `chunk` is 0.
const int kChunks[] = {0, 64};

tk::Kernel load(tk::Device &dev, const std::string &kernel, int D, int chunk, tk::Bundle *out = nullptr) {
  tk::CompileOptions opts;
  opts.defines = {{"BLOCK_D", std::to_string(chunk ? chunk : nextPow2(D))}};
  tk::Bundle b = tk::Compiler::compileFile(kFile, kernel, opts);
  if (out) *out = b;
  return dev.load(b);
}

uint32_t programs(int rows, const tk::Kernel &k) {
  const int64_t br = k.bundle().constInt("BLOCK_R");
  return uint32_t((rows + br - 1) / br);
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
  auto dev = tk::Device::open("sim");
  for (int chunk : kChunks)
  for (auto [rows, D] : kShapes) {
    tk::Kernel k = load(*dev, "layernorm_tanh_linear_relu", D, chunk);
    auto x = randomFloats(size_t(rows) * D, -3, 3), w = randomFloats(D, -1, 1);
    const float bias = 0.25f, eps = 1e-5f;
    tk::Buffer dx = dev->upload(x), dw = dev->upload(w), out = dev->upload(std::vector<float>(rows, NAN));
    tk::LaunchStats s = (*dev)(k, {programs(rows, k)}, dx, dw, bias, out, int32_t(rows), int32_t(D), eps);
    auto got = dev->download<float>(out, rows);
    double err = 0, norm = 0;
    for (int r = 0; r < rows; ++r) {
      const float *row = &x[size_t(r) * D];
      double mean, rstd;
      meanRstd(row, D, eps, mean, rstd);
      double y = bias;
      for (int c = 0; c < D; ++c) y += std::tanh((row[c] - mean) * rstd) * w[c];
      double ref = std::max(0.0, y);
      ASSERT_FALSE(std::isnan(got[r])) << r;
      err += (got[r] - ref) * (got[r] - ref);
      norm += ref * ref + 1e-30;
    }
    EXPECT_LT(std::sqrt(err / norm), 1e-5) << rows << "x" << D;
    // x once, the output once, w once per program when its tile has more
    // elements than the block has threads. A smaller w tile is loaded where
    // it is used (replicated over the 4 warps, counted once per copy) rather
    // than exchanged through shared memory; x's tile is then small too.
    const uint64_t once = uint64_t(rows) * D * 4 + uint64_t(programs(rows, k)) * D * 4;
    const bool xTileFillsTheBlock = k.bundle().constInt("BLOCK_R") * nextPow2(D) >= 128;
    if (chunk == 0 && xTileFillsTheBlock && nextPow2(D) > 128) {
      EXPECT_EQ(s.globalLoadBytes, once) << rows << "x" << D;
    } else if (chunk == 0 && xTileFillsTheBlock) {
      EXPECT_LE(s.globalLoadBytes, uint64_t(rows) * D * 4 + uint64_t(programs(rows, k)) * D * 4 * 4) << rows << "x" << D;
    }
    EXPECT_EQ(s.globalStoreBytes, uint64_t(rows) * 4);
  }
}

TEST(Normalization, Softmax) {
  auto dev = tk::Device::open("sim");
  for (int chunk : kChunks)
  for (auto [rows, D] : kShapes) {
    tk::Kernel k = load(*dev, "softmax", D, chunk);
    auto x = randomFloats(size_t(rows) * D, -20, 20);
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(size_t(rows) * D, NAN));
    tk::LaunchStats s = (*dev)(k, {programs(rows, k)}, dx, out, int32_t(rows), int32_t(D));
    auto got = dev->download<float>(out, size_t(rows) * D);
    for (int r = 0; r < rows; ++r) {
      const float *row = &x[size_t(r) * D];
      double m = *std::max_element(row, row + D), z = 0;
      for (int c = 0; c < D; ++c) z += std::exp(double(row[c]) - m);
      for (int c = 0; c < D; ++c)
        ASSERT_NEAR(got[size_t(r) * D + c], std::exp(double(row[c]) - m) / z, 1e-6)
            << rows << "x" << D << " chunk " << chunk << " " << r;
    }
    if (chunk == 0 && k.bundle().constInt("BLOCK_R") * nextPow2(D) >= 128) {
      EXPECT_EQ(s.bytesMoved(), uint64_t(rows) * D * 8) << rows << "x" << D;
    }
  }
}

TEST(Normalization, LayernormWithWeightAndBias) {
  auto dev = tk::Device::open("sim");
  for (int chunk : kChunks)
  for (auto [rows, D] : kShapes) {
    tk::Kernel k = load(*dev, "layernorm", D, chunk);
    auto x = randomFloats(size_t(rows) * D, -3, 3), w = randomFloats(D, -2, 2), b = randomFloats(D, -1, 1);
    const float eps = 1e-5f;
    tk::Buffer dx = dev->upload(x), dw = dev->upload(w), db = dev->upload(b);
    tk::Buffer out = dev->upload(std::vector<float>(size_t(rows) * D, NAN));
    (*dev)(k, {programs(rows, k)}, dx, dw, db, out, int32_t(rows), int32_t(D), eps);
    auto got = dev->download<float>(out, size_t(rows) * D);
    for (int r = 0; r < rows; ++r) {
      const float *row = &x[size_t(r) * D];
      double mean, rstd;
      meanRstd(row, D, eps, mean, rstd);
      for (int c = 0; c < D; ++c) {
        double ref = (row[c] - mean) * rstd * w[c] + b[c];
        ASSERT_NEAR(got[size_t(r) * D + c], ref, 1e-5 * (1 + std::fabs(ref))) << rows << "x" << D << " chunk " << chunk << " " << r << "," << c;
      }
    }
  }
}

TEST(Normalization, Rmsnorm) {
  auto dev = tk::Device::open("sim");
  for (int chunk : kChunks)
  for (auto [rows, D] : kShapes) {
    tk::Kernel k = load(*dev, "rmsnorm", D, chunk);
    auto x = randomFloats(size_t(rows) * D, -3, 3), w = randomFloats(D, -2, 2);
    const float eps = 1e-6f;
    tk::Buffer dx = dev->upload(x), dw = dev->upload(w), out = dev->upload(std::vector<float>(size_t(rows) * D, NAN));
    (*dev)(k, {programs(rows, k)}, dx, dw, out, int32_t(rows), int32_t(D), eps);
    auto got = dev->download<float>(out, size_t(rows) * D);
    for (int r = 0; r < rows; ++r) {
      const float *row = &x[size_t(r) * D];
      double ms = 0;
      for (int c = 0; c < D; ++c) ms += double(row[c]) * row[c];
      double rstd = 1.0 / std::sqrt(ms / D + eps);
      for (int c = 0; c < D; ++c) {
        double ref = row[c] * rstd * w[c];
        ASSERT_NEAR(got[size_t(r) * D + c], ref, 1e-5 * (1 + std::fabs(ref))) << rows << "x" << D << " chunk " << chunk << " " << r << "," << c;
      }
    }
  }
}
