// Tiles of any size (tests/kernels/any_size.tk) on the sim, at sizes 1, 3,
// 100 and 781 against references computed here in double: reductions,
// scans, combine functions, dots on FMA and tensor cores, sort, topk,
// gather, flip, cat, interleave, histogram, reshape, loops, atomics, assert
// and print, and docs/language.md's example. Every buffer is exactly its tile's size, so the sim fails a
// launch that touches the padding's memory; outputs start poisoned. The
// padded PTX goes through ptxas for sm_80 and sm_90a.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <numeric>
#include <string>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "runtime_TestUtil.h"
#include "tk/fp8.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/any_size.tk";

using tk::test::randomFloats;
using tk::test::randomInts;

tk::Bundle compile(const std::string &kernel, std::map<std::string, std::string> defines, int numWarps = 4) {
  return tk::test::compileForSim(kFile, kernel, numWarps, std::move(defines));
}

std::string s(int64_t v) { return std::to_string(v); }

// A buffer of `n` elements, every one `poison`.
template <class T>
tk::Buffer poisoned(tk::Device &dev, size_t n, T poison) {
  return dev.upload(std::vector<T>(n, poison));
}

void expectNear(const std::vector<float> &got, const std::vector<double> &want, double tol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " element " << i;
}

}  // namespace

TEST(AnySize, ReductionsAndScansAlongEitherDim) {
  auto dev = tk::Device::open("sim");
  struct Shape {
    int r, c;
  };
  for (Shape sh : {Shape{3, 100}, Shape{1, 781}, Shape{100, 3}, Shape{1, 1}, Shape{5, 1}}) {
    const std::string what = "R " + s(sh.r) + " C " + s(sh.c);
    tk::Kernel k = dev->load(compile("rows", {{"R", s(sh.r)}, {"C", s(sh.c)}}));
    const size_t n = size_t(sh.r) * sh.c;
    auto x = randomFloats(n, -4, 4);
    tk::Buffer dx = dev->upload(x), rsum = poisoned(*dev, sh.r, NAN), rmax = poisoned(*dev, sh.r, NAN),
               rmin = poisoned(*dev, sh.r, NAN), ramax = poisoned(*dev, sh.r, -7), ramin = poisoned(*dev, sh.r, -7),
               csum = poisoned(*dev, sh.c, NAN), cs = poisoned(*dev, n, NAN), rcs = poisoned(*dev, n, NAN);
    (*dev)(k, {1}, dx, rsum, rmax, rmin, ramax, ramin, csum, cs, rcs);
    std::vector<double> wsum(sh.r), wmax(sh.r), wmin(sh.r), wcsum(sh.c, 0.0), wcs(n), wrcs(n);
    std::vector<int32_t> wamax(sh.r), wamin(sh.r);
    for (int r = 0; r < sh.r; ++r) {
      const float *row = &x[size_t(r) * sh.c];
      wsum[r] = std::accumulate(row, row + sh.c, 0.0);
      wamax[r] = int32_t(std::max_element(row, row + sh.c) - row);
      wamin[r] = int32_t(std::min_element(row, row + sh.c) - row);
      wmax[r] = row[wamax[r]];
      wmin[r] = row[wamin[r]];
      double run = 0, back = 0;
      for (int c = 0; c < sh.c; ++c) {
        wcsum[c] += row[c];
        wcs[size_t(r) * sh.c + c] = run += row[c];
        wrcs[size_t(r) * sh.c + sh.c - 1 - c] = back += row[sh.c - 1 - c];
      }
    }
    expectNear(dev->download<float>(rsum, sh.r), wsum, 1e-5, what + " sum");
    expectNear(dev->download<float>(rmax, sh.r), wmax, 0, what + " max");
    expectNear(dev->download<float>(rmin, sh.r), wmin, 0, what + " min");
    EXPECT_EQ(dev->download<int32_t>(ramax, sh.r), wamax) << what;
    EXPECT_EQ(dev->download<int32_t>(ramin, sh.r), wamin) << what;
    expectNear(dev->download<float>(csum, sh.c), wcsum, 1e-5, what + " column sums");
    expectNear(dev->download<float>(cs, n), wcs, 1e-5, what + " cumsum");
    expectNear(dev->download<float>(rcs, n), wrcs, 1e-5, what + " reverse cumsum");
  }
}

