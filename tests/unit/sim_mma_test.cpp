// tk sim's tensor-core instructions (ldmatrix, mma.m16n8k16) against the PTX
// ISA's fragment tables, restated here apart from backend/sim: every lane's
// registers element by element, numerics against a double reference, and the
// errors, race check and counters of the shared-memory side.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backend/sim/Runtime.h"
#include "tests/unit/sim_KernelBuilder.h"
#include "tk/error.h"
#include "lower/LocMetadata.h"

namespace tk::sim::test {
namespace {

using llvm::Value;

// ---- the PTX ISA's tables, as its formulas write them ----------------------
// groupID = laneid >> 2, threadID_in_group = laneid % 4.
struct RowCol {
  int row, col;
};

// mma.m16n8k16 A (.f16/.bf16): a_i, i = 0..7, is half i % 2 of register i / 2.
RowCol aElement(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
  int col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
  return {row, col};
}
// B: b_i, i = 0..3, half i % 2 of register i / 2.
RowCol bElement(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
}
// C and D (.f32): c_i, i = 0..3, one register each.
RowCol cElement(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}
// ldmatrix .m8n8 .b16: lane l gets in register i the elements (l / 4,
// 2 (l % 4) + h), h = 0 (low half), 1 (high half), of matrix i; with .trans,
// of its transpose, i.e. element (2 (l % 4) + h, l / 4) of the stored matrix.
RowCol ldmatrixElement(int lane, int h, bool trans) {
  int row = lane / 4, col = 2 * (lane % 4) + h;
  return trans ? RowCol{col, row} : RowCol{row, col};
}

uint16_t bits16(float f, bool bf16) { return bf16 ? floatToBf16Bits(f) : floatToHalfBits(f); }
float fromBits16(uint16_t h, bool bf16) { return bf16 ? std::bit_cast<float>(uint32_t(h) << 16) : halfBitsToFloat(h); }

const char *const kLdmLoc = "ldm.tk:7:5";
const char *const kMmaLoc = "mma.tk:9:5";

// Tags the runtime call behind a hook's result (an extractelement of it).
void locate(Value *extract, const char *loc) {
  auto *call = llvm::cast<llvm::Instruction>(llvm::cast<llvm::ExtractElementInst>(extract)->getVectorOperand());
  tk::lower::setSourceLoc(*call, loc);
}

// Copies `words` 32-bit words of global `src` into shared memory (thread t of
// 32 copies words t, t + 32, ...), then a barrier.
void fillShared(KernelBuilder &k, Value *src, int words) {
  auto &b = k.b();
  Value *tid = k.target().threadId(b), *smem = k.target().sharedBase(b);
  for (int j = 0; j < words / 32; ++j) {
    Value *idx = b.CreateAdd(tid, b.getInt32(32 * j));
    k.sharedStore(k.load(k.i32(), k.gep(k.i32(), src, idx)), k.gep(k.i32(), smem, idx), 4, "fill.tk:3:3");
  }
  k.target().barrier(b);
}

LaunchConfig oneWarp(uint32_t sharedBytes, bool raceCheck = false) {
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  cfg.sharedBytes = sharedBytes;
  cfg.raceCheck = raceCheck;
  return cfg;
}

// ---- ldmatrix ---------------------------------------------------------------

// 32 rows of kStride b16 elements, element (R, C) = R * 100 + C; matrix i is
// rows 8i..8i+7, columns 8..15 (16-byte aligned rows, 48 bytes apart).
constexpr int kStride = 24, kRows = 32;

// ldm(in, out): shared = in; lane l < 8 num gives the address of row l % 8
// of matrix l / 8; the lanes past them give a misaligned address far out of
// bounds, which ldmatrix must ignore. out[4 l + i] = register i.
std::unique_ptr<Program> ldmatrixKernel(int num, bool trans) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("ldm", {k.ptr(), k.ptr()}, 32);
  fillShared(k, k.arg(0), kRows * kStride / 2);
  Value *lane = t.threadId(b), *smem = t.sharedBase(b);
  Value *good = b.CreateMul(b.CreateAdd(b.CreateMul(lane, b.getInt32(kStride)), b.getInt32(8)), b.getInt32(2));
  Value *offset = b.CreateSelect(b.CreateICmpULT(lane, b.getInt32(8 * num)), good, b.getInt32(1000003));
  std::vector<Value *> regs = t.ldmatrix(b, k.gep(b.getInt8Ty(), smem, offset), num, trans);
  EXPECT_EQ(regs.size(), size_t(num));
  locate(regs[0], kLdmLoc);
  for (int i = 0; i < num; ++i)
    k.store(regs[i], k.gep(k.i32(), k.arg(1), b.CreateAdd(b.CreateMul(lane, b.getInt32(4)), b.getInt32(i))));
  b.CreateRetVoid();
  return k.compile();
}

TEST(SimLdmatrix, EveryLaneGetsThePtxTablesFragment) {
  for (int num : {1, 2, 4})
    for (bool trans : {false, true}) {
      auto prog = ldmatrixKernel(num, trans);
      Simulator sim(1);
      Buffer<uint16_t> in(sim.memory(), kRows * kStride);
      for (int r = 0; r < kRows; ++r)
        for (int c = 0; c < kStride; ++c) in[r * kStride + c] = uint16_t(r * 100 + c);
      Buffer<uint32_t> out(sim.memory(), 128);
      for (int i = 0; i < 128; ++i) out[i] = 0xdeadbeef;
      void *pi = in.p, *po = out.p;
      Counters c = sim.launch(*prog, "ldm", oneWarp(kRows * kStride * 2, /*raceCheck=*/true), {&pi, &po});
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < 4; ++i) {
          uint32_t got = out[lane * 4 + i];
          if (i >= num) {
            ASSERT_EQ(got, 0xdeadbeefu);
            continue;
          }
          for (int h = 0; h < 2; ++h) {
            RowCol e = ldmatrixElement(lane, h, trans);
            uint32_t want = uint32_t((8 * i + e.row) * 100 + 8 + e.col);
            ASSERT_EQ(got >> (16 * h) & 0xffff, want)
                << "x" << num << (trans ? ".trans" : "") << " lane " << lane << " register " << i << " half " << h;
          }
        }
      EXPECT_EQ(c.sharedRequests, uint64_t(12 + 1)) << "12 fill stores, one ldmatrix";
    }
}

