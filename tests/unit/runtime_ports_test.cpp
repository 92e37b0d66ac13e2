// Triton kernels ported as written (issue 24), on the sim against double
// references with fresh random inputs, outputs poisoned, sizes that exercise
// the masks: Python's scoping (tests/kernels/python_scoping.tk) and the
// ported Triton, Liger-Kernel kernels under tests/kernels/ports/.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime_TestUtil.h"
#include "tk/runtime.h"

namespace {

const std::string kScoping = TK_SOURCE_DIR + "/tests/kernels/python_scoping.tk";
const std::string kPorts = TK_SOURCE_DIR + "/tests/kernels/ports/";

void expectNear(float got, double want, double tol, const std::string &what) {
  ASSERT_LE(std::abs(got - want), tol * std::max(1.0, std::abs(want))) << what << ": got " << got << " want " << want;
}

// Tutorial 06's causal mask widened from [1, N] to [M, N]: by a compile-time
// `if`, by a runtime one, or not at all.
TEST(Ports, ScopingWidensAMaskInStraightLineCode) {
  auto dev = tk::Device::open("sim");
  for (bool constCausal : {false, true}) {
    tk::CompileOptions opts;
    opts.defines = {{"CAUSAL", constCausal ? "true" : "false"}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kScoping, "causal_row_sums", opts));
    for (int n : {1, 17, 781}) {
      for (int runtimeCausal : {0, 1}) {
        auto x = tk::test::randomFloats(size_t(n) * n, -1, 1);
        tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(n + 16, NAN));
        (*dev)(k, {uint32_t((n + 15) / 16)}, dx, out, int32_t(n), int32_t(runtimeCausal));
        auto got = dev->download<float>(out, n + 16);
        const bool causal = constCausal || runtimeCausal;
        for (int r = 0; r < n; ++r) {
          double want = 0;
          for (int c = 0; c < n && (!causal || c <= r); ++c) want += x[size_t(r) * n + c];
          expectNear(got[r], want, 1e-5, "row " + std::to_string(r) + " n " + std::to_string(n));
        }
        for (int r = n; r < n + 16; ++r) EXPECT_TRUE(std::isnan(got[r])) << "wrote past the rows at " << r;
      }
    }
  }
}

// Names bound in every branch of a runtime `if`/`else if`/`else` chain and
// of a compile-time `if`, used after them.
TEST(Ports, ScopingNamesBoundInEveryBranch) {
  auto dev = tk::Device::open("sim");
  for (bool scaled : {true, false}) {
    tk::CompileOptions opts;
    opts.defines = {{"SCALED", scaled ? "true" : "false"}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kScoping, "branch_names", opts));
    const double scale = scaled ? 3 : 1;
    for (int n : {1, 781, 1023}) {
      for (int mode : {0, 1, 2}) {
        auto x = tk::test::randomFloats(n, -4, 4);
        tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(n, NAN));
        (*dev)(k, {uint32_t((n + 127) / 128)}, dx, out, int32_t(n), int32_t(mode));
        auto got = dev->download<float>(out, n);
        for (int i = 0; i < n; ++i) {
          const double v = x[i];
          const double want = mode == 0 ? 2 * v * scale + 1 : mode == 1 ? (v - 1) * scale + 2 : std::abs(v) * scale + 0.5;
          expectNear(got[i], want, 1e-6, "mode " + std::to_string(mode) + " x " + std::to_string(v));
        }
      }
    }
  }
}

