// The tensor memory accelerator on the sim (sm_90a): a persistent matmul
// through host descriptors (tests/kernels/tma.tk) whose operand rings TMA
// fills, against a reference computed here in double, exact (every input a
// multiple of 1/64 below 2 in magnitude: products and sums exact in f32),
// over pitched operands with NaN in the pitch and an output poisoned with
// NaN, under sim:racecheck; and what the compiled kernel says of itself.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "runtime_TestUtil.h"
#include "tk/half.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/tma.tk";

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

std::vector<uint16_t> bits(const std::vector<float> &v, bool bf16) {
  if (!bf16) return tk::test::f16Values(v);
  std::vector<uint16_t> out;
  for (float f : v) out.push_back(tk::floatToBf16Bits(f));
  return out;
}

struct Case {
  const char *type;
  int bm, bn, bk, warps, stages;
};

tk::Bundle compile(const Case &c, const char *kernel = "matmul_persistent") {
  tk::CompileOptions opts;
  opts.archs = {"sm_90a"};
  opts.numWarps = c.warps;
  opts.numStages = c.stages;
  opts.defines = {{"T", c.type}, {"BM", std::to_string(c.bm)}, {"BN", std::to_string(c.bn)},
                  {"BK", std::to_string(c.bk)}};
  return tk::Compiler::compileFile(kFile, kernel, opts);
}

// 1 and 2 warpgroups, f16 and bf16, boxes 32 and 64 elements wide, tiles
// of one box across and of two (A of K = 128, B of N = 128).
const Case kCases[] = {{"f16", 64, 64, 32, 4, 3}, {"bf16", 64, 64, 64, 4, 2}, {"f16", 128, 128, 32, 8, 4},
                       {"f16", 64, 64, 128, 4, 2}};

TEST(Tma, CompiledKernelTakesTensorMapsAndNoThreadCopies) {
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  for (const Case &c : kCases) {
    const tk::Bundle b = compile(c);
    const std::string &ptx = b.ptx.at("sm_90a");
    EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d"), std::string::npos) << c.type;
    EXPECT_NE(ptx.find("mbarrier.arrive.expect_tx.shared::cta.b64"), std::string::npos);
    EXPECT_EQ(ptx.find("cp.async.cg"), std::string::npos);
    // Read in place from the parameter space: no local copy of a map.
    EXPECT_NE(ptx.find(".param .align 64 .b8 matmul_persistent_param_"), std::string::npos);
    EXPECT_EQ(ptx.find("__local_depot"), std::string::npos);
    // A, B, and C's store: the block staged in shared memory, all its rows
    // by 128 bytes of columns per bulk tensor store.
    EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.bulk.wait_group.read 0"), std::string::npos);
    ASSERT_EQ(b.tensorMaps.size(), 3u);
    EXPECT_EQ(b.tensorMaps[2].param, "c");
    EXPECT_EQ(b.tensorMaps[2].box, (std::vector<int64_t>{c.bm, 32}));
    EXPECT_EQ(b.tensorMaps[2].swizzle, 128);
    const int64_t swizzleA = std::min<int64_t>(128, c.bk * 2), swizzleB = std::min<int64_t>(128, c.bn * 2);
    EXPECT_EQ(b.tensorMaps[0].box, (std::vector<int64_t>{8, swizzleA / 2}));
    EXPECT_EQ(b.tensorMaps[0].swizzle, swizzleA);
    EXPECT_EQ(b.tensorMaps[1].box, (std::vector<int64_t>{c.bk, swizzleB / 2}));
    if (toolkit.hasPtxas()) {
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(ptx, "sm_90a", toolkit);
      EXPECT_TRUE(info.ran) << info.log;
      EXPECT_EQ(info.spillStoreBytes, 0) << info.log;
    }
  }
}