TEST(AnySize, CombineFunctionsScanAndReduceInIndexOrder) {
  auto dev = tk::Device::open("sim");
  for (int n : {1, 3, 100, 128, 781}) {
    tk::Kernel k = dev->load(compile("recurrence", {{"N", s(n)}}));
    auto a = randomFloats(n, 0.5f, 1.0f), b = randomFloats(n, -1, 1);
    b[size_t(n) / 2] = b[size_t(n) - 1] = 2.0f;  // a tie for the largest: the first wins
    tk::Buffer da = dev->upload(a), db = dev->upload(b), h = poisoned(*dev, n, NAN), hr = poisoned(*dev, n, NAN),
               best = poisoned(*dev, 1, -7);
    (*dev)(k, {1}, da, db, h, hr, best);
    std::vector<double> wh(n), whr(n);
    double acc = 0;
    for (int t = 0; t < n; ++t) wh[t] = acc = acc * a[t] + b[t];
    // From the end (the scan of the flipped tile, flipped back): element t
    // is x_(n-1) combined with x_(n-2), ..., then x_t.
    acc = 0;
    for (int t = n - 1; t >= 0; --t) whr[t] = acc = acc * a[t] + b[t];
    expectNear(dev->download<float>(h, n), wh, 1e-5, "N " + s(n) + " scan");
    expectNear(dev->download<float>(hr, n), whr, 1e-5, "N " + s(n) + " reverse scan");
    EXPECT_EQ(dev->download<int32_t>(best, 1)[0], n / 2) << "N " << n;
  }
}

TEST(AnySize, DotsOfAnyShapeOnFmaAndTensorCores) {
  auto dev = tk::Device::open("sim");
  struct Shape {
    int m, n, k;
  };
  for (bool f16 : {false, true})
    for (Shape sh : f16 ? std::vector<Shape>{{20, 24, 40}, {16, 8, 16}, {16, 16, 16}, {32, 8, 64}, {33, 100, 17}}
                        : std::vector<Shape>{{3, 100, 20}, {1, 1, 1}, {5, 7, 3}}) {
      const std::string what = std::string(f16 ? "f16" : "f32") + " M " + s(sh.m) + " N " + s(sh.n) + " K " + s(sh.k);
      tk::Kernel k = dev->load(compile(f16 ? "matmul_f16" : "matmul", {{"M", s(sh.m)}, {"N", s(sh.n)}, {"K", s(sh.k)}}));
      auto a = tk::test::exactHalfInputs(size_t(sh.m) * sh.k), b = tk::test::exactHalfInputs(size_t(sh.k) * sh.n);
      tk::Buffer c = poisoned(*dev, size_t(sh.m) * sh.n, NAN);
      if (f16)
        (*dev)(k, {1}, dev->upload(tk::test::f16Values(a)), dev->upload(tk::test::f16Values(b)), c);
      else
        (*dev)(k, {1}, dev->upload(a), dev->upload(b), c);
      std::vector<double> want(size_t(sh.m) * sh.n, 0.0);
      for (int i = 0; i < sh.m; ++i)
        for (int j = 0; j < sh.n; ++j)
          for (int q = 0; q < sh.k; ++q) want[size_t(i) * sh.n + j] += double(a[size_t(i) * sh.k + q]) * b[size_t(q) * sh.n + j];
      expectNear(dev->download<float>(c, want.size()), want, 0, what);  // exact inputs, exact sums
    }
}

