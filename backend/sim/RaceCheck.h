// RaceShadow: the shared-memory race check (LaunchConfig::raceCheck). One
// shadow record per 4-byte word of a block's shared memory says who wrote it
// and who read it since the block's last barrier; a conflicting access by
// another thread in the same epoch is a race.
#pragma once

#include <cstdint>
#include <vector>

namespace tk::sim {

class RaceShadow {
 public:
  static constexpr uint32_t kNone = ~0u;

  // Two accesses to one word with no barrier between; `first` came first.
  struct Access {
    uint32_t tid = kNone, site = kNone;
    bool write = false;
  };
  struct Race {
    uint32_t wordOffset = 0;  // byte offset of the word in shared memory
    Access first, second;
  };

  // Once per launch: on or off, and the shared bytes a block has.
  void reset(bool enabled, uint32_t sharedBytes);
  bool enabled() const { return enabled_; }
  // At the start of each block: its shared memory, and a fresh epoch.
  void beginBlock(const char *shared);
  // A new epoch: after each barrier. O(1): records of older epochs count as empty.
  void newEpoch();
  // Thread `tid` at `site` reads or writes bytes [offset, offset + bytes) of
  // shared memory (in bounds), before the access happens. Returns true and
  // fills `race` for the first word it conflicts on.
  bool access(uint32_t tid, uint32_t site, bool write, uint32_t offset, uint32_t bytes, Race &race);
  // Called whenever the running thread yields or exits (its stores are done
  // by then): a write over another thread's write in this epoch is a race
  // only if it changed the word. Returns true and fills `race` if one did.
  bool settle(Race &race) {
    if (pending_.empty()) return false;
    return settlePending(race);
  }

 private:
  // Who touched a word in epoch `epoch`: the first writer and up to two
  // distinct readers (two suffice: a writer always differs from one of them).
  struct Word {
    uint32_t epoch = 0;
    Access writer, reader[2];
  };
  // A write over another thread's write, waiting for its value.
  struct Pending {
    Race race;
    uint32_t before;  // the word as the earlier writer left it
  };
  bool word(uint32_t index, const Access &a, Race &race);
  bool settlePending(Race &race);
  uint32_t load(uint32_t index) const;

  bool enabled_ = false;
  uint32_t epoch_ = 0;
  const char *shared_ = nullptr;
  std::vector<Word> words_;
  std::vector<Pending> pending_;
};

}  // namespace tk::sim
