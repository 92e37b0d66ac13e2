// `dot` on tensor cores: f16 and bf16 tiles of whole m16n8k16 tiles lower to
// ldmatrix + mma.sync (the tile IR gives the result the mma layout), run on
// the sim with the PTX ISA's fragment semantics and checked exactly against a
// double reference (inputs whose products and sums f32 holds exactly), at
// ragged sizes, 1 to 8 warps, short and long K; the PTX carries the tensor-core
// instructions and ptxas takes it for sm_80 and sm_90; on sm_90a (emulated by
// the sim when it is the bundle's first arch) the same dots run on wgmma.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "runtime_TestUtil.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/dot.tk";

struct Case {
  int M, N, K, blockM, blockN, blockK, warps;
};

uint16_t bits(float f, bool bf16) { return bf16 ? tk::floatToBf16Bits(f) : tk::floatToHalfBits(f); }

tk::Bundle compile(const Case &c, bool bf16, std::vector<std::string> archs = {"sm_80"}) {
  tk::CompileOptions o;
  o.numWarps = c.warps;
  o.archs = archs;
  o.defines = {{"K", std::to_string(c.K)},
               {"BLOCK_M", std::to_string(c.blockM)},
               {"BLOCK_N", std::to_string(c.blockN)},
               {"BLOCK_K", std::to_string(c.blockK)}};
  return tk::Compiler::compileFile(kFile, bf16 ? "matmul_bf16" : "matmul_f16", o);
}

// `arch` is the one the sim emulates: sm_90a runs the dots wgmma takes on it.
tk::LaunchStats runAndCheck(tk::Device &dev, const Case &c, bool bf16, const std::string &arch = "sm_80",
                            bool perSite = false) {
  SCOPED_TRACE(arch + " " + std::string(bf16 ? "bf16" : "f16") + " M=" + std::to_string(c.M) + " N=" + std::to_string(c.N) +
               " K=" + std::to_string(c.K) + " blocks " + std::to_string(c.blockM) + "x" + std::to_string(c.blockN) +
               "x" + std::to_string(c.blockK) + " warps " + std::to_string(c.warps));
  tk::Bundle bundle = compile(c, bf16, {arch});
  // The tile IR gives the product the mma accumulator layout.
  EXPECT_NE(bundle.tir.find("#blocked<[1,2],[8,4]"), std::string::npos);
  const auto a = tk::test::exactHalfInputs(size_t(c.M) * c.K);
  const auto b = tk::test::exactHalfInputs(size_t(c.K) * c.N);
  std::vector<uint16_t> ha, hb;
  for (float f : a) ha.push_back(bits(f, bf16));
  for (float f : b) hb.push_back(bits(f, bf16));
  tk::Buffer da = dev.upload(ha), db = dev.upload(hb);
  tk::Buffer dc = dev.upload(std::vector<float>(size_t(c.M) * c.N, NAN));
  tk::Dim3 grid{uint32_t((c.M + c.blockM - 1) / c.blockM), uint32_t((c.N + c.blockN - 1) / c.blockN), 1};
  tk::LaunchOptions opts;
  opts.perSite = perSite;
  tk::LaunchStats s = dev.launch(dev.load(bundle), grid, {da, db, dc, int32_t(c.M), int32_t(c.N)}, opts);
  std::vector<float> got = dev.download<float>(dc, size_t(c.M) * c.N);
  for (int i = 0; i < c.M; ++i)
    for (int j = 0; j < c.N; ++j) {
      double ref = 0;
      for (int k = 0; k < c.K; ++k) ref += double(a[size_t(i) * c.K + k]) * b[size_t(k) * c.N + j];
      if (got[size_t(i) * c.N + j] != ref) {
        ADD_FAILURE() << "C[" << i << ", " << j << "] = " << got[size_t(i) * c.N + j] << ", expected " << ref;
        return s;
      }
    }
  return s;
}

TEST(TensorCores, F16AtRaggedSizesAndWarpCounts) {
  auto dev = tk::Device::open("sim");
  for (int warps : {1, 2, 4, 8})
    for (Case c : {Case{1, 1, 1, 32, 32, 32, 0}, Case{127, 33, 48, 64, 32, 16, 0}, Case{100, 130, 96, 64, 64, 32, 0}}) {
      c.warps = warps;
      runAndCheck(*dev, c, false);
    }
}