// A warp's ldmatrix .x4 alone, rows `strideBytes` apart: its wavefronts.
Counters ldmatrixBanks(int strideBytes) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("banks", {k.ptr()}, 32);
  Value *lane = t.threadId(b);
  Value *row = k.gep(b.getInt8Ty(), t.sharedBase(b), b.CreateMul(lane, b.getInt32(strideBytes)));
  std::vector<Value *> regs = t.ldmatrix(b, row, 4, false);
  k.store(b.CreateXor(b.CreateXor(regs[0], regs[1]), b.CreateXor(regs[2], regs[3])), k.gep(k.i32(), k.arg(0), lane));
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<uint32_t> out(sim.memory(), 32);
  void *po = out.p;
  return sim.launch(*prog, "banks", oneWarp(uint32_t(32 * strideBytes)), {&po});
}

TEST(SimLdmatrix, BankConflictsPerPhase) {
  // .x4 is 4 phases of 8 rows x 16 bytes. A 64-element f16 row (128 bytes)
  // puts all 8 rows of a phase on banks 0-3: 8 wavefronts each; padded by 8
  // elements (144 bytes) the rows start 4 banks apart: 1 each.
  Counters padded = ldmatrixBanks(144), unpadded = ldmatrixBanks(128), half = ldmatrixBanks(64),
           dense = ldmatrixBanks(16);
  EXPECT_EQ(padded.sharedRequests, 1u);
  EXPECT_EQ(padded.sharedWavefronts, 4u);
  EXPECT_EQ(unpadded.sharedRequests, 1u);
  EXPECT_EQ(unpadded.sharedWavefronts, 4u * 8);
  EXPECT_EQ(half.sharedWavefronts, 4u * 4);  // 64 bytes apart: rows 0, 2, 4, 6 share banks
  EXPECT_EQ(dense.sharedWavefronts, 4u);
}

