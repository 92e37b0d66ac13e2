// The GPU execution model's one fixed number, declared once for every layer
// (the tile IR's layouts, the front end's register budget, the lowering, the
// sim, the devices, the performance model and tkc's reports): threads per
// warp. Header-only, no dependencies.
#pragma once

namespace tk {

// Threads per warp on every NVIDIA GPU tk targets (sm_80 ... sm_90a), and on
// the sim, which runs each warp's threads as this many fibers.
inline constexpr int kWarpSize = 32;

}  // namespace tk
