// Triton's tutorial 05 layer-norm backward ported to tk (tests/kernels/
// layer_norm_bwd.tk), on the sim against a double-precision reference: dx
// per row, and dw, db accumulated by rows into GROUP_SIZE_M partials under
// spin locks (atomic_cas, a count flag, atomic_xchg), then summed.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "TestSeed.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/layer_norm_bwd.tk";

struct Shape {
  int rows, n, group;
};

TEST(LayerNormBwd, MatchesDoubleReference) {
  auto dev = tk::Device::open("sim");
  std::mt19937 rng(tk::test::testSeed());
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // Rows not a multiple of the group (and fewer rows than groups), columns
  // below, at and not a multiple of the block.
  for (Shape s : {Shape{1, 1, 8}, Shape{37, 200, 8}, Shape{203, 256, 16}, Shape{1023, 98, 32}, Shape{5, 13, 8}}) {
    SCOPED_TRACE("rows=" + std::to_string(s.rows) + " n=" + std::to_string(s.n) + " group=" + std::to_string(s.group));
    const int rows = s.rows, n = s.n, g = s.group;
    std::vector<float> x(size_t(rows) * n), dy(x.size()), w(n), mean(rows), rstd(rows);
    for (float &v : x) v = 2.0f * normal(rng) + 0.5f;
    for (float &v : dy) v = normal(rng);
    for (float &v : w) v = 1.0f + 0.1f * normal(rng);
    // The forward pass's saved statistics, in double, rounded to f32 as
    // Triton's forward stores them; the reference reads the same f32 values.
    for (int r = 0; r < rows; ++r) {
      double m = 0, var = 0;
      for (int c = 0; c < n; ++c) m += x[size_t(r) * n + c];
      m /= n;
      for (int c = 0; c < n; ++c) var += (x[size_t(r) * n + c] - m) * (x[size_t(r) * n + c] - m);
      mean[r] = float(m);
      rstd[r] = float(1.0 / std::sqrt(var / n + 1e-5));
    }

    tk::CompileOptions o;
    o.defines = {{"GROUP_SIZE_M", std::to_string(g)}};
    tk::Kernel fused = dev->load(tk::Compiler::compileFile(kFile, "layer_norm_bwd_dx_fused", o));
    tk::Kernel dwdb = dev->load(tk::Compiler::compileFile(kFile, "layer_norm_bwd_dwdb"));
    const float poison = -1234.5f;
    tk::Buffer ddx = dev->upload(std::vector<float>(x.size(), poison)), ddy = dev->upload(dy),
               dpw = dev->upload(std::vector<float>(size_t(g) * n, poison)),
               dpb = dev->upload(std::vector<float>(size_t(g) * n, poison)), dx_in = dev->upload(x),
               dw_in = dev->upload(w), dmean = dev->upload(mean), drstd = dev->upload(rstd),
               locks = dev->upload(std::vector<int32_t>(2 * g, 0)),
               fdw = dev->upload(std::vector<float>(n, poison)), fdb = dev->upload(std::vector<float>(n, poison));
    (*dev)(fused, {uint32_t(rows)}, ddx, ddy, dpw, dpb, dx_in, dw_in, dmean, drstd, locks, int32_t(n), int32_t(n));
    // Partials never written (groups past the last row) hold the poison:
    // the reduction reads only the min(rows, g) written ones.
    (*dev)(dwdb, {uint32_t((n + 127) / 128)}, dpw, dpb, fdw, fdb, int32_t(std::min(rows, g)), int32_t(n));
    std::vector<float> gdx = dev->download<float>(ddx, x.size()), gdw = dev->download<float>(fdw, n),
                       gdb = dev->download<float>(fdb, n);
    std::vector<int32_t> glocks = dev->download<int32_t>(locks, 2 * g);

    std::vector<double> rdw(n, 0.0), rdb(n, 0.0), absdw(n, 0.0), absdb(n, 0.0);
    for (int r = 0; r < rows; ++r) {
      const float *xr = &x[size_t(r) * n], *dyr = &dy[size_t(r) * n];
      double c1 = 0, c2 = 0, mag = 0;
      std::vector<double> xhat(n), wdy(n);
      for (int c = 0; c < n; ++c) {
        xhat[c] = (double(xr[c]) - mean[r]) * rstd[r];
        wdy[c] = double(w[c]) * dyr[c];
        c1 += xhat[c] * wdy[c];
        c2 += wdy[c];
        mag += std::fabs(xhat[c] * wdy[c]) + std::fabs(wdy[c]);
        rdw[c] += dyr[c] * xhat[c];
        rdb[c] += dyr[c];
        absdw[c] += std::fabs(dyr[c] * xhat[c]);
        absdb[c] += std::fabs(dyr[c]);
      }
      c1 /= n;
      c2 /= n;
      for (int c = 0; c < n; ++c) {
        const double want = (wdy[c] - (xhat[c] * c1 + c2)) * rstd[r];
        ASSERT_NEAR(gdx[size_t(r) * n + c], want, 1e-5 * (mag / n * rstd[r] * 4 + std::fabs(want)) + 1e-6)
            << "dx row " << r << " col " << c;
      }
    }
    for (int c = 0; c < n; ++c) {
      ASSERT_NEAR(gdw[c], rdw[c], 1e-5 * absdw[c] + 1e-6) << "dw col " << c;
      ASSERT_NEAR(gdb[c], rdb[c], 1e-5 * absdb[c] + 1e-6) << "db col " << c;
    }
    // Every lock released; every group that had a row counted.
    for (int i = 0; i < g; ++i) {
      EXPECT_EQ(glocks[i], 0) << "lock " << i;
      EXPECT_EQ(glocks[g + i], i < rows ? 1 : 0) << "count " << i;
    }
  }
}

}  // namespace
