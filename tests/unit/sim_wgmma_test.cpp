// tk sim's wgmma.mma_async run against the PTX ISA's tables
// (tests/unit/sim_wgmma_tables.h): products of operands laid out in every
// swizzle mode as the ISA's figures draw them, f16/bf16/fp8 and A from
// registers, the D fragment layout of m64nNk16 with f32 accumulators,
// completion at wait_group, and the errors and counters.
// sim_wgmma_layout_test.cpp checks the addressing alone.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backend/sim/Runtime.h"
#include "backend/sim/Wgmma.h"
#include "lower/Wgmma.h"
#include "tests/unit/sim_KernelBuilder.h"
#include "tests/unit/sim_wgmma_tables.h"
#include "tk/fp8.h"

namespace tk::sim::test {
namespace {

using llvm::Value;

// ---- wgmma.mma_async through the runtime ------------------------------------

// wg(image, c, out, early): shared = image (`words` words; a fence.proxy.async
// unless `noProxyFence`), a barrier; each thread's n / 2 accumulators from
// c[tid * n / 2 ..]; wgmma.fence (unless `noFence`); one wgmma.mma_async;
// commit; `early` gets the registers before the wait, out after wait_group 0.
struct Case {
  int n = 32;
  bool bf16 = false, mA = false, mB = true;
  int swizzleA = 64, swizzleB = 128;
  uint32_t startA = 0, startB = 8192;
  bool noProxyFence = false, noFence = false;
  bool warp3Exits = false;  // warp 3 returns before the wgmma
  bool storeBeforeWait = false;  // every thread writes a word of A between commit and wait
  int threads = 128;
  bool regA = false;  // A from registers (wgmmaMmaAsyncRegA), its shared bytes garbage
  // 8-bit floats (k32, K-major only): A e4m3 or e5m2, B likewise.
  bool fp8 = false, e5m2A = false, e5m2B = false;
  int k() const { return fp8 ? 32 : 16; }
  ir::ScalarKind typeA() const { return fp8 ? (e5m2A ? ir::ScalarKind::F8E5M2 : ir::ScalarKind::F8E4M3) : type16(); }
  ir::ScalarKind typeB() const { return fp8 ? (e5m2B ? ir::ScalarKind::F8E5M2 : ir::ScalarKind::F8E4M3) : type16(); }
  ir::ScalarKind type16() const { return bf16 ? ir::ScalarKind::BF16 : ir::ScalarKind::F16; }
};

// Unswizzled: core matrices 128 bytes, the next k8 at LBO = 128, the next 8
// rows (K-major) or columns (MN-major) at SBO = 256. Swizzled: the next 8
// rows (K-major) or k (MN-major) at SBO = 8 S; MN-major, the next S / 2
// columns at LBO = 2048.
uint32_t lboOf(const Case &c, bool b) {
  bool mn = b ? c.mB : c.mA;
  int S = b ? c.swizzleB : c.swizzleA;
  return !S ? 128 : mn ? 2048 : 16;
}
uint32_t sboOf(const Case &c, bool b) {
  int S = b ? c.swizzleB : c.swizzleA;
  return S ? 8 * S : 256;
}

std::unique_ptr<Program> wgmmaKernel(const Case &c, int words) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("wg", {k.ptr(), k.ptr(), k.ptr(), k.ptr(), k.ptr()}, c.threads);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  for (int j = 0; j < words / c.threads; ++j) {
    Value *idx = b.CreateAdd(tid, b.getInt32(c.threads * j));
    k.sharedStore(k.load(k.i32(), k.gep(k.i32(), k.arg(0), idx)), k.gep(k.i32(), smem, idx), 4, "fill.tk:3:3");
  }
  if (!c.noProxyFence) t.fenceProxyAsync(b);
  t.barrier(b);
  std::vector<Value *> acc;
  for (int i = 0; i < c.n / 2; ++i)
    acc.push_back(
        k.load(k.f32(), k.gep(k.f32(), k.arg(1), b.CreateAdd(b.CreateMul(tid, b.getInt32(c.n / 2)), b.getInt32(i)))));
  if (c.warp3Exits) {
    auto *exit = k.block("exit"), *go = k.block("go");
    b.CreateCondBr(b.CreateICmpUGE(tid, b.getInt32(96)), exit, go);
    b.SetInsertPoint(exit);
    b.CreateRetVoid();
    b.SetInsertPoint(go);
  }
  if (!c.noFence) t.wgmmaFence(b);
  Value *dA = b.getInt64(descriptor(c.startA, lboOf(c, false), sboOf(c, false), modeOf(c.swizzleA)));
  Value *dB = b.getInt64(descriptor(c.startB, lboOf(c, true), sboOf(c, true), modeOf(c.swizzleB)));
  std::vector<Value *> aRegs;
  for (int q = 0; q < 4 && c.regA; ++q)
    aRegs.push_back(k.load(k.i32(), k.gep(k.i32(), k.arg(4), b.CreateAdd(b.CreateMul(tid, b.getInt32(4)), b.getInt32(q)))));
  std::vector<Value *> d = c.regA ? t.wgmmaMmaAsyncRegA(b, c.n, c.bf16, c.mB, aRegs, dB, acc)
                                  : t.wgmmaMmaAsync(b, c.n, c.typeA(), c.typeB(), c.mA, c.mB, dA, dB, acc);
  t.wgmmaCommitGroup(b);
  if (c.storeBeforeWait)
    k.sharedStore(b.getInt32(0), k.gep(k.i32(), smem, b.CreateAdd(tid, b.getInt32(c.startA / 4))), 4, "over.tk:9:5");
  auto out = [&](int arg, const std::vector<Value *> &v) {
    for (int i = 0; i < c.n / 2; ++i)
      k.store(v[i], k.gep(k.f32(), k.arg(arg), b.CreateAdd(b.CreateMul(tid, b.getInt32(c.n / 2)), b.getInt32(i))));
  };
  out(3, d);
  out(2, t.wgmmaWaitGroup(b, 0, d));
  b.CreateRetVoid();
  return k.compile();
}

uint16_t bits16(float f, bool bf16) { return bf16 ? floatToBf16Bits(f) : floatToHalfBits(f); }
float fromBits16(uint16_t h, bool bf16) { return bf16 ? std::bit_cast<float>(uint32_t(h) << 16) : halfBitsToFloat(h); }

struct WgRun {
  std::string error;
  std::vector<float> D, early;  // D [64][n] row-major through dElement
  Counters counters;
};

const tk::Fp8Format &fp8Format(bool e5m2) { return e5m2 ? tk::kE5M2 : tk::kE4M3; }

// Runs `c` on A [64xk], B [kxn] and C [64xn] (row-major), laid out in
// shared memory by the figures.
WgRun runWgmma(const Case &c, const std::vector<float> &A, const std::vector<float> &B, const std::vector<float> &C,
               bool raceCheck = false) {
  const int bytes = 16384, words = bytes / 4;  // A in [0, 8192), B in [8192, 16384)
  const int K = c.k(), eb = c.fp8 ? 1 : 2;
  std::vector<uint8_t> image(bytes, 0);
  auto place = [&](size_t at, float v, bool e5m2) {
    if (at + eb > image.size()) return;  // a case that reads out of bounds places only what fits
    if (c.fp8) {
      image[at] = tk::floatToFp8Bits(v, fp8Format(e5m2));
      return;
    }
    const uint16_t h = bits16(v, c.bf16);
    std::memcpy(&image[at], &h, 2);
  };
  for (int m = 0; m < 64; ++m)
    for (int kk = 0; kk < K; ++kk) {
      const size_t at = c.startA + figureOffset(c.mA, c.swizzleA, lboOf(c, false), sboOf(c, false), m, kk, eb);
      if (c.regA) {
        image[at] = 0x00, image[at + 1] = 0x7e;  // a NaN, never read
      } else {
        place(at, A[m * K + kk], c.e5m2A);
      }
    }
  for (int kk = 0; kk < K; ++kk)
    for (int n = 0; n < c.n; ++n)
      place(c.startB + figureOffset(c.mB, c.swizzleB, lboOf(c, true), sboOf(c, true), n, kk, eb), B[kk * c.n + n],
            c.e5m2B);
  auto prog = wgmmaKernel(c, words);
  Simulator sim(1);
  Buffer<uint32_t> img(sim.memory(), words);
  std::memcpy(img.p, image.data(), bytes);
  const int regs = c.n / 2;
  Buffer<float> cin(sim.memory(), size_t(c.threads) * regs), out(sim.memory(), size_t(c.threads) * regs),
      early(sim.memory(), size_t(c.threads) * regs);
  // The ISA's register fragment of A ("Register Fragments", wgmma .m64nNk16,
  // A): thread (warp w, lane 4g + t), register q: row 16w + g + 8 (q % 2),
  // columns 8 (q / 2) + 2t (low half) and + 1 (high half).
  Buffer<uint32_t> aRegs(sim.memory(), size_t(c.threads) * 4);
  for (int tid = 0; tid < c.threads; ++tid)
    for (int q = 0; q < 4; ++q) {
      const int row = 16 * (tid / 32 % 4) + tid % 32 / 4 + 8 * (q % 2), col = 8 * (q / 2) + 2 * (tid % 4);
      aRegs[tid * 4 + q] =
          uint32_t(bits16(A[row * 16 + col], c.bf16)) | uint32_t(bits16(A[row * 16 + col + 1], c.bf16)) << 16;
    }
  for (int tid = 0; tid < c.threads; ++tid)
    for (int i = 0; i < regs; ++i) {
      RowCol e = dElement((tid / 32) % 4, tid % 32, i);
      cin[tid * regs + i] = C[e.row * c.n + e.col];
      out[tid * regs + i] = early[tid * regs + i] = -12345.0f;
    }
  LaunchConfig cfg;
  cfg.blockThreads = uint32_t(c.threads);
  cfg.sharedBytes = bytes;
  cfg.raceCheck = raceCheck;
  WgRun r;
  void *pi = img.p, *pc = cin.p, *po = out.p, *pe = early.p, *pa = aRegs.p;
  try {
    r.counters = sim.launch(*prog, "wg", cfg, {&pi, &pc, &po, &pe, &pa});
  } catch (const SimError &e) {
    r.error = e.what();
    return r;
  }
  r.D.assign(size_t(64 * c.n), std::nanf(""));
  r.early.assign(size_t(64 * c.n), 0);
  std::vector<int> seen(size_t(64 * c.n), 0);
  for (int tid = 0; tid < 128; ++tid)
    for (int i = 0; i < regs; ++i) {
      RowCol e = dElement(tid / 32, tid % 32, i);
      r.D[e.row * c.n + e.col] = out[tid * regs + i];
      r.early[e.row * c.n + e.col] = early[tid * regs + i];
      ++seen[e.row * c.n + e.col];
    }
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << "the D table covers element " << i << " once";
  return r;
}

std::vector<float> randomMatrix(std::mt19937 &rng, int count, bool bf16) {
  std::uniform_real_distribution<float> dist(-2, 2);
  std::vector<float> m(static_cast<size_t>(count));
  for (float &v : m) v = fromBits16(bits16(dist(rng), bf16), bf16);
  return m;
}

// Values of an fp8 format, from random codes (NaNs excluded).
std::vector<float> randomFp8Matrix(std::mt19937 &rng, int count, bool e5m2) {
  std::uniform_int_distribution<int> code(0, 255);
  std::vector<float> m;
  while (int(m.size()) < count)
    if (float v = tk::fp8BitsToFloat(uint8_t(code(rng)), fp8Format(e5m2)); std::isfinite(v)) m.push_back(v);
  return m;
}

void expectProduct(const WgRun &r, const Case &c, const std::vector<float> &A, const std::vector<float> &B,
                   const std::vector<float> &C) {
  ASSERT_EQ(r.error, "");
  const int K = c.k();
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < c.n; ++n) {
      double want = C[m * c.n + n], mag = std::fabs(want);
      for (int kk = 0; kk < K; ++kk) {
        want += double(A[m * K + kk]) * B[kk * c.n + n];
        mag += std::fabs(double(A[m * K + kk]) * B[kk * c.n + n]);
      }
      ASSERT_LE(std::fabs(r.D[m * c.n + n] - want), (K + 1) * 0x1p-24 * mag)
          << "D[" << m << "][" << n << "] = " << r.D[m * c.n + n] << ", want " << want;
    }
}