// bad(out): lane `badLane` gives `badOffset` (bytes into shared memory), the
// others the rows of a dense .x4.
std::string badRowError(int badLane, int badOffset) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("bad", {k.ptr()}, 32);
  Value *lane = t.threadId(b);
  Value *offset = b.CreateSelect(b.CreateICmpEQ(lane, b.getInt32(badLane)), b.getInt32(badOffset),
                                 b.CreateMul(lane, b.getInt32(16)));
  std::vector<Value *> regs = t.ldmatrix(b, k.gep(b.getInt8Ty(), t.sharedBase(b), offset), 4, true);
  locate(regs[0], kLdmLoc);
  k.store(regs[3], k.gep(k.i32(), k.arg(0), lane));
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<uint32_t> out(sim.memory(), 32);
  void *po = out.p;
  return launchError(sim, *prog, "bad", oneWarp(512), {&po});
}

TEST(SimLdmatrix, BadRowAddressesAreLaunchErrors) {
  EXPECT_EQ(badRowError(3, 56), std::string("kernel bad: misaligned ldmatrix row address at shared offset 56 (") +
                                    kLdmLoc + "), block (0,0,0), thread 3: a row must be 16-byte aligned");
  EXPECT_EQ(badRowError(30, 512), std::string("kernel bad: out-of-bounds ldmatrix row read of 16 bytes at shared "
                                              "offset 512 (") +
                                      kLdmLoc +
                                      "), block (0,0,0), thread 30: the block has 512 bytes of shared memory");
  EXPECT_EQ(badRowError(31, 0), "(no error)");  // two lanes may give one row
}

// race(in, out): shared = in; barrier; [thread 0 overwrites the row lane 9
// reads;] ldmatrix .x2; [thread 0 overwrites it after the ldmatrix;] barrier
// when `barrierAfter`.
std::string ldmatrixRace(bool writeBefore, bool writeAfter) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("race", {k.ptr(), k.ptr()}, 32);
  fillShared(k, k.arg(0), 128);
  Value *lane = t.threadId(b), *smem = t.sharedBase(b);
  auto overwrite = [&](const char *loc) {
    auto *then = k.block("w"), *join = k.block("j");
    b.CreateCondBr(b.CreateICmpEQ(lane, b.getInt32(0)), then, join);
    b.SetInsertPoint(then);
    k.sharedStore(b.getInt32(7), k.gep(k.i32(), smem, b.getInt32(9 * 4 + 2)), 4, loc);
    b.CreateBr(join);
    b.SetInsertPoint(join);
  };
  if (writeBefore) overwrite("w.tk:4:3");
  std::vector<Value *> regs = t.ldmatrix(b, k.gep(b.getInt8Ty(), smem, b.CreateMul(lane, b.getInt32(16))), 2, false);
  locate(regs[0], kLdmLoc);
  if (writeAfter) overwrite("w.tk:8:3");
  k.store(b.CreateXor(regs[0], regs[1]), k.gep(k.i32(), k.arg(1), lane));
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<uint32_t> in(sim.memory(), 128), out(sim.memory(), 32);
  for (int i = 0; i < 128; ++i) in[i] = uint32_t(i);
  void *pi = in.p, *po = out.p;
  return launchError(sim, *prog, "race", oneWarp(512, /*raceCheck=*/true), {&pi, &po});
}

TEST(SimLdmatrix, RaceCheckSeesTheReadingLane) {
  EXPECT_EQ(ldmatrixRace(false, false), "(no error)");
  EXPECT_EQ(ldmatrixRace(true, false),
            std::string("kernel race: shared-memory race on byte at offset 0x98 (block (0,0,0)): thread 0 wrote it "
                        "(w.tk:4:3) and thread 9 read it (") +
                kLdmLoc + ") with no barrier between");
  EXPECT_EQ(ldmatrixRace(false, true),
            std::string("kernel race: shared-memory race on byte at offset 0x98 (block (0,0,0)): thread 9 read it (") +
                kLdmLoc + ") and thread 0 wrote it (w.tk:8:3) with no barrier between");
}