// B is [K, N] (N-major ring), or with `transposed` [N, K] read through
// trans (K-major ring). A persistent kernel runs on grids of 1 program
// and of more than the tiles, the others on one program per tile and more.
void checkMatmul(const char *kernel, bool transposed, bool persistent = true,
                 const std::vector<Case> &cases = {std::begin(kCases), std::end(kCases)}) {
  auto dev = tk::Device::open("sim:racecheck");
  for (const Case &c : cases) {
    const bool bf16 = std::string(c.type) == "bf16";
    const tk::Bundle bundle = compile(c, kernel);
    ASSERT_EQ(bundle.tensorMaps.size(), 3u);  // a, b, and c's bulk stores
    tk::Kernel k = dev->load(bundle);
    for (auto [m, n, kk] : {std::tuple{1, 1, 1}, std::tuple{127, 130, 100}, std::tuple{200, 67, 1023}}) {
      const int64_t pa = roundUp(kk, 8), pb = roundUp(n, 8), pc = roundUp(n, 4);
      auto a = tk::test::exactHalfInputs(size_t(m * kk)), bv = tk::test::exactHalfInputs(size_t(kk * n));
      std::vector<float> ap(size_t(m * pa), NAN), bp(size_t(kk * pb), NAN), btp(size_t(n * pa), NAN);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t q = 0; q < kk; ++q) ap[size_t(i * pa + q)] = a[size_t(i * kk + q)];
      for (int64_t q = 0; q < kk; ++q)
        for (int64_t j = 0; j < n; ++j) bp[size_t(q * pb + j)] = btp[size_t(j * pa + q)] = bv[size_t(q * n + j)];
      tk::TensorDescriptor ta{dev->upload(bits(ap, bf16)), {m, kk}, {pa, 1}, {}};
      tk::TensorDescriptor tb = transposed ? tk::TensorDescriptor{dev->upload(bits(btp, bf16)), {n, kk}, {pa, 1}, {}}
                                           : tk::TensorDescriptor{dev->upload(bits(bp, bf16)), {kk, n}, {pb, 1}, {}};
      if (bf16) ta.base = ta.base.as(tk::DType::BF16), tb.base = tb.base.as(tk::DType::BF16);
      const uint32_t tiles = tk::test::cdiv(m, c.bm) * tk::test::cdiv(n, c.bn);
      // Fewer programs than tiles (each loops), and more (some run none).
      for (uint32_t grid : {persistent ? 1u : tiles, tiles + 3}) {
        tk::Buffer dc = dev->upload(std::vector<float>(size_t(m * pc), NAN));
        (*dev)(k, {grid}, ta, tb, tk::TensorDescriptor{dc, {m, n}, {pc, 1}, {}}, int32_t(m), int32_t(n),
               int32_t(kk));
        auto out = dev->download<float>(dc, size_t(m * pc));
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double want = 0;
            for (int64_t q = 0; q < kk; ++q) want += double(a[size_t(i * kk + q)]) * bv[size_t(q * n + j)];
            ASSERT_EQ(out[size_t(i * pc + j)], want) << kernel << " " << c.type << " " << c.bm << "x" << c.bn << "x" << c.bk << " "
                                                      << m << "x" << n << "x" << kk << " grid " << grid << " at "
                                                      << i << "," << j;
          }
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = n; j < pc; ++j) ASSERT_TRUE(std::isnan(out[size_t(i * pc + j)])) << "pitch written";
      }
    }
  }
}

TEST(Tma, PersistentMatmulIsExactAtRaggedSizesUnderRacecheck) { checkMatmul("matmul_persistent", false); }
TEST(Tma, PersistentMatmulOfBTransposedIsExact) { checkMatmul("matmul_persistent_bt", true); }

// Warp-specialised: 1, 2 and 4 consumer warpgroups (4, 8 and 16 warps),
// 2 to 4 slots, one box across and two.
const std::vector<Case> kWsCases = {{"f16", 64, 64, 32, 4, 3},
                                    {"bf16", 64, 64, 64, 4, 2},
                                    {"f16", 128, 128, 32, 8, 4},
                                    {"bf16", 128, 64, 128, 8, 3},
                                    {"f16", 256, 64, 32, 16, 3}};

