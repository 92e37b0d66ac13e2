// Tiles of rank 3 and 4 (tests/kernels/rank3.tk) on the sim, against
// double-precision references on fresh random inputs, at sizes that leave
// parts of every tile masked off, and over 1, 2 and 4 warps (so layouts put
// warps along different dims).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>

#include "runtime_TestUtil.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/rank3.tk";

using tk::test::randomFloats;

struct Shape3 {
  int B, R, C;
};

std::string name(const Shape3 &s, int warps) {
  return std::to_string(s.B) + "x" + std::to_string(s.R) + "x" + std::to_string(s.C) + ", " + std::to_string(warps) +
         " warps";
}

TEST(Rank3, LoadsBroadcastsAndStores) {
  auto dev = tk::Device::open("sim:racecheck");
  for (Shape3 s : {Shape3{4, 8, 32}, Shape3{7, 5, 19}, Shape3{1, 1, 1}, Shape3{13, 8, 31}})
    for (int warps : {1, 2, 4}) {
      SCOPED_TRACE(name(s, warps));
      tk::CompileOptions o;
      o.numWarps = warps;
      tk::Bundle bundle = tk::Compiler::compileFile(kFile, "scale3", o);
      const size_t n = size_t(s.B) * s.R * s.C;
      auto x = randomFloats(n, -2, 2), w = randomFloats(size_t(s.R) * s.C, -2, 2), bias = randomFloats(s.C, -1, 1);
      tk::Buffer dx = dev->upload(x), dw = dev->upload(w), db = dev->upload(bias);
      tk::Buffer dout = dev->upload(std::vector<float>(n, NAN));
      const uint32_t grid = uint32_t((s.B + 3) / 4);
      (*dev)(dev->load(bundle), {grid}, dx, dw, db, dout, s.B, s.R, s.C);
      auto got = dev->download<float>(dout, n);
      for (int b = 0; b < s.B; ++b)
        for (int r = 0; r < s.R; ++r)
          for (int c = 0; c < s.C; ++c) {
            const size_t i = (size_t(b) * s.R + r) * s.C + c;
            const double ref = double(x[i]) * w[size_t(r) * s.C + c] + bias[c];
            ASSERT_NEAR(got[i], ref, 1e-6 * (1 + std::fabs(ref))) << b << ", " << r << ", " << c;
          }
    }
}

