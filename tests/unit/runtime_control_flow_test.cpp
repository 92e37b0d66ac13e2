// Runtime `for` loops, `if`/`else` with merged values and early `return`
// (tests/kernels/control_flow.tk) run on the sim against CPU references.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime_TestUtil.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/control_flow.tk";

using tk::test::randomFloats;

}  // namespace

// A carried tile and a carried scalar over ragged chunk counts, also with
// zero iterations (d = 0 leaves the initial values); under the race check
// because every iteration reduces through shared memory.
TEST(ControlFlow, LoopCarriesATileAndAScalar) {
  for (const char *device : {"sim", "sim:racecheck"}) {
    auto dev = tk::Device::open(device);
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "row_sums"));
    for (int d : {0, 1, 781, 1023}) {
      const int rows = 3;
      auto x = randomFloats(size_t(rows) * d + 1, -2, 2);
      tk::Buffer dx = dev->upload(x), sums = dev->upload(std::vector<float>(2 * rows, NAN)),
                 flags = dev->upload(std::vector<float>(rows, NAN));
      (*dev)(k, {rows}, dx, sums, flags, int32_t(d));
      auto s = dev->download<float>(sums, 2 * rows), f = dev->download<float>(flags, rows);
      for (int r = 0; r < rows; ++r) {
        double ref = 0, mag = 0;
        for (int c = 0; c < d; ++c) ref += x[size_t(r) * d + c], mag += std::fabs(x[size_t(r) * d + c]);
        ASSERT_NEAR(s[2 * r], ref, 1e-5 * mag + 1e-30) << device << " d " << d << " row " << r;
        ASSERT_NEAR(s[2 * r + 1], ref, 1e-5 * mag + 1e-30) << device << " d " << d << " row " << r;
        float total = s[2 * r + 1];
        ASSERT_EQ(f[r], total > 0 ? 1.0f : total < -1 ? -1.0f : 0.0f) << "d " << d << " row " << r;
      }
    }
  }
}

TEST(ControlFlow, EarlyReturnLeavesTheRestUntouched) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "early_exit"));
  for (int n : {1, 781, 1023}) {
    const int cap = 1536;  // six programs of 256: the last ones return at once
    tk::Buffer out = dev->upload(std::vector<float>(cap, NAN));
    (*dev)(k, {6}, out, int32_t(n));
    auto o = dev->download<float>(out, cap);
    for (int i = 0; i < cap; ++i) {
      if (i < n) ASSERT_EQ(o[i], 0.5f * i) << i;
      else ASSERT_TRUE(std::isnan(o[i])) << i;
    }
  }
}

TEST(ControlFlow, ReturnInNestedBranchesSkipsTheRestOfEveryList) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "nested_return"));
  struct Case {
    int a, b, want;
  };
  for (Case c : {Case{1, 1, 20}, Case{1, 0, 15}, Case{0, 1, 1}, Case{-3, -3, 1}}) {
    tk::Buffer out = dev->upload(std::vector<int32_t>{-7});
    (*dev)(k, {1}, out, int32_t(c.a), int32_t(c.b));
    EXPECT_EQ(dev->download<int32_t>(out, 1)[0], c.want) << "a " << c.a << " b " << c.b;
  }
}

TEST(ControlFlow, NegativeStepWalksBackwards) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "suffix_sums"));
  for (int n : {1, 97}) {
    auto x = randomFloats(n, -1, 1);
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(n + 1, NAN));
    (*dev)(k, {1}, dx, out, int32_t(n));
    auto o = dev->download<float>(out, n + 1);
    double acc = 0;
    for (int i = n - 1; i >= 0; --i) {
      acc += x[i];
      ASSERT_NEAR(o[i], acc, 1e-5 * n) << i;
    }
    ASSERT_TRUE(std::isnan(o[n]));
  }
}

TEST(ControlFlow, NestedLoopsWithABranchInside) {
  auto dev = tk::Device::open("sim:racecheck");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "count_above"));
  const int rows = 5;
  for (int cols : {1, 130}) {
    auto x = randomFloats(size_t(rows) * cols, -1, 1);
    const float t = 0.25f;
    tk::Buffer dx = dev->upload(x), counts = dev->upload(std::vector<int32_t>(rows, -1));
    (*dev)(k, {1}, dx, counts, int32_t(rows), int32_t(cols), t);
    auto c = dev->download<int32_t>(counts, rows);
    for (int r = 0; r < rows; ++r) {
      int ref = 0;
      for (int j = 0; j < cols; ++j) ref += x[size_t(r) * cols + j] > t;
      ASSERT_EQ(c[r], ref) << "cols " << cols << " row " << r;
    }
  }
}