TEST(WarpSpecialize, PersistentMatmulIsExactUnderRacecheck) { checkMatmul("matmul_persistent_ws", false, true, kWsCases); }
TEST(WarpSpecialize, PersistentMatmulOfBTransposedIsExact) { checkMatmul("matmul_persistent_bt_ws", true, true, kWsCases); }
TEST(WarpSpecialize, DotLoopOfOneProgramPerTileIsExact) { checkMatmul("matmul_ws", false, false, kWsCases); }

// The producer warpgroup after the kernel's warps: the bundle launches it,
// the PTX splits the registers where two or more consumer warpgroups share
// them, the consumers release slots with mbarrier.arrive and wait for no
// block barrier in the dot loop.
TEST(WarpSpecialize, KernelLaunchesAProducerWarpgroup) {
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  for (const Case &c : kWsCases) {
    const tk::Bundle b = compile(c, "matmul_persistent_ws");
    EXPECT_EQ(b.producerWarps, 4);
    EXPECT_EQ(b.threadsPerBlock(), (c.warps + 4) * 32);
    const std::string &ptx = b.ptx.at("sm_90a");
    EXPECT_NE(ptx.find("mbarrier.arrive.shared::cta.b64"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d"), std::string::npos);
    const bool split = c.warps >= 8;
    EXPECT_EQ(ptx.find("setmaxnreg.inc.sync.aligned.u32") != std::string::npos, split) << c.warps;
    EXPECT_EQ(ptx.find(".maxnreg") != std::string::npos, split) << c.warps;
    if (toolkit.hasPtxas()) {
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(ptx, "sm_90a", toolkit);
      EXPECT_TRUE(info.ran) << info.log;
      EXPECT_EQ(info.spillStoreBytes, 0) << info.log;
    }
  }
  // The plain kernel launches its own warps only.
  EXPECT_EQ(compile(kCases[0]).producerWarps, 0);
}

// A bundle edited in memory (a file's checksum stops an edited file first):
// the sim lowers its tile IR itself and refuses what a launch would then
// pass wrongly.
TEST(Tma, TheSimRefusesABundleWhoseMapsOrSharedMemoryAreNotItsIRs) {
  auto dev = tk::Device::open("sim");
  const tk::Bundle good = compile(kCases[0]);
  for (int edit = 0; edit < 4; ++edit) {
    tk::Bundle b = good;
    if (edit == 0) b.tensorMaps.pop_back();
    if (edit == 1) b.tensorMaps[0].box = {16, 32};
    if (edit == 2) b.sharedBytes = 1024;
    if (edit == 3) b.producerWarps = 4;
    try {
      dev->load(b);
      ADD_FAILURE() << "edit " << edit << " loaded";
    } catch (const tk::Error &e) {
      const std::string want = edit == 2   ? "bytes of shared memory, the bundle gives 1024"
                               : edit == 3 ? "its producer_warps (4) are not its tile IR's (0)"
                                           : "are not the ones its tile IR copies through";
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(dev->load(good));
}

// The same source compiled for sm_80 as well keeps cp.async everywhere: one
// tile IR serves every arch of a bundle.
TEST(Tma, ABundleForSm80AndSm90aTakesNoTensorMaps) {
  tk::CompileOptions opts;
  opts.archs = {"sm_80", "sm_90a"};
  const tk::Bundle b = tk::Compiler::compileFile(kFile, "matmul_persistent", opts);
  EXPECT_TRUE(b.tensorMaps.empty());
  for (const char *arch : {"sm_80", "sm_90a"}) {
    EXPECT_EQ(b.ptx.at(arch).find("cp.async.bulk.tensor"), std::string::npos) << arch;
    EXPECT_NE(b.ptx.at(arch).find("cp.async.cg"), std::string::npos) << arch;
  }
}

}  // namespace
