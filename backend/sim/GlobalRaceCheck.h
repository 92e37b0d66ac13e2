// GlobalRaceShadow: the global-memory half of the race check
// (LaunchConfig::raceCheck). Like the shared-memory RaceShadow it records,
// per byte, the first writer and up to two readers since the block's last
// barrier and reports a conflicting access by another thread of the block
// (write/write with a changed value, write/read); atomics are left out.
// Global memory is large and sparse, so the records live in a hash table of
// 4-byte words that holds the current epoch only: a barrier or a new block
// starts a new generation and older entries count as free, so it costs O(1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend/sim/RaceCheck.h"

namespace tk::sim {

class GlobalRaceShadow {
 public:
  using Access = RaceShadow::Access;
  struct Race {
    uintptr_t address = 0;  // the first byte both accesses touch
    Access first, second;
  };

  void reset(bool enabled);  // once per launch
  bool enabled() const { return enabled_; }
  void beginBlock() { newEpoch(); }  // nothing carries over between blocks
  void newEpoch();                   // after each barrier
  // Whether a write/read conflict is the lowering's, not the program's: the
  // reader is a replica of the writer (both read the byte at the same site).
  // Answered by the caller, which keeps each thread's recent reads.
  using Replica = bool (*)(const void *ctx, uint32_t writer, uintptr_t address, uint32_t readSite);
  // Thread `tid` at `site` reads or writes [address, address + bytes),
  // before the access happens (the bounds check passed). Returns true and
  // fills `race` for the first byte it conflicts on.
  bool access(uint32_t tid, uint32_t site, bool write, uintptr_t address, uint32_t bytes, Race &race,
              Replica replica, const void *ctx);
  uint32_t epoch() const { return gen_; }
  // When the running thread yields or exits: a write over another thread's
  // write of this epoch is a race only if it changed the byte (replicated
  // layouts store one value from several threads).
  bool settle(Race &race) {
    if (pending_.empty()) return false;
    return settlePending(race);
  }

 private:
  static constexpr uint32_t kNone = RaceShadow::kNone;
  struct Slot {
    uint32_t tid = kNone, site = kNone;
  };
  struct State {
    Slot writer, reader[2];
  };
  // A word's record: one State for its 4 bytes until an access covers part
  // of it, then 4 byte States at split_[splitAt..] for the rest of the epoch.
  struct Entry {
    uintptr_t word = 0;  // address / 4
    uint32_t gen = 0;    // the epoch it belongs to (older: a free slot)
    uint32_t splitAt = kNone;
    State all;
  };
  struct Pending {
    Race race;        // race.address: the first of `length` bytes
    uint32_t length;  // 1, or 4 for a whole word
    uint32_t before;  // the bytes as the earlier writer left them (byte i in bits 8i..8i+7)
  };
  Entry &find(uintptr_t word);
  void grow();
  bool touch(State &s, uintptr_t address, uint32_t length, const Access &a, Race &race, Replica replica,
             const void *ctx);
  bool settlePending(Race &race);

  bool enabled_ = false;
  uint32_t gen_ = 0;
  size_t count_ = 0;           // entries of the current generation
  std::vector<Entry> table_;   // open addressing, linear probing; a power of two
  std::vector<State> split_;   // byte States of split words, this epoch
  std::vector<Pending> pending_;
};

}  // namespace tk::sim
