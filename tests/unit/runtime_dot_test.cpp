// `dot` end to end: the tiled matmuls of tests/kernels/dot.tk on the sim
// against a double-precision CPU reference, at ragged sizes, every element
// type and several warp counts; the race check; ptxas on one config.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "runtime_TestUtil.h"
#include "tk/runtime.h"
#include "TestSeed.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/dot.tk";

enum class Elem { F32, F16, BF16, F64, I8 };

struct Config {
  int M, N, K;
  int blockM, blockN, blockK;
  int numWarps;
};

std::string str(const Config &c) {
  return "M=" + std::to_string(c.M) + " N=" + std::to_string(c.N) + " K=" + std::to_string(c.K) + " blocks " +
         std::to_string(c.blockM) + "x" + std::to_string(c.blockN) + "x" + std::to_string(c.blockK) + " warps " +
         std::to_string(c.numWarps);
}

// f16 and bf16 bits of a float that either type holds exactly (the inputs
// are multiples of 1/64 in [-2, 2]: normal, at most 8 significant bits).
uint16_t bf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}
uint16_t f16Bits(float f) {
  if (f == 0) return 0;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 31) << 15;
  const int exp = int((u >> 23) & 0xff) - 127 + 15;
  return static_cast<uint16_t>(sign | uint32_t(exp) << 10 | ((u >> 13) & 0x3ff));
}

// Inputs: f32/f64 uniform in [-1, 1); f16/bf16 multiples of 1/64 in [-2, 2]
// (exact in both); i8 integers in [-128, 127].
std::vector<double> randomInputs(Elem e, size_t n) {
  static std::mt19937 rng(tk::test::testSeed());
  std::vector<double> v(n);
  if (e == Elem::F32 || e == Elem::F64) {
    auto f = tk::test::randomFloats(n, -1, 1);
    for (size_t i = 0; i < n; ++i) v[i] = f[i];
  } else if (e == Elem::I8) {
    std::uniform_int_distribution<int> d(-128, 127);
    for (double &x : v) x = d(rng);
  } else {
    std::uniform_int_distribution<int> d(-128, 128);
    for (double &x : v) x = d(rng) / 64.0;
  }
  return v;
}

tk::Buffer upload(tk::Device &dev, Elem e, const std::vector<double> &v) {
  switch (e) {
    case Elem::F32: return dev.upload(std::vector<float>(v.begin(), v.end()));
    case Elem::F64: return dev.upload(v);
    case Elem::I8: return dev.upload(std::vector<int8_t>(v.begin(), v.end()));
    case Elem::F16:
    case Elem::BF16: {
      std::vector<uint16_t> bits;
      for (double x : v) bits.push_back(e == Elem::F16 ? f16Bits(float(x)) : bf16Bits(float(x)));
      return dev.upload(bits);
    }
  }
  return {};
}

const char *kernelName(Elem e) {
  switch (e) {
    case Elem::F32: return "matmul_f32";
    case Elem::F16: return "matmul_f16";
    case Elem::BF16: return "matmul_bf16";
    case Elem::F64: return "matmul_f64";
    case Elem::I8: return "matmul_i8";
  }
  return "";
}

tk::Bundle compile(Elem e, const Config &c) {
  tk::CompileOptions opts;
  opts.numWarps = c.numWarps;
  opts.defines = {{"K", std::to_string(c.K)},
                  {"BLOCK_M", std::to_string(c.blockM)},
                  {"BLOCK_N", std::to_string(c.blockN)},
                  {"BLOCK_K", std::to_string(c.blockK)}};
  return tk::Compiler::compileFile(kFile, kernelName(e), opts);
}

// Runs C = A @ B and checks every element against the double reference;
// returns the launch's counters.
tk::LaunchStats runAndCheck(tk::Device &dev, Elem e, const Config &c) {
  SCOPED_TRACE(std::string(kernelName(e)) + " " + str(c));
  tk::Kernel k = dev.load(compile(e, c));
  const auto a = randomInputs(e, size_t(c.M) * c.K), b = randomInputs(e, size_t(c.K) * c.N);
  const size_t n = size_t(c.M) * c.N;
  tk::Buffer da = upload(dev, e, a), db = upload(dev, e, b);
  // Outputs poisoned: NaN for floats, a sentinel for ints.
  tk::Buffer dc = e == Elem::F64 ? dev.upload(std::vector<double>(n, NAN))
                  : e == Elem::I8 ? dev.upload(std::vector<int32_t>(n, INT32_MIN))
                                  : dev.upload(std::vector<float>(n, NAN));
  const tk::Dim3 grid{uint32_t((c.M + c.blockM - 1) / c.blockM), uint32_t((c.N + c.blockN - 1) / c.blockN), 1};
  tk::LaunchStats s = dev(k, grid, da, db, dc, int32_t(c.M), int32_t(c.N));
  std::vector<double> got(n);
  if (e == Elem::F64) got = dev.download<double>(dc, n);
  else if (e == Elem::I8) {
    auto v = dev.download<int32_t>(dc, n);
    got.assign(v.begin(), v.end());
  } else {
    auto v = dev.download<float>(dc, n);
    got.assign(v.begin(), v.end());
  }
  // f32 sums round at each step; f16/bf16 inputs and their f32 sums are
  // exact here; f64 and i8 too.
  const double rel = e == Elem::F32 ? 1e-5 : e == Elem::F64 ? 1e-12 : 0;
  for (int i = 0; i < c.M; ++i)
    for (int j = 0; j < c.N; ++j) {
      double ref = 0, mag = 0;
      for (int kk = 0; kk < c.K; ++kk) {
        double p = a[size_t(i) * c.K + kk] * b[size_t(kk) * c.N + j];
        ref += p, mag += std::fabs(p);
      }
      const double g = got[size_t(i) * c.N + j];
      if (!(std::fabs(g - ref) <= rel * mag)) {  // NaN (an unwritten element) fails too
        ADD_FAILURE() << "C[" << i << ", " << j << "] = " << g << ", expected " << ref;
        return s;
      }
    }
  return s;
}

}  // namespace