// i64 bounds; a runtime step of 0 runs no iteration (a device cannot raise).
TEST(ControlFlow, RuntimeStepAndI64Bounds) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "strided_sum"));
  auto x = randomFloats(100, -1, 1);
  tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>{NAN});
  for (int64_t step : {1, 3, 7, 0}) {
    (*dev)(k, {1}, dx, out, int64_t(100), step);
    double ref = 0;
    for (int64_t i = 0; step > 0 && i < 100; i += step) ref += x[i];
    EXPECT_NEAR(dev->download<float>(out, 1)[0], ref, 1e-5 * 100) << "step " << step;
  }
}

TEST(ControlFlow, WhileWithBreakAndContinue) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "sum_until"));
  for (int n : {0, 1, 97, 781}) {
    const int rows = 4;
    auto x = randomFloats(size_t(rows) * n + 1, -1, 1);
    const float limit = 0.1f * n;
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(rows, NAN)),
               steps = dev->upload(std::vector<int32_t>(rows, -7));
    (*dev)(k, {rows}, dx, out, steps, int32_t(n), limit);
    auto o = dev->download<float>(out, rows);
    auto s = dev->download<int32_t>(steps, rows);
    for (int r = 0; r < rows; ++r) {
      double acc = 0;
      float accf = 0;
      int i = 0;
      while (i < n) {
        float v = x[size_t(r) * n + i];
        ++i;
        if (v < 0) continue;
        acc += v;
        accf += v;
        if (accf > limit) break;
      }
      EXPECT_EQ(s[r], i) << "n " << n << " row " << r;
      EXPECT_NEAR(o[r], acc, 1e-5 * (acc + 1)) << "n " << n << " row " << r;
    }
  }
}

TEST(ControlFlow, ForLeftByBreakAndReturn) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "first_chunk_above"));
  const int rows = 6, block = 64;
  for (int cols : {1, 781, 1023}) {
    auto x = randomFloats(size_t(rows) * cols, -1, 1);
    const float t = 2.0f, stop = 0.999f;
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(rows * block, NAN)),
               found = dev->upload(std::vector<int32_t>(rows, -7));
    (*dev)(k, {rows}, dx, out, found, int32_t(cols), t, stop);
    auto o = dev->download<float>(out, rows * block);
    auto f = dev->download<int32_t>(found, rows);
    for (int r = 0; r < rows; ++r) {
      int at = -1;
      bool returned = false;
      for (int c = 0; c < cols && !returned && at < 0; c += block) {
        float mx = -INFINITY, sum = 0;
        for (int j = 0; j < block; ++j) {
          float v = c + j < cols ? x[size_t(r) * cols + c + j] : 0.0f;
          mx = std::max(mx, v);
          sum += v;
        }
        if (mx >= stop) returned = true;
        else if (sum > t) at = c;
      }
      if (returned) {
        EXPECT_EQ(f[r], -7) << "cols " << cols << " row " << r;
        for (int j = 0; j < block; ++j) ASSERT_TRUE(std::isnan(o[r * block + j]));
        continue;
      }
      ASSERT_EQ(f[r], at) << "cols " << cols << " row " << r;
      for (int j = 0; j < block; ++j) {
        float want = at < 0 ? 0.0f : at + j < cols ? x[size_t(r) * cols + at + j] : 0.0f;
        ASSERT_EQ(o[r * block + j], want) << "cols " << cols << " row " << r << " j " << j;
      }
    }
  }
}

TEST(ControlFlow, FnReturnsEarly) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "activations"));
  for (int kind : {0, 1, 2, 5}) {
    for (int n : {1, 781}) {
      auto x = randomFloats(n, -4, 4);
      tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(n, NAN));
      (*dev)(k, {uint32_t((n + 255) / 256)}, dx, out, int32_t(n), int32_t(kind));
      auto o = dev->download<float>(out, n);
      for (int i = 0; i < n; ++i) {
        double v = x[i];
        double want = kind == 0 ? std::max(v, 0.0) : kind == 1 ? v / (1 + std::exp(-v)) : kind == 5 ? 3 * v : v;
        ASSERT_NEAR(o[i], want, 1e-5 * (std::fabs(want) + 1)) << "kind " << kind << " i " << i;
      }
    }
  }
}

TEST(ControlFlow, GuardsInARow) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "guards"));
  const int programs = 200;
  tk::Buffer out = dev->upload(std::vector<int32_t>(programs, 12345));
  (*dev)(k, {programs}, out);
  auto o = dev->download<int32_t>(out, programs);
  for (int pid = 0; pid < programs; ++pid) {
    int r = 0, want = 0;
    bool returned = false;
    for (int i = 0; i < 6 && !returned; ++i) {
      if (pid % (i + 2) == 0) {
        want = r;
        returned = true;
      } else {
        r += i;
      }
    }
    EXPECT_EQ(o[pid], returned ? want : -r) << pid;
  }
}
