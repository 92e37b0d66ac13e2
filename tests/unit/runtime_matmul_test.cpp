// stdlib/matmul.tk on the sim: C = A @ B on tensor cores at ragged sizes and
// 512^3, transposed operands through strides, every epilogue, the batched
// kernel, and a tuned launch -- against a double reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "runtime_TestUtil.h"
#include "tk/jit.h"
#include "tk/runtime.h"
#include "tk/tune.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/stdlib/matmul.tk";

using tk::test::exactHalfInputs;


double act(double x, int a) {
  switch (a) {
    case 1: return std::max(0.0, x);
    case 2: return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case 3: return x > 0 ? x : 0.01 * x;
    case 4: return x / (1 + std::exp(-x));
  }
  return x;
}

struct Problem {
  int M, N, K;
  bool transA = false, transB = false, bias = false;
  int act = 0;
  bool transC = false;  // C stored [N, M] (stride_cm 1, stride_cn M)
};

// Runs matmul on `p` with consts `defines` and checks C element by element.
// `stages`: num_stages; `unitStrides`: unit inner strides and row strides
// padded to multiples of 16, run by the variant those values specialise (so
// operand copies are 16-byte cp.async, not scalar); `arch`: the one the bundle is compiled for, so the
// arch the sim emulates (sm_90a: dot on wgmma); `alsoFor`: more archs the
// bundle is compiled for (their PTX is not run).
void check(tk::Device &dev, const Problem &p, std::map<std::string, std::string> defines = {}, int warps = 4,
           int stages = 3, bool unitStrides = false, const std::string &arch = "sm_80",
           const std::vector<std::string> &alsoFor = {}) {
  SCOPED_TRACE(arch + " stages " + std::to_string(stages) + " M=" + std::to_string(p.M) + " N=" + std::to_string(p.N) +
               " K=" + std::to_string(p.K) +
               (p.transA ? " A^T" : "") + (p.transB ? " B^T" : "") + " act " + std::to_string(p.act));
  const auto a = exactHalfInputs(size_t(p.M) * p.K), b = exactHalfInputs(size_t(p.K) * p.N);
  const auto bias = exactHalfInputs(size_t(p.N));
  // Stored transposed when asked: A^T is [K, M] row-major, read with swapped
  // strides. With unitStrides rows are padded to a multiple of 16 elements,
  // as a Triton launch specialises them, so 16-byte copies are aligned.
  auto pad = [&](int n) { return unitStrides ? (n + 15) / 16 * 16 : n; };
  const int lda = pad(p.transA ? p.M : p.K), ldb = pad(p.transB ? p.K : p.N);
  std::vector<float> as(size_t(p.transA ? p.K : p.M) * lda, 0.f), bs(size_t(p.transB ? p.N : p.K) * ldb, 0.f);
  for (int i = 0; i < p.M; ++i)
    for (int k = 0; k < p.K; ++k) as[p.transA ? size_t(k) * lda + i : size_t(i) * lda + k] = a[size_t(i) * p.K + k];
  for (int k = 0; k < p.K; ++k)
    for (int j = 0; j < p.N; ++j) bs[p.transB ? size_t(j) * ldb + k : size_t(k) * ldb + j] = b[size_t(k) * p.N + j];
  tk::CompileOptions o;
  o.numWarps = warps;
  o.archs = {arch};
  o.archs.insert(o.archs.end(), alsoFor.begin(), alsoFor.end());
  o.numStages = stages;
  o.defines = defines;
  if (p.bias) o.defines["HAS_BIAS"] = "true";
  o.defines["ACT"] = std::to_string(p.act);
  const int32_t sam = p.transA ? 1 : lda, sak = p.transA ? lda : 1;
  const int32_t sbk = p.transB ? 1 : ldb, sbn = p.transB ? ldb : 1;
  // With unitStrides the bundle is the variant these arguments specialise
  // (what tk::JitKernel launches): the unit inner strides, the padded row
  // strides, and M, N, K where they are 1 or multiples of 16.
  if (unitStrides) {
    const std::vector<tk::Arg> ints = {tk::Buffer(), tk::Buffer(), tk::Buffer(), tk::Buffer(), int32_t(p.M),
                                       int32_t(p.N), int32_t(p.K), sam, sak, sbk, sbn, int32_t(p.N), int32_t(1)};
    o.assume = tk::launchSpecialisation(tk::Compiler::signature(kFile, "matmul", o.defines), ints);
    EXPECT_EQ(o.assume.count(p.transA ? "stride_am" : "stride_ak"), 1u);
  }
  tk::Bundle bundle = tk::Compiler::compileFile(kFile, "matmul", o);
  if (arch == "sm_90a" && warps >= 4)  // every config below takes wgmma with 4 and 8 warps
    EXPECT_NE(bundle.ptx[arch].find("wgmma.mma_async"), std::string::npos);
  tk::Buffer da = dev.upload(tk::test::f16Values(as)), db = dev.upload(tk::test::f16Values(bs)), dbias = dev.upload(bias);
  tk::Buffer dc = dev.upload(std::vector<float>(size_t(p.M) * p.N, NAN));
  const int64_t bm = bundle.constInt("BLOCK_M"), bn = bundle.constInt("BLOCK_N");
  const uint32_t grid = uint32_t(((p.M + bm - 1) / bm) * ((p.N + bn - 1) / bn));
  const int32_t scm = p.transC ? 1 : p.N, scn = p.transC ? p.M : 1;
  dev(dev.load(bundle), {grid}, da, db, dc, dbias, int32_t(p.M), int32_t(p.N), int32_t(p.K), sam, sak, sbk, sbn, scm,
      scn);
  std::vector<float> got = dev.download<float>(dc, size_t(p.M) * p.N);
  for (int i = 0; i < p.M; ++i)
    for (int j = 0; j < p.N; ++j) {
      double s = 0;
      for (int k = 0; k < p.K; ++k) s += double(a[size_t(i) * p.K + k]) * b[size_t(k) * p.N + j];
      if (p.bias) s += bias[j];
      const double ref = act(s, p.act), g = got[size_t(i) * scm + size_t(j) * scn];
      if (!(std::fabs(g - ref) <= 1e-5 * std::max(1.0, std::fabs(ref)))) {
        ADD_FAILURE() << "C[" << i << ", " << j << "] = " << g << ", expected " << ref;
        return;
      }
    }
}

