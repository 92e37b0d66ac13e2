// tests/kernels/cache_hints.tk on the sim: loads and stores with cache
// operators, eviction policies and `volatile` compute what plain ones do,
// against a double reference on fresh random inputs with the outputs
// poisoned, at sizes that exercise the masks.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "runtime_TestUtil.h"
#include "tk/half.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR "/tests/kernels/cache_hints.tk";

TEST(CacheHints, HintedAccessesComputeWhatPlainOnesDo) {
  auto dev = tk::Device::open("sim");
  std::mt19937 rng(tk::test::testSeed());
  for (const char *cm : {".cg", ".ca", ".cv", ".lu", ""}) {
    for (const char *evict : {"evict_last", "evict_first", ""}) {
      tk::CompileOptions opts;
      opts.defines = {{"CM", std::string("\"") + cm + "\""}, {"EVICT", std::string("\"") + evict + "\""}};
      tk::Kernel hinted = dev->load(tk::Compiler::compileFile(kFile, "hinted", opts));
      tk::Kernel plain = dev->load(tk::Compiler::compileFile(kFile, "plain"));
      for (int n : {1, 781, 1023, 98433}) {
        if (std::string(cm) != ".cg" && n != 781) continue;  // every hint once; every size with one
        auto x = tk::test::randomFloats(n, -2, 2), y = tk::test::randomFloats(n, -2, 2);
        auto hf = tk::test::randomFloats(n, -1, 1);
        std::vector<uint16_t> h(n);
        std::vector<uint8_t> b(n);
        for (int i = 0; i < n; ++i) {
          h[i] = tk::floatToHalfBits(hf[i]);
          b[i] = uint8_t(rng() & 1);
        }
        tk::Buffer dx = dev->upload(x), dy = dev->upload(y), dh = dev->upload(h), db = dev->upload(b);
        const int padded = n + 300;  // past n stays poisoned
        for (tk::Kernel *k : {&hinted, &plain}) {
          tk::Buffer out = dev->upload(std::vector<float>(padded, NAN));
          (*dev)(*k, {uint32_t((n + 255) / 256)}, dx, dy, dh, db, out, int32_t(n));
          auto got = dev->download<float>(out, padded);
          for (int i = 0; i < n; ++i) {
            double v = double(x[i]) * y[i] + tk::halfBitsToFloat(h[i]);
            double want = b[i] ? v : -v;
            ASSERT_NEAR(got[i], want, 1e-5 * std::max(1.0, std::abs(want)))
                << (k == &hinted ? "hinted" : "plain") << " cm=" << cm << " evict=" << evict << " n=" << n << " i=" << i;
          }
          for (int i = n; i < padded; ++i) ASSERT_TRUE(std::isnan(got[i])) << "wrote past n at " << i;
        }
      }
    }
  }
}

TEST(CacheHints, UnmaskedRowsAndVolatileStores) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "rows"));
  const int rows = 37, d = 64;
  std::vector<double> x(rows * d);
  std::mt19937 rng(tk::test::testSeed());
  std::uniform_real_distribution<double> u(-3, 3);
  for (double &v : x) v = u(rng);
  tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<double>(rows * d, NAN)),
             sums = dev->upload(std::vector<double>(rows, NAN));
  (*dev)(k, {uint32_t(rows)}, dx, out, sums);
  auto got = dev->download<double>(out, rows * d);
  auto gotSums = dev->download<double>(sums, rows);
  for (int r = 0; r < rows; ++r) {
    double s = 0;
    for (int c = 0; c < d; ++c) {
      s += x[r * d + c];
      ASSERT_EQ(got[r * d + c], 2 * x[r * d + c]) << r << "," << c;
    }
    ASSERT_NEAR(gotSums[r], s + 1, 1e-12 * d) << "row " << r;
  }
}

}  // namespace
