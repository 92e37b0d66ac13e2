// tk sim's wgmma addressing against the PTX ISA's tables
// (tests/unit/sim_wgmma_tables.h): descriptors decode to their fields,
// operandAddress follows the canonical layouts of every swizzle mode, and
// the lowering's ring-slot layout (lower/Wgmma.h) is what its descriptors
// read. No kernel runs here; sim_wgmma_test.cpp runs the instruction.
#include <gtest/gtest.h>

#include "backend/sim/Wgmma.h"
#include "lower/Wgmma.h"
#include "tests/unit/sim_wgmma_tables.h"

namespace tk::sim::test {
namespace {

TEST(SimWgmma, DescriptorFieldsDecode) {
  for (int S : {0, 32, 64, 128}) {
    MatrixDescriptor d = decodeDescriptor(descriptor(0x2a40, 4096, 1024, modeOf(S), 0));
    EXPECT_EQ(d.start, 0x2a40u);
    EXPECT_EQ(d.leadingBytes, 4096u);
    EXPECT_EQ(d.strideBytes, 1024u);
    EXPECT_EQ(d.baseOffset, 0u);
    EXPECT_EQ(d.swizzleBytes, uint32_t(S));
  }
  EXPECT_EQ(decodeDescriptor(descriptor(16, 16, 16, 1, 5)).baseOffset, 5u);
  // Addresses are 18 bits, stored >> 4.
  EXPECT_EQ(decodeDescriptor(descriptor(0x40000 + 0x3ff0, 0, 0, 0)).start, 0x3ff0u);
  // The lowering's constant fields are the same bits.
  for (int S : {0, 32, 64, 128})
    EXPECT_EQ(lower::wgmmaDescriptorBits(4096, 1024, S), descriptor(0, 4096, 1024, modeOf(S)));
}

TEST(SimWgmma, OperandAddressesFollowTheFigures) {
  for (bool mnMajor : {false, true})
    for (int S : {0, 32, 64, 128}) {
      const uint32_t lbo = mnMajor && S ? 4096 : 256, sbo = S ? 8 * S : 128;
      MatrixDescriptor d = decodeDescriptor(descriptor(2048, lbo, sbo, modeOf(S)));
      for (int mn = 0; mn < 256; ++mn)
        for (int k = 0; k < 16; ++k)
          ASSERT_EQ(operandAddress(d, mnMajor, uint32_t(mn), uint32_t(k)),
                    2048 + figureOffset(mnMajor, S, lbo, sbo, mn, k))
              << (mnMajor ? "MN" : "K") << "-major, swizzle " << S << ", element (" << mn << ", " << k << ")";
    }
  // K-major 128B: advancing the start by 32 bytes (the next k16 of a 64-wide
  // row) keeps the pattern of the rows: chunk 2 of row 3 is chunk 1.
  MatrixDescriptor d = decodeDescriptor(descriptor(32, 16, 1024, 1));
  EXPECT_EQ(operandAddress(d, false, 3, 0), 3u * 128 + 16 * (2 ^ 3));
}

// The lowering's operand layouts (lower/Wgmma.h: where a pipelined loop's
// cp.async writes a ring slot, or the staging stores write scratch) against
// what its descriptors make the sim read: every element of A and B is at one
// byte offset, the offsets tile the region without overlap, 8 elements along
// the contiguous dim share a 16-byte chunk (one cp.async), and operand
// element (mn, k) of each wgmma's descriptors is the logical element the
// layout put there -- A's row permuted so that D lands in mmaLayout's
// registers (LowerDotWgmma.cpp: row 8v + g + 8W(2b + h) is physical row
// 16 w4 + 8h + g of block b of warpgroup v / 4).
TEST(SimWgmma, RingSlotLayoutIsWhatTheDescriptorsRead) {
  struct Shape {
    int64_t M, N, K;
    int warpgroups;
  };
  for (Shape s : {Shape{128, 128, 32, 1}, Shape{64, 64, 16, 1}, Shape{128, 256, 64, 2}, Shape{256, 48, 128, 2},
                  Shape{64, 16, 32, 1}}) {
    SCOPED_TRACE(std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K) + ", " +
                 std::to_string(s.warpgroups) + " warpgroups");
    lower::WgmmaPlan p;
    p.M = s.M, p.N = s.N, p.K = s.K, p.warpgroups = s.warpgroups;
    auto widest = [](int64_t elems) { return (elems * 2) % 128 == 0 ? 128 : (elems * 2) % 64 == 0 ? 64 : 32; };
    p.swizzleA = widest(s.K), p.swizzleB = widest(s.N);
    p.bytesA = s.M * s.K * 2, p.bytesB = s.K * s.N * 2;
    lower::IntArith ia;
    // The descriptor the lowering builds for one operand's k step, as the sim reads it.
    auto descriptorOf = [](const lower::WgmmaOperand &o) {
      return decodeDescriptor(uint64_t(o.offset >> 4) | lower::wgmmaDescriptorBits(o.leadingBytes, o.strideBytes, o.swizzleBytes));
    };
    auto tiles = [&](int64_t rows, int64_t cols, int64_t bytes, auto &&offset) {
      std::vector<int> seen(size_t(bytes / 2), 0);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          const int64_t o = offset(r, c);
          ASSERT_TRUE(o >= 0 && o + 2 <= bytes && o % 2 == 0) << r << ", " << c << " at " << o;
          ++seen[size_t(o / 2)];
          EXPECT_EQ(o / 16, offset(r, c / 8 * 8) / 16) << "element " << r << ", " << c << " leaves its chunk";
        }
      for (int n : seen) ASSERT_EQ(n, 1);
    };
    auto offA = [&](int64_t r, int64_t c) { return lower::wgmmaOffsetA(ia, p, r, c); };
    auto offB = [&](int64_t r, int64_t c) { return lower::wgmmaOffsetB(ia, p, r, c); };
    tiles(s.M, s.K, p.bytesA, offA);
    tiles(s.K, s.N, p.bytesB, offB);
    // B K-major (a ring copied along k, kMajorB): 8 elements along k share
    // a chunk, and the descriptors read it with imm-trans-b 0.
    lower::WgmmaPlan q = p;
    q.kMajorB = true, q.swizzleB = widest(s.K);
    auto offBk = [&](int64_t r, int64_t c) { return lower::wgmmaOffsetB(ia, q, r, c); };
    tiles(s.N, s.K, q.bytesB, [&](int64_t n, int64_t k) { return offBk(k, n); });
    const int64_t W = 4 * s.warpgroups;
    for (int64_t ks = 0; ks < s.K / 16; ++ks) {
      const lower::WgmmaOperand ok = lower::wgmmaOperandB(q, ks);
      ASSERT_EQ(ok.offset >> 7 & (ok.swizzleBytes / 16 - 1), 0) << "K-major B starts inside a swizzle pattern";
      const MatrixDescriptor dBk = descriptorOf(ok);
      for (uint32_t k = 0; k < 16; ++k)
        for (uint32_t n = 0; n < s.N; ++n)
          ASSERT_EQ(operandAddress(dBk, /*mnMajor=*/false, n, k), offBk(16 * ks + k, n))
              << "K-major B k " << 16 * ks + k;
      const lower::WgmmaOperand ob = lower::wgmmaOperandB(p, ks);
      ASSERT_EQ(ob.offset >> 7 & (ob.swizzleBytes / 16 - 1), 0) << "B starts inside a swizzle pattern";
      const MatrixDescriptor dB = descriptorOf(ob);
      for (uint32_t k = 0; k < 16; ++k)
        for (uint32_t n = 0; n < s.N; ++n)
          ASSERT_EQ(operandAddress(dB, /*mnMajor=*/true, n, k), offB(16 * ks + k, n)) << "B k " << 16 * ks + k;
      for (int gi = 0; gi < s.warpgroups; ++gi)
        for (int64_t blk = 0; blk < s.M / s.warpgroups / 64; ++blk) {
          const lower::WgmmaOperand oa = lower::wgmmaOperandA(p, gi, blk, ks);
          const MatrixDescriptor dA = descriptorOf(oa);
          for (uint32_t mn = 0; mn < 64; ++mn) {
            const int64_t w4 = mn / 16, h = mn % 16 / 8, g = mn % 8;
            const int64_t row = 8 * (4 * gi + w4) + g + 8 * W * (2 * blk + h);
            for (uint32_t k = 0; k < 16; ++k)
              ASSERT_EQ(operandAddress(dA, /*mnMajor=*/false, mn, k), offA(row, 16 * ks + k))
                  << "A row " << row << " k " << 16 * ks + k;
          }
        }
    }
  }
}

}  // namespace
}  // namespace tk::sim::test