TEST(Rank3, ReductionsAndScansAlongEveryAxis) {
  auto dev = tk::Device::open("sim:racecheck");
  for (Shape3 s : {Shape3{4, 8, 32}, Shape3{3, 7, 29}, Shape3{1, 8, 1}, Shape3{4, 1, 17}})
    for (int warps : {1, 4}) {
      SCOPED_TRACE(name(s, warps));
      tk::CompileOptions o;
      o.numWarps = warps;
      tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "reduce3", o));
      const int B = s.B, R = s.R, C = s.C;
      const size_t n = size_t(B) * R * C;
      auto x = randomFloats(n, -4, 4);
      auto at = [&](int b, int r, int c) { return double(x[(size_t(b) * R + r) * C + c]); };
      auto poison = [&](size_t m) { return dev->upload(std::vector<float>(m, NAN)); };
      tk::Buffer dx = dev->upload(x), s0 = poison(size_t(R) * C), s1 = poison(size_t(B) * C),
                 s2 = poison(size_t(B) * R), mx = poison(size_t(B) * R), mn = poison(size_t(R) * C), c0 = poison(n),
                 c1 = poison(n), c2 = poison(n);
      tk::Buffer amx = dev->upload(std::vector<int32_t>(size_t(B) * R, -1));
      (*dev)(k, {1}, dx, s0, s1, s2, mx, amx, mn, c0, c1, c2, B, R, C);
      auto g0 = dev->download<float>(s0, size_t(R) * C), g1 = dev->download<float>(s1, size_t(B) * C),
           g2 = dev->download<float>(s2, size_t(B) * R), gmx = dev->download<float>(mx, size_t(B) * R),
           gmn = dev->download<float>(mn, size_t(R) * C);
      auto gax = dev->download<int32_t>(amx, size_t(B) * R);
      auto gc0 = dev->download<float>(c0, n), gc1 = dev->download<float>(c1, n), gc2 = dev->download<float>(c2, n);
      const double tol = 1e-5;
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
          double sum = 0, lo = std::numeric_limits<double>::infinity();
          for (int b = 0; b < B; ++b) sum += at(b, r, c), lo = std::min(lo, at(b, r, c));
          ASSERT_NEAR(g0[size_t(r) * C + c], sum, tol * 4 * B) << r << ", " << c;
          ASSERT_EQ(gmn[size_t(r) * C + c], lo) << r << ", " << c;
        }
      for (int b = 0; b < B; ++b)
        for (int c = 0; c < C; ++c) {
          double sum = 0;
          for (int r = 0; r < R; ++r) sum += at(b, r, c);
          ASSERT_NEAR(g1[size_t(b) * C + c], sum, tol * 4 * R) << b << ", " << c;
        }
      for (int b = 0; b < B; ++b)
        for (int r = 0; r < R; ++r) {
          double sum = 0, hi = -std::numeric_limits<double>::infinity();
          int arg = 0;
          for (int c = 0; c < C; ++c) {
            sum += at(b, r, c);
            if (at(b, r, c) > hi) hi = at(b, r, c), arg = c;
          }
          ASSERT_NEAR(g2[size_t(b) * R + r], sum, tol * 4 * C) << b << ", " << r;
          ASSERT_EQ(gmx[size_t(b) * R + r], hi) << b << ", " << r;
          ASSERT_EQ(gax[size_t(b) * R + r], arg) << b << ", " << r;
        }
      // Inclusive prefix sums along each axis.
      for (int b = 0; b < B; ++b)
        for (int r = 0; r < R; ++r)
          for (int c = 0; c < C; ++c) {
            double p0 = 0, p1 = 0, p2 = 0;
            for (int i = 0; i <= b; ++i) p0 += at(i, r, c);
            for (int i = 0; i <= r; ++i) p1 += at(b, i, c);
            for (int i = 0; i <= c; ++i) p2 += at(b, r, i);
            const size_t i = (size_t(b) * R + r) * C + c;
            ASSERT_NEAR(gc0[i], p0, tol * 4 * B) << "axis 0 at " << b << ", " << r << ", " << c;
            ASSERT_NEAR(gc1[i], p1, tol * 4 * R) << "axis 1 at " << b << ", " << r << ", " << c;
            ASSERT_NEAR(gc2[i], p2, tol * 4 * C) << "axis 2 at " << b << ", " << r << ", " << c;
          }
    }
}

TEST(Rank4, CentresAlongAnAxisAndReducesTwo) {
  auto dev = tk::Device::open("sim:racecheck");
  for (auto [A, B, R, C] : std::vector<std::array<int, 4>>{{2, 4, 4, 16}, {1, 3, 3, 11}, {2, 1, 4, 9}})
    for (int warps : {1, 4}) {
      SCOPED_TRACE(std::to_string(A) + "x" + std::to_string(B) + "x" + std::to_string(R) + "x" + std::to_string(C) +
                   ", " + std::to_string(warps) + " warps");
      tk::CompileOptions o;
      o.numWarps = warps;
      tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "center4", o));
      const size_t n = size_t(A) * B * R * C;
      auto x = randomFloats(n, -3, 3);
      tk::Buffer dx = dev->upload(x), dout = dev->upload(std::vector<float>(n, NAN)),
                 dtot = dev->upload(std::vector<float>(size_t(A) * R, NAN));
      (*dev)(k, {1}, dx, dout, dtot, A, B, R, C);
      auto out = dev->download<float>(dout, n), tot = dev->download<float>(dtot, size_t(A) * R);
      auto idx = [&](int a, int b, int r, int c) { return ((size_t(a) * B + b) * R + r) * C + c; };
      for (int a = 0; a < A; ++a)
        for (int r = 0; r < R; ++r) {
          double total = 0;
          for (int c = 0; c < C; ++c) {
            double mean = 0;
            for (int b = 0; b < B; ++b) mean += x[idx(a, b, r, c)];
            total += mean;
            mean /= B;
            for (int b = 0; b < B; ++b)
              ASSERT_NEAR(out[idx(a, b, r, c)], x[idx(a, b, r, c)] - mean, 1e-5) << a << b << r << c;
          }
          ASSERT_NEAR(tot[size_t(a) * R + r], total, 1e-4) << a << ", " << r;
        }
    }
}

}  // namespace