TEST(StdlibMatmul, RaggedSizesAndTiles) {
  auto dev = tk::Device::open("sim");
  for (Problem p : {Problem{1, 1, 1}, Problem{127, 500, 64}, Problem{500, 127, 33}, Problem{33, 65, 1023}})
    check(*dev, p, {{"BLOCK_M", "64"}, {"BLOCK_N", "64"}, {"BLOCK_K", "32"}});
  check(*dev, Problem{100, 200, 48}, {{"BLOCK_M", "32"}, {"BLOCK_N", "64"}, {"BLOCK_K", "16"}}, 2);
  check(*dev, Problem{130, 70, 40}, {{"BLOCK_M", "128"}, {"BLOCK_N", "64"}, {"BLOCK_K", "32"}}, 8);
}

// C through run-time strides, transposed: no layout is known to coalesce
// its store, which stores from the accumulator's registers (one element
// each), on mma.sync and on wgmma, at a tile whose thread holds 32 columns
// and one holding 64 (which keeps the exchange through shared memory).
TEST(StdlibMatmul, TransposedResultThroughRunTimeStrides) {
  auto dev = tk::Device::open("sim");
  const std::map<std::string, std::string> wide = {{"BLOCK_M", "128"}, {"BLOCK_N", "128"}, {"BLOCK_K", "32"}};
  for (const char *arch : {"sm_80", "sm_90a"}) {
    Problem p{130, 70, 40};
    p.transC = true;
    check(*dev, p, {}, 4, 3, false, arch);
    check(*dev, p, wide, 4, 4, false, arch);
    p.transA = true;
    check(*dev, p, {{"BLOCK_M", "64"}, {"BLOCK_N", "256"}, {"BLOCK_K", "32"}}, 4, 3, false, arch);
  }
}

