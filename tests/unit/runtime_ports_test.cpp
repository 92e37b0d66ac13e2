// Triton kernels ported as written (issue 24), on the sim against double
// references with fresh random inputs, outputs poisoned, sizes that exercise
// the masks: Python's scoping (tests/kernels/python_scoping.tk) and the
// ported Triton, Liger-Kernel kernels under tests/kernels/ports/.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime_TestUtil.h"
#include "tk/jit.h"
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

// tests/kernels/tuples.tk's carried_tuples: tuple vars (one nested) carried
// by a `for` and a `while` that breaks, swapped under a runtime `if`, and a
// tuple that both branches of an `if` bind.
// Integer-valued inputs keep every f32 sum exact, so each branch the kernel
// takes is the reference's.
TEST(Ports, TupleVarsCarriedByLoopsAndMergedByBranches) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(TK_SOURCE_DIR + "/tests/kernels/tuples.tk", "carried_tuples"));
  std::mt19937 rng(tk::test::testSeed());
  std::uniform_int_distribution<int> value(-8, 8);
  const int B = 64;
  for (int n : {1, 781, 1023}) {
    std::vector<float> x(n);
    for (float &v : x) v = float(value(rng));
    const float limit = 12.0f;
    tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>(8, NAN));
    (*dev)(k, {1}, dx, out, int32_t(n), limit);
    auto got = dev->download<float>(out, 8);
    double total = 0, most = -INFINITY, running = 0;
    int chunks = 0, swaps = 0, at = -1;
    double foundSum = 0;
    bool stopped = false;
    for (int c0 = 0; c0 < n; c0 += B, ++chunks) {
      double chunk = 0;
      for (int i = c0; i < std::min(n, c0 + B); ++i) {
        chunk += x[i];
        most = std::max(most, double(x[i]));
      }
      total += chunk;
      swaps += chunk > 0;
      if (!stopped) {
        running += chunk;
        at = chunks;
        foundSum = running;
        stopped = running > limit;
      }
    }
    const std::string at_n = " (n = " + std::to_string(n) + ")";
    EXPECT_EQ(got[0], total) << "sum" << at_n;
    EXPECT_EQ(got[1], most) << "max" << at_n;
    EXPECT_EQ(got[2], chunks) << "chunks" << at_n;
    EXPECT_EQ(got[3], swaps % 2 ? 1.0f : 0.0f) << "the pair swapped " << swaps << " times" << at_n;
    EXPECT_EQ(got[4], at) << "the chunk the while loop stopped at" << at_n;
    EXPECT_EQ(got[5], foundSum) << "its running sum" << at_n;
    EXPECT_EQ(got[6], at > 0 ? foundSum + 1 : 2.0) << "the tuple the if's branches bound" << at_n;
    EXPECT_TRUE(std::isnan(got[7])) << "the kernel wrote past its seven outputs";
  }
}

