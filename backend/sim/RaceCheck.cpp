// RaceShadow: per-word first writer and readers of the current epoch, checked
// at every shared access while the race check is on (see RaceCheck.h).
#include "backend/sim/RaceCheck.h"

#include <algorithm>
#include <cstring>

namespace tk::sim {

void RaceShadow::reset(bool enabled, uint32_t sharedBytes) {
  enabled_ = enabled;
  pending_.clear();
  if (!enabled) return;
  size_t n = (size_t(sharedBytes) + 3) / 4;
  if (words_.size() < n) words_.resize(n);
}

void RaceShadow::beginBlock(const char *shared) {
  shared_ = shared;
  pending_.clear();  // left by an abandoned (stuck) block
  newEpoch();        // nothing of the previous block carries over
}

void RaceShadow::newEpoch() {
  if (++epoch_ != 0) return;
  // Wrapped after 2^32 epochs: forget every record so none looks current.
  std::fill(words_.begin(), words_.end(), Word{});
  epoch_ = 1;
}

uint32_t RaceShadow::load(uint32_t index) const {
  uint32_t v;
  std::memcpy(&v, shared_ + size_t(index) * 4, 4);
  return v;
}

bool RaceShadow::word(uint32_t index, const Access &a, Race &race) {
  Word &w = words_[index];
  if (w.epoch != epoch_) w = Word{epoch_, {}, {}};
  auto conflict = [&](const Access &earlier) {
    race.wordOffset = index * 4;
    race.first = earlier;
    race.second = a;
    return true;
  };
  // A thread may touch its own word as often as it likes.
  bool otherWriter = w.writer.tid != kNone && w.writer.tid != a.tid;
  if (!a.write) {
    if (otherWriter) return conflict(w.writer);
    if (w.reader[0].tid == kNone)
      w.reader[0] = a;
    else if (w.reader[0].tid != a.tid && w.reader[1].tid == kNone)
      w.reader[1] = a;
    return false;
  }
  for (const Access &r : w.reader)
    if (r.tid != kNone && r.tid != a.tid) return conflict(r);
  if (otherWriter) {
    // Several threads storing the same value (replicated elements of a
    // layout) is harmless: decide once this store has landed.
    conflict(w.writer);
    pending_.push_back(Pending{race, load(index)});
    return false;
  }
  w.writer = a;
  return false;
}

bool RaceShadow::access(uint32_t tid, uint32_t site, bool write, uint32_t offset, uint32_t bytes, Race &race) {
  if (bytes == 0) return false;
  Access a{tid, site, write};
  uint32_t last = (offset + bytes - 1) / 4;
  for (uint32_t i = offset / 4; i <= last; ++i)
    if (word(i, a, race)) return true;
  return false;
}

bool RaceShadow::settlePending(Race &race) {
  bool found = false;
  for (const Pending &p : pending_)
    if (load(p.race.wordOffset / 4) != p.before) {
      race = p.race;
      found = true;
      break;
    }
  pending_.clear();
  return found;
}

}  // namespace tk::sim