// ---- mma ----------------------------------------------------------------------

// mma(afrag, bfrag, cfrag, d): lane l loads its A, B and C registers from
// afrag[4l..], bfrag[2l..], cfrag[4l..], and stores D's to d[4l..]; `twice`
// feeds the first D back as C of a second mma.
std::unique_ptr<Program> mmaKernel(bool bf16, bool twice = false) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("mma", {k.ptr(), k.ptr(), k.ptr(), k.ptr()}, 32);
  Value *lane = t.threadId(b);
  auto at = [&](int arg, int per, int i, llvm::Type *ty) {
    return k.load(ty, k.gep(ty, k.arg(arg), b.CreateAdd(b.CreateMul(lane, b.getInt32(per)), b.getInt32(i))));
  };
  std::vector<Value *> a, bf, c;
  for (int i = 0; i < 4; ++i) a.push_back(at(0, 4, i, k.i32()));
  for (int i = 0; i < 2; ++i) bf.push_back(at(1, 2, i, k.i32()));
  for (int i = 0; i < 4; ++i) c.push_back(at(2, 4, i, k.f32()));
  std::vector<Value *> d = t.mmaM16N8K16(b, bf16, a, bf, c);
  locate(d[0], kMmaLoc);
  if (twice) d = t.mmaM16N8K16(b, bf16, a, bf, d);
  for (int i = 0; i < 4; ++i)
    k.store(d[i], k.gep(k.f32(), k.arg(3), b.CreateAdd(b.CreateMul(lane, b.getInt32(4)), b.getInt32(i))));
  b.CreateRetVoid();
  return k.compile();
}

// D = A B + C on the sim (A 16x16, B 16x8, C 16x8, row-major, values exact
// in the input type), fragments built and read back through the tables.
std::vector<float> simMma(Simulator &sim, Program &prog, bool bf16, const std::vector<float> &A,
                          const std::vector<float> &B, const std::vector<float> &C, Counters *counters = nullptr) {
  Buffer<uint32_t> af(sim.memory(), 128), bfr(sim.memory(), 64);
  Buffer<float> cf(sim.memory(), 128), d(sim.memory(), 128);
  for (int lane = 0; lane < 32; ++lane) {
    for (int r = 0; r < 4; ++r) {
      RowCol lo = aElement(lane, 2 * r), hi = aElement(lane, 2 * r + 1);
      af[lane * 4 + r] = bits16(A[lo.row * 16 + lo.col], bf16) | uint32_t(bits16(A[hi.row * 16 + hi.col], bf16)) << 16;
      RowCol e = cElement(lane, r);
      cf[lane * 4 + r] = C[e.row * 8 + e.col];
      d[lane * 4 + r] = std::nanf("");
    }
    for (int r = 0; r < 2; ++r) {
      RowCol lo = bElement(lane, 2 * r), hi = bElement(lane, 2 * r + 1);
      bfr[lane * 2 + r] = bits16(B[lo.row * 8 + lo.col], bf16) | uint32_t(bits16(B[hi.row * 8 + hi.col], bf16)) << 16;
    }
  }
  void *pa = af.p, *pb = bfr.p, *pc = cf.p, *pd = d.p;
  Counters c = sim.launch(prog, "mma", oneWarp(0), {&pa, &pb, &pc, &pd});
  if (counters) *counters = c;
  std::vector<float> D(128, std::nanf(""));
  std::vector<int> seen(128, 0);
  for (int lane = 0; lane < 32; ++lane)
    for (int r = 0; r < 4; ++r) {
      RowCol e = cElement(lane, r);
      D[e.row * 8 + e.col] = d[lane * 4 + r];
      ++seen[e.row * 8 + e.col];
    }
  for (int i = 0; i < 128; ++i) EXPECT_EQ(seen[i], 1) << "the C/D table covers element " << i << " once";
  return D;
}

// Values of the input type: rounded through its bits.
std::vector<float> randomMatrix(std::mt19937 &rng, int n, bool bf16, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> m(static_cast<size_t>(n));
  for (float &v : m) v = fromBits16(bits16(dist(rng), bf16), bf16);
  return m;
}

