// stdlib/attention.tk's training kernels on the sim: attention_fwd (the
// output and each row's log-sum-exp), then the backward's three kernels
// (attention_bwd_preprocess, attention_bwd_dkdv, attention_bwd_dq), against
// the gradients of softmax(scale q k^T) v computed in double, at ragged
// sequence lengths, head dims 64 and 128, causal or not, on mma.sync (sm_80)
// and wgmma (sm_90a).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "TestSeed.h"
#include "tk/half.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/stdlib/attention.tk";

struct Case {
  int heads, L, D;
  bool causal;
  std::string arch = "sm_80";
};

// f16 data: the values the kernel reads, and their bits.
struct Half {
  std::vector<float> v;
  std::vector<uint16_t> bits;
};

Half randomHalf(std::mt19937 &rng, size_t n) {
  std::uniform_real_distribution<float> dist(-1, 1);
  Half h{std::vector<float>(n), std::vector<uint16_t>(n)};
  for (size_t i = 0; i < n; ++i) h.bits[i] = tk::floatToHalfBits(dist(rng)), h.v[i] = tk::halfBitsToFloat(h.bits[i]);
  return h;
}

// The forward's output and lse, and the three gradients, of every head, in double.
struct Reference {
  std::vector<double> out, lse, dq, dk, dv;
};

Reference reference(const Case &c, const Half &q, const Half &k, const Half &v, const Half &dout, double scale) {
  const int L = c.L, D = c.D;
  const size_t n = size_t(c.heads) * L * D;
  Reference r{std::vector<double>(n), std::vector<double>(size_t(c.heads) * L), std::vector<double>(n),
              std::vector<double>(n), std::vector<double>(n)};
  std::vector<double> p(size_t(L) * L), ds(size_t(L) * L);
  for (int h = 0; h < c.heads; ++h) {
    const size_t b = size_t(h) * L * D;
    auto at = [&](const std::vector<float> &x, int row, int d) { return double(x[b + size_t(row) * D + d]); };
    for (int i = 0; i < L; ++i) {
      const int last = c.causal ? i : L - 1;
      double m = -1e300;
      for (int j = 0; j <= last; ++j) {
        double s = 0;
        for (int d = 0; d < D; ++d) s += at(q.v, i, d) * at(k.v, j, d);
        p[size_t(i) * L + j] = s * scale;
        m = std::max(m, s * scale);
      }
      double sum = 0;
      for (int j = 0; j <= last; ++j) sum += std::exp(p[size_t(i) * L + j] - m);
      r.lse[size_t(h) * L + i] = m + std::log(sum);
      for (int j = 0; j < L; ++j) p[size_t(i) * L + j] = j <= last ? std::exp(p[size_t(i) * L + j] - m) / sum : 0;
      for (int d = 0; d < D; ++d) {
        double o = 0;
        for (int j = 0; j <= last; ++j) o += p[size_t(i) * L + j] * at(v.v, j, d);
        r.out[b + size_t(i) * D + d] = o;
      }
    }
    // dP = dout v^T, delta = rowsum(dout * out), dS = P * (dP - delta).
    for (int i = 0; i < L; ++i) {
      double delta = 0;
      for (int d = 0; d < D; ++d) delta += at(dout.v, i, d) * r.out[b + size_t(i) * D + d];
      for (int j = 0; j < L; ++j) {
        double dp = 0;
        for (int d = 0; d < D; ++d) dp += at(dout.v, i, d) * at(v.v, j, d);
        ds[size_t(i) * L + j] = p[size_t(i) * L + j] * (dp - delta);
      }
    }
    for (int i = 0; i < L; ++i)
      for (int d = 0; d < D; ++d) {
        double dq = 0, dk = 0, dv = 0;
        for (int j = 0; j < L; ++j) {
          dq += ds[size_t(i) * L + j] * at(k.v, j, d);
          dk += ds[size_t(j) * L + i] * at(q.v, j, d);
          dv += p[size_t(j) * L + i] * at(dout.v, j, d);
        }
        r.dq[b + size_t(i) * D + d] = dq * scale;
        r.dk[b + size_t(i) * D + d] = dk * scale;
        r.dv[b + size_t(i) * D + d] = dv;
      }
  }
  return r;
}

// The largest error of `got` against `ref`, relative to ref's largest
// magnitude (at least 1); a NaN (the poison, unwritten) counts as 1e9.
double error(const std::vector<float> &got, const std::vector<double> &ref) {
  double worst = 0, scale = 1;
  for (double x : ref) scale = std::max(scale, std::fabs(x));
  for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::isnan(got[i]) ? 1e9 : std::fabs(got[i] - ref[i]));
  return worst / scale;
}