TEST(TensorCores, Bf16AndLongK) {
  auto dev = tk::Device::open("sim");
  // K = 128 in one chunk: the k16 steps run as a loop.
  for (Case c : {Case{64, 64, 128, 64, 64, 128, 4}, Case{33, 65, 64, 32, 64, 32, 2}}) {
    runAndCheck(*dev, c, true);
    runAndCheck(*dev, c, false);
  }
}

// The staged operands are read by ldmatrix without bank conflicts (the rows
// are padded by 16 bytes), and everything is race-free under the race check.
TEST(TensorCores, RaceFreeWithConflictFreeFragments) {
  auto dev = tk::Device::open("sim:racecheck");
  tk::LaunchStats s = runAndCheck(*dev, Case{128, 128, 64, 128, 128, 32, 4}, false);
  ASSERT_GT(s.sharedRequests, 0u);
  std::printf("matmul_f16 128x128x32, 4 warps: %llu shared requests, %llu wavefronts (%.3f per request)\n",
              (unsigned long long)s.sharedRequests, (unsigned long long)s.sharedWavefronts,
              double(s.sharedWavefronts) / double(s.sharedRequests));
}

// The same on sm_90a: wgmma with 4 and 8 warps (M a multiple of 64 per
// warpgroup), mma.sync for the shapes and warp counts it cannot take.
TEST(TensorCores, WgmmaAtRaggedSizesAndWarpCounts) {
  auto dev = tk::Device::open("sim");
  for (int warps : {1, 2, 4, 8})
    for (Case c : {Case{1, 1, 1, 64, 32, 32, 0}, Case{127, 33, 48, 128, 32, 16, 0}, Case{100, 130, 96, 128, 64, 32, 0},
                   Case{70, 300, 64, 64, 256, 64, 0}}) {
      c.warps = warps;
      runAndCheck(*dev, c, false, "sm_90a");
    }
  for (Case c : {Case{64, 64, 128, 64, 64, 128, 4}, Case{200, 90, 80, 128, 32, 16, 8}}) runAndCheck(*dev, c, true, "sm_90a");
}

// On sm_90a the swizzled staging stores and wgmma's core-matrix reads are
// free of bank conflicts, and everything is race-free.
TEST(TensorCores, WgmmaRaceFreeWithConflictFreeOperands) {
  auto dev = tk::Device::open("sim:racecheck");
  tk::LaunchStats s = runAndCheck(*dev, Case{128, 128, 64, 128, 128, 32, 4}, false, "sm_90a", /*perSite=*/true);
  uint64_t wgmmaRequests = 0, vectorStores = 0;
  for (const tk::SiteStats &site : s.sites) {
    if (site.kind != "wgmma" && site.kind != "shared store") continue;
    std::printf("matmul_f16 128x128x32, 4 warps, sm_90a: %s %s (%u bytes): %llu requests, %.3f wavefronts per request\n",
                site.loc.c_str(), site.kind.c_str(), site.accessBytes, (unsigned long long)site.requests,
                double(site.wavefronts) / double(site.requests));
    if (site.kind == "wgmma") {  // one wavefront per 8 rows x 16 bytes
      wgmmaRequests += site.requests;
      EXPECT_EQ(site.wavefronts, site.requests) << site.loc;
    } else if (site.accessBytes == 16) {  // a warp's 16-byte staging store: 512 bytes, 4 wavefronts at best
      vectorStores += site.requests;
      EXPECT_EQ(site.wavefronts, 4 * site.requests) << site.loc;
    }
  }
  // 2 K chunks x 2 k16 steps x 2 m64 blocks of m64n128k16, each reading 16
  // core matrices of A and 32 of B.
  EXPECT_EQ(wgmmaRequests, 2u * 2 * 2 * 48);
  EXPECT_GT(vectorStores, 0u);
}

