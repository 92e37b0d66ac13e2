// wgmma's shared-memory operands as the lowering lays them out
// (LowerDotWgmma.cpp): the plan of one dot and the constant fields of a
// 64-bit matrix descriptor (PTX ISA, "Matrix Descriptor Format").
#pragma once

#include <cstdint>

#include "ir/IR.h"

namespace tk::lower {

// One dot on wgmma: [M, K] x [K, N] over `warpgroups` warpgroups that split
// M; A's rows take a `swizzleA`-byte swizzle (K-major), B's a `swizzleB`-byte
// one (N-major); A occupies bytesA from the staging base, B the next bytesB.
struct WgmmaPlan {
  int64_t M = 0, N = 0, K = 0;
  bool bf16 = false;
  int warpgroups = 1;
  int swizzleA = 0, swizzleB = 0;
  int64_t bytesA = 0, bytesB = 0;
};
// For a dot wgmmaShape accepts.
WgmmaPlan wgmmaPlan(const ir::Op &op, int numWarps);

// Bits 16-29 (leading byte offset), 32-45 (stride byte offset), each stored
// >> 4, and 62-63 (swizzle mode: 1 for 128 bytes, 2 for 64, 3 for 32, 0 for
// none); the start address (bits 0-13) and base offset (49-51, kept 0) are
// the caller's.
constexpr uint64_t wgmmaDescriptorBits(uint32_t leadingBytes, uint32_t strideBytes, int swizzleBytes) {
  const uint64_t mode = swizzleBytes == 128 ? 1 : swizzleBytes == 64 ? 2 : swizzleBytes == 32 ? 3 : 0;
  return (uint64_t(leadingBytes >> 4 & 0x3fff) << 16) | (uint64_t(strideBytes >> 4 & 0x3fff) << 32) | (mode << 62);
}

}  // namespace tk::lower