TEST(SimWgmma, EveryLayoutAndFragmentMatchesADoubleProduct) {
  std::mt19937 rng(8);
  std::vector<Case> cases;
  for (bool mA : {false, true})
    for (bool mB : {false, true})
      for (int s : {0, 32, 64, 128}) {
        Case c;
        c.mA = mA;
        c.mB = mB;
        c.swizzleA = s;
        c.swizzleB = s == 0 ? 128 : s == 128 ? 0 : s;  // every mode on each side
        c.n = mB && c.swizzleB == 128 ? 128 : 64;
        c.bf16 = s == 64;
        cases.push_back(c);
      }
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string("A ") + (c.mA ? "M" : "K") + "-major " + std::to_string(c.swizzleA) + "B, B " +
                 (c.mB ? "N" : "K") + "-major " + std::to_string(c.swizzleB) + "B, n" + std::to_string(c.n) +
                 (c.bf16 ? " bf16" : " f16"));
    auto A = randomMatrix(rng, 64 * 16, c.bf16), B = randomMatrix(rng, 16 * c.n, c.bf16),
         C = randomMatrix(rng, 64 * c.n, false);
    WgRun r = runWgmma(c, A, B, C, /*raceCheck=*/true);
    expectProduct(r, c, A, B, C);
    // Before the wait the registers hold no value (NaN here).
    for (float v : r.early) ASSERT_TRUE(std::isnan(v));
  }
}