TEST(AnySize, SortTopkGatherFlipCatInterleaveHistogram) {
  auto dev = tk::Device::open("sim");
  for (int n : {3, 100, 781})
    for (bool desc : {false, true}) {
      const int kk = std::min(n, 5), bins = 7;
      const std::string what = "N " + s(n) + (desc ? " descending" : "");
      tk::Kernel k = dev->load(compile("selection", {{"N", s(n)}, {"K", s(kk)}, {"BINS", s(bins)},
                                                     {"DESC", desc ? "true" : "false"}}));
      std::vector<float> x;
      for (int32_t v : randomInts(n, -20, 20)) x.push_back(v == 20 ? NAN : float(v) / 4);  // ties and NaNs
      auto idx = randomInts(n, -3 * n, 3 * n);
      for (int i = 0; i < n; i += 3) idx[i] = i % (bins + 2) - 1;  // in the bins, and -1 and 7 outside them
      tk::Buffer sorted = poisoned(*dev, n, 99.f), from = poisoned(*dev, n, -7), top = poisoned(*dev, kk, 99.f),
                 topi = poisoned(*dev, kk, -7), picked = poisoned(*dev, n, 99.f), flipped = poisoned(*dev, n, 99.f),
                 catted = poisoned(*dev, 2 * n, 99.f), mixed = poisoned(*dev, 2 * n, 99.f),
                 hist = poisoned(*dev, bins, -7);
      (*dev)(k, {1}, dev->upload(x), dev->upload(idx), sorted, from, top, topi, picked, flipped, catted, mixed, hist);
      auto same = [](float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); };
      auto less = [](float a, float b) { return (!std::isnan(a) && std::isnan(b)) || a < b; };
      std::vector<int> order(n);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return desc ? less(x[b], x[a]) : less(x[a], x[b]); });
      auto gs = dev->download<float>(sorted, n);
      EXPECT_EQ(dev->download<int32_t>(from, n), std::vector<int32_t>(order.begin(), order.end())) << what;
      for (int i = 0; i < n; ++i) ASSERT_TRUE(same(gs[i], x[order[i]])) << what << " sorted " << i;
      std::vector<int> down(n);
      std::iota(down.begin(), down.end(), 0);
      std::stable_sort(down.begin(), down.end(), [&](int a, int b) { return less(x[b], x[a]); });
      auto gt = dev->download<float>(top, kk);
      EXPECT_EQ(dev->download<int32_t>(topi, kk), std::vector<int32_t>(down.begin(), down.begin() + kk)) << what;
      for (int i = 0; i < kk; ++i) ASSERT_TRUE(same(gt[i], x[down[i]])) << what << " topk " << i;
      auto gp = dev->download<float>(picked, n), gf = dev->download<float>(flipped, n);
      auto gc = dev->download<float>(catted, 2 * n), gm = dev->download<float>(mixed, 2 * n);
      for (int i = 0; i < n; ++i) {
        ASSERT_TRUE(same(gp[i], x[((idx[i] % n) + n) % n])) << what << " gather " << i;
        ASSERT_TRUE(same(gf[i], x[n - 1 - i])) << what << " flip " << i;
        ASSERT_TRUE(same(gc[i], x[i]) && same(gc[n + i], x[n - 1 - i])) << what << " cat " << i;
        ASSERT_TRUE(same(gm[2 * i], x[i]) && same(gm[2 * i + 1], x[n - 1 - i])) << what << " interleave " << i;
      }
      std::vector<int32_t> wh(bins, 0);
      for (int32_t v : idx)
        if (v >= 0 && v < bins) ++wh[v];
      EXPECT_EQ(dev->download<int32_t>(hist, bins), wh) << what;
    }
}

TEST(AnySize, ReshapeAndTransposeKeepRowMajorOrder) {
  auto dev = tk::Device::open("sim");
  struct Shape {
    int r, c, r2, c2;
  };
  for (Shape sh : {Shape{3, 100, 100, 3}, Shape{6, 50, 4, 75}, Shape{3, 5, 15, 1}, Shape{1, 781, 781, 1}}) {
    const std::string what = s(sh.r) + "x" + s(sh.c) + " to " + s(sh.r2) + "x" + s(sh.c2);
    tk::Kernel k = dev->load(
        compile("reshape_2d", {{"R", s(sh.r)}, {"C", s(sh.c)}, {"R2", s(sh.r2)}, {"C2", s(sh.c2)}}));
    const size_t n = size_t(sh.r) * sh.c;
    auto x = randomFloats(n, -1, 1);
    tk::Buffer out = poisoned(*dev, n, NAN), tout = poisoned(*dev, n, NAN);
    (*dev)(k, {1}, dev->upload(x), out, tout);
    EXPECT_EQ(dev->download<float>(out, n), x) << what;
    auto gt = dev->download<float>(tout, n);
    for (int r = 0; r < sh.r; ++r)
      for (int c = 0; c < sh.c; ++c) ASSERT_EQ(gt[size_t(c) * sh.r + r], x[size_t(r) * sh.c + c]) << what;
  }
}

TEST(AnySize, LoopsAtomicsAndAssertsSeeOnlyTheTile) {
  auto dev = tk::Device::open("sim");
  for (int n : {1, 3, 781}) {
    const int rows = 4;
    tk::Kernel k = dev->load(compile("carried", {{"N", s(n)}}));
    auto x = tk::test::exactHalfInputs(size_t(rows) * n);
    tk::Buffer acc = poisoned(*dev, n, NAN), total = poisoned(*dev, 3, 0.0f);
    (*dev)(k, {2}, dev->upload(x), acc, total, int32_t(rows));
    std::vector<double> want(n, 0.0), wtotal(3, 0.0);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < n; ++c) want[c] += x[size_t(r) * n + c];
    for (int c = 0; c < n; ++c) wtotal[c % 3] += 2 * want[c];  // two programs add
    expectNear(dev->download<float>(acc, n), want, 0, "N " + s(n));
    expectNear(dev->download<float>(total, 3), wtotal, 0, "N " + s(n) + " atomics");
  }
}