TEST(Dot, F32RaggedSizesAndWarps) {
  auto dev = tk::Device::open("sim");
  for (int warps : {1, 4, 8})
    for (Config c : {Config{1, 1, 1, 32, 32, 32, 0}, Config{33, 127, 33, 32, 64, 32, 0},
                     Config{127, 33, 127, 64, 32, 32, 0}, Config{64, 64, 64, 64, 64, 32, 0}}) {
      c.numWarps = warps;
      runAndCheck(*dev, Elem::F32, c);
    }
}

TEST(Dot, F16AndBf16AccumulateInF32) {
  auto dev = tk::Device::open("sim");
  for (int warps : {1, 4, 8})
    for (Config c : {Config{1, 1, 1, 32, 32, 32, 0}, Config{33, 127, 127, 32, 64, 32, 0},
                     Config{127, 33, 33, 64, 32, 64, 0}}) {
      c.numWarps = warps;
      runAndCheck(*dev, Elem::F16, c);
      if (warps == 4) runAndCheck(*dev, Elem::BF16, c);  // the same path as f16 but for the widening
    }
}

TEST(Dot, F64AndI8) {
  auto dev = tk::Device::open("sim");
  for (Config c : {Config{33, 127, 33, 32, 64, 32, 4}, Config{127, 33, 127, 64, 32, 64, 8}}) {
    runAndCheck(*dev, Elem::F64, c);
    runAndCheck(*dev, Elem::I8, c);
  }
}

// Small tiles, down to 1x1: layouts replicate elements over threads, and
// only each element's owner may write it to shared memory.
TEST(Dot, TinyTilesReplicatedOverThreads) {
  auto dev = tk::Device::open("sim:racecheck");
  for (Config c : {Config{5, 3, 7, 1, 1, 1, 4}, Config{9, 17, 5, 2, 4, 8, 4}, Config{16, 16, 16, 16, 16, 16, 8}})
    for (Elem e : {Elem::F32, Elem::F16, Elem::BF16, Elem::F64, Elem::I8}) runAndCheck(*dev, e, c);
}

// At full tiles f16, bf16 and i8 elements go through shared memory 2 or 1
// bytes at a time, so threads write neighbouring bytes of one word: no race
// on a GPU, and none under the (per-byte) race check.
TEST(Dot, SubWordElementsRaceFree) {
  auto dev = tk::Device::open("sim:racecheck");
  for (Config c : {Config{33, 127, 127, 32, 64, 32, 4}, Config{127, 33, 33, 64, 32, 64, 8}})
    for (Elem e : {Elem::F16, Elem::BF16, Elem::I8}) runAndCheck(*dev, e, c);
}

