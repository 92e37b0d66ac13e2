// `dot` on the other tensor-core shapes (tests/kernels/dot_precision.tk):
// f32 with input_precision "tf32" on mma.sync m16n8k8 and i8 into i32 on
// m16n8k32, run on the sim at ragged sizes, 1 to 8 warps, short and long K,
// against a double reference (tf32: within its rounding; i8: exactly); the
// PTX carries the instructions for sm_80 and sm_90a (which keeps mma.sync
// for them) and ptxas takes it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "runtime_TestUtil.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/dot_precision.tk";

struct Case {
  int M, N, K, blockM, blockN, blockK, warps;
};

tk::Bundle compile(const Case &c, bool i8, std::vector<std::string> archs) {
  tk::CompileOptions o;
  o.numWarps = c.warps;
  o.archs = std::move(archs);
  o.defines = {{"K", std::to_string(c.K)},
               {"BLOCK_M", std::to_string(c.blockM)},
               {"BLOCK_N", std::to_string(c.blockN)},
               {"BLOCK_K", std::to_string(c.blockK)}};
  return tk::Compiler::compileFile(kFile, i8 ? "matmul_i8" : "matmul_tf32", o);
}

std::string describe(const Case &c, bool i8, const std::string &arch) {
  return arch + (i8 ? " i8" : " tf32") + " M=" + std::to_string(c.M) + " N=" + std::to_string(c.N) +
         " K=" + std::to_string(c.K) + " blocks " + std::to_string(c.blockM) + "x" + std::to_string(c.blockN) + "x" +
         std::to_string(c.blockK) + " warps " + std::to_string(c.warps);
}

// tf32: each operand rounded to 10 mantissa bits (relative error 2^-11 each),
// products summed in f32: |error| <= 2^-10 * sum |a b| and a little more.
void runTf32(tk::Device &dev, const Case &c, const std::string &arch = "sm_80") {
  SCOPED_TRACE(describe(c, false, arch));
  tk::Bundle bundle = compile(c, false, {arch});
  EXPECT_NE(bundle.tir.find("#blocked<[1,2],[8,4]"), std::string::npos) << "the product has the mma layout";
  const auto a = tk::test::randomFloats(size_t(c.M) * c.K, -1, 1);
  const auto b = tk::test::randomFloats(size_t(c.K) * c.N, -1, 1);
  tk::Buffer da = dev.upload(a), db = dev.upload(b);
  tk::Buffer dc = dev.upload(std::vector<float>(size_t(c.M) * c.N, NAN));
  tk::Dim3 grid{uint32_t((c.M + c.blockM - 1) / c.blockM), uint32_t((c.N + c.blockN - 1) / c.blockN), 1};
  dev.launch(dev.load(bundle), grid, {da, db, dc, int32_t(c.M), int32_t(c.N)});
  std::vector<float> got = dev.download<float>(dc, size_t(c.M) * c.N);
  double worst = 0;
  for (int i = 0; i < c.M; ++i)
    for (int j = 0; j < c.N; ++j) {
      double ref = 0, mag = 0;
      for (int k = 0; k < c.K; ++k) {
        double p = double(a[size_t(i) * c.K + k]) * b[size_t(k) * c.N + j];
        ref += p;
        mag += std::fabs(p);
      }
      const double err = std::fabs(got[size_t(i) * c.N + j] - ref);
      worst = std::max(worst, err / mag);
      if (!(err <= 1.1 * 0x1p-10 * mag + 1e-30)) {
        ADD_FAILURE() << "C[" << i << ", " << j << "] = " << got[size_t(i) * c.N + j] << ", expected " << ref
                      << " (sum |a b| " << mag << ")";
        return;
      }
    }
  // A product on FMA units would be within ~K * 2^-24; tf32 is visibly coarser.
  if (c.M * c.N * c.K >= 4096) EXPECT_GT(worst, 1e-5) << "the operands were not rounded to tf32";
}

void runI8(tk::Device &dev, const Case &c, const std::string &arch = "sm_80") {
  SCOPED_TRACE(describe(c, true, arch));
  tk::Bundle bundle = compile(c, true, {arch});
  EXPECT_NE(bundle.tir.find("#blocked<[1,2],[8,4]"), std::string::npos) << "the product has the mma layout";
  static std::mt19937 rng(tk::test::testSeed());
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int8_t> a(size_t(c.M) * c.K), b(size_t(c.K) * c.N);
  for (int8_t &v : a) v = int8_t(d(rng));
  for (int8_t &v : b) v = int8_t(d(rng));
  tk::Buffer da = dev.upload(a), db = dev.upload(b);
  tk::Buffer dc = dev.upload(std::vector<int32_t>(size_t(c.M) * c.N, INT32_MIN));
  tk::Dim3 grid{uint32_t((c.M + c.blockM - 1) / c.blockM), uint32_t((c.N + c.blockN - 1) / c.blockN), 1};
  dev.launch(dev.load(bundle), grid, {da, db, dc, int32_t(c.M), int32_t(c.N)});
  std::vector<int32_t> got = dev.download<int32_t>(dc, size_t(c.M) * c.N);
  for (int i = 0; i < c.M; ++i)
    for (int j = 0; j < c.N; ++j) {
      int64_t ref = 0;
      for (int k = 0; k < c.K; ++k) ref += int64_t(a[size_t(i) * c.K + k]) * b[size_t(k) * c.N + j];
      if (got[size_t(i) * c.N + j] != ref) {
        ADD_FAILURE() << "C[" << i << ", " << j << "] = " << got[size_t(i) * c.N + j] << ", expected " << ref;
        return;
      }
    }
}

