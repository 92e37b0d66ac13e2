// wgmma's shared-memory operands as the lowering lays them out
// (LowerDotWgmma.cpp): the plan of one dot and the constant fields of a
// 64-bit matrix descriptor (PTX ISA, "Matrix Descriptor Format").
#pragma once

#include <cstdint>

#include "ir/IR.h"

namespace tk::lower {

// One dot on wgmma: [M, K] x [K, N] over `warpgroups` warpgroups that split
// M; A's rows take a `swizzleA`-byte swizzle (K-major), B's a `swizzleB`-byte
// one (N-major, or K-major with `kMajorB`); A occupies bytesA from the
// staging base, B the next bytesB. kMajorB is B^T's layout ([N, K], rows of
// K): a ring whose copies run along k (attention's k loaded as [D, BLOCK_N],
// contiguous along dim 0) writes its 16-byte runs there as cp.async, where
// N-major would scatter each run over 8 rows; wgmma reads it with
// imm-trans-b 0. Only a ring slot takes it (planRings); staging is N-major,
// except for 8-bit floats (atype/btype f8e4m3 or f8e5m2, elemBytes 1), which
// wgmma reads K-major only: a dot of fp8 tiles (emulate-fp8 widens them to
// f16; fp8Source finds them) stages the codes, B K-major. Offsets are in
// bytes, so 32 bytes of a row are one k step for either width.
struct WgmmaPlan {
  int64_t M = 0, N = 0, K = 0;
  ir::ScalarKind atype = ir::ScalarKind::F16, btype = ir::ScalarKind::F16;
  int elemBytes = 2;
  bool kMajorB = false;
  int warpgroups = 1;
  int swizzleA = 0, swizzleB = 0;
  int64_t bytesA = 0, bytesB = 0;
  bool operator==(const WgmmaPlan &) const = default;
};
// The widest swizzle (bytes) whose rows a dim of `elems` elements fills.
inline int wgmmaSwizzleFor(int64_t elems, int elemBytes = 2) {
  for (int s : {128, 64, 32})
    if ((elems * elemBytes) % s == 0) return s;
  return 0;
}
// For a dot wgmmaShape accepts.
WgmmaPlan wgmmaPlan(const ir::Op &op, int numWarps);

// Byte offset of A's logical element (row, col) from a 1024-byte aligned
// base, and of B's (LowerDotWgmma.cpp's header gives the layouts), in any
// integer arithmetic `ar` (V add(V, V), mul / div / rem (V, int64_t) and
// swizzle(V, bytes)): the lowering emits it as LLVM IR, and evaluates it on
// integers to find a copy's addresses that lie a constant distance apart in
// every thread (LowerPipeline.cpp). One definition, so the two agree.
template <class Ar>
typename Ar::V wgmmaOffsetA(Ar &ar, const WgmmaPlan &p, typename Ar::V row, typename Ar::V col) {
  const int64_t W = 4 * p.warpgroups, Mg = p.M / p.warpgroups, E = p.swizzleA / p.elemBytes;
  auto v = ar.rem(ar.div(row, 8), W), g = ar.rem(row, 8), r = ar.div(row, 8 * W);
  auto gi = ar.div(v, 4), w4 = ar.rem(v, 4);
  // The physical row: 16 w4 + 8h + g of m64 block b, for r = 2b + h.
  auto phys = ar.add(ar.add(ar.mul(ar.div(r, 2), 64), ar.mul(w4, 16)), ar.add(ar.mul(ar.rem(r, 2), 8), g));
  auto off = ar.add(ar.mul(gi, Mg * p.K * p.elemBytes), ar.mul(ar.div(col, E), Mg * p.swizzleA));
  off = ar.add(off, ar.add(ar.mul(phys, p.swizzleA), ar.mul(ar.rem(col, E), p.elemBytes)));
  return ar.swizzle(off, p.swizzleA);
}
template <class Ar>
typename Ar::V wgmmaOffsetB(Ar &ar, const WgmmaPlan &p, typename Ar::V row, typename Ar::V col) {
  const int64_t E = p.swizzleB / p.elemBytes;
  if (p.kMajorB) {
    // K in slabs of E elements, each slab [N rows][swizzleB bytes] (A's
    // layout with no row permutation).
    auto off = ar.add(ar.mul(ar.div(row, E), p.N * p.swizzleB), ar.mul(col, p.swizzleB));
    return ar.swizzle(ar.add(off, ar.mul(ar.rem(row, E), p.elemBytes)), p.swizzleB);
  }
  auto off = ar.add(ar.mul(ar.div(col, E), p.K * p.swizzleB), ar.mul(row, p.swizzleB));
  return ar.swizzle(ar.add(off, ar.mul(ar.rem(col, E), 2)), p.swizzleB);
}

// Where the matrix descriptors of one wgmma point: A of m64 block `block` of
// warpgroup `warpgroup` at k step `kStep` (32 bytes of k: 16 f16 or 32 fp8;
// K-major, SBO the next 8 rows), and B at k step `kStep` (N-major, LBO the
// next slab of N, SBO the next 8 k; K-major as A: SBO the next 8 n): the
// start's byte offset from A's (B's) base, its leading and stride byte
// offsets and swizzle. What the offsets above lay out, these read.
struct WgmmaOperand {
  int64_t offset = 0;
  uint32_t leadingBytes = 0, strideBytes = 0;
  int swizzleBytes = 0;
};
inline WgmmaOperand wgmmaOperandA(const WgmmaPlan &p, int64_t warpgroup, int64_t block, int64_t kStep) {
  const int64_t Mg = p.M / p.warpgroups, kb = 32 * kStep;  // k's byte offset in a row
  return {warpgroup * Mg * p.K * p.elemBytes + kb / p.swizzleA * Mg * p.swizzleA + block * 64 * p.swizzleA +
              kb % p.swizzleA,
          16, static_cast<uint32_t>(8 * p.swizzleA), p.swizzleA};
}
inline WgmmaOperand wgmmaOperandB(const WgmmaPlan &p, int64_t kStep) {
  if (p.kMajorB) {
    const int64_t kb = 32 * kStep;
    return {kb / p.swizzleB * p.N * p.swizzleB + kb % p.swizzleB, 16, static_cast<uint32_t>(8 * p.swizzleB),
            p.swizzleB};
  }
  return {16 * kStep * p.swizzleB, static_cast<uint32_t>(p.K * p.swizzleB), static_cast<uint32_t>(8 * p.swizzleB),
          p.swizzleB};
}

// wgmmaOffsetA/B on integers. The S-byte swizzle of an offset from a
// 1024-byte aligned base: address bits [4, 4 + log2(S / 16)) ^= bits
// [7, 7 + log2(S / 16)).
struct IntArith {
  using V = int64_t;
  V add(V a, V b) const { return a + b; }
  V mul(V a, int64_t c) const { return a * c; }
  V div(V a, int64_t c) const { return a / c; }
  V rem(V a, int64_t c) const { return a % c; }
  V swizzle(V off, int bytes) const { return off ^ ((off >> 7 & (bytes / 16 - 1)) << 4); }
};

// Bits 16-29 (leading byte offset), 32-45 (stride byte offset), each stored
// >> 4, and 62-63 (swizzle mode: 1 for 128 bytes, 2 for 64, 3 for 32, 0 for
// none); the start address (bits 0-13) and base offset (49-51, kept 0) are
// the caller's.
constexpr uint64_t wgmmaDescriptorBits(uint32_t leadingBytes, uint32_t strideBytes, int swizzleBytes) {
  const uint64_t mode = swizzleBytes == 128 ? 1 : swizzleBytes == 64 ? 2 : swizzleBytes == 32 ? 3 : 0;
  return (uint64_t(leadingBytes >> 4 & 0x3fff) << 16) | (uint64_t(strideBytes >> 4 & 0x3fff) << 32) | (mode << 62);
}

}  // namespace tk::lower
