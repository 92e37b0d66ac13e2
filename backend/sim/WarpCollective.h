// What a warp collective computes once every lane of the warp has arrived:
// shuffles exchange values; ldmatrix reads 8x8 b16 matrices from shared
// memory into per-lane fragments; mma.m16n8k16 multiplies fragments. The
// tensor-core semantics are the PTX ISA's (docs/sim.md, "Tensor-core
// instructions").
#pragma once

#include <string>

#include "backend/sim/Runtime.h"

namespace tk::sim {

// The `n` lanes of one warp of the worker's current block all wait at a warp
// collective (wait == Wait::Warp): run it and fill every lane's results.
// Lanes at different collectives, a partial warp at ldmatrix or mma, or a bad
// ldmatrix row address fail the launch; the lanes affected then read zeros.
// The caller resumes the lanes.
void completeWarpCollective(Simulator::Worker &w, ThreadCtx *lanes, uint32_t n);

// The collective lane `t` waits at, for messages: "warp shuffle",
// "ldmatrix.x4.trans", "mma.m16n8k16.bf16", ...
std::string warpCollectiveName(const ThreadCtx &t);

}  // namespace tk::sim