// The operand pipeline at every depth: ragged M, N and K (partial chunks
// zero-filled through cp.async's source size), copies through registers
// (run-time strides, transposed operands) and 16-byte cp.async (unit
// strides), with the race check on: no read of a slot before its wait.
TEST(StdlibMatmul, PipelinedOverNumStages) {
  auto dev = tk::Device::open("sim:racecheck");
  const std::map<std::string, std::string> tiles = {{"BLOCK_M", "64"}, {"BLOCK_N", "64"}, {"BLOCK_K", "32"}};
  for (int stages : {1, 2, 3, 4}) {
    SCOPED_TRACE("num_stages " + std::to_string(stages));
    for (bool unit : {false, true}) {
      SCOPED_TRACE(unit ? "unit strides" : "run-time strides");
      for (Problem p : {Problem{1, 1, 1}, Problem{127, 127, 127}, Problem{70, 40, 500}, Problem{33, 20, 1023}})
        check(*dev, p, tiles, 4, stages, unit);
      check(*dev, Problem{96, 80, 100, true, true}, tiles, 4, stages, unit);
    }
  }
  check(*dev, Problem{130, 70, 200}, {{"BLOCK_M", "128"}, {"BLOCK_N", "64"}, {"BLOCK_K", "32"}}, 8, 4, true);
  check(*dev, Problem{100, 200, 48}, {{"BLOCK_M", "32"}, {"BLOCK_N", "64"}, {"BLOCK_K", "16"}}, 2, 4, true);
}

TEST(StdlibMatmul, At512CubedPipelined) {
  auto dev = tk::Device::open("sim");
  check(*dev, Problem{512, 512, 512}, {{"BLOCK_M", "128"}, {"BLOCK_N", "128"}, {"BLOCK_K", "32"}}, 4, 4, true);
}

TEST(StdlibMatmul, At512Cubed) {
  auto dev = tk::Device::open("sim");
  check(*dev, Problem{512, 512, 512});  // the default 128 x 128 x 32 tiles, 4 warps
}

TEST(StdlibMatmul, TransposedOperandsAndEpilogues) {
  auto dev = tk::Device::open("sim");
  const std::map<std::string, std::string> small = {{"BLOCK_M", "64"}, {"BLOCK_N", "32"}, {"BLOCK_K", "32"}};
  check(*dev, Problem{96, 80, 64, true, false}, small);
  check(*dev, Problem{96, 80, 64, false, true}, small);
  check(*dev, Problem{96, 80, 64, true, true, true, 1}, small);
  for (int a = 1; a <= 4; ++a) check(*dev, Problem{70, 50, 32, false, false, true, a}, small);
}

