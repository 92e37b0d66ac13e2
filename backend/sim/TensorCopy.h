// cp.async.bulk.tensor on the sim (TensorCopy.cpp): a box of a tensor map
// into shared memory, completing its bytes on an mbarrier, or out of it.
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

// The current thread's cp.async.bulk.tensor.{rank}d.global.shared::cta.tile
// .bulk_group [map, {coords}], [src], done at issue: the inverse of tmaLoad.
// The box's bytes are read from shared `src` where tmaLoad would have put
// them (rows in order, each 16-byte chunk at its swizzled address) and each
// element inside the tensor is written to global memory; the others are not
// written. `site` (a GlobalStore site) names its line, bounds- and
// race-checks and counts the writes. Shared bytes some thread wrote with no
// fence.proxy.async after the write, before the last barrier (or, for this
// thread, at any time) fail the launch, as for wgmma. Misuse fails the launch.
void tmaStore(const void *src, const void *map, int32_t rank, const int32_t coords[5], uint32_t site);

}  // namespace tk::sim