namespace {

TEST(Shapes, PermuteBroadcastReshapeJoin) {
  auto dev = tk::Device::open("sim:racecheck");
  for (Shape3 s : {Shape3{4, 8, 16}, Shape3{2, 1, 32}, Shape3{1, 4, 4}, Shape3{8, 16, 8}})
    for (int warps : {1, 4}) {
      SCOPED_TRACE(name(s, warps));
      const int B = s.B, R = s.R, C = s.C;
      tk::CompileOptions o;
      o.numWarps = warps;
      o.defines = {{"B", std::to_string(B)}, {"R", std::to_string(R)}, {"C", std::to_string(C)}};
      tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "shapes", o));
      const size_t n = size_t(B) * R * C;
      auto x = randomFloats(n, -2, 2), y = randomFloats(size_t(R) * C, -2, 2);
      auto poison = [&](size_t m) { return dev->upload(std::vector<float>(m, NAN)); };
      tk::Buffer dx = dev->upload(x), dy = dev->upload(y), perm = poison(n), swap = poison(n), bc = poison(n),
                 rs = poison(size_t(B) * R), flat = poison(n), jn = poison(2 * n);
      (*dev)(k, {1}, dx, dy, perm, swap, bc, rs, flat, jn);
      auto gp = dev->download<float>(perm, n), gs = dev->download<float>(swap, n), gb = dev->download<float>(bc, n),
           gr = dev->download<float>(rs, size_t(B) * R), gf = dev->download<float>(flat, n),
           gj = dev->download<float>(jn, 2 * n);
      for (int b = 0; b < B; ++b)
        for (int r = 0; r < R; ++r) {
          double row = 0;
          for (int c = 0; c < C; ++c) {
            const size_t i = (size_t(b) * R + r) * C + c;
            const double v = x[i], w = y[size_t(r) * C + c];
            row += v;
            ASSERT_EQ(gp[(size_t(c) * B + b) * R + r], x[i]) << "permute at " << b << ", " << r << ", " << c;
            ASSERT_EQ(gs[(size_t(b) * C + c) * R + r], x[i]) << "trans at " << b << ", " << r << ", " << c;
            ASSERT_NEAR(gb[i], v + 2 * w, 1e-6) << "broadcast at " << b << ", " << r << ", " << c;
            ASSERT_EQ(gf[i], x[i]) << "reshape at " << i;
            ASSERT_EQ(gj[2 * i], x[i]) << "join at " << i;
            ASSERT_EQ(gj[2 * i + 1], float(2 * w)) << "join at " << i;
          }
          ASSERT_NEAR(gr[size_t(b) * R + r], row, 1e-5 * C) << "reshaped sum at " << b << ", " << r;
        }
    }
}

// split (tests/kernels/rank3.tk, split_pairs): each half bit for bit,
// -0.0, NaN and infinities included, for f32, f16 and bool tiles, and for an
// axis of 2 spread over threads (a transposed planar load); sizes that mask
// off part of the last block, over 1 and 4 warps.
TEST(Shapes, SplitIsJoinsInverse) {
  auto dev = tk::Device::open("sim:racecheck");
  for (int n : {1, 781, 1023})
    for (int warps : {1, 4}) {
      SCOPED_TRACE(std::to_string(n) + " pairs, " + std::to_string(warps) + " warps");
      tk::CompileOptions o;
      o.numWarps = warps;
      tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "split_pairs", o));
      auto x = randomFloats(2 * size_t(n), -2, 2), y = randomFloats(2 * size_t(n), -2, 2);
      const float specials[] = {-0.0f, NAN, INFINITY, -INFINITY, 0.0f, -NAN};
      for (size_t i = 0; i < std::size(specials) && i < x.size(); ++i) x[x.size() - 1 - i] = specials[i];
      std::vector<uint16_t> h(2 * size_t(n));
      for (size_t i = 0; i < h.size(); ++i) h[i] = tk::floatToHalfBits(x[i]);
      auto poison = [&](size_t m) { return dev->upload(std::vector<float>(m, 12345.0f)); };
      auto poisonHalf = [&](size_t m) { return dev->upload(std::vector<uint16_t>(m, 0x7e00)); };
      tk::Buffer dx = dev->upload(x), dh = dev->upload(h), dy = dev->upload(y), a = poison(n), b = poison(n),
                 ha = poisonHalf(n), hb = poisonHalf(n), flags = dev->upload(std::vector<int32_t>(n, -7)),
                 back = poison(2 * size_t(n));
      const uint32_t grid = uint32_t((n + 127) / 128);
      (*dev)(k, {grid}, dx, dh, dy, a, b, ha, hb, flags, back, n);
      auto ga = dev->download<float>(a, n), gb = dev->download<float>(b, n), gback = dev->download<float>(back, 2 * size_t(n));
      auto gha = dev->download<uint16_t>(ha, n), ghb = dev->download<uint16_t>(hb, n);
      auto gflags = dev->download<int32_t>(flags, n);
      auto bits = [](float f) {
        uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        return u;
      };
      for (int i = 0; i < n; ++i) {
        const float lo = x[2 * size_t(i)], hi = x[2 * size_t(i) + 1];
        if (std::isnan(lo)) ASSERT_TRUE(std::isnan(ga[i])) << "a at " << i;
        else ASSERT_EQ(bits(ga[i]), bits(lo)) << "a at " << i << ": " << ga[i] << " vs " << lo;
        if (std::isnan(hi)) ASSERT_TRUE(std::isnan(gb[i])) << "b at " << i;
        else ASSERT_EQ(bits(gb[i]), bits(hi)) << "b at " << i << ": " << gb[i] << " vs " << hi;
        const uint16_t hlo = h[2 * size_t(i)];
        const float hhi = 2.0f * tk::halfBitsToFloat(h[2 * size_t(i) + 1]);
        if (std::isnan(tk::halfBitsToFloat(hlo))) ASSERT_TRUE(std::isnan(tk::halfBitsToFloat(gha[i]))) << i;
        else ASSERT_EQ(gha[i], hlo) << "ha at " << i;
        if (std::isnan(hhi)) ASSERT_TRUE(std::isnan(tk::halfBitsToFloat(ghb[i]))) << i;
        else ASSERT_EQ(ghb[i], tk::floatToHalfBits(hhi)) << "hb at " << i;
        ASSERT_EQ(gflags[i], int(lo > 0) + 2 * int(hi > 0)) << "flags at " << i;
        ASSERT_EQ(gback[2 * size_t(i)], y[size_t(n) + i]) << "back at " << i;
        ASSERT_EQ(gback[2 * size_t(i) + 1], y[size_t(i)]) << "back at " << i;
      }
    }
}

}  // namespace

