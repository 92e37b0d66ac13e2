// AccessGrouper: turns the per-thread accesses of one block into warp-level
// requests the way a profiler counts them. Lanes of a warp that execute the
// same site for their k-th time form one request; a global request costs the
// distinct 32-byte sectors its lanes touch, a shared one the most distinct
// 4-byte words any of the 32 banks serves (its wavefronts).
#pragma once

#include <cstdint>
#include <vector>

#include "backend/sim/Simulator.h"
#include "backend/sim/SiteTable.h"
#include "tk/gpu.h"

namespace tk::sim {

// The wavefronts one shared-memory request needs: the most distinct 4-byte
// words any of the 32 banks serves. `words` (offset / 4) are distinct.
uint32_t bankWavefronts(const uint64_t *words, size_t n);

class AccessGrouper {
 public:
  // Once per launch: the block shape and the program's sites; `perSite`
  // (one entry per site, or null) also receives each request's count.
  void reset(const SiteTable &sites, uint32_t blockThreads, SiteCounters *perSite = nullptr);
  // Lane `lane` of warp `warp` runs `site` for the k-th time. `addr` is the
  // address (global) or the offset into shared memory (shared); `elemMask` says
  // which elements of a masked access are active (~0 for a plain access).
  void record(uint32_t warp, uint32_t lane, uint32_t site, uint32_t k, uint64_t addr, uint64_t elemMask, Counters &c);
  // At the end of a block: counts the requests some lanes never joined
  // (divergence, masks) and empties every window.
  void flush(Counters &c);

 private:
  struct Lane {
    uint64_t addr, elemMask;
  };
  struct Group {
    uint32_t lanes = 0;  // how many lanes joined; kDone once counted
    Lane lane[kWarpSize];
  };
  static constexpr uint32_t kDone = ~0u;
  static constexpr size_t kKeepGroups = 64;  // ring capacity kept for reuse
  // Groups of one (warp, site) with consecutive k, kept in a ring.
  struct Window {
    uint32_t base = 0;  // k of ring[head]
    uint32_t head = 0, size = 0;
    std::vector<Group> ring;  // capacity: a power of two
  };

  Group &groupAt(Window &w, uint32_t k);
  void count(uint32_t site, Group &g, Counters &c);

  const SiteTable *sites_ = nullptr;
  SiteCounters *perSite_ = nullptr;
  uint32_t blockThreads_ = 0, warps_ = 0, numSites_ = 0;
  std::vector<Window> windows_;  // [warp * numSites + site]
  std::vector<uint64_t> scratch_;
};

}  // namespace tk::sim
