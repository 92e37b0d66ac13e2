// tk sim's mma.sync m16n8k8 (.tf32) and m16n8k32 (.s8), and cvt.rna.tf32.f32,
// against the PTX ISA's fragment tables ("Matrix fragments for mma.m16n8k8"
// and "... mma.m16n8k32"), restated here apart from backend/sim: every lane's
// registers placed by the tables' formulas, values distinct per position so
// a misplaced element changes the result, checked against a double reference.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "backend/sim/Runtime.h"
#include "tests/unit/TestSeed.h"
#include "tests/unit/sim_KernelBuilder.h"

namespace tk::sim::test {
namespace {

using llvm::Value;

// groupID = laneid >> 2, threadID_in_group = laneid % 4.
struct RowCol {
  int row, col;
};

// m16n8k8 .tf32: A a0..a3, B b0..b1, one element per register.
//   A: row = groupID for a0 and a2, groupID + 8 for a1 and a3;
//      col = threadID_in_group for a0 and a1, threadID_in_group + 4 for a2 and a3.
//   B: row = threadID_in_group for b0, threadID_in_group + 4 for b1; col = groupID.
RowCol tf32A(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {(i == 0 || i == 2) ? g : g + 8, i < 2 ? t : t + 4};
}
RowCol tf32B(int lane, int i) { return {(lane % 4) + (i == 1 ? 4 : 0), lane >> 2}; }

// m16n8k32 .s8: A a0..a15, four per register (a_i in byte i % 4 of register
// i / 4); B b0..b7 likewise.
//   A: row = groupID for a_i with 0 <= i < 4 or 8 <= i < 12, groupID + 8 otherwise;
//      col = threadID_in_group * 4 + (i & 3) for i < 8, + 16 for i >= 8.
//   B: row = threadID_in_group * 4 + (i & 3) for i < 4, + 16 for i >= 4; col = groupID.
RowCol s8A(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {(i < 4 || (i >= 8 && i < 12)) ? g : g + 8, t * 4 + (i & 3) + (i >= 8 ? 16 : 0)};
}
RowCol s8B(int lane, int i) { return {(lane % 4) * 4 + (i & 3) + (i >= 4 ? 16 : 0), lane >> 2}; }

// C and D (.f32 / .s32): c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1).
RowCol cElement(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}

LaunchConfig oneWarp() {
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  return cfg;
}

// Lane l loads A, B, C registers from afrag[4l..], bfrag[2l..], cfrag[4l..]
// (i32 for s8's C) and stores D's to d[4l..].
std::unique_ptr<Program> mmaKernel(bool s8) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("mma", {k.ptr(), k.ptr(), k.ptr(), k.ptr()}, 32);
  Value *lane = t.threadId(b);
  auto at = [&](int arg, int per, int i, llvm::Type *ty) {
    return k.load(ty, k.gep(ty, k.arg(arg), b.CreateAdd(b.CreateMul(lane, b.getInt32(per)), b.getInt32(i))));
  };
  llvm::Type *acc = s8 ? k.i32() : k.f32();
  std::vector<Value *> a, bf, c;
  for (int i = 0; i < 4; ++i) a.push_back(at(0, 4, i, k.i32()));
  for (int i = 0; i < 2; ++i) bf.push_back(at(1, 2, i, k.i32()));
  for (int i = 0; i < 4; ++i) c.push_back(at(2, 4, i, acc));
  std::vector<Value *> d = s8 ? t.mmaM16N8K32S8(b, a, bf, c) : t.mmaM16N8K8Tf32(b, a, bf, c);
  for (int i = 0; i < 4; ++i)
    k.store(d[i], k.gep(acc, k.arg(3), b.CreateAdd(b.CreateMul(lane, b.getInt32(4)), b.getInt32(i))));
  b.CreateRetVoid();
  return k.compile();
}

// D = A B + C for A [16, K], B [K, 8], C [16, 8] (row-major), through the
// tables; `low` is OR-ed into every tf32 register (bits the tensor core ignores).
template <typename Acc>
std::vector<Acc> simMma(bool s8, const std::vector<double> &A, const std::vector<double> &B, const std::vector<Acc> &C,
                        uint32_t low = 0) {
  const int K = s8 ? 32 : 8;
  auto prog = mmaKernel(s8);
  Simulator sim(1);
  Buffer<uint32_t> af(sim.memory(), 128), bfr(sim.memory(), 64), cf(sim.memory(), 128), d(sim.memory(), 128);
  for (int lane = 0; lane < 32; ++lane) {
    for (int r = 0; r < 4; ++r) {
      uint32_t w = 0;
      if (s8) {
        for (int e = 0; e < 4; ++e) {
          RowCol x = s8A(lane, 4 * r + e);
          w |= uint32_t(uint8_t(int8_t(A[x.row * K + x.col]))) << (8 * e);
        }
      } else {
        RowCol x = tf32A(lane, r);
        w = std::bit_cast<uint32_t>(float(A[x.row * K + x.col])) | low;
      }
      af[lane * 4 + r] = w;
      RowCol e = cElement(lane, r);
      cf[lane * 4 + r] = std::bit_cast<uint32_t>(C[e.row * 8 + e.col]);
      d[lane * 4 + r] = 0x7fc00000u;
    }
    for (int r = 0; r < 2; ++r) {
      uint32_t w = 0;
      if (s8) {
        for (int e = 0; e < 4; ++e) {
          RowCol x = s8B(lane, 4 * r + e);
          w |= uint32_t(uint8_t(int8_t(B[x.row * 8 + x.col]))) << (8 * e);
        }
      } else {
        RowCol x = tf32B(lane, r);
        w = std::bit_cast<uint32_t>(float(B[x.row * 8 + x.col])) | low;
      }
      bfr[lane * 2 + r] = w;
    }
  }
  void *pa = af.p, *pb = bfr.p, *pc = cf.p, *pd = d.p;
  sim.launch(*prog, "mma", oneWarp(), {&pa, &pb, &pc, &pd});
  std::vector<Acc> D(128);
  std::vector<int> seen(128, 0);
  for (int lane = 0; lane < 32; ++lane)
    for (int r = 0; r < 4; ++r) {
      RowCol e = cElement(lane, r);
      D[e.row * 8 + e.col] = std::bit_cast<Acc>(d[lane * 4 + r]);
      ++seen[e.row * 8 + e.col];
    }
  for (int i = 0; i < 128; ++i) EXPECT_EQ(seen[i], 1) << "the C/D table covers element " << i << " once";
  return D;
}

TEST(SimMmaTf32, SmallIntegersAreExactForEveryElement) {
  // Distinct small integers per position; the registers' low 13 bits set, as
  // a tensor core ignores them (a fragment read from the wrong register, or
  // not truncated, changes the sum).
  std::vector<double> A(16 * 8), B(8 * 8);
  std::vector<float> C(128);
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 8; ++k) A[r * 8 + k] = (r * 7 + k * 3) % 11 - 5;
  for (int k = 0; k < 8; ++k)
    for (int c = 0; c < 8; ++c) B[k * 8 + c] = (k * 5 + c * 13) % 9 - 4;
  for (int i = 0; i < 128; ++i) C[i] = float(i * 1000);
  for (uint32_t low : {0u, 0x1fffu}) {
    std::vector<float> D = simMma<float>(false, A, B, C, low);
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 8; ++c) {
        double want = C[r * 8 + c];
        for (int k = 0; k < 8; ++k) want += A[r * 8 + k] * B[k * 8 + c];
        ASSERT_EQ(D[r * 8 + c], want) << "D[" << r << "][" << c << "], low bits " << low;
      }
  }
}