// The 8-bit floats, k32 and K-major: every pair of formats, each swizzle, B
// unswizzled too; random codes over each format's whole range (subnormals,
// zeros of both signs, the largest finite values).
TEST(SimWgmma, Fp8OperandsMatchADoubleProduct) {
  std::mt19937 rng(26);
  for (bool e5m2A : {false, true})
    for (bool e5m2B : {false, true})
      for (int s : {0, 32, 64, 128}) {
        Case c;
        c.fp8 = true;
        c.e5m2A = e5m2A;
        c.e5m2B = e5m2B;
        c.mA = c.mB = false;
        c.swizzleA = s;
        c.swizzleB = s == 128 ? 0 : 128;  // B: 128B, or none against A's 128B
        c.n = 64;
        SCOPED_TRACE(std::string(e5m2A ? "e5m2" : "e4m3") + " x " + (e5m2B ? "e5m2" : "e4m3") + ", swizzle A " +
                     std::to_string(c.swizzleA) + "B, B " + std::to_string(c.swizzleB) + "B");
        auto A = randomFp8Matrix(rng, 64 * 32, e5m2A), B = randomFp8Matrix(rng, 32 * c.n, e5m2B),
             C = randomMatrix(rng, 64 * c.n, false);
        WgRun r = runWgmma(c, A, B, C, /*raceCheck=*/true);
        expectProduct(r, c, A, B, C);
      }
}