// Liger's cross entropy with its debug_barrier: the loss of each row and
// the gradient in place of the logits, rows with the ignore index zeroed,
// with and without label smoothing, "mean" and "sum" reductions.
TEST(Ports, LigerCrossEntropyLossAndInPlaceGradient) {
  auto dev = tk::Device::open("sim");
  std::mt19937 rng(tk::test::testSeed());
  for (const char *reduction : {"mean", "sum"}) {
    tk::CompileOptions opts;
    opts.defines = {{"REDUCTION", reduction}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kPorts + "liger.tk", "liger_cross_entropy_kernel", opts));
    const bool mean = std::string(reduction) == "mean";
    for (int cols : {1, 781, 1023}) {
      for (float smoothing : {0.0f, 0.1f}) {
        const int rows = 5, ignore = -100, stride = cols + 3;
        auto x = tk::test::randomFloats(size_t(rows) * stride, -3, 3);
        std::vector<int32_t> y(rows);
        for (int r = 0; r < rows; ++r) y[r] = r == 2 ? ignore : int32_t(rng() % cols);
        const int nonIgnore = rows - 1;
        tk::Buffer dx = dev->upload(x), dy = dev->upload(y), loss = dev->upload(std::vector<float>(rows, NAN));
        (*dev)(k, {uint32_t(rows)}, dx, int32_t(stride), dy, int32_t(1), loss, int32_t(1), int32_t(cols),
               int32_t(nonIgnore), int32_t(ignore), smoothing);
        auto grad = dev->download<float>(dx, x.size());
        auto got = dev->download<float>(loss, rows);
        const double scale = mean ? nonIgnore : 1;
        for (int r = 0; r < rows; ++r) {
          const float *row = &x[size_t(r) * stride];
          const std::string what = std::string(reduction) + " cols " + std::to_string(cols) + " smoothing " +
                                   std::to_string(smoothing) + " row " + std::to_string(r);
          if (y[r] == ignore) {
            for (int c = 0; c < cols; ++c) ASSERT_EQ(grad[size_t(r) * stride + c], 0.0f) << what;
            EXPECT_TRUE(std::isnan(got[r])) << what << ": an ignored row writes no loss";
            continue;
          }
          double m = -INFINITY, sumExp = 0, sumX = 0;
          for (int c = 0; c < cols; ++c) m = std::max(m, double(row[c]));
          for (int c = 0; c < cols; ++c) sumExp += std::exp(row[c] - m), sumX += row[c];
          const double lse = m + std::log(sumExp), eps = double(smoothing) / cols;
          double want = (lse - row[y[r]]) * (1 - smoothing) + (smoothing > 0 ? -eps * sumX + smoothing * lse : 0);
          expectNear(got[r], want / scale, 1e-5, what + " loss");
          for (int c = 0; c < cols; ++c) {
            double g = std::exp(row[c] - m) / sumExp - eps - (c == y[r] ? 1 - smoothing : 0);
            expectNear(grad[size_t(r) * stride + c], g / scale, 1e-5, what + " grad " + std::to_string(c));
          }
          for (int c = cols; c < stride; ++c) ASSERT_EQ(grad[size_t(r) * stride + c], row[c]) << what << " padding";
        }
      }
    }
  }
}

// Liger's GEGLU (tanh approximation), forward and the backward that writes
// da and db over a and b, rows moved to with `a += program_id * stride`.
TEST(Ports, LigerGegluForwardAndBackward) {
  auto dev = tk::Device::open("sim");
  for (int cols : {1, 781, 1024}) {
    tk::CompileOptions opts;
    opts.defines = {{"n_cols", std::to_string(cols)}};
    tk::Kernel fwd = dev->load(tk::Compiler::compileFile(kPorts + "liger.tk", "geglu_tanh_forward_kernel", opts));
    tk::Kernel bwd = dev->load(tk::Compiler::compileFile(kPorts + "liger.tk", "geglu_tanh_backward_kernel", opts));
    const int rows = 3, stride = cols + 5;
    auto a = tk::test::randomFloats(size_t(rows) * stride, -3, 3), b = tk::test::randomFloats(a.size(), -2, 2),
         dc = tk::test::randomFloats(a.size(), -1, 1);
    tk::Buffer da = dev->upload(a), db = dev->upload(b), dcb = dev->upload(dc),
               c = dev->upload(std::vector<float>(a.size(), NAN));
    (*dev)(fwd, {uint32_t(rows)}, da, db, c, int32_t(stride));
    auto gotC = dev->download<float>(c, a.size());
    (*dev)(bwd, {uint32_t(rows)}, dcb, da, db, int32_t(stride));
    auto gotDa = dev->download<float>(da, a.size()), gotDb = dev->download<float>(db, a.size());
    const double k0 = std::sqrt(2 / M_PI);
    for (int r = 0; r < rows; ++r)
      for (int i = 0; i < stride; ++i) {
        const size_t at = size_t(r) * stride + i;
        if (i >= cols) {
          ASSERT_TRUE(std::isnan(gotC[at]) && gotDa[at] == a[at] && gotDb[at] == b[at]) << "past the row at " << at;
          continue;
        }
        const double x = a[at], t = std::tanh(k0 * (x + 0.044715 * x * x * x)), g = 0.5 * x * (1 + t);
        const double dg = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k0 * (1 + 3 * 0.044715 * x * x);
        const std::string what = "cols " + std::to_string(cols) + " at " + std::to_string(at);
        expectNear(gotC[at], g * b[at], 1e-5, what + " c");
        expectNear(gotDa[at], dc[at] * b[at] * dg, 1e-5, what + " da");
        expectNear(gotDb[at], dc[at] * g, 1e-5, what + " db");
      }
  }
}