TEST(TensorCoresTf32, RaggedSizesAndWarpCounts) {
  auto dev = tk::Device::open("sim");
  for (int warps : {1, 2, 4, 8})
    for (Case c : {Case{1, 1, 1, 32, 32, 32, 0}, Case{127, 33, 48, 64, 32, 16, 0}, Case{100, 70, 96, 64, 64, 32, 0}}) {
      c.warps = warps;
      runTf32(*dev, c);
    }
  // K = 64 in one chunk: 8 k8 steps, a loop.
  runTf32(*dev, Case{64, 64, 128, 64, 64, 64, 4});
}

TEST(TensorCoresI8, RaggedSizesAndWarpCountsExactly) {
  auto dev = tk::Device::open("sim");
  for (int warps : {1, 2, 4, 8})
    for (Case c : {Case{1, 1, 1, 32, 32, 32, 0}, Case{127, 33, 96, 64, 32, 32, 0}, Case{100, 70, 160, 64, 64, 64, 0}}) {
      c.warps = warps;
      runI8(*dev, c);
    }
  // K = 256 in one chunk: 8 k32 steps, a loop.
  runI8(*dev, Case{64, 64, 512, 64, 64, 256, 4});
}

// sm_90a keeps mma.sync for tf32 and i8 (wgmma here takes f16/bf16 only),
// and the race check finds nothing in the staging.
TEST(TensorCoresPrecision, Sm90aKeepsMmaSyncRaceFree) {
  auto dev = tk::Device::open("sim:racecheck");
  runTf32(*dev, Case{128, 128, 64, 128, 128, 32, 4}, "sm_90a");
  runI8(*dev, Case{128, 128, 128, 128, 128, 64, 4}, "sm_90a");
}

TEST(TensorCoresPrecision, PtxHasTheMmaAndPtxasTakesIt) {
  const std::vector<std::string> archs = {"sm_80", "sm_90a"};
  const Case c{64, 64, 256, 64, 64, 32, 4};
  tk::Bundle tf32 = compile(c, false, archs), i8 = compile(Case{64, 64, 256, 64, 64, 64, 4}, true, archs);
  for (const std::string &arch : archs) {
    const std::string &pt = tf32.ptx.at(arch), &pi = i8.ptx.at(arch);
    EXPECT_NE(pt.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos) << arch;
    EXPECT_NE(pt.find("cvt.rna.tf32.f32"), std::string::npos) << arch;
    EXPECT_EQ(pt.find("fma.rn.f32"), std::string::npos) << arch << ": no FMA product left";
    EXPECT_NE(pi.find("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"), std::string::npos) << arch;
    for (const std::string *p : {&pt, &pi}) {
      EXPECT_NE(p->find("ldmatrix.sync.aligned.m8n8.x4.shared.b16"), std::string::npos) << arch;
      EXPECT_NE(p->find("ldmatrix.sync.aligned.m8n8.x2.shared.b16"), std::string::npos) << arch;
      EXPECT_EQ(p->find("wgmma"), std::string::npos) << arch;
    }
  }
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "no ptxas: the CUDA toolkit was not found (CUDA_HOME, /usr/local/cuda)";
  for (const std::string &arch : archs)
    for (auto [name, bundle] : {std::pair{"tf32", &tf32}, std::pair{"i8", &i8}}) {
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(bundle->ptx.at(arch), arch, toolkit);
      ASSERT_TRUE(info.ran) << info.log;
      std::printf("matmul_%s 64x64, K 256, 4 warps, %s: %d registers, %d/%d bytes spill stores/loads\n", name,
                  arch.c_str(), info.registers, info.spillStoreBytes, info.spillLoadBytes);
      EXPECT_EQ(info.spillStoreBytes, 0) << info.log;
      EXPECT_EQ(info.spillLoadBytes, 0) << info.log;
    }
}

// Without input_precision an f32 dot stays on FMA units (IEEE f32).
TEST(TensorCoresPrecision, F32DefaultsToIeee) {
  tk::CompileOptions o;
  o.archs = {"sm_80"};
  tk::Bundle b = tk::Compiler::compileFile(TK_SOURCE_DIR + "/tests/kernels/dot.tk", "matmul_f32", o);
  EXPECT_EQ(b.ptx.at("sm_80").find("mma.sync"), std::string::npos);
  EXPECT_EQ(b.ptx.at("sm_80").find("tf32"), std::string::npos);
  EXPECT_NE(b.ptx.at("sm_80").find("fma.rn.f32"), std::string::npos);
}

}  // namespace
