// AssignLayouts: gives every tile value a distributed layout (ir::Layout).
//
// Loads and stores are anchors: each gets a blocked layout whose per-thread
// run along the contiguous dim is as wide as AxisInfo allows (up to 16 bytes),
// so warps read memory coalesced and vectorised. Layouts then flow backwards
// from uses to definitions: `expand_dims` asks for a slice of its result's
// layout, elementwise ops for their result's. A cheap pure value demanded in
// several layouts is rematerialised once per layout; a load demanded in
// another layout than its own gets a `convert_layout` (through shared memory).
// Each load and store records its vector width as the `vec` attribute.
#pragma once

#include "ir/IR.h"

namespace tk::lower {

// Returns true (the function always changes unless it has no tiles).
bool assignLayouts(ir::Function &fn);

}  // namespace tk::lower