// The same problems with the sim emulating sm_90a: dot on wgmma with 4 and 8
// warps (2 warps fall back to mma.sync).
TEST(StdlibMatmul, OnWgmma) {
  auto dev = tk::Device::open("sim");
  const std::map<std::string, std::string> tiles = {{"BLOCK_M", "64"}, {"BLOCK_N", "64"}, {"BLOCK_K", "32"}};
  for (Problem p : {Problem{1, 1, 1}, Problem{127, 500, 64}, Problem{500, 127, 33}, Problem{33, 65, 1023}})
    check(*dev, p, tiles, 4, 3, false, "sm_90a");
  check(*dev, Problem{100, 200, 48}, {{"BLOCK_M", "32"}, {"BLOCK_N", "64"}, {"BLOCK_K", "16"}}, 2, 3, false, "sm_90a");
  check(*dev, Problem{130, 70, 40}, {{"BLOCK_M", "128"}, {"BLOCK_N", "64"}, {"BLOCK_K", "32"}}, 8, 3, false, "sm_90a");
  check(*dev, Problem{300, 260, 96}, {{"BLOCK_M", "128"}, {"BLOCK_N", "256"}, {"BLOCK_K", "64"}}, 8, 3, false, "sm_90a");
  const std::map<std::string, std::string> small = {{"BLOCK_M", "64"}, {"BLOCK_N", "32"}, {"BLOCK_K", "32"}};
  check(*dev, Problem{96, 80, 64, true, false}, small, 4, 3, false, "sm_90a");
  check(*dev, Problem{96, 80, 64, false, true}, small, 4, 3, false, "sm_90a");
  check(*dev, Problem{96, 80, 64, true, true, true, 1}, small, 4, 3, false, "sm_90a");
  for (int a = 1; a <= 4; ++a) check(*dev, Problem{70, 50, 32, false, false, true, a}, small, 4, 3, false, "sm_90a");
  check(*dev, Problem{512, 512, 512}, {}, 4, 3, false, "sm_90a");  // 128 x 128 x 32: 4 wgmma m64n128k16 per K step
}

// Pipelined on sm_90a: wgmma reads the cp.async ring slots in place through
// matrix descriptors (the slots in its swizzled layouts), at every depth,
// ragged sizes, 16-byte cp.async and copies through registers, 4 and 8 warps
// on wgmma and 1 and 2 on mma.sync, under the race check (no slot read
// before its wait) and the sim's check that the copies were fenced for the
// async proxy before wgmma reads them.
TEST(StdlibMatmul, OnWgmmaFromTheRing) {
  auto dev = tk::Device::open("sim:racecheck");
  const std::map<std::string, std::string> tiles = {{"BLOCK_M", "64"}, {"BLOCK_N", "64"}, {"BLOCK_K", "32"}};
  for (int stages : {2, 3, 4})
    for (bool unit : {false, true}) {
      SCOPED_TRACE(unit ? "unit strides" : "run-time strides");
      for (Problem p : {Problem{1, 1, 1}, Problem{127, 127, 127}, Problem{70, 40, 500}, Problem{33, 20, 1023}})
        check(*dev, p, tiles, 4, stages, unit, "sm_90a");
      check(*dev, Problem{96, 80, 100, true, true}, tiles, 4, stages, unit, "sm_90a");
    }
  check(*dev, Problem{130, 70, 200}, {{"BLOCK_M", "128"}, {"BLOCK_N", "64"}, {"BLOCK_K", "32"}}, 8, 4, true, "sm_90a");
  check(*dev, Problem{300, 260, 200}, {{"BLOCK_M", "128"}, {"BLOCK_N", "256"}, {"BLOCK_K", "64"}}, 8, 3, true,
        "sm_90a");
  check(*dev, Problem{100, 200, 48}, {{"BLOCK_M", "32"}, {"BLOCK_N", "64"}, {"BLOCK_K", "16"}}, 2, 4, true, "sm_90a");
  check(*dev, Problem{50, 30, 70}, {{"BLOCK_M", "16"}, {"BLOCK_N", "32"}, {"BLOCK_K", "16"}}, 1, 3, true, "sm_90a");
  check(*dev, Problem{257, 250, 160}, {{"BLOCK_M", "128"}, {"BLOCK_N", "128"}, {"BLOCK_K", "32"}}, 4, 4, true,
        "sm_90a");
}

// A bundle for sm_80 and sm_90a is laid out for wgmma (warps [num_warps, 1]);
// on sm_80 mma.sync runs in that layout, ldmatrix reading the row-major ring
// slots: the sim emulates sm_80 here.
TEST(StdlibMatmul, MmaSyncInWgmmasLayout) {
  auto dev = tk::Device::open("sim:racecheck");
  for (int stages : {1, 3})
    for (Problem p : {Problem{127, 127, 127}, Problem{70, 40, 500}, Problem{96, 80, 100, true, true}})
      check(*dev, p, {{"BLOCK_M", "64"}, {"BLOCK_N", "64"}, {"BLOCK_K", "32"}}, 4, stages, true, "sm_80", {"sm_90a"});
  check(*dev, Problem{130, 70, 200}, {{"BLOCK_M", "128"}, {"BLOCK_N", "64"}, {"BLOCK_K", "32"}}, 8, 4, true, "sm_80",
        {"sm_90a"});
}