// Liger-Kernel's opening: an early `return` for programs past the last row,
// then `x_ptr += row * stride`; a var that starts as an i32 and becomes a tile.
TEST(Ports, ScopingEarlyReturnThenPointerBumps) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kScoping, "row_twice"));
  const int rows = 3;
  for (int cols : {1, 781, 1023}) {
    const int stride = cols + 3;
    auto x = tk::test::randomFloats(size_t(rows + 2) * stride, -4, 4);
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(x.size(), NAN));
    (*dev)(k, {uint32_t(rows + 2)}, dx, out, int32_t(stride), int32_t(cols), int32_t(rows));
    auto got = dev->download<float>(out, x.size());
    for (int r = 0; r < rows + 2; ++r)
      for (int c = 0; c < stride; ++c) {
        const size_t i = size_t(r) * stride + c;
        if (r >= rows || c >= cols) {
          EXPECT_TRUE(std::isnan(got[i])) << "wrote outside the rows at " << r << ", " << c;
          continue;
        }
        expectNear(got[i], 2.0 * x[i] + r, 1e-6, "row " + std::to_string(r) + " col " + std::to_string(c));
      }
  }
}

// tests/kernels/tuples.tk: a tuple returned from a runtime branch, tuple
// params, nested tuples, `_`, and a swap through a tuple assignment.
TEST(Ports, TuplesThroughFnsBranchesAndAssignments) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(TK_SOURCE_DIR + "/tests/kernels/tuples.tk", "order_pairs"));
  for (int n : {1, 781}) {
    auto x = tk::test::randomFloats(n, -4, 4), y = tk::test::randomFloats(n, -4, 4);
    tk::Buffer dx = dev->upload(x), dy = dev->upload(y), out = dev->upload(std::vector<float>(4 * n + 4, NAN));
    (*dev)(k, {uint32_t(n + 1)}, dx, dy, out, int32_t(n));
    auto got = dev->download<float>(out, 4 * n + 4);
    for (int i = 0; i < n; ++i) {
      const double lo = std::min(x[i], y[i]), hi = std::max(x[i], y[i]);
      const double want[4] = {lo, hi, hi - lo, lo};
      for (int j = 0; j < 4; ++j) expectNear(got[4 * i + j], want[j], 1e-6, "pair " + std::to_string(i) + "." + std::to_string(j));
    }
    for (int j = 4 * n; j < 4 * n + 4; ++j) EXPECT_TRUE(std::isnan(got[j])) << "the program past n wrote " << j;
  }
}

// Tutorial 09's persistent matmul: `_compute_pid` returns a tuple, 3
// programs loop over the tiles in grouped order. Sizes that leave partial
// tiles on every side, several K tiles, and one tile of one element.
TEST(Ports, Tutorial09PersistentMatmulWithATupleResult) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kPorts + "persistent_matmul.tk", "matmul_kernel_persistent"));
  struct Size {
    int m, n, k;
  };
  for (Size sz : {Size{1, 1, 1}, Size{70, 45, 37}, Size{33, 100, 64}}) {
    auto a = tk::test::randomFloats(size_t(sz.m) * sz.k, -1, 1), b = tk::test::randomFloats(size_t(sz.k) * sz.n, -1, 1);
    tk::Buffer da = dev->upload(a), db = dev->upload(b), dc = dev->upload(std::vector<float>(size_t(sz.m) * sz.n, NAN));
    (*dev)(k, {3u}, da, db, dc, int32_t(sz.m), int32_t(sz.n), int32_t(sz.k), int32_t(sz.k), int32_t(1), int32_t(sz.n),
           int32_t(1), int32_t(sz.n), int32_t(1));
    auto got = dev->download<float>(dc, size_t(sz.m) * sz.n);
    for (int i = 0; i < sz.m; ++i)
      for (int j = 0; j < sz.n; ++j) {
        double want = 0, scale = 0;
        for (int q = 0; q < sz.k; ++q) {
          const double t = double(a[size_t(i) * sz.k + q]) * b[size_t(q) * sz.n + j];
          want += t;
          scale += std::abs(t);
        }
        const float g = got[size_t(i) * sz.n + j];
        ASSERT_LE(std::abs(g - want), 1e-5 * std::max(1.0, scale))
            << "c[" << i << ", " << j << "] = " << g << ", want " << want << ", of " << sz.m << "x" << sz.n << "x" << sz.k;
      }
  }
}

}  // namespace