TEST(TensorCores, PtxHasMmaAndPtxasTakesIt) {
  const std::vector<std::string> archs = {"sm_80", "sm_90", "sm_90a"};
  tk::Bundle b = compile(Case{64, 64, 256, 64, 64, 32, 4}, false, archs);
  for (const std::string &arch : archs) {
    const std::string &ptx = b.ptx.at(arch);
    EXPECT_EQ(ptx.find("fma.rn.f32"), std::string::npos) << arch << ": no FMA product left";
    if (arch == "sm_90a") {  // wgmma, from shared memory: no mma.sync, no ldmatrix
      EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"), std::string::npos);
      for (const char *op : {"wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned",
                             "wgmma.wait_group.sync.aligned 0", "fence.proxy.async.shared::cta"})
        EXPECT_NE(ptx.find(op), std::string::npos) << op;
      EXPECT_EQ(ptx.find("mma.sync"), std::string::npos);
      EXPECT_EQ(ptx.find("ldmatrix"), std::string::npos);
      continue;
    }
    EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), std::string::npos) << arch;
    EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x4.shared.b16"), std::string::npos) << arch;
    EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"), std::string::npos) << arch;
  }
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "no ptxas: the CUDA toolkit was not found (CUDA_HOME, /usr/local/cuda)";
  for (const std::string &arch : archs) {
    tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(b.ptx.at(arch), arch, toolkit);
    ASSERT_TRUE(info.ran) << info.log;
    std::printf("matmul_f16 64x64x32, K 256, 4 warps, %s: %d registers, %d/%d bytes spill stores/loads\n", arch.c_str(),
                info.registers, info.spillStoreBytes, info.spillLoadBytes);
    EXPECT_EQ(info.spillStoreBytes, 0) << info.log;
    EXPECT_EQ(info.spillLoadBytes, 0) << info.log;
  }
}

}  // namespace