// A from registers: the product of the fragments the threads hold, A's
// shared bytes (NaNs) never read; f16 and bf16, B either way.
TEST(SimWgmma, ARegisterFragmentMatchesADoubleProduct) {
  std::mt19937 rng(11);
  for (bool bf16 : {false, true})
    for (bool mB : {false, true}) {
      Case c;
      c.regA = true;
      c.bf16 = bf16;
      c.mB = mB;
      c.n = 64;
      SCOPED_TRACE(std::string(bf16 ? "bf16" : "f16") + (mB ? ", B N-major" : ", B K-major"));
      auto A = randomMatrix(rng, 64 * 16, bf16), B = randomMatrix(rng, 16 * c.n, bf16),
           C = randomMatrix(rng, 64 * c.n, false);
      WgRun r = runWgmma(c, A, B, C, /*raceCheck=*/true);
      expectProduct(r, c, A, B, C);
    }
}

// groups(out): shared = 1.0 as f16 everywhere (A and B all ones); two
// m64n16k16 in two commit groups on separate accumulators (zeros, and 1);
// wait_group 1, stored to out[tid * 24 ..] (16 values); wait_group 0 of the
// second set, stored after them (8 values).
TEST(SimWgmma, WaitGroupCompletesTheOldestGroups) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("groups", {k.ptr()}, 128);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  fillSharedWithOnes(k, tid, smem, 8192);
  Value *dA = b.getInt64(descriptor(0, 128, 256, 0)), *dB = b.getInt64(descriptor(4096, 128, 256, 0));
  std::vector<Value *> zeros(8, llvm::ConstantFP::get(k.f32(), 0.0)), ones(8, llvm::ConstantFP::get(k.f32(), 1.0));
  t.wgmmaFence(b);
  std::vector<Value *> first = t.wgmmaMmaAsync(b, 16, ir::ScalarKind::F16, ir::ScalarKind::F16, false, false, dA, dB, zeros);
  t.wgmmaCommitGroup(b);
  std::vector<Value *> second = t.wgmmaMmaAsync(b, 16, ir::ScalarKind::F16, ir::ScalarKind::F16, false, false, dA, dB, ones);
  t.wgmmaCommitGroup(b);
  std::vector<Value *> both = first;
  both.insert(both.end(), second.begin(), second.end());
  both = t.wgmmaWaitGroup(b, 1, both);
  std::vector<Value *> last = t.wgmmaWaitGroup(b, 0, std::vector<Value *>(both.begin() + 8, both.end()));
  both.insert(both.end(), last.begin(), last.end());
  Value *row = b.CreateMul(tid, b.getInt32(24));
  for (size_t i = 0; i < both.size(); ++i)
    k.store(both[i], k.gep(k.f32(), k.arg(0), b.CreateAdd(row, b.getInt32(int(i)))));
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<float> out(sim.memory(), 128 * 24);
  void *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 128;
  cfg.sharedBytes = 8192;
  sim.launch(*prog, "groups", cfg, {&po});
  for (int tid = 0; tid < 128; ++tid)
    for (int i = 0; i < 24; ++i) {
      const float v = out[tid * 24 + i];
      if (i < 8)
        ASSERT_EQ(v, 16.0f) << "the older group is complete after wait_group 1";
      else if (i < 16)
        ASSERT_TRUE(std::isnan(v)) << "the newer group is still in flight after wait_group 1";
      else
        ASSERT_EQ(v, 17.0f) << "wait_group 0 completes it";
    }
}