// Liger's KL divergence: `loss` bound in both branches of a compile-time
// `if` (log_target), per element (reduction 0) or summed per row.
TEST(Ports, LigerKlDivForward) {
  auto dev = tk::Device::open("sim");
  for (bool logTarget : {false, true})
    for (int reduction : {0, 1}) {
      tk::CompileOptions opts;
      opts.defines = {{"log_target", logTarget ? "true" : "false"}, {"reduction", std::to_string(reduction)}};
      tk::Kernel k = dev->load(tk::Compiler::compileFile(kPorts + "liger.tk", "kldiv_kernel_forward", opts));
      for (int cols : {1, 781, 1023}) {
        const int rows = 3;
        auto y = tk::test::randomFloats(size_t(rows) * cols, -5, 0);
        auto gt = logTarget ? tk::test::randomFloats(y.size(), -5, 0) : tk::test::randomFloats(y.size(), 0, 1);
        const size_t outs = reduction == 0 ? y.size() : size_t(rows);
        tk::Buffer dy = dev->upload(y), dgt = dev->upload(gt), loss = dev->upload(std::vector<float>(outs, NAN));
        const float eps = 1e-10f;
        (*dev)(k, {uint32_t(rows)}, dy, int32_t(cols), dgt, int32_t(cols), loss,
               int32_t(reduction == 0 ? cols : 1), int32_t(cols), eps);
        auto got = dev->download<float>(loss, outs);
        for (int r = 0; r < rows; ++r) {
          double total = 0, scale = 0;
          for (int c = 0; c < cols; ++c) {
            const size_t at = size_t(r) * cols + c;
            const double t = gt[at],
                         l = logTarget ? std::exp(t) * (t - y[at]) : t * (std::log(std::max(t, double(eps))) - y[at]);
            total += l;
            scale += std::abs(l);
            if (reduction == 0) expectNear(got[at], l, 1e-5, "element " + std::to_string(at));
          }
          if (reduction != 0) ASSERT_LE(std::abs(got[r] - total), 1e-5 * std::max(1.0, scale)) << "row " << r;
        }
      }
    }
}