// C stored straight from the accumulator's registers (8-byte pairs: c's
// rows padded to 16 elements, stride_cn 1) at a ragged N: an odd N leaves
// each row's last pair half on, stored by its first element alone. The
// padding past N stays poisoned, and with bias and gelu the epilogue runs in
// the accumulator's layout too. mma.sync (sm_80) and wgmma, 4 and 8 warps,
// under the race check.
TEST(StdlibMatmul, StoresFromTheAccumulator) {
  auto dev = tk::Device::open("sim:racecheck");
  struct Run {
    std::string arch;
    int warps, M, N, K, act;
  };
  for (const Run &r : {Run{"sm_90a", 4, 70, 37, 48, 0}, Run{"sm_90a", 8, 130, 129, 32, 2}, Run{"sm_80", 4, 70, 37, 48, 2},
                       Run{"sm_90a", 4, 64, 64, 32, 0}}) {
    SCOPED_TRACE(r.arch + " " + std::to_string(r.warps) + " warps, N " + std::to_string(r.N));
    const int ld = (r.N + 15) / 16 * 16, lda = (r.K + 15) / 16 * 16;
    const auto a = exactHalfInputs(size_t(r.M) * r.K), b = exactHalfInputs(size_t(r.K) * r.N);
    const auto bias = exactHalfInputs(size_t(r.N));
    std::vector<float> as(size_t(r.M) * lda, 0.f), bs(size_t(r.K) * ld, 0.f);
    for (int i = 0; i < r.M; ++i)
      for (int k = 0; k < r.K; ++k) as[size_t(i) * lda + k] = a[size_t(i) * r.K + k];
    for (int k = 0; k < r.K; ++k)
      for (int j = 0; j < r.N; ++j) bs[size_t(k) * ld + j] = b[size_t(k) * r.N + j];
    tk::CompileOptions o;
    o.numWarps = r.warps;
    o.numStages = 4;
    o.archs = {r.arch};
    o.defines = {{"BLOCK_M", "128"}, {"BLOCK_N", "64"}, {"BLOCK_K", "32"}, {"ACT", std::to_string(r.act)}};
    if (r.act) o.defines["HAS_BIAS"] = "true";
    o.assume = {{"stride_ak", 1}, {"stride_bn", 1}, {"stride_cn", 1}, {"stride_am", 16}, {"stride_bk", 16},
                {"stride_cm", 16}, {"K", 16}};
    tk::Bundle bundle = tk::Compiler::compileFile(kFile, "matmul", o);
    EXPECT_NE(bundle.ptx[r.arch].find("st.global.v2.b32"), std::string::npos) << "the accumulator's pairs";
    tk::Buffer da = dev->upload(tk::test::f16Values(as)), db = dev->upload(tk::test::f16Values(bs));
    tk::Buffer dbias = dev->upload(bias), dc = dev->upload(std::vector<float>(size_t(r.M) * ld, NAN));
    const uint32_t grid = uint32_t(((r.M + 127) / 128) * ((r.N + 63) / 64));
    (*dev)(dev->load(bundle), {grid}, da, db, dc, dbias, int32_t(r.M), int32_t(r.N), int32_t(r.K), int32_t(lda),
           int32_t(1), int32_t(ld), int32_t(1), int32_t(ld), int32_t(1));
    std::vector<float> got = dev->download<float>(dc, size_t(r.M) * ld);
    for (int i = 0; i < r.M; ++i)
      for (int j = 0; j < ld; ++j) {
        const double g = got[size_t(i) * ld + j];
        if (j >= r.N) {
          ASSERT_TRUE(std::isnan(g)) << "C[" << i << ", " << j << "] past N was written";
          continue;
        }
        double s = 0;
        for (int k = 0; k < r.K; ++k) s += double(a[size_t(i) * r.K + k]) * b[size_t(k) * r.N + j];
        if (r.act) s += bias[j];
        const double ref = act(s, r.act);
        ASSERT_LE(std::fabs(g - ref), 1e-5 * std::max(1.0, std::fabs(ref))) << "C[" << i << ", " << j << "]";
      }
  }
}

