// cp.async.bulk.tensor on the sim (TensorCopy.cpp): a box of a tensor map
// into shared memory, completing its bytes on an mbarrier.
#pragma once

#include <cstdint>

namespace tk::sim {

// The current thread's cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile
// .mbarrier::complete_tx::bytes [dst], [map, {coords}], [bar]: the box of the
// TensorMap at `map` at element coordinates `coords` (innermost first, rank of
// them) into shared memory at `dst`, out-of-bounds elements zero, swizzled
// as the map says; then complete_tx of the box's bytes on `bar`. `site`
// (a GlobalLoad site) names its line and counts it. Misuse fails the launch.
void tmaLoad(void *dst, const void *map, void *bar, int32_t rank, const int32_t coords[5], uint32_t site);

}  // namespace tk::sim
