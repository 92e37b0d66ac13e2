// stdlib/attention.tk on the sim: flash attention forward (two chained
// tensor-core dots, online softmax) against a double reference at sequence
// lengths 1, 127 and 1024, head dims 64 and 128, causal or not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "TestSeed.h"
#include "tk/half.h"
#include "tk/jit.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/stdlib/attention.tk";

// `arch` is the one the sim emulates (sm_90a: both dots on wgmma);
// `specialise`: run the variant L specialises (L == 1 or a multiple of 16:
// what tk::JitKernel launches), not the general one.
// `blockN`: BLOCK_N where not 0 (else 32 for D = 128, the kernel's default
// for D = 64).
// `kernel`: attention, or attention_desc (q, k, v as descriptors; with
// `warpSpecialize`, its key loop so).
// `tiles`: more defines, num_warps and num_stages (Tiles); `stats`, where
// given, receives the launch's counters per site.
struct Tiles {
  std::map<std::string, std::string> defines;
  int warps = 0, stages = 0;
};
void check(tk::Device &dev, int heads, int L, int D, bool causal, const std::string &arch = "sm_80",
           bool specialise = false, int blockN = 0, const std::string &kernel = "attention",
           bool warpSpecialize = false, const Tiles &tiles = {}, tk::LaunchStats *stats = nullptr) {
  SCOPED_TRACE(kernel + " " + arch + " " + "heads " + std::to_string(heads) + " L " + std::to_string(L) + " D " + std::to_string(D) +
               (causal ? " causal" : "") + (specialise ? " specialised" : "") +
               (blockN ? " BLOCK_N " + std::to_string(blockN) : ""));
  static std::mt19937 rng(tk::test::testSeed());
  std::uniform_real_distribution<float> dist(-1, 1);
  const size_t n = size_t(heads) * L * D;
  std::vector<float> q(n), k(n), v(n);
  std::vector<uint16_t> hq(n), hk(n), hv(n);
  // The reference sees the inputs as the kernel does: rounded to f16.
  for (size_t i = 0; i < n; ++i) {
    hq[i] = tk::floatToHalfBits(dist(rng)), q[i] = tk::halfBitsToFloat(hq[i]);
    hk[i] = tk::floatToHalfBits(dist(rng)), k[i] = tk::halfBitsToFloat(hk[i]);
    hv[i] = tk::floatToHalfBits(dist(rng)), v[i] = tk::halfBitsToFloat(hv[i]);
  }
  tk::CompileOptions o;
  o.archs = {arch};
  o.defines = {{"D", std::to_string(D)}, {"CAUSAL", causal ? "true" : "false"}};
  if (blockN || D == 128) o.defines["BLOCK_N"] = std::to_string(blockN ? blockN : 32);
  if (warpSpecialize) o.defines["WARP_SPECIALIZE"] = "true";
  for (const auto &[name, value] : tiles.defines) o.defines[name] = value;
  if (tiles.warps) o.numWarps = tiles.warps;
  if (tiles.stages) o.numStages = tiles.stages;
  const float scale = 1.0f / std::sqrt(float(D));
  if (specialise) {
    const std::vector<tk::Arg> args = {tk::Buffer(), tk::Buffer(), tk::Buffer(), tk::Buffer(), int32_t(L), scale};
    o.assume = tk::launchSpecialisation(tk::Compiler::signature(kFile, "attention", o.defines), args);
    EXPECT_EQ(o.assume.count("L"), 1u);
  }
  tk::Bundle bundle = tk::Compiler::compileFile(kFile, kernel, o);
  if (arch == "sm_90a") EXPECT_NE(bundle.ptx[arch].find("wgmma.mma_async"), std::string::npos);
  const bool desc = kernel == "attention_desc";
  // On sm_90a alone TMA fills k's and v's rings: a tensor map each.
  if (desc) EXPECT_EQ(bundle.tensorMaps.size(), arch == "sm_90a" ? 2u : 0u);
  EXPECT_EQ(bundle.producerWarps, warpSpecialize && arch == "sm_90a" ? 4 : 0);
  const int64_t bm = bundle.constInt("BLOCK_M");
  tk::Buffer dq = dev.upload(hq), dk = dev.upload(hk), dv = dev.upload(hv),
             dout = dev.upload(std::vector<float>(n, NAN));
  const tk::Dim3 grid{uint32_t((L + bm - 1) / bm), uint32_t(heads)};
  if (desc) {
    const int64_t rows = int64_t(heads) * L;
    dev(dev.load(bundle), grid, tk::TensorDescriptor::contiguous(dq, {rows, D}, {}),
        tk::TensorDescriptor::contiguous(dk, {rows, D}, {}), tk::TensorDescriptor::contiguous(dv, {rows, D}, {}), dout,
        int32_t(L), scale);
  } else {
    tk::LaunchOptions lo;
    lo.perSite = stats != nullptr;
    tk::LaunchStats got = dev.launch(dev.load(bundle), grid, {dq, dk, dv, dout, int32_t(L), scale}, lo);
    if (stats) *stats = got;
  }
  std::vector<float> got = dev.download<float>(dout, n);
  double worst = 0;
  std::vector<double> s(L);
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < L; ++i) {
      const size_t qi = (size_t(h) * L + i) * D;
      double m = -1e300, sum = 0;
      const int last = causal ? i : L - 1;
      for (int j = 0; j <= last; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += double(q[qi + d]) * k[(size_t(h) * L + j) * D + d];
        s[j] = dot * scale;
        m = std::max(m, s[j]);
      }
      for (int j = 0; j <= last; ++j) sum += std::exp(s[j] - m);
      for (int d = 0; d < D; ++d) {
        double ref = 0;
        for (int j = 0; j <= last; ++j) ref += std::exp(s[j] - m) / sum * v[(size_t(h) * L + j) * D + d];
        const double g = got[qi + d];
        worst = std::max(worst, std::isnan(g) ? 1e9 : std::fabs(g - ref));
      }
    }
  std::printf("%s %s heads %d L %d D %d%s: max abs error %.2e\n", kernel.c_str(), arch.c_str(), heads, L, D,
              causal ? " causal" : "", worst);
  // p is rounded to f16 before the second product.
  EXPECT_LT(worst, 1e-2);
}

