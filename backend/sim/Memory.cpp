// Memory: the sim's allocation table. Allocations are plain host memory; the
// table lets every instrumented access be checked, and the quarantine of
// released blocks turns a use-after-free into a report instead of a silent
// read of reused memory.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backend/sim/Simulator.h"

namespace tk::sim {

namespace {
constexpr size_t kAlign = 256;

std::string hex(const void *p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}
}  // namespace

Memory::~Memory() {
  for (auto &[begin, bytes] : live_)
    if (!adoptedBegins_.count(begin)) std::free(reinterpret_cast<void *>(begin));
  for (auto &[begin, bytes] : quarantine_) std::free(reinterpret_cast<void *>(begin));
}

void *Memory::allocate(size_t bytes) {
  // A zero-byte allocation still gets a unique address (with nothing accessible).
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (rounded < bytes) throw SimError("sim: cannot allocate " + std::to_string(bytes) + " bytes");
  void *p = std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded);
  if (!p) throw SimError("sim: out of memory allocating " + std::to_string(bytes) + " bytes");
  std::lock_guard lock(mu_);
  live_[reinterpret_cast<uintptr_t>(p)] = bytes;
  liveBytes_ += bytes;
  peakBytes_ = std::max(peakBytes_, liveBytes_);
  return p;
}

void Memory::release(void *p) {
  std::lock_guard lock(mu_);
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = live_.find(a);
  if (it == live_.end() || adoptedBegins_.count(a)) {
    for (auto &[begin, bytes] : quarantine_)
      if (begin == a) throw SimError("sim: double free of the allocation at " + hex(p));
    throw SimError("sim: release of " + hex(p) + ", which is not the start of a live allocation");
  }
  size_t bytes = it->second;
  live_.erase(it);
  liveBytes_ -= bytes;
  quarantine_.emplace_back(a, bytes);
  quarantineBytes_ += bytes;
  // Free the oldest blocks once the quarantine is over budget (keep at least
  // the newest one, so a recent free is always diagnosed).
  while (quarantineBytes_ > kQuarantineBytes && quarantine_.size() > 1) {
    auto [begin, b] = quarantine_.front();
    quarantine_.pop_front();
    quarantineBytes_ -= b;
    std::free(reinterpret_cast<void *>(begin));
  }
}

size_t Memory::liveBytes() const {
  std::lock_guard lock(mu_);
  return liveBytes_;
}

size_t Memory::peakBytes() const {
  std::lock_guard lock(mu_);
  return peakBytes_;
}

size_t Memory::sizeOf(const void *p) const {
  std::lock_guard lock(mu_);
  auto it = live_.find(reinterpret_cast<uintptr_t>(p));
  if (it == live_.end()) throw SimError("sim: " + hex(p) + " is not the start of a live allocation");
  return it->second;
}

uintptr_t Memory::adopt(const void *p, size_t bytes) {
  if (bytes == 0) return 0;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p), end = begin + bytes;
  if (end < begin) throw SimError("sim: a borrowed range of " + std::to_string(bytes) + " bytes at " + hex(p) + " wraps around");
  std::lock_guard lock(mu_);
  // Against this Memory's own allocations: inside one, the allocation's
  // lifetime governs and nothing is registered; partly over one, no range
  // could stand for both.
  auto it = live_.upper_bound(begin);
  if (it != live_.begin()) --it;
  for (; it != live_.end() && it->first < end; ++it) {
    if (adoptedBegins_.count(it->first) || it->first + it->second <= begin) continue;
    if (it->first <= begin && end <= it->first + it->second) return 0;
    throw SimError("sim: the borrowed range " + hex(p) + " + " + std::to_string(bytes) +
                   " bytes partly overlaps the sim's own allocation at " + hex(reinterpret_cast<void *>(it->first)) +
                   " (" + std::to_string(it->second) + " bytes)");
  }
  const uintptr_t key = nextBorrowKey_++;
  borrowed_[key] = {begin, bytes};
  rebuildAdopted();
  return key;
}

void Memory::forget(uintptr_t key) {
  std::lock_guard lock(mu_);
  if (borrowed_.erase(key)) rebuildAdopted();
}

// Borrowed ranges may overlap (views of one tensor: q, k and v of a fused
// qkv); the table holds non-overlapping ranges, so it gets their union.
void Memory::rebuildAdopted() {
  for (uintptr_t b : adoptedBegins_) live_.erase(b);
  adoptedBegins_.clear();
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (auto &[key, r] : borrowed_) ranges.push_back({r.first, r.first + r.second});
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 0; i < ranges.size();) {
    uintptr_t b = ranges[i].first, e = ranges[i].second;
    for (++i; i < ranges.size() && ranges[i].first < e; ++i) e = std::max(e, ranges[i].second);
    live_[b] = e - b;
    adoptedBegins_.insert(b);
  }
}

Memory::Snapshot Memory::snapshot() const {
  std::lock_guard lock(mu_);
  Snapshot s;
  s.live.reserve(live_.size());
  for (auto &[begin, bytes] : live_) s.live.push_back({begin, begin + bytes});
  s.released.reserve(quarantine_.size());
  for (auto &[begin, bytes] : quarantine_) s.released.push_back({begin, begin + bytes});
  std::sort(s.released.begin(), s.released.end(), [](const Range &a, const Range &b) { return a.begin < b.begin; });
  return s;
}

}  // namespace tk::sim