// a and b go through shared memory between barriers: clean under the race
// check, with the bank traffic the lowering was designed for. The kernel's
// loads need no layout conversion, so the counters are dot's own.
TEST(Dot, RaceFreeAndBankConflictFree) {
  auto dev = tk::Device::open("sim:racecheck");
  EXPECT_NE(dev->name().find("race check"), std::string::npos);
  const int n = 128;  // 2 x 2 programs of 64 x 64, K = 128 in 4 chunks of 32
  tk::CompileOptions opts;
  opts.defines = {{"M", "128"}, {"N", "128"}, {"K", "128"}};
  tk::Bundle bundle = tk::Compiler::compileFile(kFile, "matmul_const_f32", opts);
  ASSERT_EQ(bundle.tir.find("convert_layout"), std::string::npos);
  const auto a = tk::test::randomFloats(n * n, -1, 1), b = tk::test::randomFloats(n * n, -1, 1);
  tk::Buffer da = dev->upload(a), db = dev->upload(b), dc = dev->upload(std::vector<float>(n * n, NAN));
  tk::LaunchStats s = (*dev)(dev->load(bundle), {2, 2, 1}, da, db, dc);
  auto c = dev->download<float>(dc, n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (int k = 0; k < n; ++k) ref += double(a[i * n + k]) * b[k * n + j], mag += std::fabs(a[i * n + k] * b[k * n + j]);
      ASSERT_NEAR(c[i * n + j], ref, 1e-5 * mag) << i << ", " << j;
    }
  ASSERT_GT(s.sharedRequests, 0u);
  const double perRequest = double(s.sharedWavefronts) / double(s.sharedRequests);
  std::printf("matmul_const_f32 64x64x32, 4 warps: %llu shared requests, %llu wavefronts (%.3f per request)\n",
              (unsigned long long)s.sharedRequests, (unsigned long long)s.sharedWavefronts, perRequest);
  // Per warp and K chunk of 32, every request at its minimum (distinct words
  // / 32): 64 v4 loads of a (8 rows x 8 steps; the warp's 2 rows sit in
  // different banks thanks to the row padding: 1 wavefront, 2 without it),
  // 32 v4 loads of b (64 distinct words: 2), 8 v4 stores (128 words: 4).
  // 160 wavefronts / 104 requests.
  EXPECT_EQ(s.sharedRequests, 4u * 4 * 4 * 104);
  EXPECT_EQ(s.sharedWavefronts, 4u * 4 * 4 * 160);
}

// The FMA path fits in registers at a typical config.
TEST(Dot, PtxasNoSpillsAt64x64x32) {
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "no ptxas: the CUDA toolkit was not found (CUDA_HOME, /usr/local/cuda)";
  for (Elem e : {Elem::F32, Elem::F16}) {
    tk::CompileOptions opts;
    opts.archs = {"sm_80", "sm_90"};
    opts.numWarps = 4;
    opts.defines = {{"K", "256"}, {"BLOCK_M", "64"}, {"BLOCK_N", "64"}, {"BLOCK_K", "32"}};
    tk::Bundle b = tk::Compiler::compileFile(kFile, kernelName(e), opts);
    for (const std::string &arch : opts.archs) {
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(b.ptx.at(arch), arch, toolkit);
      ASSERT_TRUE(info.ran) << info.log;
      std::printf("%s %s: %d registers, %d bytes spill stores, %d bytes spill loads\n", kernelName(e), arch.c_str(),
                  info.registers, info.spillStoreBytes, info.spillLoadBytes);
      EXPECT_GT(info.registers, 0);
      EXPECT_EQ(info.spillStoreBytes, 0) << arch << "\n" << info.log;
      EXPECT_EQ(info.spillLoadBytes, 0) << arch << "\n" << info.log;
    }
  }
}

// A K loop that advances carried pointers (tests/kernels/dot.tk,
// carried_pointers): pipelined (the loads become cp.async rings on both
// archs), race-free, exact, and the carried values right after the loop.
TEST(Dot, CarriedPointersArePipelinedAndRightAfterTheLoop) {
  auto dev = tk::Device::open("sim:racecheck");
  const int BM = 64, BN = 32, BK = 16;
  for (const char *arch : {"sm_80", "sm_90a"})
    for (int K : {16, 48, 160}) {
      SCOPED_TRACE(std::string(arch) + " K=" + std::to_string(K));
      tk::CompileOptions o;
      o.archs = {arch};
      o.numStages = 3;
      tk::Bundle bundle = tk::Compiler::compileFile(kFile, "carried_pointers", o);
      EXPECT_NE(bundle.ptx.at(arch).find("cp.async"), std::string::npos);
      auto a = tk::test::exactHalfInputs(size_t(BM + 1) * K), b = tk::test::exactHalfInputs(size_t(K) * BN);
      tk::Buffer da = dev->upload(tk::test::f16Values(a)), db = dev->upload(tk::test::f16Values(b)),
                 dc = dev->upload(std::vector<float>(size_t(BM) * BN, NAN)),
                 dt = dev->upload(std::vector<uint16_t>(size_t(BM) * BK, 0x7e00));
      (*dev)(dev->load(bundle), {1u}, da, db, dc, dt, int32_t(K));
      auto c = dev->download<float>(dc, size_t(BM) * BN);
      auto tail = dev->download<uint16_t>(dt, size_t(BM) * BK);
      for (int i = 0; i < BM; ++i) {
        for (int j = 0; j < BN; ++j) {
          double want = 0;
          for (int q = 0; q < K; ++q) want += double(a[size_t(i) * K + q]) * b[size_t(q) * BN + j];
          ASSERT_EQ(double(c[size_t(i) * BN + j]), want) << "c[" << i << ", " << j << "]";
        }
        for (int q = 0; q < BK; ++q)
          ASSERT_EQ(tail[size_t(i) * BK + q], tk::floatToHalfBits(a[size_t(i + 1) * K + q])) << "tail " << i << " " << q;
      }
    }
}