TEST(SimMmaTf32, RandomTf32InputsAgainstADoubleReference) {
  std::mt19937 rng(tk::test::testSeed());
  std::uniform_real_distribution<float> dist(-2, 2);
  auto tf32 = [](float f) { return double(std::bit_cast<float>(std::bit_cast<uint32_t>(f) & 0xffffe000u)); };
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<double> A(128), B(64);
    std::vector<float> C(128);
    for (double &v : A) v = tf32(dist(rng));
    for (double &v : B) v = tf32(dist(rng));
    for (float &v : C) v = dist(rng) * 50;
    std::vector<float> D = simMma<float>(false, A, B, C);
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 8; ++c) {
        double want = C[r * 8 + c], mag = std::fabs(want);
        for (int k = 0; k < 8; ++k) {
          want += A[r * 8 + k] * B[k * 8 + c];
          mag += std::fabs(A[r * 8 + k] * B[k * 8 + c]);
        }
        ASSERT_LE(std::fabs(D[r * 8 + c] - want), 9 * 0x1p-24 * mag) << "D[" << r << "][" << c << "]";
      }
  }
}

TEST(SimMmaS8, EveryElementExactIncludingTheExtremes) {
  // Every value of s8 appears; C near the i32 limits, so sums wrap as s32
  // arithmetic does without .satfinite.
  std::mt19937 rng(tk::test::testSeed());
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<double> A(16 * 32), B(32 * 8);
  for (size_t i = 0; i < A.size(); ++i) A[i] = int(i % 256) - 128;
  for (double &v : B) v = dist(rng);
  std::vector<int32_t> C(128);
  for (int i = 0; i < 128; ++i) C[i] = i % 3 == 0 ? INT32_MAX - i : i % 3 == 1 ? INT32_MIN + i : i * 77 - 5000;
  std::vector<int32_t> D = simMma<int32_t>(true, A, B, C);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 8; ++c) {
      int64_t want = C[r * 8 + c];
      for (int k = 0; k < 32; ++k) want += int64_t(A[r * 32 + k]) * int64_t(B[k * 8 + c]);
      ASSERT_EQ(D[r * 8 + c], int32_t(uint32_t(uint64_t(want)))) << "D[" << r << "][" << c << "]";
    }
}

