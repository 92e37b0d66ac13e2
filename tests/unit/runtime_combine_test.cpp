// reduce and associative_scan with combine functions (tests/kernels/combine.tk)
// on the sim: Mamba-style linear recurrences against a sequential double
// reference, forward and reverse, over layouts that put registers, lanes,
// warps and repetitions along the axis; non-commuting 2x2 matrix products
// (exact in wrapping i32), which only the left-to-right order gets right;
// a first-index argmax through a combine; every axis of a rank-3 tile; and
// the PTX through ptxas.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "runtime_TestUtil.h"
#include "tk/runtime.h"
#include "TestSeed.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/combine.tk";

using tk::test::cdiv;
using tk::test::randomFloats;
using tk::test::randomInts;

tk::Bundle compile(const std::string &kernel, int numWarps, std::map<std::string, std::string> defines = {}) {
  return tk::test::compileForSim(kFile, kernel, numWarps, std::move(defines));
}

// 2x2 matrices as 4 i32, multiplied in wrapping arithmetic.
using Mat = std::array<uint32_t, 4>;
Mat mul(const Mat &l, const Mat &r) {
  return {l[0] * r[0] + l[1] * r[2], l[0] * r[1] + l[1] * r[3], l[2] * r[0] + l[3] * r[2], l[2] * r[1] + l[3] * r[3]};
}

}  // namespace

TEST(Combine, LinearRecurrenceRowsForwardAndReverse) {
  auto dev = tk::Device::open("sim");
  struct Shape {
    int br, bc, warps;
  };
  // 1024 columns: registers, lanes and warps along the axis; 16: a lane
  // group; 64 with 8 warps: warps and repetitions.
  for (Shape sh : {Shape{2, 1024, 4}, Shape{32, 16, 4}, Shape{4, 64, 8}, Shape{1, 1024, 1}})
    for (bool rev : {false, true}) {
      tk::Kernel k = dev->load(compile("recurrence_rows", sh.warps,
                                       {{"BR", std::to_string(sh.br)}, {"BC", std::to_string(sh.bc)},
                                        {"REV", rev ? "true" : "false"}}));
      for (int cols : {1, 781, 1000}) {
        if (cols > sh.bc) continue;
        const int rows = 7;
        const std::string what = "BR " + std::to_string(sh.br) + " BC " + std::to_string(sh.bc) + " warps " +
                                 std::to_string(sh.warps) + (rev ? " reverse" : "") + " cols " + std::to_string(cols);
        auto a = randomFloats(rows * cols, 0.5f, 1.0f), b = randomFloats(rows * cols, -1, 1);
        tk::Buffer da = dev->upload(a), db = dev->upload(b), dh = dev->upload(std::vector<float>(rows * cols + 32, NAN));
        (*dev)(k, {cdiv(rows, sh.br)}, da, db, dh, int32_t(rows), int32_t(cols));
        auto h = dev->download<float>(dh, rows * cols + 32);
        for (int r = 0; r < rows; ++r) {
          double acc = 0;
          for (int j = 0; j < cols; ++j) {
            const int c = rev ? cols - 1 - j : j;
            acc = double(a[r * cols + c]) * acc + double(b[r * cols + c]);
            ASSERT_NEAR(h[r * cols + c], acc, 1e-4 * (1 + std::fabs(acc))) << what << " row " << r << " col " << c;
          }
        }
        for (int i = rows * cols; i < rows * cols + 32; ++i) ASSERT_TRUE(std::isnan(h[i])) << "wrote past the end: " << what;
      }
    }
}

// Matrix products do not commute: any reordering of the scan or the
// reduction gives another product.
TEST(Combine, MatrixProductsKeepLeftToRightOrder) {
  auto dev = tk::Device::open("sim");
  for (int warps : {1, 8})
    for (int n : {1, 781, 1023}) {
      const std::string what = "warps " + std::to_string(warps) + " n " + std::to_string(n);
      auto m = randomInts(4 * n, -3, 3);
      tk::Buffer dm = dev->upload(m);
      for (bool rev : {false, true}) {
        tk::Kernel k = dev->load(compile("matrix_scan", warps, {{"REV", rev ? "true" : "false"}}));
        tk::Buffer out = dev->upload(std::vector<int32_t>(4 * n, INT32_MIN));
        (*dev)(k, {1}, dm, out, int32_t(n));
        auto got = dev->download<int32_t>(out, 4 * n);
        Mat acc{1, 0, 0, 1};
        for (int j = 0; j < n; ++j) {
          const int i = rev ? n - 1 - j : j;
          acc = mul(acc, Mat{uint32_t(m[4 * i]), uint32_t(m[4 * i + 1]), uint32_t(m[4 * i + 2]), uint32_t(m[4 * i + 3])});
          for (int e = 0; e < 4; ++e) ASSERT_EQ(uint32_t(got[4 * i + e]), acc[e]) << what << (rev ? " reverse" : "") << " i " << i;
        }
      }
      tk::Kernel red = dev->load(compile("matrix_reduce", warps));
      tk::Buffer out = dev->upload(std::vector<int32_t>(4, INT32_MIN));
      (*dev)(red, {1}, dm, out, int32_t(n));
      auto got = dev->download<int32_t>(out, 4);
      Mat acc{1, 0, 0, 1};
      for (int i = 0; i < n; ++i)
        acc = mul(acc, Mat{uint32_t(m[4 * i]), uint32_t(m[4 * i + 1]), uint32_t(m[4 * i + 2]), uint32_t(m[4 * i + 3])});
      for (int e = 0; e < 4; ++e) ASSERT_EQ(uint32_t(got[e]), acc[e]) << "reduce " << what;
    }
}

