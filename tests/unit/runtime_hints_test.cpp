// What a program tells the compiler, on the sim. tests/kernels/cache_hints.tk:
// loads and stores with cache operators, eviction policies and `volatile`
// compute what plain ones do, against a double reference on fresh random
// inputs with the outputs poisoned, at sizes that exercise the masks.
// tests/kernels/axis_hints.tk: accesses widened by multiple_of and
// max_contiguous compute the same, and a false fact is the misaligned
// access a GPU faults on.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "runtime_TestUtil.h"
#include "tk/half.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/cache_hints.tk";
const std::string kAxisFile = TK_SOURCE_DIR + "/tests/kernels/axis_hints.tk";

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

// Offsets wrapped `% n` (more programs than n / BLOCK), asserted contiguous
// in aligned runs of BLOCK: v4 loads (tests/lit/tkc/axis-hints.tk), the
// same values as the scalar loads without the assertion.
TEST(AxisHints, WrappedOffsetsAssertedContiguous) {
  auto dev = tk::Device::open("sim");
  for (bool hint : {true, false}) {
    tk::CompileOptions opts;
    opts.defines = {{"HINT", hint ? "true" : "false"}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kAxisFile, "wrapped", opts));
    for (int n : {512, 1024, 98304}) {
      auto x = tk::test::randomFloats(n, -4, 4);
      const int programs = 2 * n / 512 + 1;  // wraps around once, and then some
      tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(programs * 512, NAN));
      (*dev)(k, {uint32_t(programs)}, dx, out, int32_t(n));
      auto got = dev->download<float>(out, programs * 512);
      for (int j = 0; j < programs * 512; ++j)
        ASSERT_EQ(got[j], 2.0f * x[j % n]) << "hint=" << hint << " n=" << n << " j=" << j;
    }
  }
}

TEST(AxisHints, RowStartsAssertedMultiplesOf16) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kAxisFile, "gather_rows"));
  const int d = 512, rows = 9, len = 16 * 400;
  auto x = tk::test::randomFloats(len, -1, 1);
  std::mt19937 rng(tk::test::testSeed());
  std::vector<int32_t> starts(rows);
  for (int32_t &s : starts) s = 16 * int32_t(rng() % ((len - d) / 16));
  tk::Buffer dx = dev->upload(x), ds = dev->upload(starts), out = dev->upload(std::vector<float>(rows * d, NAN));
  (*dev)(k, {uint32_t(rows)}, dx, ds, out);
  auto got = dev->download<float>(out, rows * d);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < d; ++c) ASSERT_EQ(got[r * d + c], x[starts[r] + c] + 1.0f) << r << "," << c;

  // A start that is not a multiple of 4 elements breaks the 16-byte loads the
  // assertion allowed: a GPU faults with "misaligned address", and so does the sim.
  starts[rows - 1] = 16 * 3 + 2;
  tk::Buffer bad = dev->upload(starts);
  try {
    (*dev)(k, {uint32_t(rows)}, dx, bad, out);
    FAIL() << "a misaligned 16-byte load ran";
  } catch (const tk::Error &e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("misaligned load of 16 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("axis_hints.tk:23:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("must be a multiple of 16 bytes"), std::string::npos) << msg;
  }
}

}  // namespace