// Liger's group norm forward: x_ptr and y_ptr step a channel at a time
// inside a runtime loop; mean and rstd per (batch, group).
TEST(Ports, LigerGroupNormForward) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kPorts + "liger.tk", "group_norm_forward"));
  for (int perChannel : {1, 781}) {
    const int batch = 2, groups = 3, channelsPerGroup = 2, channels = groups * channelsPerGroup;
    const int hidden = perChannel * channelsPerGroup;  // per group
    auto x = tk::test::randomFloats(size_t(batch) * channels * perChannel, -2, 2);
    auto w = tk::test::randomFloats(channels, -1, 1), b = tk::test::randomFloats(channels, -1, 1);
    tk::Buffer dx = dev->upload(x), dw = dev->upload(w), db = dev->upload(b),
               dy = dev->upload(std::vector<float>(x.size(), NAN)),
               mean = dev->upload(std::vector<float>(batch * groups, NAN)),
               rstd = dev->upload(std::vector<float>(batch * groups, NAN));
    const int rowStride = channels * perChannel;
    (*dev)(k, {uint32_t(batch), uint32_t(groups)}, dy, int32_t(rowStride), int32_t(hidden), dx, int32_t(rowStride),
           int32_t(hidden), mean, int32_t(groups), int32_t(1), rstd, int32_t(groups), int32_t(1), dw, db,
           int32_t(hidden), int32_t(channelsPerGroup), 1e-5f);
    auto gotY = dev->download<float>(dy, x.size());
    auto gotMean = dev->download<float>(mean, batch * groups), gotRstd = dev->download<float>(rstd, batch * groups);
    for (int n = 0; n < batch; ++n)
      for (int g = 0; g < groups; ++g) {
        const float *v = &x[size_t(n) * rowStride + size_t(g) * hidden];
        double s = 0, sq = 0;
        for (int i = 0; i < hidden; ++i) s += v[i], sq += double(v[i]) * v[i];
        const double m = s / hidden, r = 1 / std::sqrt(sq / hidden - m * m + 1e-5);
        // Liger's one-pass variance, E[x^2] - E[x]^2 in f32, loses a few ulps
        // of E[x^2] to cancellation: relative to var + eps that is large for
        // a group of two close values (perChannel 1).
        const double cancel = 16 * std::ldexp(1.0, -24) * (sq / hidden) / (sq / hidden - m * m + 1e-5);
        const double tol = 1e-4 + cancel;
        expectNear(gotMean[n * groups + g], m, 1e-5, "mean");
        expectNear(gotRstd[n * groups + g], r, tol, "rstd");
        for (int i = 0; i < hidden; ++i) {
          const int c = g * channelsPerGroup + i / perChannel;
          expectNear(gotY[size_t(n) * rowStride + size_t(g) * hidden + i], (v[i] - m) * r * w[c] + b[c], tol,
                     "y at batch " + std::to_string(n) + " group " + std::to_string(g) + " " + std::to_string(i));
        }
      }
  }
}