namespace {

// stdlib/rope.tk against a double reference: q and k of [batch, seq, heads,
// D] with different head counts (grouped-query attention), tables of D / 2
// and of D columns (the second half repeating the first, as Hugging Face
// builds them), sequence lengths and head counts that leave tiles partly
// masked, and f16 storage.
TEST(Rope, MatchesDoubleReference) {
  auto dev = tk::Device::open("sim:racecheck");
  struct Case {
    int batch, seq, qHeads, kHeads, D;
    bool fullTable;
    const char *type;
  };
  for (Case c : {Case{2, 7, 8, 2, 64, false, "f32"}, Case{1, 13, 5, 5, 32, true, "f32"},
                 Case{3, 4, 12, 4, 16, true, "f32"}, Case{2, 5, 3, 1, 64, false, "f16"}}) {
    SCOPED_TRACE(std::to_string(c.batch) + "x" + std::to_string(c.seq) + " q_heads " + std::to_string(c.qHeads) +
                 " k_heads " + std::to_string(c.kHeads) + " D " + std::to_string(c.D) + " " + c.type);
    tk::CompileOptions o;
    o.defines = {{"D", std::to_string(c.D)}, {"T", c.type}};
    tk::Bundle bundle = tk::Compiler::compileFile(TK_SOURCE_DIR + "/stdlib/rope.tk", "rope", o);
    const bool half = std::string(c.type) == "f16";
    // f16 inputs are exact multiples of 1/64 so the reference sees what the kernel reads.
    auto values = [&](size_t n) { return half ? tk::test::exactHalfInputs(n) : randomFloats(n, -2, 2); };
    const int cols = c.fullTable ? c.D : c.D / 2;
    const size_t nq = size_t(c.batch) * c.seq * c.qHeads * c.D, nk = size_t(c.batch) * c.seq * c.kHeads * c.D;
    auto q = values(nq), k = values(nk);
    std::vector<float> cosT(size_t(c.seq) * cols), sinT(size_t(c.seq) * cols);
    for (int s = 0; s < c.seq; ++s)
      for (int j = 0; j < cols; ++j) {
        const double theta = s * std::pow(10000.0, -2.0 * (j % (c.D / 2)) / c.D);
        cosT[size_t(s) * cols + j] = float(std::cos(theta));
        sinT[size_t(s) * cols + j] = float(std::sin(theta));
      }
    if (half) {
      // Tables rounded to f16 on the host, so the reference uses the same values.
      for (float &v : cosT) v = tk::halfBitsToFloat(tk::floatToHalfBits(v));
      for (float &v : sinT) v = tk::halfBitsToFloat(tk::floatToHalfBits(v));
    }
    auto up = [&](const std::vector<float> &v) { return half ? dev->upload(tk::test::f16Values(v)) : dev->upload(v); };
    auto poison = [&](size_t n) {
      return half ? dev->upload(std::vector<uint16_t>(n, 0x7e00)) : dev->upload(std::vector<float>(n, NAN));
    };
    tk::Buffer dq = up(q), dk = up(k), dc = up(cosT), ds = up(sinT), qo = poison(nq), ko = poison(nk);
    const int64_t bs = bundle.constInt("BLOCK_S"), bh = bundle.constInt("BLOCK_H");
    const uint32_t grid[3] = {uint32_t((c.seq + bs - 1) / bs), uint32_t(c.batch),
                              uint32_t((std::max(c.qHeads, c.kHeads) + bh - 1) / bh)};
    (*dev)(dev->load(bundle), {grid[0], grid[1], grid[2]}, dq, dk, dc, ds, qo, ko, c.seq, c.qHeads, c.kHeads, cols);
    auto check = [&](const std::vector<float> &x, const tk::Buffer &out, int heads, const char *what) {
      std::vector<float> got(x.size());
      if (half) {
        auto bits = dev->download<uint16_t>(out, x.size());
        for (size_t i = 0; i < x.size(); ++i) got[i] = tk::halfBitsToFloat(bits[i]);
      } else {
        got = dev->download<float>(out, x.size());
      }
      const int H = c.D / 2;
      for (int b = 0; b < c.batch; ++b)
        for (int s = 0; s < c.seq; ++s)
          for (int h = 0; h < heads; ++h)
            for (int j = 0; j < H; ++j) {
              const size_t base = ((size_t(b) * c.seq + s) * heads + h) * c.D;
              const double x1 = x[base + j], x2 = x[base + j + H];
              const double cs = cosT[size_t(s) * cols + j], sn = sinT[size_t(s) * cols + j];
              const double y1 = x1 * cs - x2 * sn, y2 = x2 * cs + x1 * sn;
              const double tol =
                  half ? 2e-3 * (1 + std::fabs(y1) + std::fabs(y2)) : 1e-6 * (1 + std::fabs(x1) + std::fabs(x2));
              ASSERT_NEAR(got[base + j], y1, tol) << what << " " << b << ", " << s << ", " << h << ", " << j;
              ASSERT_NEAR(got[base + j + H], y2, tol) << what << " " << b << ", " << s << ", " << h << ", " << j + H;
            }
    };
    check(q, qo, c.qHeads, "q");
    check(k, ko, c.kHeads, "k");
  }
}

}  // namespace