tk::Kernel load(tk::Device &dev, const std::string &kernel, const Case &c, std::map<std::string, std::string> defines) {
  tk::CompileOptions o;
  o.archs = {c.arch};
  o.defines = std::move(defines);
  o.defines["D"] = std::to_string(c.D);
  if (kernel != "attention_bwd_preprocess") o.defines["CAUSAL"] = c.causal ? "true" : "false";
  tk::Bundle b = tk::Compiler::compileFile(kFile, kernel, o);
  if (c.arch == "sm_90a" && kernel != "attention_bwd_preprocess") {
    EXPECT_NE(b.ptx[c.arch].find("wgmma.mma_async"), std::string::npos) << kernel;
  }
  return dev.load(b);
}

// Runs the forward and the backward of `c` and checks all five outputs.
// `bwdDefines`: block sizes for the dk/dv and dq kernels (their defaults
// where empty).
void check(tk::Device &dev, const Case &c, const std::map<std::string, std::string> &dkdvDefines = {},
           const std::map<std::string, std::string> &dqDefines = {}) {
  SCOPED_TRACE(c.arch + " heads " + std::to_string(c.heads) + " L " + std::to_string(c.L) + " D " +
               std::to_string(c.D) + (c.causal ? " causal" : ""));
  static std::mt19937 rng(tk::test::testSeed());
  const size_t n = size_t(c.heads) * c.L * c.D, rows = size_t(c.heads) * c.L;
  const Half q = randomHalf(rng, n), k = randomHalf(rng, n), v = randomHalf(rng, n), dout = randomHalf(rng, n);
  const float scale = 1.0f / std::sqrt(float(c.D));
  const Reference ref = reference(c, q, k, v, dout, scale);

  tk::Buffer bq = dev.upload(q.bits), bk = dev.upload(k.bits), bv = dev.upload(v.bits), bdo = dev.upload(dout.bits);
  tk::Buffer out = dev.upload(std::vector<float>(n, NAN)), lse = dev.upload(std::vector<float>(rows, NAN)),
             delta = dev.upload(std::vector<float>(rows, NAN)), dq = dev.upload(std::vector<float>(n, NAN)),
             dk = dev.upload(std::vector<float>(n, NAN)), dv = dev.upload(std::vector<float>(n, NAN));
  const auto blocks = [&](int64_t block) { return uint32_t((c.L + block - 1) / block); };
  const uint32_t heads = uint32_t(c.heads);
  const int32_t L = c.L;

  tk::Kernel fwd = load(dev, "attention_fwd", c, {});
  dev(fwd, {blocks(fwd.bundle().constInt("BLOCK_M")), heads}, bq, bk, bv, out, lse, L, scale);
  tk::Kernel pre = load(dev, "attention_bwd_preprocess", c, {});
  dev(pre, {blocks(pre.bundle().constInt("BLOCK_M")), heads}, out, bdo, delta, L);
  tk::Kernel dkdv = load(dev, "attention_bwd_dkdv", c, dkdvDefines);
  dev(dkdv, {blocks(dkdv.bundle().constInt("BLOCK_N")), heads}, bq, bk, bv, bdo, lse, delta, dk, dv, L, scale);
  tk::Kernel dqk = load(dev, "attention_bwd_dq", c, dqDefines);
  dev(dqk, {blocks(dqk.bundle().constInt("BLOCK_M")), heads}, bq, bk, bv, bdo, lse, delta, dq, L, scale);

  const double eOut = error(dev.download<float>(out, n), ref.out), eLse = error(dev.download<float>(lse, rows), ref.lse),
               eDq = error(dev.download<float>(dq, n), ref.dq), eDk = error(dev.download<float>(dk, n), ref.dk),
               eDv = error(dev.download<float>(dv, n), ref.dv);
  std::printf("attention backward %s heads %d L %d D %d%s: out %.1e lse %.1e dq %.1e dk %.1e dv %.1e\n",
              c.arch.c_str(), c.heads, c.L, c.D, c.causal ? " causal" : "", eOut, eLse, eDq, eDk, eDv);
  // out as the forward's test bounds it (P rounded to f16 before P v); lse
  // is f32 throughout. The gradients round P and dS to f16 before their
  // products: errors relative to each gradient's largest element.
  EXPECT_LT(eOut, 2e-3);
  EXPECT_LT(eLse, 1e-5);
  EXPECT_LT(eDq, 2e-3);
  EXPECT_LT(eDk, 2e-3);
  EXPECT_LT(eDv, 2e-3);
}

TEST(StdlibAttentionBackward, RaggedSequences) {
  auto dev = tk::Device::open("sim");
  for (bool causal : {false, true})
    for (int L : {1, 127, 300}) check(*dev, {2, L, 64, causal});
}

TEST(StdlibAttentionBackward, HeadDim128) {
  auto dev = tk::Device::open("sim");
  for (bool causal : {false, true}) check(*dev, {1, 200, 128, causal});
}

TEST(StdlibAttentionBackward, OnWgmma) {
  auto dev = tk::Device::open("sim");
  for (bool causal : {false, true}) {
    check(*dev, {2, 127, 64, causal, "sm_90a"});
    check(*dev, {1, 200, 128, causal, "sm_90a"});
  }
}