// Tutorial 06's attention forward as Triton writes it (STAGE 3 causal, 1
// not), f16 q, k, v in [Z, H, N_CTX, HEAD_DIM]: the output against a
// double softmax(scale * q k^T) v, and M (the row's log2-sum-exp2) too.
TEST(Ports, Tutorial06AttentionForwardCausalAndNot) {
  auto dev = tk::Device::open("sim");
  const int Z = 1, H = 2, D = 16;
  for (int stage : {1, 3}) {
    tk::CompileOptions opts;
    opts.defines = {{"STAGE", std::to_string(stage)}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kPorts + "attention_fwd.tk", "attn_fwd", opts));
    for (int n : {16, 48}) {
      const size_t count = size_t(Z) * H * n * D;
      auto q = tk::test::exactHalfInputs(count), kk = tk::test::exactHalfInputs(count),
           v = tk::test::exactHalfInputs(count);
      tk::Buffer dq = dev->upload(tk::test::f16Values(q)), dk = dev->upload(tk::test::f16Values(kk)),
                 dv = dev->upload(tk::test::f16Values(v)),
                 out = dev->upload(std::vector<uint16_t>(count, 0x7e00)),  // f16 NaN
          m = dev->upload(std::vector<float>(size_t(Z) * H * n, NAN));
      const float scale = 0.5f;
      const int32_t sz = H * n * D, sh = n * D, sm = D, sd = 1;
      (*dev)(k, {uint32_t(n / 16), uint32_t(Z * H)}, dq, dk, dv, scale, m, out, sz, sh, sm, sd, sz, sh, sm, sd, sz, sh,
             sm, sd, sz, sh, sm, sd, int32_t(Z), int32_t(H), int32_t(n));
      auto got = dev->download<uint16_t>(out, count);
      auto gotM = dev->download<float>(m, size_t(Z) * H * n);
      for (int h = 0; h < Z * H; ++h)
        for (int i = 0; i < n; ++i) {
          const size_t row = (size_t(h) * n + i) * D;
          std::vector<double> s(n);
          double mx = -INFINITY;
          const int last = stage == 3 ? i : n - 1;
          for (int j = 0; j <= last; ++j) {
            double dot = 0;
            for (int d = 0; d < D; ++d) dot += double(q[row + d]) * kk[(size_t(h) * n + j) * D + d];
            s[j] = scale * dot;
            mx = std::max(mx, s[j]);
          }
          double denom = 0;
          for (int j = 0; j <= last; ++j) denom += std::exp(s[j] - mx);
          const std::string what = "stage " + std::to_string(stage) + " n " + std::to_string(n) + " head " +
                                   std::to_string(h) + " row " + std::to_string(i);
          expectNear(gotM[size_t(h) * n + i], (mx + std::log(denom)) / std::log(2.0), 1e-4, what + " M");
          for (int d = 0; d < D; ++d) {
            double want = 0;
            for (int j = 0; j <= last; ++j) want += std::exp(s[j] - mx) / denom * v[(size_t(h) * n + j) * D + d];
            // f16 output and P rounded to f16 before P.V, as the tutorial does.
            ASSERT_LE(std::abs(tk::halfBitsToFloat(got[row + d]) - want), 4e-3 * std::max(1.0, std::abs(want)))
                << what << " d " << d;
          }
        }
    }
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

// Tutorial 09's TMA persistent matmul as written: host descriptors (B
// passed as [N, K]), 3 programs walking the tiles, `trans(b)` in the dot,
// the epilogue subtiled into two stores through C's descriptor or not.
// Rows pitched to the descriptors' 16-byte rule with NaN in the pitch;
// exact inputs, so the f16 result equals the double reference rounded once.
TEST(Ports, Tutorial09TmaPersistentMatmulWithHostDescriptors) {
  auto dev = tk::Device::open("sim");
  auto up8 = [](int64_t x) { return (x + 7) / 8 * 8; };
  for (const char *arch : {"sm_80", "sm_90a"})
    for (const char *subtile : {"true", "false"}) {
      tk::CompileOptions opts;
      opts.archs = {arch};
      opts.emitPtx = false;
      opts.defines = {{"EPILOGUE_SUBTILE", subtile}};
      tk::Kernel k = dev->load(
          tk::Compiler::compileFile(kPorts + "matmul_tma_persistent.tk", "matmul_kernel_tma_persistent", opts));
      const int64_t cbn = std::string(subtile) == "true" ? 32 : 64;
      for (auto [m, n, kk] : {std::tuple{1, 1, 1}, std::tuple{70, 45, 37}, std::tuple{130, 100, 64}}) {
        const std::string what = std::string(arch) + " subtile=" + subtile + " " + std::to_string(m) + "x" +
                                 std::to_string(n) + "x" + std::to_string(kk);
        const int64_t pk = up8(kk), pn = up8(n);
        auto a = tk::test::exactHalfInputs(size_t(m) * kk), b = tk::test::exactHalfInputs(size_t(n) * kk);
        std::vector<float> ap(size_t(m * pk), NAN), bp(size_t(n * pk), NAN);
        for (int i = 0; i < m; ++i)
          for (int q = 0; q < kk; ++q) ap[size_t(i * pk + q)] = a[size_t(i) * kk + q];
        for (int j = 0; j < n; ++j)
          for (int q = 0; q < kk; ++q) bp[size_t(j * pk + q)] = b[size_t(j) * kk + q];
        tk::Buffer da = dev->upload(tk::test::f16Values(ap)), db = dev->upload(tk::test::f16Values(bp)),
                   dc = dev->upload(std::vector<uint16_t>(size_t(m * pn), 0x7e00));
        (*dev)(k, {3u}, tk::TensorDescriptor{da, {m, kk}, {pk, 1}, {64, 32}},
               tk::TensorDescriptor{db, {n, kk}, {pk, 1}, {64, 32}}, tk::TensorDescriptor{dc, {m, n}, {pn, 1}, {64, cbn}},
               int32_t(m), int32_t(n), int32_t(kk));
        auto c = dev->download<uint16_t>(dc, size_t(m * pn));
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            double want = 0;
            for (int q = 0; q < kk; ++q) want += double(a[size_t(i) * kk + q]) * b[size_t(j) * kk + q];
            ASSERT_EQ(c[size_t(i * pn + j)], tk::floatToHalfBits(float(want)))
                << what << " at " << i << "," << j << ": " << tk::halfBitsToFloat(c[size_t(i * pn + j)]) << " want " << want;
          }
      }
    }
}

