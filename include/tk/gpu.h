// The GPU execution model's fixed numbers, declared once for every layer
// (the tile IR's layouts, the front end's register budget, the lowering, the
// sim, the devices, the performance model, the compiler's, the tuner's and
// the bundle reader's checks, tkc's reports): threads per warp and warps per
// block. Header-only, no dependencies.
#pragma once

namespace tk {

// Threads per warp on every NVIDIA GPU tk targets (sm_80 ... sm_90a), and on
// the sim, which runs each warp's threads as this many fibers.
inline constexpr int kWarpSize = 32;

// Warps per block: a block has at most 1024 threads on every target, and tk's
// layouts split a block's warps in powers of two.
inline constexpr int kMaxWarps = 32;
inline constexpr bool validNumWarps(long long w) { return w >= 1 && w <= kMaxWarps && (w & (w - 1)) == 0; }

}  // namespace tk