namespace {

TEST(Rank3, LoopCarriedTilesAndPermutedReductions) {
  auto dev = tk::Device::open("sim:racecheck");
  for (int warps : {1, 4}) {
    SCOPED_TRACE(std::to_string(warps) + " warps");
    tk::CompileOptions o;
    o.numWarps = warps;
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "loop_permute", o));
    const int B = 2, R = 4, C = 32, K = 5;
    const size_t n = size_t(B) * R * C;
    auto x = randomFloats(n * K, -2, 2);
    tk::Buffer dx = dev->upload(x), acc = dev->upload(std::vector<float>(n, NAN)),
               rows = dev->upload(std::vector<float>(size_t(B) * R, NAN)),
               scan = dev->upload(std::vector<float>(n, NAN));
    (*dev)(k, {1}, dx, acc, rows, scan, K);
    auto ga = dev->download<float>(acc, n), gr = dev->download<float>(rows, size_t(B) * R),
         gs = dev->download<float>(scan, n);
    for (int b = 0; b < B; ++b)
      for (int r = 0; r < R; ++r) {
        double row = 0;
        for (int c = 0; c < C; ++c) {
          const size_t i = (size_t(b) * R + r) * C + c;
          double total = 0, prefix = 0;
          for (int kk = 0; kk < K; ++kk) total += x[kk * n + i];
          for (int bb = 0; bb <= b; ++bb) prefix += x[(size_t(bb) * R + r) * C + c];
          row += x[i];
          ASSERT_NEAR(ga[i], total, 1e-5) << "loop at " << b << ", " << r << ", " << c;
          ASSERT_NEAR(gs[i], prefix, 1e-5) << "scan at " << b << ", " << r << ", " << c;
        }
        ASSERT_NEAR(gr[size_t(b) * R + r], row, 1e-4) << "row sum at " << b << ", " << r;
      }
  }
}

}  // namespace