// Checks D against A B + C in double: f32 accumulation of 16 exact products.
void expectProduct(const std::vector<float> &D, const std::vector<float> &A, const std::vector<float> &B,
                   const std::vector<float> &C, bool exact, const char *what) {
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 8; ++c) {
      double want = C[r * 8 + c], mag = std::fabs(want);
      for (int k = 0; k < 16; ++k) {
        want += double(A[r * 16 + k]) * B[k * 8 + c];
        mag += std::fabs(double(A[r * 16 + k]) * B[k * 8 + c]);
      }
      double tol = exact ? 0 : 17 * 0x1p-24 * mag;
      ASSERT_LE(std::fabs(D[r * 8 + c] - want), tol)
          << what << ": D[" << r << "][" << c << "] = " << D[r * 8 + c] << ", want " << want;
    }
}

TEST(SimMma, SmallIntegersAreExactForEveryElement) {
  // Distinct small integers per position: a fragment placed wrongly changes the sum.
  std::vector<float> A(256), B(128), C(128);
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k) A[r * 16 + k] = float((r * 7 + k * 3) % 11 - 5);
  for (int k = 0; k < 16; ++k)
    for (int c = 0; c < 8; ++c) B[k * 8 + c] = float((k * 5 + c * 13) % 9 - 4);
  for (int i = 0; i < 128; ++i) C[i] = float(i * 1000);
  for (bool bf16 : {false, true}) {
    auto prog = mmaKernel(bf16);
    Simulator sim(1);
    expectProduct(simMma(sim, *prog, bf16, A, B, C), A, B, C, /*exact=*/true, bf16 ? "bf16" : "f16");
  }
}

TEST(SimMma, RandomInputsAgainstADoubleReference) {
  std::mt19937 rng(20261123);
  for (bool bf16 : {false, true}) {
    auto prog = mmaKernel(bf16);
    Simulator sim(1);
    for (int trial = 0; trial < 8; ++trial) {
      std::vector<float> A = randomMatrix(rng, 256, bf16, -4, 4), B = randomMatrix(rng, 128, bf16, -4, 4);
      std::vector<float> C(128);
      std::uniform_real_distribution<float> dist(-100, 100);
      for (float &v : C) v = dist(rng);
      expectProduct(simMma(sim, *prog, bf16, A, B, C), A, B, C, false, bf16 ? "bf16" : "f16");
    }
  }
}

TEST(SimMma, EachMmaIsOneInstruction) {
  std::vector<float> A(256, 1.0f), B(128, 0.5f), C(128, 0.0f);
  Simulator sim(1);
  Counters once, twice;
  auto p1 = mmaKernel(false), p2 = mmaKernel(false, true);
  simMma(sim, *p1, false, A, B, C, &once);
  std::vector<float> D = simMma(sim, *p2, false, A, B, C, &twice);
  EXPECT_EQ(D[0], 16.0f) << "the second mma adds A B again";
  EXPECT_EQ(twice.warpInstructions - once.warpInstructions, 1u);
  EXPECT_EQ(twice.threadInstructions - once.threadInstructions, 32u);
  EXPECT_EQ(twice.fpInstructions, once.fpInstructions) << "mma runs on the tensor cores, not the fp pipe";
}