namespace {

// stdlib/matmul.tk at Triton's anchor config (128 x 128 x 32, 4 warps, 4
// stages) with unit inner strides and row strides that are multiples of 16
// (what a Triton launch specialises), compiled for each arch alone (so
// sm_80 keeps mma.sync's own warp layout): the operands go through a
// cp.async ring that ldmatrix (sm_80: 3 slots, Triton's num_stages - 1) or
// wgmma's descriptors (sm_90a: 4 slots) read in place; on sm_90a the
// copies run 2 stages ahead and one
// wgmma group stays in flight across iterations (`wgmma.wait_group 1`, a
// wait_group 0 after the loop). ptxas takes both without spilling, in no
// more registers than Triton's 243 on sm_80, and on sm_90a with every
// integer fact a Triton launch specialises, in Triton 3.9's 167 at most
// (162 since the epilogue stores straight from the wgmma accumulator; 169
// through shared memory, 237 with the operands through registers).
TEST(TensorCores, PipelinedStdlibMatmulPtx) {
  auto compile = [](const std::string &arch, std::map<std::string, int64_t> assume) {
    tk::CompileOptions o;
    o.numWarps = 4;
    o.numStages = 4;
    o.archs = {arch};
    o.defines = {{"BLOCK_M", "128"}, {"BLOCK_N", "128"}, {"BLOCK_K", "32"}};
    o.assume = std::move(assume);
    return tk::Compiler::compileFile(TK_SOURCE_DIR + "/stdlib/matmul.tk", "matmul", o).ptx.at(arch);
  };
  auto count = [](const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  const std::map<std::string, int64_t> unit = {
      {"stride_ak", 1}, {"stride_bn", 1}, {"stride_am", 1024}, {"stride_bk", 1024}};
  std::map<std::string, std::string> ptxs;
  for (const std::string arch : {"sm_80", "sm_90a"}) {
    const std::string &ptx = ptxs[arch] = compile(arch, unit);
    // Per stage 4 + 4 16-byte copies a thread (128 x 32 and 32 x 128 f16 over
    // 128 threads): the prologue's stages (2 on sm_80, 3 slots 2 ahead; 2 on
    // sm_90a, 4 slots whose copies run S-2 ahead) and the loop's one.
    const size_t stages = 3;
    EXPECT_EQ(count(ptx, "cp.async.cg.shared.global"), stages * 8) << arch;
    EXPECT_EQ(count(ptx, "cp.async.commit_group"), stages) << arch;
    EXPECT_GE(count(ptx, "cp.async.wait_group"), 2u) << arch;
    if (arch == "sm_90a") {
      // wgmma reads the ring slots in place: 2 m64 blocks x 2 k16 steps of
      // m64n128k16, and between the loop's wait and them no shared load or
      // store. Each wait is followed by fence.proxy.async before its barrier.
      // The loop waits for all but its own wgmma group, the exit for that.
      EXPECT_EQ(count(ptx, "wgmma.mma_async"), 4u) << arch;
      EXPECT_EQ(count(ptx, "mma.sync.aligned.m16n8k16"), 0u) << arch;
      EXPECT_EQ(count(ptx, "ldmatrix"), 0u) << arch;
      EXPECT_EQ(count(ptx, "wgmma.wait_group.sync.aligned 1;"), 1u) << arch;
      EXPECT_EQ(count(ptx, "wgmma.wait_group.sync.aligned 0;"), 1u) << arch;
      EXPECT_LT(ptx.find("wgmma.wait_group.sync.aligned 1;"), ptx.find("wgmma.wait_group.sync.aligned 0;"));
      const size_t wait = ptx.find("cp.async.wait_group 1;"), first = ptx.find("wgmma.mma_async");
      ASSERT_LT(wait, first);
      const std::string loop = ptx.substr(wait, first - wait);
      EXPECT_EQ(count(loop, "ld.shared"), 0u) << loop;
      EXPECT_EQ(count(loop, "st.shared"), 0u) << loop;
      for (size_t at = ptx.find("cp.async.wait_group"); at != std::string::npos;
           at = ptx.find("cp.async.wait_group", at + 1)) {
        const size_t fence = ptx.find("fence.proxy.async.shared::cta;", at), bar = ptx.find("bar.sync", at);
        EXPECT_LT(fence, bar) << "no fence.proxy.async between the wait at " << at << " and its barrier";
      }
    } else {
      // Warps [2, 2]: per k16 step 4 ldmatrix.x4 of A and 8 ldmatrix.x2 of B
      // (two k16 steps: Triton's 24).
      EXPECT_EQ(count(ptx, "mma.sync.aligned.m16n8k16"), 64u) << arch;
      EXPECT_EQ(count(ptx, "ldmatrix.sync.aligned"), 24u) << arch;
      EXPECT_EQ(count(ptx, "fence.proxy.async"), 0u) << arch;
    }
    EXPECT_EQ(count(ptx, "ld.global"), 0u) << arch << ": every operand load became a cp.async";
  }
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "no ptxas: the CUDA toolkit was not found (CUDA_HOME, /usr/local/cuda)";
  auto resources = [&](const std::string &arch, const std::string &ptx, const char *what) {
    tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(ptx, arch, toolkit);
    EXPECT_TRUE(info.ran) << info.log;
    std::printf("stdlib matmul 128x128x32, 4 warps, 4 stages, %s, %s: %d registers, %d/%d bytes spill stores/loads\n",
                arch.c_str(), what, info.registers, info.spillStoreBytes, info.spillLoadBytes);
    EXPECT_EQ(info.spillStoreBytes, 0) << info.log;
    EXPECT_EQ(info.spillLoadBytes, 0) << info.log;
    return info.registers;
  };
  for (const auto &[arch, ptx] : ptxs)
    EXPECT_LE(resources(arch, ptx, "unit strides"), 243) << arch << ": Triton 3.9 needs 243 on sm_80";
  std::map<std::string, int64_t> triton = {{"stride_ak", 1},  {"stride_bn", 1},  {"stride_cn", 1},
                                           {"stride_am", 16}, {"stride_bk", 16}, {"stride_cm", 16},
                                           {"M", 16},         {"N", 16},         {"K", 16}};
  const std::string tritonPtx = compile("sm_90a", triton);
  // The accumulator is stored from its registers as 8-byte pairs: no
  // exchange through shared memory after the loop's last wait.
  EXPECT_EQ(count(tritonPtx, "st.global.v2.b32"), 64u);
  EXPECT_EQ(count(tritonPtx, "st.shared"), 0u);
  EXPECT_LE(resources("sm_90a", tritonPtx, "Triton's facts"), 167) << "Triton 3.9 needs 167";
}

}  // namespace
