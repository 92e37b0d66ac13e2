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
  for (auto &[begin, bytes] : live_) std::free(reinterpret_cast<void *>(begin));
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
  if (it == live_.end()) {
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