TEST(StdlibAttention, ShortAndRaggedSequences) {
  auto dev = tk::Device::open("sim");
  for (bool causal : {false, true})
    for (int L : {1, 127}) {
      check(*dev, 2, L, 64, causal);
      check(*dev, 1, L, 128, causal);
    }
}

// L == 1 and L a multiple of 16 as the variants a launch specialises.
TEST(StdlibAttention, SpecialisedOnTheSequenceLength) {
  auto dev = tk::Device::open("sim");
  for (bool causal : {false, true})
    for (int L : {1, 256}) {
      check(*dev, 2, L, 64, causal, "sm_80", true);
      check(*dev, 1, L, 128, causal, "sm_80", true);
    }
}

TEST(StdlibAttention, OnWgmma) {
  auto dev = tk::Device::open("sim");
  for (bool causal : {false, true})
    for (int L : {1, 127, 1024}) {
      check(*dev, 2, L, 64, causal, "sm_90a");
      check(*dev, 1, L, 128, causal, "sm_90a");
    }
}

// k, loaded as [D, BLOCK_N], goes through a transposed cp.async ring that
// the first dot reads with ldmatrix (LowerPipeline.cpp): under the race
// check, no read of a slot before its wait, on both archs.
TEST(StdlibAttention, RaceFreeKRing) {
  auto dev = tk::Device::open("sim:racecheck");
  for (const char *arch : {"sm_80", "sm_90a"}) {
    check(*dev, 1, 200, 64, true, arch);
    check(*dev, 1, 130, 128, false, arch);
  }
}

// On sm_90a the first dot's wgmmas read k's ring in place, K-major (its
// copies run along D: WgmmaPlan::kMajorB), at D = 128 with the kernel's
// default BLOCK_N = 64 too; under the race check no cp.async overwrites a
// slot a wgmma still reads. The 16-byte copies replace k's scalar loads:
// 8 `ld.global` left (q's), against 200 when k's ring was N-major.
TEST(StdlibAttention, KMajorKRingOnWgmma) {
  auto dev = tk::Device::open("sim:racecheck");
  for (bool causal : {false, true}) {
    check(*dev, 1, 130, 128, causal, "sm_90a", false, 64);
    check(*dev, 2, 100, 64, causal, "sm_90a", false, 32);
  }
}

TEST(StdlibAttention, Sequence1024) {
  auto dev = tk::Device::open("sim");
  check(*dev, 1, 1024, 64, true);
  check(*dev, 1, 1024, 128, false);
}

}  // namespace

// q, k and v as host descriptors: on sm_90a k's and v's rings come through
// the tensor memory accelerator (k's K-major), q through a one-slot
// cp.async ring complete before the loop; heads back to back, so a block
// past L reads the next head's rows, which the masks must drop. Under the
// race check, on both archs, ragged and block-sized lengths.
TEST(StdlibAttention, DescriptorsThroughTma) {
  auto dev = tk::Device::open("sim:racecheck");
  for (const char *arch : {"sm_90a", "sm_80"})
    for (bool causal : {false, true})
      for (int L : {1, 127, 256}) {
        check(*dev, 2, L, 64, causal, arch, false, 0, "attention_desc");
        check(*dev, 2, L, 128, causal, arch, false, 64, "attention_desc");
      }
}

// The same with a producer warpgroup for k and v on sm_90a (q's ring the
// consumers fill before the loop), one consumer warpgroup; on sm_80 the
// option is a hint.
TEST(StdlibAttention, WarpSpecializedDescriptors) {
  auto dev = tk::Device::open("sim:racecheck");
  for (const char *arch : {"sm_90a", "sm_80"})
    for (bool causal : {false, true})
      for (int L : {1, 127, 256}) {
        check(*dev, 2, L, 64, causal, arch, false, 0, "attention_desc", true);
        check(*dev, 1, L, 128, causal, arch, false, 64, "attention_desc", true);
      }
}

// At issue 25's tiles on sm_80 (128 x 64, 4 warps, 3 stages) the rings of
// q, k and v hold their rows unpadded, 16-byte chunks XOR-swizzled by row
// (Triton's 48 / 96 KiB of shared memory): every ldmatrix of them reads its
// 8x8 matrices in one wavefront each (128 bytes), as the padded rows did,
// and the result matches the double reference at a ragged length.
TEST(StdlibAttention, SwizzledSlotsAtIssueTilesReadWithoutBankConflicts) {
  auto dev = tk::Device::open("sim");
  for (int D : {64, 128}) {
    tk::LaunchStats stats;
    const Tiles tiles{{{"BLOCK_M", "128"}, {"BLOCK_N", "64"}}, 4, 3};
    check(*dev, 1, 200, D, false, "sm_80", false, 64, "attention", false, tiles, &stats);
    uint64_t ldmatrix = 0;
    for (const tk::SiteStats &site : stats.sites) {
      if (site.kind != "ldmatrix") continue;
      ldmatrix += site.requests;
      EXPECT_EQ(site.wavefronts * 128, site.bytes) << "D " << D << " " << site.loc;
    }
    EXPECT_GT(ldmatrix, 0u) << "D " << D;
  }
}