TEST(StdlibMatmul, Batched) {
  auto dev = tk::Device::open("sim");
  const int Z = 3, M = 70, N = 40, K = 48;
  const auto a = exactHalfInputs(size_t(Z) * M * K), b = exactHalfInputs(size_t(Z) * K * N);
  tk::Bundle bundle = tk::Compiler::compileFile(kFile, "matmul_batched");
  tk::Buffer da = dev->upload(tk::test::f16Values(a)), db = dev->upload(tk::test::f16Values(b));
  tk::Buffer dc = dev->upload(std::vector<float>(size_t(Z) * M * N, NAN));
  const uint32_t tiles = uint32_t(((M + 63) / 64) * ((N + 63) / 64));
  (*dev)(dev->load(bundle), {tiles, uint32_t(Z)}, da, db, dc, int32_t(M), int32_t(N), int32_t(K), int32_t(M * K),
         int32_t(K), int32_t(1), int32_t(K * N), int32_t(N), int32_t(1), int32_t(M * N), int32_t(N), int32_t(1));
  std::vector<float> got = dev->download<float>(dc, size_t(Z) * M * N);
  for (int z = 0; z < Z; ++z)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double s = 0;
        for (int k = 0; k < K; ++k) s += double(a[(size_t(z) * M + i) * K + k]) * b[(size_t(z) * K + k) * N + j];
        ASSERT_EQ(got[(size_t(z) * M + i) * N + j], s) << z << " " << i << " " << j;
      }
}

// The @tune space compiles and tunes on the sim; the tuned launch is right.
TEST(StdlibMatmul, TunedLaunch) {
  auto dev = tk::Device::open("sim");
  const int M = 256, N = 256, K = 128;
  const auto a = exactHalfInputs(size_t(M) * K), b = exactHalfInputs(size_t(K) * N);
  tk::Buffer da = dev->upload(tk::test::f16Values(a)), db = dev->upload(tk::test::f16Values(b)), dbias = dev->upload(exactHalfInputs(N));
  tk::Buffer dc = dev->upload(std::vector<float>(size_t(M) * N, NAN));
  std::vector<tk::Arg> args = {da, db, dc, dbias, int32_t(M), int32_t(N), int32_t(K), int32_t(K), int32_t(1),
                               int32_t(N), int32_t(1), int32_t(N), int32_t(1)};
  auto grid = [&](const tk::Bundle &bundle) {
    const int64_t bm = bundle.constInt("BLOCK_M"), bn = bundle.constInt("BLOCK_N");
    return tk::Dim3{uint32_t(((M + bm - 1) / bm) * ((N + bn - 1) / bn))};
  };
  tk::TuneOptions o;
  o.warn = [](const std::string &) {};
  tk::Tuner tuner(*dev, kFile, "matmul", {}, o);
  tk::TuneReport r = tuner.tune(grid, args);
  std::printf("%s", r.table().c_str());
  ASSERT_GE(r.best, 0);
  dev->copyToDevice(dc, std::vector<float>(size_t(M) * N, NAN).data(), size_t(M) * N * 4);
  tuner.launch(grid, args);
  std::vector<float> got = dev->download<float>(dc, size_t(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(a[size_t(i) * K + k]) * b[size_t(k) * N + j];
      ASSERT_EQ(got[size_t(i) * N + j], s) << i << " " << j;
    }
}

}  // namespace