// atomic_cas has no mask in the language; pad-tiles gives it one, so the
// padding never swaps (slot holds exactly N words: the sim faults on any
// other). Of the two programs, exactly one finds each slot free.
TEST(AnySize, CompareAndSwapTouchesOnlyTheTile) {
  auto dev = tk::Device::open("sim");
  for (int n : {1, 3, 100, 781}) {
    tk::Kernel k = dev->load(compile("claim", {{"N", s(n)}}));
    tk::Buffer slot = dev->upload(std::vector<int32_t>(n, 0)), old = dev->upload(std::vector<int32_t>(2 * n, -7));
    (*dev)(k, {2}, slot, old);
    auto sl = dev->download<int32_t>(slot, n), ol = dev->download<int32_t>(old, 2 * n);
    for (int c = 0; c < n; ++c) {
      const int32_t a = ol[size_t(c)], b = ol[size_t(n + c)];
      ASSERT_TRUE((a == 0 && b == 1 && sl[c] == 1) || (b == 0 && a == 2 && sl[c] == 2))
          << "N " << n << " slot " << c << ": " << sl[c] << ", olds " << a << " and " << b;
    }
  }
}

TEST(AnySize, RankThreeAlongEveryDim) {
  auto dev = tk::Device::open("sim");
  struct Shape {
    int a, b, c;
  };
  for (Shape sh : {Shape{3, 5, 7}, Shape{1, 3, 100}, Shape{5, 1, 3}}) {
    const std::string what = s(sh.a) + "x" + s(sh.b) + "x" + s(sh.c);
    tk::Kernel k = dev->load(compile("cube", {{"A", s(sh.a)}, {"B", s(sh.b)}, {"C", s(sh.c)}}));
    const int A = sh.a, B = sh.b, C = sh.c;
    const size_t n = size_t(A) * B * C;
    auto x = randomFloats(n, -1, 1);
    auto idx = randomInts(n, -3 * C, 3 * C);
    tk::Buffer s1 = poisoned(*dev, size_t(A) * C, NAN), rc2 = poisoned(*dev, n, NAN), sorted0 = poisoned(*dev, n, NAN),
               g2 = poisoned(*dev, n, NAN), sc1 = poisoned(*dev, n, NAN), halves = poisoned(*dev, n, NAN),
               perm = poisoned(*dev, n, NAN);
    (*dev)(k, {1}, dev->upload(x), dev->upload(idx), s1, rc2, sorted0, g2, sc1, halves, perm);
    auto at = [&](int i, int j, int l) { return size_t(i) * B * C + size_t(j) * C + l; };
    std::vector<double> ws1(size_t(A) * C, 0.0), wrc2(n), wsorted(n), wg2(n), wsc1(n), whalves(n), wperm(n);
    for (int i = 0; i < A; ++i)
      for (int j = 0; j < B; ++j) {
        double run = 0;
        for (int l = C - 1; l >= 0; --l) wrc2[at(i, j, l)] = run += x[at(i, j, l)];
        for (int l = 0; l < C; ++l) {
          ws1[size_t(i) * C + l] += x[at(i, j, l)];
          wg2[at(i, j, l)] = x[at(i, j, ((idx[at(i, j, l)] % C) + C) % C)];
          whalves[at(i, j, l)] = 2.0 * x[at(i, j, l)];
          wperm[size_t(l) * A * B + size_t(i) * B + j] = x[at(i, j, l)];
        }
      }
    for (int j = 0; j < B; ++j)
      for (int l = 0; l < C; ++l) {
        std::vector<float> col;
        for (int i = 0; i < A; ++i) col.push_back(x[at(i, j, l)]);
        std::sort(col.begin(), col.end());
        for (int i = 0; i < A; ++i) wsorted[at(i, j, l)] = col[i];
      }
    for (int i = 0; i < A; ++i)
      for (int l = 0; l < C; ++l) {
        double h = 0;  // from the end: h_j = h_(j+1) * a_j + b_j
        for (int j = B - 1; j >= 0; --j) {
          const float v = x[at(i, j, l)];
          h = h * (0.5f + 0.25f * v) + v;
          wsc1[at(i, j, l)] = h;
        }
      }
    expectNear(dev->download<float>(s1, size_t(A) * C), ws1, 1e-5, what + " sum along dim 1");
    expectNear(dev->download<float>(rc2, n), wrc2, 1e-5, what + " reverse cumsum along dim 2");
    expectNear(dev->download<float>(sorted0, n), wsorted, 0, what + " sort along dim 0");
    expectNear(dev->download<float>(g2, n), wg2, 0, what + " gather along dim 2");
    expectNear(dev->download<float>(sc1, n), wsc1, 1e-5, what + " reverse combine scan along dim 1");
    expectNear(dev->download<float>(halves, n), whalves, 1e-6, what + " split of a join");
    expectNear(dev->download<float>(perm, n), wperm, 0, what + " permute");
  }
}