TEST(Combine, ArgmaxTakesTheFirstOfEqualValues) {
  auto dev = tk::Device::open("sim");
  for (int warps : {1, 4})
    for (int cols : {1, 781, 1023}) {
      const int rows = 5;
      // Few distinct values: every row has ties for its maximum.
      auto xi = randomInts(rows * cols, 0, 4);
      std::vector<float> x(xi.begin(), xi.end());
      tk::Kernel k = dev->load(compile("row_argmax", warps));
      tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<int32_t>(rows, -7)),
                 best = dev->upload(std::vector<float>(rows, NAN));
      (*dev)(k, {cdiv(rows, 2)}, dx, out, best, int32_t(rows), int32_t(cols));
      auto got = dev->download<int32_t>(out, rows);
      auto gotBest = dev->download<float>(best, rows);
      for (int r = 0; r < rows; ++r) {
        int want = 0;
        for (int c = 1; c < cols; ++c)
          if (x[r * cols + c] > x[r * cols + want]) want = c;
        ASSERT_EQ(got[r], want) << "warps " << warps << " cols " << cols << " row " << r;
        ASSERT_EQ(gotBest[r], x[r * cols + want]);
      }
    }
}

TEST(Combine, Rank3AlongEveryAxis) {
  auto dev = tk::Device::open("sim");
  const int dims[3] = {4, 8, 16};
  auto at = [](int i, int j, int l) { return i * 128 + j * 16 + l; };
  auto a = randomInts(512, -2, 2), b = randomInts(512, -50, 50);
  for (int axis = 0; axis < 3; ++axis)
    for (bool rev : {false, true}) {
      const std::string what = "axis " + std::to_string(axis) + (rev ? " reverse" : "");
      tk::Kernel k = dev->load(compile("rank3", 4, {{"AXIS", std::to_string(axis)}, {"REV", rev ? "true" : "false"}}));
      tk::Buffer da = dev->upload(a), db = dev->upload(b), ds = dev->upload(std::vector<int32_t>(512, INT32_MIN)),
                 dr = dev->upload(std::vector<int32_t>(512, INT32_MIN));
      (*dev)(k, {1}, da, db, ds, dr);
      auto scanned = dev->download<int32_t>(ds, 512), reduced = dev->download<int32_t>(dr, 512);
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 8; ++j)
          for (int l = 0; l < 16; ++l) {
            int idx[3] = {i, j, l};
            if (idx[axis] != 0) continue;  // one line along the axis from each start
            uint32_t acc = 0;
            for (int s = 0; s < dims[axis]; ++s) {
              idx[axis] = rev ? dims[axis] - 1 - s : s;
              const int p = at(idx[0], idx[1], idx[2]);
              acc = uint32_t(a[p]) * acc + uint32_t(b[p]);
              ASSERT_EQ(uint32_t(scanned[p]), acc) << what << " at " << p;
            }
            uint32_t total = 0;  // the reduction runs forward whatever REV
            for (int s = 0; s < dims[axis]; ++s) {
              idx[axis] = s;
              total = uint32_t(a[at(idx[0], idx[1], idx[2])]) * total + uint32_t(b[at(idx[0], idx[1], idx[2])]);
            }
            for (int s = 0; s < dims[axis]; ++s) {
              idx[axis] = s;
              ASSERT_EQ(uint32_t(reduced[at(idx[0], idx[1], idx[2])]), total) << what << " reduce";
            }
          }
    }
}

TEST(Combine, PtxAssemblesWithPtxas) {
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "no ptxas: the CUDA toolkit was not found (CUDA_HOME, /usr/local/cuda)";
  for (const char *kernel : {"recurrence_rows", "matrix_scan", "matrix_reduce", "row_argmax"}) {
    tk::CompileOptions opts;
    opts.archs = {"sm_80", "sm_90"};
    tk::Bundle b = tk::Compiler::compileFile(kFile, kernel, opts);
    for (const std::string &arch : opts.archs) {
      const std::string &ptx = b.ptx.at(arch);
      EXPECT_NE(ptx.find("shfl.sync.bfly"), std::string::npos) << kernel << " " << arch;
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(ptx, arch, toolkit);
      ASSERT_TRUE(info.ran) << info.log;
      EXPECT_FALSE(info.cubin.empty()) << kernel << " " << arch;
      EXPECT_EQ(info.spillStoreBytes, 0) << kernel << " " << arch << "\n" << info.log;
    }
  }
}

TEST(Combine, CumsumReverseSumsToTheEnd) {
  auto dev = tk::Device::open("sim");
  for (int warps : {1, 4, 8}) {
    tk::Kernel k = dev->load(compile("suffix_sums", warps));
    for (int n : {1, 781, 1023}) {
      auto x = randomInts(n, -1000, 1000);
      tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<int32_t>(n, INT32_MIN));
      (*dev)(k, {1}, dx, out, int32_t(n));
      auto got = dev->download<int32_t>(out, n);
      int64_t sum = 0;
      for (int i = n - 1; i >= 0; --i) {
        sum += x[i];
        ASSERT_EQ(got[i], sum) << "warps " << warps << " n " << n << " i " << i;
      }
    }
  }
}