// cvt.rna.tf32.f32 as SimTarget::roundToTf32 emits it: to nearest with ties
// away from zero at 10 mantissa bits; NaN and infinity unchanged; the
// largest floats round to infinity.
TEST(SimTf32, RoundToTf32IsRoundToNearestTiesAway) {
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("cvt", {k.ptr(), k.ptr()}, 32);
  Value *tid = k.target().threadId(b);
  Value *x = k.load(k.f32(), k.gep(k.f32(), k.arg(0), tid));
  k.store(k.target().roundToTf32(b, x), k.gep(k.i32(), k.arg(1), tid));
  b.CreateRetVoid();
  auto prog = k.compile();
  const float tie = 1.0f + 0x1p-11f;  // halfway between 1 and 1 + 2^-10
  const std::pair<float, float> cases[] = {
      {1.0f, 1.0f},
      {tie, 1.0f + 0x1p-10f},
      {-tie, -(1.0f + 0x1p-10f)},
      {1.0f + 0x1p-11f - 0x1p-23f, 1.0f},
      {1.0f + 0x1p-12f, 1.0f},
      {3.14159265f, 3.140625f},
      {-2.7182818f, -2.71875f},
      {0x1p-136f, 0x1p-136f},  // the smallest tf32 subnormal
      {0x1p-140f, 0.0f},       // below half of it
      {std::numeric_limits<float>::max(), INFINITY},
      {INFINITY, INFINITY},
      {-INFINITY, -INFINITY},
      {0.0f, 0.0f},
      {-0.0f, -0.0f},
  };
  Simulator sim(1);
  Buffer<float> in(sim.memory(), 32);
  Buffer<uint32_t> out(sim.memory(), 32);
  const size_t n = std::size(cases);
  for (size_t i = 0; i < 32; ++i) {
    in[i] = i < n ? cases[i].first : i == n ? NAN : 1.0f;
    out[i] = 0xdeadbeefu;
  }
  void *pi = in.p, *po = out.p;
  sim.launch(*prog, "cvt", oneWarp(), {&pi, &po});
  for (size_t i = 0; i < n; ++i)
    EXPECT_EQ(out[i], std::bit_cast<uint32_t>(cases[i].second)) << "cvt.rna.tf32.f32(" << cases[i].first << ")";
  EXPECT_TRUE(std::isnan(std::bit_cast<float>(out[n])));
}

}  // namespace
}  // namespace tk::sim::test