// lds(a, b, d): A (16x16) and B (16x8), row-major in global memory, go to
// shared memory as they are; A's fragments come from ldmatrix .x4, B's from
// ldmatrix .x2.trans, then D = A B.
TEST(SimMma, LdmatrixFeedsMma) {
  for (bool bf16 : {false, true}) {
    KernelBuilder k;
    auto &b = k.b();
    const SimTarget &t = k.target();
    k.kernel("lds", {k.ptr(), k.ptr()}, 32);
    fillShared(k, k.arg(0), 192);  // A: bytes 0..511, B: 512..767
    Value *lane = t.threadId(b), *smem = t.sharedBase(b);
    // Matrix i = lane / 8 of A is rows 8 (i % 2).., columns 8 (i / 2)..: a0..a3.
    Value *i = b.CreateLShr(lane, 3);
    Value *arow = b.CreateAdd(b.CreateAnd(lane, 7), b.CreateMul(b.CreateAnd(i, 1), b.getInt32(8)));
    Value *acol = b.CreateMul(b.CreateLShr(i, 1), b.getInt32(8));
    Value *aoff = b.CreateMul(b.CreateAdd(b.CreateMul(arow, b.getInt32(16)), acol), b.getInt32(2));
    std::vector<Value *> a = t.ldmatrix(b, k.gep(b.getInt8Ty(), smem, aoff), 4, false);
    Value *boff = b.CreateAdd(b.getInt32(512), b.CreateMul(b.CreateAnd(lane, 15), b.getInt32(16)));
    std::vector<Value *> bf = t.ldmatrix(b, k.gep(b.getInt8Ty(), smem, boff), 2, true);
    Value *zero = llvm::ConstantFP::get(k.f32(), 0.0);
    std::vector<Value *> d = t.mmaM16N8K16(b, bf16, a, bf, {zero, zero, zero, zero});
    for (int r = 0; r < 4; ++r)
      k.store(d[r], k.gep(k.f32(), k.arg(1), b.CreateAdd(b.CreateMul(lane, b.getInt32(4)), b.getInt32(r))));
    b.CreateRetVoid();
    auto prog = k.compile();

    std::mt19937 rng(bf16 ? 2 : 1);
    std::vector<float> A = randomMatrix(rng, 256, bf16, -2, 2), B = randomMatrix(rng, 128, bf16, -2, 2);
    std::vector<float> C(128, 0.0f), D(128);
    Simulator sim(1);
    Buffer<uint16_t> in(sim.memory(), 384);
    for (int e = 0; e < 256; ++e) in[e] = bits16(A[e], bf16);
    for (int e = 0; e < 128; ++e) in[256 + e] = bits16(B[e], bf16);
    Buffer<float> out(sim.memory(), 128);
    void *pi = in.p, *po = out.p;
    sim.launch(*prog, "lds", oneWarp(768, /*raceCheck=*/true), {&pi, &po});
    for (int lane = 0; lane < 32; ++lane)
      for (int r = 0; r < 4; ++r) {
        RowCol e = cElement(lane, r);
        D[e.row * 8 + e.col] = out[lane * 4 + r];
      }
    expectProduct(D, A, B, C, false, bf16 ? "bf16 through ldmatrix" : "f16 through ldmatrix");
  }
}

// ---- lanes that do not take part ------------------------------------------

// 32 (or `threads`) threads; thread `quitter` (if any) returns first; the
// others run ldmatrix (`mma` false) or mma.
std::string collectiveError(bool mma, int quitter, int threads = 32) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("tc", {k.ptr()}, threads);
  Value *lane = t.threadId(b);
  if (quitter >= 0) {
    auto *go = k.block("go"), *quit = k.block("quit");
    b.CreateCondBr(b.CreateICmpEQ(lane, b.getInt32(quitter)), quit, go);
    b.SetInsertPoint(quit);
    b.CreateRetVoid();
    b.SetInsertPoint(go);
  }
  Value *v;
  if (mma) {
    Value *one = llvm::ConstantFP::get(k.f32(), 1.0);
    std::vector<Value *> d = t.mmaM16N8K16(b, true, {lane, lane, lane, lane}, {lane, lane}, {one, one, one, one});
    locate(d[0], kMmaLoc);
    v = b.CreateBitCast(d[0], k.i32());
  } else {
    Value *row = k.gep(b.getInt8Ty(), t.sharedBase(b), b.CreateMul(b.CreateAnd(lane, 31), b.getInt32(16)));
    std::vector<Value *> regs = t.ldmatrix(b, row, 1, false);
    locate(regs[0], kLdmLoc);
    v = regs[0];
  }
  k.store(v, k.gep(k.i32(), k.arg(0), lane));
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<uint32_t> out(sim.memory(), size_t(threads));
  void *po = out.p;
  LaunchConfig cfg = oneWarp(512);
  cfg.blockThreads = uint32_t(threads);
  return launchError(sim, *prog, "tc", cfg, {&po});
}

