// wgmma on the sim (PTX ISA, "Asynchronous Warpgroup Level Matrix
// Multiply-Accumulate"): matrix descriptors decoded into shared-memory
// addresses, wgmma.mma_async as a collective of the 4 warps of a warpgroup,
// and the per-thread fence, commit and wait_group that deliver its results.
#pragma once

#include <cstdint>
#include <functional>

#include "backend/sim/Runtime.h"

namespace tk::sim {

// A 64-bit matrix descriptor's fields ("Matrix Descriptor Format"), in bytes.
struct MatrixDescriptor {
  uint32_t start = 0;         // bits 0-13, << 4
  uint32_t leadingBytes = 0;  // bits 16-29, << 4: leading dimension byte offset (LBO)
  uint32_t strideBytes = 0;   // bits 32-45, << 4: stride dimension byte offset (SBO)
  uint32_t baseOffset = 0;    // bits 49-51
  uint32_t swizzleBytes = 0;  // bits 62-63: 0 none, 1 128, 2 64, 3 32 (bytes)
};
MatrixDescriptor decodeDescriptor(uint64_t d);

// The shared-window byte address of element (mn, k) of a wgmma operand read
// through `d`: mn is A's row m or B's column n, k in 0..15 (0..31 for 1-byte
// elements, K-major only); `mnMajor` for an M-major A or N-major B ("Shared
// Memory Matrix Layout": the canonical layouts, then the swizzle XORs address
// bits [4, 4 + log2(S / 16)) with bits [7, 7 + log2(S / 16)) for an S-byte
// swizzle).
uint32_t operandAddress(const MatrixDescriptor &d, bool mnMajor, uint32_t mn, uint32_t k, uint32_t elemBytes = 2);

// The whole warp `warp` of the worker's block waits at wgmma.mma_async: the
// warps to resume now, [firstWarp, firstWarp + count); none while the rest
// of its warpgroup has not arrived. The fourth warp runs the instruction for
// all 128 threads. Faults fail the launch and resume the warps.
struct Resume {
  uint32_t firstWarp = 0, count = 0;
};
Resume arriveAtWgmma(Simulator::Worker &w, uint32_t warp);

// wgmma.wait_group `pending` for thread `t`: completes its oldest committed
// groups until at most `pending` remain, and replaces the tokens of their
// results among `acc[0 .. count)` by the values.
void wgmmaWait(ThreadCtx &t, uint32_t pending, float *acc, uint32_t count);
void wgmmaCommit(ThreadCtx &t);

// A write of `bytes` at shared offset `offset` by thread `t` (`what`, a
// phrase naming the access and its line): a launch fault when a
// wgmma.mma_async still reads any of those bytes (BlockCtx::wgmmaReading).
void checkWgmmaOverwrite(ThreadCtx &t, uint64_t offset, uint64_t bytes, const std::function<std::string()> &what);

// "wgmma.mma_async.m64n128k16.f16" (k32.e4m3.e5m2 for mixed fp8) for messages.
std::string wgmmaName(const ThreadCtx &t);

}  // namespace tk::sim