// Tutorial 03's matmul as written: the K loop advances carried pointer
// tiles, which pipeline-dot-operands reads as functions of the induction
// variable, so with a launch's facts (strides and sizes multiples of 16,
// unit inner strides) the operands go through cp.async rings: tensor cores
// on both archs, race-free under the race check, and exact against double
// in f32 accumulation of f16 products, at sizes whose rows wrap (`% M`) and
// whose K is ragged.
TEST(Ports, Tutorial03MatmulAsWritten) {
  auto dev = tk::Device::open("sim:racecheck");
  const std::string file = kPorts + "matmul_tutorial03.tk";
  struct Size {
    int m, n, k;
  };
  for (const char *arch : {"sm_80", "sm_90a"})
    for (Size sz : {Size{1, 1, 1}, Size{100, 70, 50}, Size{128, 64, 96}, Size{64, 128, 48}}) {
      SCOPED_TRACE(std::string(arch) + " " + std::to_string(sz.m) + "x" + std::to_string(sz.n) + "x" +
                   std::to_string(sz.k));
      auto a = tk::test::exactHalfInputs(size_t(sz.m) * sz.k), b = tk::test::exactHalfInputs(size_t(sz.k) * sz.n);
      tk::Buffer da = dev->upload(tk::test::f16Values(a)), db = dev->upload(tk::test::f16Values(b)),
                 dc = dev->upload(std::vector<float>(size_t(sz.m) * sz.n, NAN));
      const std::vector<tk::Arg> args = {da, db, dc, int32_t(sz.m), int32_t(sz.n), int32_t(sz.k), int32_t(sz.k),
                                         int32_t(1), int32_t(sz.n), int32_t(1), int32_t(sz.n), int32_t(1)};
      tk::CompileOptions opts;
      opts.archs = {arch};
      opts.numStages = 3;
      opts.assume = tk::launchSpecialisation(tk::Compiler::signature(file, "matmul_kernel", {}), args);
      tk::Bundle bundle = tk::Compiler::compileFile(file, "matmul_kernel", opts);
      if (sz.n % 16 == 0 && sz.k % 16 == 0) {
        EXPECT_NE(bundle.ptx.at(arch).find("cp.async"), std::string::npos);
      }
      const uint32_t programs = uint32_t(((sz.m + 63) / 64) * ((sz.n + 63) / 64));
      dev->launch(dev->load(bundle), {programs}, args);
      auto got = dev->download<float>(dc, size_t(sz.m) * sz.n);
      for (int i = 0; i < sz.m; ++i)
        for (int j = 0; j < sz.n; ++j) {
          double want = 0;
          for (int q = 0; q < sz.k; ++q) want += double(a[size_t(i) * sz.k + q]) * b[size_t(q) * sz.n + j];
          // exactHalfInputs' products and sums are exact in f32.
          ASSERT_EQ(double(got[size_t(i) * sz.n + j]), want) << "c[" << i << ", " << j << "]";
        }
    }
}

}  // namespace
