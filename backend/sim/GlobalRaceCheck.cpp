// GlobalRaceShadow: per-epoch hash table of the global words a block touched,
// with the first writer and readers of each byte (see GlobalRaceCheck.h).
#include "backend/sim/GlobalRaceCheck.h"

#include <algorithm>

namespace tk::sim {

namespace {
size_t slotOf(uintptr_t word, size_t mask) { return size_t((word * 0x9E3779B97F4A7C15ull) >> 20) & mask; }
}  // namespace

void GlobalRaceShadow::reset(bool enabled) {
  enabled_ = enabled;
  pending_.clear();
  if (enabled && table_.empty()) table_.resize(1 << 12);
}

void GlobalRaceShadow::newEpoch() {
  pending_.clear();  // left by an abandoned (stuck) block
  split_.clear();
  count_ = 0;
  if (++gen_ != 0) return;
  // Wrapped after 2^32 epochs: forget every entry so none looks current.
  std::fill(table_.begin(), table_.end(), Entry{});
  gen_ = 1;
}

void GlobalRaceShadow::grow() {
  std::vector<Entry> old(table_.size() * 2);
  old.swap(table_);
  const size_t mask = table_.size() - 1;
  for (const Entry &e : old)
    if (e.gen == gen_) {
      size_t i = slotOf(e.word, mask);
      while (table_[i].gen == gen_) i = (i + 1) & mask;
      table_[i] = e;
    }
}

GlobalRaceShadow::Entry &GlobalRaceShadow::find(uintptr_t word) {
  if (2 * (count_ + 1) > table_.size()) grow();
  const size_t mask = table_.size() - 1;
  size_t i = slotOf(word, mask);
  while (table_[i].gen == gen_) {
    if (table_[i].word == word) return table_[i];
    i = (i + 1) & mask;
  }
  ++count_;
  table_[i] = Entry{word, gen_, kNone, {}};
  return table_[i];
}

bool GlobalRaceShadow::touch(State &s, uintptr_t address, uint32_t length, const Access &a, Race &race,
                             Replica replica, const void *ctx) {
  Slot earlier;
  bool wrote = false;
  auto excused = [&](uint32_t writer, uint32_t readerSite) { return replica(ctx, writer, address, readerSite); };
  const Meets m = touchRecord(s, a, excused, earlier, wrote);
  if (m == Meets::Nothing) return false;
  race.address = address;
  race.first = Access{earlier.tid, earlier.site, wrote};
  race.second = a;
  if (m == Meets::Race) return true;
  Pending p{race, length, 0};
  for (uint32_t i = 0; i < length; ++i) p.before |= uint32_t(reinterpret_cast<const uint8_t *>(address)[i]) << (8 * i);
  pending_.push_back(p);
  return false;
}

bool GlobalRaceShadow::access(uint32_t tid, uint32_t site, bool write, uintptr_t address, uint32_t bytes,
                              Race &race, Replica replica, const void *ctx) {
  const Access a{tid, site, write};
  const uintptr_t end = address + bytes;
  for (uintptr_t w = address / 4; w * 4 < end; ++w) {
    Entry &e = find(w);
    const uintptr_t lo = std::max(address, w * 4), hi = std::min(end, w * 4 + 4);
    if (e.splitAt == kNone && hi - lo == 4) {
      if (touch(e.all, lo, 4, a, race, replica, ctx)) return true;
      continue;
    }
    // Part of the word: from now on (this epoch) its bytes go their own ways.
    if (e.splitAt == kNone) {
      e.splitAt = uint32_t(split_.size());
      split_.insert(split_.end(), 4, e.all);
    }
    for (uintptr_t i = lo; i < hi; ++i)
      if (touch(split_[e.splitAt + (i - w * 4)], i, 1, a, race, replica, ctx)) return true;
  }
  return false;
}

bool GlobalRaceShadow::settlePending(Race &race) {
  return settleSameValueStores(
      pending_, race, [](const Pending &p, uint32_t i) { return reinterpret_cast<const uint8_t *>(p.race.address)[i]; },
      [](Race &r, uint32_t i) { r.address += i; });  // the first byte the later store changed
}

}  // namespace tk::sim
