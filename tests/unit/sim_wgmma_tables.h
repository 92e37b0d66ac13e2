// The PTX ISA's wgmma tables, restated for the sim's wgmma tests apart from
// backend/sim and lower/: the matrix descriptor's bit fields, the swizzle
// of each mode as the ISA's figures draw it, the canonical layouts' byte
// offsets and the D fragment of m64nNk16 with f32 accumulators.
#pragma once

#include <cstdint>

#include "tests/unit/sim_KernelBuilder.h"

namespace tk::sim::test {

// "Matrix Descriptor Format": bits 0-13 start, 16-29 LBO, 32-45 SBO (each
// (x & 0x3FFFF) >> 4), 49-51 base offset, 62-63 swizzle mode (0 none, 1
// 128-byte, 2 64-byte, 3 32-byte).
inline uint64_t descriptor(uint32_t start, uint32_t lbo, uint32_t sbo, int mode, uint32_t baseOffset = 0) {
  auto enc = [](uint32_t x) { return uint64_t((x & 0x3ffff) >> 4); };
  return enc(start) | enc(lbo) << 16 | enc(sbo) << 32 | uint64_t(baseOffset) << 49 | uint64_t(mode) << 62;
}
// Fills the first `bytes` of shared memory with 1.0 as f16 (each of the 128
// threads a word per 512 bytes), then fences for the async proxy and waits
// at a barrier, so wgmma reads all-ones operands.
inline void fillSharedWithOnes(KernelBuilder &k, llvm::Value *tid, llvm::Value *smem, int bytes) {
  auto &b = k.b();
  for (int j = 0; j < bytes / 4 / 128; ++j)
    k.sharedStore(b.getInt32(0x3c003c00), k.gep(k.i32(), smem, b.CreateAdd(tid, b.getInt32(128 * j))), 4);
  k.target().fenceProxyAsync(b);
  k.target().barrier(b);
}

inline int modeOf(int swizzleBytes) { return swizzleBytes == 128 ? 1 : swizzleBytes == 64 ? 2 : swizzleBytes == 32 ? 3 : 0; }

// The figures' swizzle: in an S-byte-swizzled layout, row r (of S bytes) of
// the repeating pattern keeps its 16-byte chunk c at chunk c ^ rowXor(S, r).
// 128B: 8 rows, chunk ^ r; 64B: rows in pairs, ^ r / 2; 32B: in fours, ^ r / 4.
inline int rowXor(int S, int r) { return S == 128 ? r % 8 : S == 64 ? (r / 2) % 4 : (r / 4) % 2; }

// Byte offset (from a pattern-aligned start) of element (mn, k) of an
// operand, from the canonical layouts ("Shared Memory Matrix Layout"): core
// matrices of 8 rows x 16 bytes; K-major rows run along k (2-byte elements,
// or 1-byte ones with `bytes` 1), MN-major rows along m or n; S the swizzle
// width (0: none).
inline uint32_t figureOffset(bool mnMajor, int S, uint32_t lbo, uint32_t sbo, int mn, int k, int bytes = 2) {
  const int kb = k * bytes;
  if (!mnMajor && !S) return mn / 8 * sbo + mn % 8 * 16 + kb / 16 * lbo + kb % 16;
  if (!mnMajor) return mn / 8 * sbo + mn % 8 * S + 16 * ((kb / 16) ^ rowXor(S, mn % 8)) + kb % 16;
  if (!S) return mn / 8 * sbo + mn % 8 * 2 + k / 8 * lbo + k % 8 * 16;
  const int E = S / 2;  // elements per row
  return mn / E * lbo + k / 8 * sbo + k % 8 * S + 16 * (((mn % E) / 8) ^ rowXor(S, k % 8)) + mn % 8 * 2;
}

// D of m64nNk16 (.f32): register i of lane `lane` in warp w of the
// warpgroup is row 16w + g + 8 ((i % 4) / 2), column 8 (i / 4) + 2t + i % 2.
struct RowCol {
  int row, col;
};
inline RowCol dElement(int warp, int lane, int i) {
  int g = lane / 4, t = lane % 4;
  return {16 * warp + g + 8 * ((i % 4) / 2), 8 * (i / 4) + 2 * t + i % 2};
}

}  // namespace tk::sim::test
