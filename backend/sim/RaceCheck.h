// RaceShadow: the shared-memory race check (LaunchConfig::raceCheck). Shadow
// records say who wrote and who read each byte of a block's shared memory
// since the block's last barrier; a conflicting access by another thread in
// the same epoch is a race. Bytes, not words: on a GPU two threads storing
// the two halves of a word (f16, bf16, i8 elements) do not race.
#pragma once

#include <cstdint>
#include <vector>

namespace tk::sim {

// Settles a block's deferred same-value stores (both race checks keep them:
// threads storing equal bytes do not race, unless a later store changed
// them): the first pending run whose bytes now differ from what its writer
// left, with `race` moved to that byte by `at(race, i)`. `now(p, i)` reads
// byte i of run p as memory holds it. Clears `pending`.
template <class Pending, class Race, class Now, class At>
bool settleSameValueStores(std::vector<Pending> &pending, Race &race, Now now, At at) {
  bool found = false;
  for (const Pending &p : pending) {
    for (uint32_t i = 0; i < p.length && !found; ++i)
      if (now(p, i) != uint8_t(p.before >> (8 * i))) {
        race = p.race;
        at(race, i);
        found = true;
      }
    if (found) break;
  }
  pending.clear();
  return found;
}

// The rule both race checks apply to one byte run's record `s` (its
// writer and up to two readers since the last barrier) for access `a` by
// thread a.tid at site a.site: what it meets and the record updated. A
// thread may touch its own bytes as often as it likes; `excused(writerTid,
// readerSite)` waives a read-write pair (the global check's replicas). A
// store over another thread's store is `Deferred`: the same value stored
// twice is no race, which settleSameValueStores decides once it landed.
enum class Meets { Nothing, Race, Deferred };
template <class State, class Slot, class Access, class Excused>
Meets touchRecord(State &s, const Access &a, Excused excused, Slot &earlier, bool &earlierWrote) {
  constexpr uint32_t none = ~0u;
  const bool otherWriter = s.writer.tid != none && s.writer.tid != a.tid;
  earlier = s.writer;
  earlierWrote = true;
  if (!a.write) {
    if (otherWriter && !excused(s.writer.tid, a.site)) return Meets::Race;
    if (s.reader[0].tid == none)
      s.reader[0] = Slot{a.tid, a.site};
    else if (s.reader[0].tid != a.tid && s.reader[1].tid == none)
      s.reader[1] = Slot{a.tid, a.site};
    return Meets::Nothing;
  }
  for (const Slot &r : s.reader)
    if (r.tid != none && r.tid != a.tid && !excused(a.tid, r.site)) {
      earlier = r;
      earlierWrote = false;
      return Meets::Race;
    }
  if (otherWriter) return Meets::Deferred;
  s.writer = Slot{a.tid, a.site};
  return Meets::Nothing;
}

class RaceShadow {
 public:
  static constexpr uint32_t kNone = ~0u;

  // Two accesses to one byte with no barrier between; `first` came first.
  struct Access {
    uint32_t tid = kNone, site = kNone;
    bool write = false;
    bool async = false;  // a cp.async that no wait_group had completed yet
  };
  struct Race {
    uint32_t offset = 0;  // the byte of shared memory both touched (the first such byte)
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
  // fills `race` for the first byte it conflicts on.
  bool access(uint32_t tid, uint32_t site, bool write, uint32_t offset, uint32_t bytes, Race &race);
  // cp.async: thread `tid` at `site` issued a copy into bytes [offset, offset
  // + bytes); until endAsync (its wait_group) any access to them is a race,
  // whatever barriers come between (a barrier completes no copy).
  void beginAsync(uint32_t tid, uint32_t site, uint32_t offset, uint32_t bytes);
  void endAsync(uint32_t offset, uint32_t bytes);
  // Called whenever the running thread yields or exits (its stores are done
  // by then): a write over another thread's write in this epoch is a race
  // only if it changed the byte. Returns true and fills `race` if one did.
  bool settle(Race &race) {
    if (pending_.empty()) return false;
    return settlePending(race);
  }

 private:
  struct Slot {
    uint32_t tid = kNone, site = kNone;
  };
  // Who touched a byte in the current epoch: the first writer and up to two
  // distinct readers (two suffice: a writer always differs from one of them).
  struct State {
    Slot writer, reader[2];
  };
  // A 4-byte word's record. Accesses mostly cover whole words, so the word
  // keeps one State for its 4 bytes until an access covers only some of
  // them; then it splits into 4 byte States (in bytes_) for the rest of the
  // epoch. Whole-word accesses cost one State check per word; only split
  // words pay one per byte.
  struct Word {
    uint32_t epoch = 0;
    bool split = false;
    State all;  // every byte's State while !split
  };
  // Writes over another thread's writes, waiting for their values: a run of
  // up to 8 neighbouring bytes of one access over one earlier writer.
  struct Pending {
    Race race;        // race.offset: the run's first byte
    uint32_t length;  // bytes in the run
    uint64_t before;  // the run as the earlier writer left it (byte i in bits 8i..8i+7)
  };
  // Access `a` to the `length` bytes at `offset` that share State `s`
  // (inline: the hot path of access(), defined and used in RaceCheck.cpp only).
  inline bool touch(State &s, uint32_t offset, uint32_t length, const Access &a, Race &race);
  void addPending(uint32_t offset, uint32_t length, const Race &race);
  bool settlePending(Race &race);

  // Per byte, the copy in flight into it (tid kNone: none), and how many
  // bytes have one, so accesses skip the check while none is in flight.
  std::vector<Slot> async_;
  uint32_t asyncBytes_ = 0;
  bool enabled_ = false;
  uint32_t epoch_ = 0;
  const unsigned char *shared_ = nullptr;
  std::vector<Word> words_;
  std::vector<State> bytes_;  // 4 per word, valid while the word is split
  std::vector<Pending> pending_;
};

}  // namespace tk::sim