// Other tiles than the defaults, and the race check over the dots' operand
// rings and the transposed operands' conversions.
TEST(StdlibAttentionBackward, OtherTilesRaceFree) {
  auto dev = tk::Device::open("sim:racecheck");
  for (const char *arch : {"sm_80", "sm_90a"}) {
    check(*dev, {1, 150, 64, true, arch}, {{"BLOCK_M", "64"}, {"BLOCK_N", "64"}},
          {{"BLOCK_M", "64"}, {"BLOCK_N", "64"}});
    check(*dev, {1, 100, 64, false, arch}, {{"BLOCK_M", "16"}}, {{"BLOCK_N", "16"}});
  }
}

// Triton tutorial 06's backward as written (tests/kernels/ports/attention_bwd.tk):
// causal, L a multiple of 128, k pre-scaled on the host by sm_scale / ln(2),
// M the forward's base-2 log-sum-exp, o rounded to f16 as the tutorial's
// forward writes it. The reference takes k as the kernel sees it (the
// pre-scaled f16 values scaled back), so only the kernel's own rounding of
// P and dS remains. (Its loops advance carried pointer tiles, so nothing is
// pipelined: stdlib/attention.tk's kernels are the fast ones.)
TEST(Ports, Tutorial06AttentionBackward) {
  auto dev = tk::Device::open("sim");
  static std::mt19937 rng(tk::test::testSeed());
  const std::string file = TK_SOURCE_DIR + "/tests/kernels/ports/attention_bwd.tk";
  for (const char *arch : {"sm_80", "sm_90a"}) {
    const Case c{2, 256, 64, true, arch};
    SCOPED_TRACE(c.arch);
    const size_t n = size_t(c.heads) * c.L * c.D, rows = size_t(c.heads) * c.L;
    const Half q = randomHalf(rng, n), k = randomHalf(rng, n), v = randomHalf(rng, n), dout = randomHalf(rng, n);
    const float scale = 0.5f;
    const double kScale = double(scale) * 1.4426950408889634;
    Half kScaled = k;  // `arg_k = k * (sm_scale * RCP_LN2)`, then as the kernel sees it
    for (size_t i = 0; i < n; ++i) {
      kScaled.bits[i] = tk::floatToHalfBits(float(k.v[i] * kScale));
      kScaled.v[i] = tk::halfBitsToFloat(kScaled.bits[i]);
    }
    Half kSeen = kScaled;
    for (size_t i = 0; i < n; ++i) kSeen.v[i] = float(kScaled.v[i] / kScale);
    const Reference ref = reference(c, q, kSeen, v, dout, scale);
    std::vector<uint16_t> o(n);
    for (size_t i = 0; i < n; ++i) o[i] = tk::floatToHalfBits(float(ref.out[i]));
    std::vector<float> m(rows);
    for (size_t i = 0; i < rows; ++i) m[i] = float(ref.lse[i] / std::log(2.0));

    tk::CompileOptions opts;
    opts.archs = {c.arch};
    tk::Buffer bo = dev->upload(o), bdo = dev->upload(dout.bits), delta = dev->upload(std::vector<float>(rows, NAN));
    (*dev)(dev->load(tk::Compiler::compileFile(file, "attn_bwd_preprocess", opts)), {uint32_t(c.L / 128), 2u}, bo,
           bdo, delta, int32_t(1), int32_t(c.heads), int32_t(c.L));
    tk::Bundle bwd = tk::Compiler::compileFile(file, "attn_bwd", opts);
    tk::Buffer bq = dev->upload(q.bits), bk = dev->upload(kScaled.bits), bv = dev->upload(v.bits),
               bm = dev->upload(m), dq = dev->upload(std::vector<float>(n, NAN)),
               dk = dev->upload(std::vector<float>(n, NAN)), dv = dev->upload(std::vector<float>(n, NAN));
    const int32_t sz = c.heads * c.L * c.D, sh = c.L * c.D, st = c.D, sd = 1;
    (*dev)(dev->load(bwd), {uint32_t(c.L / 128), 1u, uint32_t(c.heads)}, bq, bk, bv, scale, bdo, dq, dk, dv, bm, delta,
           sz, sh, st, sd, int32_t(c.heads), int32_t(c.L));
    const double eDq = error(dev->download<float>(dq, n), ref.dq), eDk = error(dev->download<float>(dk, n), ref.dk),
                 eDv = error(dev->download<float>(dv, n), ref.dv);
    std::printf("tutorial 06 backward %s: dq %.1e dk %.1e dv %.1e\n", arch, eDq, eDk, eDv);
    // o is f16 here (delta rounds with it): a little more than the stdlib's bound.
    EXPECT_LT(eDq, 4e-3);
    EXPECT_LT(eDk, 4e-3);
    EXPECT_LT(eDv, 4e-3);
  }
}

}  // namespace