// A loop that keeps one group in flight, as a pipelined loop on wgmma does
// (lower/LowerPipeline.cpp, planWgmmaInFlight): per iteration one
// m64n256k16 chained on the previous iteration's accumulators, still in
// flight (valid inputs without a wait), a commit and wait_group 1; a
// wait_group 0 after the loop. 600 groups of 128 results a thread are more
// than a token can number (2^16), so this runs only if completed results are
// dropped and numbers reused. A and B are all ones: each group adds 16. A
// cp.async into an operand of the group left in flight is a fault.
TEST(SimWgmma, AGroupInFlightAcrossALongLoop) {
  for (bool overwrite : {false, true}) {
    SCOPED_TRACE(overwrite ? "cp.async into the operands of the group in flight" : "the loop");
    KernelBuilder k;
    auto &b = k.b();
    const SimTarget &t = k.target();
    k.kernel("inflight", {k.ptr()}, 128);
    Value *tid = t.threadId(b), *smem = t.sharedBase(b);
    fillSharedWithOnes(k, tid, smem, 16384);
    // K-major A and B, no swizzle: A in [0, 2048), B in [4096, 12416).
    Value *dA = b.getInt64(descriptor(0, 128, 256, 0)), *dB = b.getInt64(descriptor(4096, 128, 256, 0));
    const int n = 256, iterations = 600;
    llvm::BasicBlock *pre = b.GetInsertBlock(), *loop = k.block("loop"), *done = k.block("done");
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    llvm::PHINode *i = b.CreatePHI(k.i32(), 2);
    i->addIncoming(b.getInt32(0), pre);
    std::vector<llvm::PHINode *> phis;
    std::vector<Value *> acc;
    for (int r = 0; r < n / 2; ++r) {
      phis.push_back(b.CreatePHI(k.f32(), 2));
      phis.back()->addIncoming(llvm::ConstantFP::get(k.f32(), 0.0), pre);
      acc.push_back(phis.back());
    }
    t.wgmmaFence(b);
    acc = t.wgmmaMmaAsync(b, n, ir::ScalarKind::F16, ir::ScalarKind::F16, false, false, dA, dB, acc);
    t.wgmmaCommitGroup(b);
    acc = t.wgmmaWaitGroup(b, 1, acc);
    Value *next = b.CreateAdd(i, b.getInt32(1));
    i->addIncoming(next, loop);
    for (int r = 0; r < n / 2; ++r) phis[r]->addIncoming(acc[r], loop);
    b.CreateCondBr(b.CreateICmpSLT(next, b.getInt32(iterations)), loop, done);
    b.SetInsertPoint(done);
    if (overwrite)  // 16 bytes of A's first core matrix, its group in flight
      t.cpAsync(b, smem, k.arg(0), 16, b.getInt32(0), [](llvm::Instruction &) {});
    acc = t.wgmmaWaitGroup(b, 0, acc);
    for (int r = 0; r < n / 2; ++r)
      k.store(acc[r], k.gep(k.f32(), k.arg(0), b.CreateAdd(b.CreateMul(tid, b.getInt32(n / 2)), b.getInt32(r))));
    b.CreateRetVoid();
    auto prog = k.compile();
    Simulator sim(1);
    Buffer<float> out(sim.memory(), 128 * n / 2);
    void *po = out.p;
    LaunchConfig cfg;
    cfg.blockThreads = 128;
    cfg.sharedBytes = 16384;
    std::string error;
    try {
      sim.launch(*prog, "inflight", cfg, {&po});
    } catch (const std::exception &e) {
      error = e.what();
    }
    if (overwrite) {
      EXPECT_NE(error.find("writes shared offset 0 while wgmma.mma_async.m64n256k16.f16 of warpgroup 0 still reads it"),
                std::string::npos)
          << error;
      continue;
    }
    ASSERT_EQ(error, "");
    for (int e = 0; e < 128 * n / 2; ++e) ASSERT_EQ(out[e], 16.0f * iterations) << "element " << e;
  }
}

