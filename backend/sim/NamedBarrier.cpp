// Named barriers on the sim: per block, per id, the count the open instance
// waits for and the threads arrived. The arriving thread checks its count
// and yields; the block scheduler releases the instance's threads when the
// last one has yielded, as it does at the block barrier.
#include "backend/sim/NamedBarrier.h"

#include <algorithm>
#include <utility>

#include "backend/sim/WarpCollective.h"

namespace tk::sim {

void namedBarrierArrive(int32_t id, int32_t threads, uint32_t site) {
  ThreadCtx *t = tlsThread;
  BlockCtx &b = *t->block;
  LaunchCtx &l = *b.launch;
  // "kernel K: bar.sync ID, N (loc), block (x,y,z), thread T: WHY"; built
  // only on a fault, as every thread of a kernel may come here often.
  auto fault = [&](const std::string &why) {
    l.fail("kernel " + l.kernel->name + ": bar.sync " + std::to_string(id) + ", " + std::to_string(threads) +
           siteSuffix(l, site) + ", " + threadWhere(t) + ": " + why);
  };
  if (id < 1 || id >= int32_t(kNamedBarriers))
    return fault("barrier " + std::to_string(id) +
                 " is not a named barrier (1..15; 0 is the block barrier, which barrier() waits at)");
  if (threads <= 0 || threads % 32 || uint32_t(threads) > b.nthreads)
    return fault("a count of " + std::to_string(threads) + " threads (want a multiple of 32, at most the " +
                 std::to_string(b.nthreads) + " threads of the block)");
  NamedBarrierState &nb = b.named[id];
  if (nb.count != 0 && nb.count != uint32_t(threads)) {
    const std::string firstAt = nb.site == ~0u ? std::string() : l.program->sites.sites[nb.site].loc;
    return fault("barrier " + std::to_string(id) + " already waits for " + std::to_string(nb.count) +
                 " threads in this instance (" + std::to_string(nb.arrived) + " arrived; thread " +
                 std::to_string(nb.firstTid) + " arrived first" + (firstAt.empty() ? "" : ", at " + firstAt) +
                 "); every thread of an instance must give the same count");
  }
  if (nb.count == 0) nb = NamedBarrierState{uint32_t(threads), 0, t->tid, site};
  ++nb.arrived;
  t->namedBarrier = uint32_t(id);
  t->wait = Wait::NamedBarrier;
  yieldToScheduler(t);
}

void releaseNamedBarrier(Simulator::Worker &w, const ThreadCtx &t) {
  BlockCtx &b = w.block;
  NamedBarrierState &nb = b.named[t.namedBarrier];
  if (nb.arrived < nb.count) return;
  ++b.counters.barriers;
  // A new race epoch for the whole block, though bar.sync orders only its
  // participants: conservative, it can hide a race between a participant
  // and a thread that is not one. In tk's use the threads outside the
  // barrier are the producer warpgroup, which makes no generic shared
  // accesses (its copies are the TMA's, outside the race check).
  if (w.race.enabled()) w.race.newEpoch();
  if (w.globalRace.enabled()) w.globalRace.newEpoch();
  const uint32_t id = t.namedBarrier;
  for (uint32_t j = 0; j < b.nthreads; ++j) {
    ThreadCtx &u = w.threads[j];
    if (u.wait != Wait::NamedBarrier || u.namedBarrier != id) continue;
    u.wait = Wait::None;
    w.next.push_back(j);
  }
  nb = NamedBarrierState{};
}

namespace {

// Where thread `t` of the stuck block waits, as a plural verb phrase.
std::string placeOf(const BlockCtx &b, const ThreadCtx &t) {
  const LaunchCtx &l = *b.launch;
  switch (t.wait) {
    case Wait::Done:
      return "exited";
    case Wait::Barrier:
      return "wait at the block barrier" + siteSuffix(l, b.barrierSite);
    case Wait::NamedBarrier: {
      const NamedBarrierState &nb = b.named[t.namedBarrier];
      return "wait at barrier " + std::to_string(t.namedBarrier) + " (" + std::to_string(nb.count) + " threads)" +
             siteSuffix(l, nb.site);
    }
    case Wait::Warp:
      return "wait at " + warpCollectiveName(t) + siteSuffix(l, t.warpSite);
    case Wait::Mbarrier:
      return "wait on an mbarrier" + siteSuffix(l, t.parked.site);
    case Wait::None:
      break;
  }
  return "are runnable";
}

}  // namespace

std::string describeWaits(const BlockCtx &b, const std::vector<ThreadCtx> &threads,
                          const std::function<bool(const ThreadCtx &)> &skip, uint32_t &count) {
  struct Group {
    std::string place;
    uint32_t threads, first;
  };
  std::vector<Group> groups;
  count = 0;
  for (uint32_t i = 0; i < b.nthreads; ++i) {
    const ThreadCtx &t = threads[i];
    if (skip(t)) continue;
    ++count;
    std::string place = placeOf(b, t);
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Group &x) { return x.place == place; });
    if (g == groups.end())
      groups.push_back(Group{std::move(place), 1, i});
    else
      ++g->threads;
  }
  std::string text;
  for (const Group &g : groups)
    text += (text.empty() ? "" : ", ") + std::to_string(g.threads) + " " + g.place + " (first: thread " +
            std::to_string(g.first) + ")";
  return text;
}

bool reportStuckAtNamedBarrier(const BlockCtx &b, const std::vector<ThreadCtx> &threads) {
  for (uint32_t id = 1; id < kNamedBarriers; ++id) {
    const NamedBarrierState &nb = b.named[id];
    if (nb.count == 0) continue;
    LaunchCtx &l = *b.launch;
    uint32_t others = 0;
    const std::string where = describeWaits(
        b, threads, [&](const ThreadCtx &t) { return t.wait == Wait::NamedBarrier && t.namedBarrier == id; }, others);
    l.fail("kernel " + l.kernel->name + ": barrier " + std::to_string(id) + " (" + std::to_string(nb.count) +
           " threads)" + siteSuffix(l, nb.site) + " in " + blockName(b) + " reached by only " +
           std::to_string(nb.arrived) + " threads; none of the block's other " + std::to_string(others) +
           " threads will arrive: " + where);
    return true;
  }
  return false;
}

}  // namespace tk::sim
