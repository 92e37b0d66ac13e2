// RaceShadow: per-word last writer and readers of the current epoch, checked
// at every shared access while the race check is on (see RaceCheck.h).
#include "backend/sim/RaceCheck.h"

#include <algorithm>

namespace tk::sim {

void RaceShadow::reset(bool enabled, uint32_t sharedBytes) {
  enabled_ = enabled;
  if (!enabled) return;
  size_t n = (size_t(sharedBytes) + 3) / 4;
  if (words_.size() < n) words_.resize(n);
}

void RaceShadow::newEpoch() {
  if (++epoch_ != 0) return;
  // Wrapped after 2^32 epochs: forget every record so none looks current.
  std::fill(words_.begin(), words_.end(), Word{});
  epoch_ = 1;
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
  // A thread may touch its own word as often as it likes; another thread's
  // write in this epoch conflicts with anything.
  if (w.writer.tid != kNone && w.writer.tid != a.tid) return conflict(w.writer);
  if (a.write) {
    for (const Access &r : w.reader)
      if (r.tid != kNone && r.tid != a.tid) return conflict(r);
    w.writer = a;
    return false;
  }
  if (w.reader[0].tid == kNone)
    w.reader[0] = a;
  else if (w.reader[0].tid != a.tid && w.reader[1].tid == kNone)
    w.reader[1] = a;
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

}  // namespace tk::sim