TEST(SimWgmma, SwizzledReadsAreFreeOfBankConflicts) {
  // K-major A with 128-byte rows (a 64-wide k): unswizzled, the 8 rows of a
  // core matrix share 4 banks (8 wavefronts); swizzled they cover all 32.
  std::mt19937 rng(1);
  auto A = randomMatrix(rng, 64 * 16, false), B = randomMatrix(rng, 16 * 128, false),
       C = randomMatrix(rng, 64 * 128, false);
  Case c;
  c.n = 128;
  c.swizzleA = 128;
  WgRun swz = runWgmma(c, A, B, C);
  ASSERT_EQ(swz.error, "");
  // 16 core matrices of A, 32 of B: one request and one wavefront each;
  // the fill adds 4 warps x 32 stores of 32 consecutive words (one each).
  EXPECT_EQ(swz.counters.sharedRequests, 48u + 128u);
  EXPECT_EQ(swz.counters.sharedWavefronts, 48u + 128u);
}

TEST(SimWgmma, FaultsAreLaunchErrors) {
  std::mt19937 rng(2);
  auto A = randomMatrix(rng, 64 * 16, false), B = randomMatrix(rng, 16 * 32, false),
       C = randomMatrix(rng, 64 * 32, false);
  Case c;
  c.n = 32;
  c.noFence = true;
  EXPECT_NE(runWgmma(c, A, B, C).error.find("accumulators written by other instructions with no wgmma.fence"),
            std::string::npos);
  c = Case{};
  c.noProxyFence = true;
  EXPECT_NE(runWgmma(c, A, B, C).error.find("with no fence.proxy.async after the write"), std::string::npos);
  c = Case{};
  c.startB = 16384 - 1024;  // B runs past the end of shared memory
  EXPECT_NE(runWgmma(c, A, B, C).error.find("out-of-bounds read of 16 bytes at shared offset"), std::string::npos);
  c = Case{};
  c.startB = 8192 + 128;  // inside a 1024-byte pattern
  EXPECT_NE(runWgmma(c, A, B, C).error.find("inside a 1024-byte swizzle pattern"), std::string::npos);
  c = Case{};
  c.warp3Exits = true;
  EXPECT_NE(
      runWgmma(c, A, B, C).error.find("warpgroup 0: 3 of its 4 warps arrived; warp 3 never will, which has exited"),
      std::string::npos);
  c = Case{};
  c.storeBeforeWait = true;  // the operands are read until the wait_group
  EXPECT_NE(runWgmma(c, A, B, C)
                .error.find("(over.tk:9:5), block (0,0,0), thread 0, writes shared offset 0 while "
                            "wgmma.mma_async.m64n32k16.f16 of warpgroup 0 still reads it"),
            std::string::npos)
      << runWgmma(c, A, B, C).error;
  c = Case{};
  c.threads = 64;
  EXPECT_NE(runWgmma(c, A, B, C).error.find("the block has 2 warps; wgmma needs the 4 warps of warpgroup 0"),
            std::string::npos);
}

}  // namespace
}  // namespace tk::sim::test