// The example of docs/language.md's "Tiles of any size", taken from the
// page itself: a softmax over exactly 781 columns per row.
TEST(AnySize, TheDocsSoftmaxRuns) {
  std::ifstream in(TK_SOURCE_DIR + "/docs/language.md");
  std::stringstream page;
  page << in.rdbuf();
  const std::string text = page.str();
  const size_t at = text.find("kernel softmax_781");
  ASSERT_NE(at, std::string::npos);
  const size_t begin = text.rfind("```tk\n", at) + 6, end = text.find("```", at);
  tk::CompileOptions opts;
  opts.emitPtx = false;
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileSource(text.substr(begin, end - begin), "language.md", "softmax_781", opts));
  const int rows = 3, d = 781;
  auto x = randomFloats(size_t(rows) * d, -5, 5);
  tk::Buffer out = poisoned(*dev, x.size(), NAN);
  (*dev)(k, {uint32_t(rows)}, dev->upload(x), out);
  std::vector<double> want(x.size());
  for (int r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int c = 0; c < d; ++c) mx = std::max(mx, double(x[size_t(r) * d + c]));
    for (int c = 0; c < d; ++c) sum += std::exp(x[size_t(r) * d + c] - mx);
    for (int c = 0; c < d; ++c) want[size_t(r) * d + c] = std::exp(x[size_t(r) * d + c] - mx) / sum;
  }
  expectNear(dev->download<float>(out, x.size()), want, 1e-5, "softmax_781");
}

// Blocks of 48 x 40 with K steps of 24, pipelined through cp.async rings of
// their padded tiles (64 x 64, 32), on mma.sync (sm_80) and wgmma (sm_90a),
// under the sim's race check; M, N, K ragged against the blocks.
TEST(AnySize, PipelinedMatmulWithBlocksOfAnySize) {
  auto dev = tk::Device::open("sim:racecheck");
  const int M = 100, N = 90, K = 77;
  auto a = tk::test::exactHalfInputs(size_t(M) * K), b = tk::test::exactHalfInputs(size_t(K) * N);
  std::vector<double> want(size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int q = 0; q < K; ++q) want[size_t(i) * N + j] += double(a[size_t(i) * K + q]) * b[size_t(q) * N + j];
  for (const char *arch : {"sm_80", "sm_90a"}) {
    tk::CompileOptions opts;
    opts.archs = {arch};
    opts.emitPtx = false;
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "matmul_loop", opts));
    tk::Buffer c = poisoned(*dev, size_t(M) * N, NAN);
    (*dev)(k, {tk::test::cdiv(M, 48), tk::test::cdiv(N, 40)}, dev->upload(tk::test::f16Values(a)),
           dev->upload(tk::test::f16Values(b)), c, int32_t(M), int32_t(N), int32_t(K));
    expectNear(dev->download<float>(c, want.size()), want, 0, arch);
  }
}

