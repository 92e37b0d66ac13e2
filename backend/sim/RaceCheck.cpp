// RaceShadow: the first writer and readers of each shared byte in the current
// epoch (a word at a time until an access splits it), checked at every
// shared access while the race check is on (see RaceCheck.h).
#include "backend/sim/RaceCheck.h"

#include <algorithm>

namespace tk::sim {

void RaceShadow::reset(bool enabled, uint32_t sharedBytes) {
  enabled_ = enabled;
  pending_.clear();
  if (!enabled) return;
  size_t n = (size_t(sharedBytes) + 3) / 4;
  if (words_.size() < n) {
    words_.resize(n);
    bytes_.resize(n * 4);
  }
  async_.assign(n * 4, Slot{});
  asyncBytes_ = 0;
}

void RaceShadow::beginBlock(const char *shared) {
  shared_ = reinterpret_cast<const unsigned char *>(shared);
  pending_.clear();  // left by an abandoned (stuck) block
  if (asyncBytes_) std::fill(async_.begin(), async_.end(), Slot{});  // copies never waited for
  asyncBytes_ = 0;
  newEpoch();        // nothing of the previous block carries over
}

void RaceShadow::newEpoch() {
  if (++epoch_ != 0) return;
  // Wrapped after 2^32 epochs: forget every record so none looks current.
  std::fill(words_.begin(), words_.end(), Word{});
  epoch_ = 1;
}

inline bool RaceShadow::touch(State &s, uint32_t offset, uint32_t length, const Access &a, Race &race) {
  Slot earlier;
  bool wrote = false;
  const Meets m = touchRecord(s, a, [](uint32_t, uint32_t) { return false; }, earlier, wrote);
  if (m == Meets::Nothing) return false;
  race.offset = offset;
  race.first = Access{earlier.tid, earlier.site, wrote};
  race.second = a;
  if (m == Meets::Race) return true;
  addPending(offset, length, race);
  return false;
}

void RaceShadow::addPending(uint32_t offset, uint32_t length, const Race &race) {
  // Extend the last run when these bytes follow it in the same conflict (a
  // replicated vector store gives one run per 8 bytes).
  if (!pending_.empty()) {
    Pending &p = pending_.back();
    const Race &q = p.race;
    if (p.length + length <= 8 && q.offset + p.length == offset && q.first.tid == race.first.tid &&
        q.first.site == race.first.site && q.second.tid == race.second.tid && q.second.site == race.second.site) {
      for (uint32_t i = 0; i < length; ++i) p.before |= uint64_t(shared_[offset + i]) << (8 * (p.length + i));
      p.length += length;
      return;
    }
  }
  Pending p{race, length, 0};
  for (uint32_t i = 0; i < length; ++i) p.before |= uint64_t(shared_[offset + i]) << (8 * i);
  pending_.push_back(p);
}

void RaceShadow::beginAsync(uint32_t tid, uint32_t site, uint32_t offset, uint32_t bytes) {
  for (uint32_t i = offset; i < offset + bytes && i < async_.size(); ++i) {
    if (async_[i].tid == kNone) ++asyncBytes_;
    async_[i] = Slot{tid, site};
  }
}

void RaceShadow::endAsync(uint32_t offset, uint32_t bytes) {
  for (uint32_t i = offset; i < offset + bytes && i < async_.size(); ++i)
    if (async_[i].tid != kNone) {
      async_[i] = Slot{};
      --asyncBytes_;
    }
}

bool RaceShadow::access(uint32_t tid, uint32_t site, bool write, uint32_t offset, uint32_t bytes, Race &race) {
  Access a{tid, site, write};
  const uint32_t end = offset + bytes;
  if (asyncBytes_)
    for (uint32_t i = offset; i < end && i < async_.size(); ++i)
      if (async_[i].tid != kNone) {
        race.offset = i;
        race.first = Access{async_[i].tid, async_[i].site, true, true};
        race.second = a;
        return true;
      }
  for (uint32_t w = offset / 4; w * 4 < end; ++w) {
    Word &word = words_[w];
    if (word.epoch != epoch_) word = Word{epoch_, false, {}};
    const uint32_t lo = std::max(offset, w * 4), hi = std::min(end, w * 4 + 4);
    if (!word.split && hi - lo == 4) {
      if (touch(word.all, lo, 4, a, race)) return true;
      continue;
    }
    // Part of the word: from now on (this epoch) its bytes go their own ways.
    State *byte = &bytes_[size_t(w) * 4];
    if (!word.split) {
      std::fill(byte, byte + 4, word.all);
      word.split = true;
    }
    for (uint32_t i = lo; i < hi; ++i)
      if (touch(byte[i - w * 4], i, 1, a, race)) return true;
  }
  return false;
}

bool RaceShadow::settlePending(Race &race) {
  return settleSameValueStores(
      pending_, race, [&](const Pending &p, uint32_t i) { return shared_[p.race.offset + i]; },
      [](Race &r, uint32_t i) { r.offset += i; });  // the first byte the later store changed
}

}  // namespace tk::sim