TEST(SimTensorCoreErrors, EveryLaneMustArrive) {
  EXPECT_EQ(collectiveError(true, -1), "(no error)");
  EXPECT_EQ(collectiveError(false, -1), "(no error)");
  EXPECT_EQ(collectiveError(true, 5), std::string("kernel tc: mma.m16n8k16.bf16 (") + kMmaLoc +
                                          ") in block (0,0,0), warp 0: 31 of 32 lanes arrived; lane 5 (thread 5) "
                                          "never will, which has exited");
  EXPECT_EQ(collectiveError(false, 20), std::string("kernel tc: ldmatrix.x1 (") + kLdmLoc +
                                            ") in block (0,0,0), warp 0: 31 of 32 lanes arrived; lane 20 (thread 20) "
                                            "never will, which has exited");
}

TEST(SimTensorCoreErrors, PartialWarp) {
  // 40 threads: warp 1 has 8 lanes, and the lanes past the block do not exist.
  EXPECT_EQ(collectiveError(true, -1, 40), std::string("kernel tc: mma.m16n8k16.bf16 (") + kMmaLoc +
                                               ") in block (0,0,0), warp 1: the warp has only 8 lanes (the block has "
                                               "40 threads); mma.m16n8k16.bf16 needs all 32");
}

TEST(SimTensorCoreErrors, LanesAtDifferentCollectives) {
  // Lanes 0-15 run an mma, lanes 16-31 an ldmatrix: .aligned forbids it.
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("split", {k.ptr()}, 32);
  Value *lane = t.threadId(b);
  auto *lo = k.block("lo"), *hi = k.block("hi"), *join = k.block("join");
  b.CreateCondBr(b.CreateICmpULT(lane, b.getInt32(16)), lo, hi);
  b.SetInsertPoint(lo);
  Value *one = llvm::ConstantFP::get(k.f32(), 1.0);
  std::vector<Value *> d = t.mmaM16N8K16(b, false, {lane, lane, lane, lane}, {lane, lane}, {one, one, one, one});
  locate(d[0], kMmaLoc);
  Value *fromMma = b.CreateBitCast(d[0], k.i32());
  b.CreateBr(join);
  b.SetInsertPoint(hi);
  std::vector<Value *> r =
      t.ldmatrix(b, k.gep(b.getInt8Ty(), t.sharedBase(b), b.CreateMul(lane, b.getInt32(16))), 4, false);
  locate(r[0], kLdmLoc);
  b.CreateBr(join);
  b.SetInsertPoint(join);
  llvm::PHINode *v = b.CreatePHI(k.i32(), 2);
  v->addIncoming(fromMma, lo);
  v->addIncoming(r[0], hi);
  k.store(v, k.gep(k.i32(), k.arg(0), lane));
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<uint32_t> out(sim.memory(), 32);
  void *po = out.p;
  EXPECT_EQ(launchError(sim, *prog, "split", oneWarp(512), {&po}),
            std::string("kernel split: the lanes of warp 0 in block (0,0,0) meet at different warp collectives: lane 0 "
                        "at mma.m16n8k16.f16 (") +
                kMmaLoc + "), lane 16 at ldmatrix.x4 (" + kLdmLoc + ")");
}

TEST(SimTensorCoreErrors, BadHookArguments) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("k", {k.ptr()}, 32);
  std::vector<Value *> i4(4, b.getInt32(0)), i2(2, b.getInt32(0)), f4(4, llvm::ConstantFP::get(k.f32(), 0.0));
  EXPECT_THROW(t.ldmatrix(b, k.arg(0), 3, false), tk::InternalError);
  EXPECT_THROW(t.ldmatrix(b, b.getInt32(0), 4, false), tk::InternalError);
  EXPECT_THROW(t.mmaM16N8K16(b, false, i2, i2, f4), tk::InternalError);
  EXPECT_THROW(t.mmaM16N8K16(b, true, i4, i2, i4), tk::InternalError);
}

}  // namespace
}  // namespace tk::sim::test