TEST(AnySize, ControlFlowIntsBoolsAndFp8) {
  auto dev = tk::Device::open("sim");
  for (int n : {1, 3, 100, 781}) {
    const int rows = 3;
    tk::Kernel k = dev->load(compile("mixed", {{"N", s(n)}}));
    auto x = randomInts(size_t(rows) * n, -3, 3);  // ties for the largest and smallest
    std::vector<uint8_t> q;
    for (int32_t v : randomInts(n, 0, 253)) q.push_back(uint8_t(v >= 0x7f ? v + 1 : v));  // no NaN codes
    tk::Buffer big = poisoned(*dev, 1, -7), small = poisoned(*dev, 1, -7), counts = poisoned(*dev, n, -7),
               total = poisoned(*dev, 1, NAN);
    (*dev)(k, {1}, dev->upload(x), dev->upload(q), big, small, counts, total, int32_t(rows));
    std::vector<int32_t> acc(n, 0), wcounts(n);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < n; ++c) acc[c] += 2 * x[size_t(r) * n + c];
    int32_t positive = 0;
    for (int c = n - 1; c >= 0; --c) wcounts[c] = positive += acc[c] > 0;
    double wtotal = 0;
    for (uint8_t b : q) wtotal += tk::fp8BitsToFloat(b, tk::kE4M3);
    const std::string what = "N " + s(n);
    EXPECT_EQ(dev->download<int32_t>(big, 1)[0], int32_t(std::max_element(acc.begin(), acc.end()) - acc.begin())) << what;
    EXPECT_EQ(dev->download<int32_t>(small, 1)[0], int32_t(std::min_element(acc.begin(), acc.end()) - acc.begin())) << what;
    EXPECT_EQ(dev->download<int32_t>(counts, n), wcounts) << what;
    expectNear(dev->download<float>(total, 1), {wtotal}, 1e-5, what + " fp8 sum");
  }
}

TEST(AnySize, PrintShowsOnlyTheTile) {
  auto dev = tk::Device::open("sim");
  std::vector<std::string> out;
  dev->setPrintSink([&](const std::string &text) { out.push_back(text); });
  tk::Kernel k = dev->load(tk::test::compileForSim(TK_SOURCE_DIR + "/tests/kernels/debug.tk", "print_2d", 4,
                                                   {{"R", "3"}, {"C", "5"}}));
  std::vector<float> x(15);
  std::iota(x.begin(), x.end(), 0.0f);
  (*dev)(k, {1}, dev->upload(x));
  ASSERT_EQ(out.size(), 1u);
  std::string want;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 5; ++c)
      want += "pid (0, 0, 0) idx (" + s(r) + ", " + s(c) + ") v " + std::to_string(double(r * 5 + c)) + "\n";
  EXPECT_EQ(out[0], want);
}

TEST(AnySizePtx, PaddedKernelsPassPtxas) {
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "no ptxas: the CUDA toolkit was not found (CUDA_HOME, /usr/local/cuda)";
  for (const char *kernel : {"rows", "recurrence", "matmul", "matmul_f16", "selection", "reshape_2d", "carried", "cube", "matmul_loop", "mixed"})
    for (const char *arch : {"sm_80", "sm_90a"}) {
      tk::CompileOptions opts;
      opts.archs = {arch};
      tk::Bundle b = tk::Compiler::compileFile(kFile, kernel, opts);
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(b.ptx.at(arch), arch, toolkit);
      ASSERT_TRUE(info.ran) << info.log;
      EXPECT_FALSE(info.cubin.empty()) << kernel << " " << arch;
      EXPECT_EQ(info.spillStoreBytes, 0) << kernel << " " << arch << "\n" << info.log;
    }
}

// A dot with fewer m16n8 tiles than warps (16x16 over 4 warps) stays on the
// tensor cores, its warps repeating tiles along N (mmaLayout), where it took
// 8-32 FMAs per thread before; each warp runs one mma per k16 step.
TEST(AnySizePtx, SmallDotsRunOnTensorCores) {
  struct Shape {
    int m, n, k;
  };
  for (Shape sh : {Shape{16, 8, 16}, Shape{16, 16, 16}, Shape{32, 8, 64}, Shape{16, 16, 64}})
    for (const char *arch : {"sm_80", "sm_90"}) {
      tk::CompileOptions opts;
      opts.archs = {arch};
      opts.defines = {{"M", s(sh.m)}, {"N", s(sh.n)}, {"K", s(sh.k)}};
      const std::string ptx = tk::Compiler::compileFile(kFile, "matmul_f16", opts).ptx.at(arch);
      size_t mmas = 0;
      for (size_t at = ptx.find("mma.sync.aligned.m16n8k16"); at != std::string::npos;
           at = ptx.find("mma.sync.aligned.m16n8k16", at + 1))
        ++mmas;
      EXPECT_EQ(mmas, size_t(sh.k / 16)) << sh.m << "x" << sh.n << "x" << sh.k << " " << arch;
      EXPECT_EQ(ptx.find("fma.rn.f32"), std::string::npos) << sh.m << "x" << sh.n << "x" << sh.k << " " << arch;
    }
}

