// AccessGrouper: groups lanes' accesses into warp requests and counts sectors
// and shared-memory wavefronts (see Coalescing.h and docs/sim.md).
#include "backend/sim/Coalescing.h"
#include "tk/gpu.h"

#include <algorithm>

namespace tk::sim {

// Distinct words per bank; the same word read by many lanes is a broadcast.
uint32_t bankWavefronts(const uint64_t *words, size_t n) {
  uint32_t perBank[32] = {};
  uint32_t wavefronts = 0;
  for (size_t i = 0; i < n; ++i) wavefronts = std::max(wavefronts, ++perBank[words[i] & 31]);
  return wavefronts;
}

void AccessGrouper::reset(const SiteTable &sites, uint32_t blockThreads, SiteCounters *perSite) {
  sites_ = &sites;
  perSite_ = perSite;
  blockThreads_ = blockThreads;
  warps_ = (blockThreads + kWarpSize - 1) / kWarpSize;
  numSites_ = uint32_t(sites.sites.size());
  windows_.assign(size_t(warps_) * numSites_, Window{});
}

AccessGrouper::Group &AccessGrouper::groupAt(Window &w, uint32_t k) {
  uint32_t idx = k - w.base;
  if (idx >= w.size) {
    uint32_t need = idx + 1;
    if (need > w.ring.size()) {
      // Grow the ring to the next power of two, unrolling it to start at 0.
      size_t cap = std::max<size_t>(4, w.ring.size());
      while (cap < need) cap *= 2;
      std::vector<Group> ring(cap);
      for (uint32_t i = 0; i < w.size; ++i) ring[i] = w.ring[(w.head + i) & (w.ring.size() - 1)];
      w.ring = std::move(ring);
      w.head = 0;
    }
    for (uint32_t i = w.size; i < need; ++i) w.ring[(w.head + i) & (w.ring.size() - 1)].lanes = 0;
    w.size = need;
  }
  return w.ring[(w.head + idx) & (w.ring.size() - 1)];
}

void AccessGrouper::record(uint32_t warp, uint32_t lane, uint32_t site, uint32_t k, uint64_t addr, uint64_t elemMask,
                           Counters &c) {
  Window &w = windows_[size_t(warp) * numSites_ + site];
  if (k < w.base) return;  // cannot happen: a lane's k only grows and groups are popped when complete
  Group &g = groupAt(w, k);
  if (g.lanes == kDone) return;
  g.lane[g.lanes++] = Lane{addr, elemMask};
  uint32_t warpLanes = std::min<uint32_t>(kWarpSize, blockThreads_ - warp * kWarpSize);
  if (g.lanes < warpLanes) return;
  count(site, g, c);
  // Pop the finished groups at the front so the window stays as short as the
  // distance between the warp's fastest and slowest lane.
  while (w.size > 0 && w.ring[w.head].lanes == kDone) {
    w.head = (w.head + 1) & (uint32_t(w.ring.size()) - 1);
    --w.size;
    ++w.base;
  }
  // A long loop without barriers lets lane 0 run far ahead of lane 31 and the
  // ring grow to the trip count; give that memory back once the warp caught up.
  if (w.size == 0 && w.ring.size() > kKeepGroups) {
    w.ring = std::vector<Group>();
    w.head = 0;
  }
}

void AccessGrouper::count(uint32_t siteId, Group &g, Counters &c) {
  const Site &s = sites_->sites[siteId];
  // Global memory: 32-byte sectors; shared memory: 4-byte words.
  unsigned shift = s.isShared() ? 2 : 5;
  scratch_.clear();
  for (uint32_t i = 0; i < g.lanes; ++i) {
    const Lane &l = g.lane[i];
    if (s.masked) {
      for (uint32_t e = 0; e * s.elemBytes < s.bytes; ++e) {
        if (!(l.elemMask >> e & 1)) continue;
        uint64_t a = l.addr + uint64_t(e) * s.elemBytes;
        for (uint64_t u = a >> shift; u <= (a + s.elemBytes - 1) >> shift; ++u) scratch_.push_back(u);
      }
    } else {
      for (uint64_t u = l.addr >> shift; u <= (l.addr + s.bytes - 1) >> shift; ++u) scratch_.push_back(u);
    }
  }
  g.lanes = kDone;
  if (scratch_.empty()) return;  // every lane masked off: no request is issued
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  uint64_t units = scratch_.size();
  if (s.isShared()) {
    units = bankWavefronts(scratch_.data(), scratch_.size());
    c.sharedRequests += 1;
    c.sharedWavefronts += units;
  } else if (s.isStore() || s.isAtomic()) {
    c.globalStoreRequests += 1;
    c.globalStoreSectors += units;
  } else {
    c.globalLoadRequests += 1;
    c.globalLoadSectors += units;
  }
  if (perSite_) {
    SiteCounters &p = perSite_[siteId];
    p.requests += 1;
    (s.isShared() ? p.wavefronts : p.sectors) += units;
  }
}

void AccessGrouper::flush(Counters &c) {
  for (size_t wi = 0; wi < windows_.size(); ++wi) {
    Window &w = windows_[wi];
    uint32_t site = uint32_t(wi % numSites_);
    for (uint32_t i = 0; i < w.size; ++i) {
      Group &g = w.ring[(w.head + i) & (w.ring.size() - 1)];
      if (g.lanes != kDone && g.lanes > 0) count(site, g, c);
    }
    w.base = w.head = w.size = 0;
  }
}

}  // namespace tk::sim
