// Simulator::launch: blocks are handed out to worker threads; inside a block
// every GPU thread is a fiber, and a small scheduler runs them until they
// finish or meet at a collective (barrier, named barrier, warp shuffle,
// ldmatrix, mma, wgmma) or park on an mbarrier.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>

#include "backend/sim/Mbarrier.h"
#include "backend/sim/NamedBarrier.h"
#include "backend/sim/Runtime.h"
#include "backend/sim/WarpCollective.h"
#include "backend/sim/Wgmma.h"
#include "tk/gpu.h"

namespace tk::sim {

namespace ctx = boost::context::detail;

namespace {

// f(a.x, b.x) for every field x that counts what ran: the one list of them
// that summing and sampling share.
template <class F>
void eachCount(Counters &a, const Counters &b, F f) {
  f(a.globalLoadBytes, b.globalLoadBytes);
  f(a.globalStoreBytes, b.globalStoreBytes);
  f(a.globalLoadRequests, b.globalLoadRequests);
  f(a.globalStoreRequests, b.globalStoreRequests);
  f(a.globalLoadSectors, b.globalLoadSectors);
  f(a.globalStoreSectors, b.globalStoreSectors);
  f(a.sharedRequests, b.sharedRequests);
  f(a.sharedWavefronts, b.sharedWavefronts);
  f(a.barriers, b.barriers);
  f(a.blocks, b.blocks);
  f(a.threads, b.threads);
  f(a.threadInstructions, b.threadInstructions);
  f(a.warpInstructions, b.warpInstructions);
  f(a.fpInstructions, b.fpInstructions);
  f(a.specialInstructions, b.specialInstructions);
}

}  // namespace

Counters &Counters::operator+=(const Counters &o) {
  eachCount(*this, o, [](uint64_t &x, uint64_t y) { x += y; });
  blocksRun += o.blocksRun;
  blocksTotal += o.blocksTotal;
  if (sites.size() < o.sites.size()) sites.resize(o.sites.size());
  for (size_t i = 0; i < o.sites.size(); ++i) sites[i] += o.sites[i];
  return *this;
}

// Here rather than in Program.cpp so that file keeps to building programs.
const SiteTable &Program::sites() const { return impl_->sites; }

Simulator::Simulator(unsigned workers)
    : workers_(workers ? workers : std::max(1u, std::thread::hardware_concurrency())) {}
Simulator::~Simulator() = default;

namespace {

// A GPU thread's whole life on its fiber.
void fiberMain(ctx::transfer_t in) {
  auto *t = static_cast<ThreadCtx *>(in.data);
  asanFinishSwitch(nullptr, &t->schedStackBottom, &t->schedStackSize);
  t->sched = in.fctx;
  t->block->launch->kernel->entry(t->block->launch->args, t->blockRuns);
  t->wait = Wait::Done;
  asanStartSwitch(nullptr, t->schedStackBottom, t->schedStackSize);  // this fiber's stack is done
  ctx::jump_fcontext(t->sched, t);                                   // never resumed
}

// Nothing can run but some threads have not finished: say why.
void reportStuck(const BlockCtx &b, const std::vector<ThreadCtx> &threads) {
  // A thread parked on an mbarrier is the cause: others then wait for it
  // at a barrier or a collective.
  if (reportParkedOnMbarrier(b, threads)) return;
  LaunchCtx &l = *b.launch;
  std::string kernel = "kernel " + l.kernel->name + ": ";
  for (uint32_t w = 0; w < b.warps.size(); ++w) {
    const WarpState &ws = b.warps[w];
    if (ws.atWarp == 0) continue;
    const ThreadCtx *arrived = nullptr;  // names the collective and its line
    for (uint32_t lane = 0; lane < ws.lanes; ++lane)
      if (const ThreadCtx &t = threads[w * kWarpSize + lane]; t.wait == Wait::Warp && (!arrived || arrived->warpSite == ~0u))
        arrived = &t;
    for (uint32_t lane = 0; lane < ws.lanes; ++lane) {
      const ThreadCtx &t = threads[w * kWarpSize + lane];
      if (t.wait == Wait::Warp) continue;
      std::string why = t.wait == Wait::Done ? "which has exited" : "which waits at a barrier";
      l.fail(kernel + warpCollectiveName(*arrived) + siteSuffix(l, arrived->warpSite) + " in " + blockName(b) +
             ", warp " + std::to_string(w) + ": " + std::to_string(ws.atWarp) + " of " + std::to_string(ws.lanes) +
             " lanes arrived; lane " + std::to_string(lane) + " (thread " + std::to_string(t.tid) + ") never will, " +
             why);
      return;
    }
  }
  for (uint32_t g = 0; g < b.warpgroupArrived.size(); ++g) {
    if (b.warpgroupArrived[g] == 0) continue;
    const ThreadCtx *at = nullptr;  // a thread at the wgmma: names it and its line
    for (uint32_t wi = 4 * g; wi < 4 * g + 4 && wi < b.warps.size(); ++wi)
      if (threads[wi * kWarpSize].wait == Wait::Warp && threads[wi * kWarpSize].warpOp == WarpOp::Wgmma) at = &threads[wi * kWarpSize];
    for (uint32_t wi = 4 * g; wi < 4 * g + 4 && wi < b.warps.size() && at; ++wi) {
      const ThreadCtx &t = threads[wi * kWarpSize];
      if (t.wait == Wait::Warp && t.warpOp == WarpOp::Wgmma) continue;
      l.fail(kernel + warpCollectiveName(*at) + siteSuffix(l, at->warpSite) + " in " + blockName(b) + ", warpgroup " +
             std::to_string(g) + ": " + std::to_string(b.warpgroupArrived[g]) + " of its 4 warps arrived; warp " +
             std::to_string(wi) + " never will, " +
             (t.wait == Wait::Done ? "which has exited" : "which waits elsewhere"));
      return;
    }
  }
  if (reportStuckAtNamedBarrier(b, threads)) return;
  for (uint32_t i = 0; i < b.nthreads; ++i)
    if (const ThreadCtx &t = threads[i]; t.wait == Wait::Done) {
      l.fail(kernel + "barrier" + siteSuffix(l, b.barrierSite) + " reached by only " + std::to_string(b.atBarrier) +
             " of " + std::to_string(b.nthreads) + " threads of " + blockName(b) + "; thread " + std::to_string(t.tid) +
             " exited without reaching it");
      return;
    }
  // Not reached by today's waits (each stuck kind is reported above), but a
  // new one must still say where the threads are.
  uint32_t waiting = 0;
  const std::string where = describeWaits(b, threads, [](const ThreadCtx &t) { return t.wait == Wait::Done; }, waiting);
  l.fail(kernel + "threads of " + blockName(b) + " wait for each other forever: " + where);
}

// The block's printed lines, ordered by print group (one printed value),
// then element (row-major), then thread; handed to the launch.
void keepPrinted(BlockCtx &b, uint64_t linear) {
  std::stable_sort(b.printed.begin(), b.printed.end(), [](const BlockCtx::Line &x, const BlockCtx::Line &y) {
    if (x.group != y.group) return x.group < y.group;
    return x.element != y.element ? x.element < y.element : x.tid < y.tid;
  });
  std::string text;
  for (const BlockCtx::Line &line : b.printed) text += line.text;
  b.printed.clear();
  std::lock_guard lock(b.launch->errorMu);
  b.launch->printed.emplace_back(linear, std::move(text));
}

// Everything the launch printed, by block, to the sink (stdout by default).
void flushPrinted(LaunchCtx &l) {
  if (l.printed.empty()) return;
  std::sort(l.printed.begin(), l.printed.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
  std::string text;
  for (auto &[block, lines] : l.printed) text += lines;
  if (l.cfg.printSink) {
    l.cfg.printSink(text);
  } else {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
}

// Whether two threads ran every basic block equally often (took one path).
bool sameRuns(const uint64_t *a, const uint64_t *b, size_t n) {
  if (n > 8) return std::memcmp(a, b, n * sizeof(uint64_t)) == 0;
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// Turns the block's runs of each basic block into executed instructions. A
// warp issues a basic block as often as its busiest lane ran it: lanes that
// skipped it (a branch masked them off, or they had exited) still cost the
// warp, and the two sides of a branch its lanes split over both do.
void tallyInstructions(Simulator::Worker &w, BlockCtx &b) {
  const std::vector<BlockCost> &costs = b.launch->program->blocks;
  const size_t nb = costs.size();
  const uint64_t *rows = w.blockRuns.data();  // [thread * nb + block]
  uint64_t *most = w.warpMostRuns.data();
  Counters &c = b.counters;
  for (uint32_t wi = 0; wi < b.warps.size(); ++wi) {
    // The lanes of a warp mostly take the same path: a lane whose row equals
    // lane 0's costs what lane 0 does, found with one compare of the rows.
    const uint64_t *first = rows + size_t(wi) * kWarpSize * nb;
    uint64_t thread0 = 0, fp0 = 0, special0 = 0;
    for (size_t i = 0; i < nb; ++i) {
      thread0 += first[i] * costs[i].instructions;
      fp0 += first[i] * costs[i].fp;
      special0 += first[i] * costs[i].special;
    }
    uint64_t thread = thread0, fp = fp0, special = special0;
    bool uniform = true;
    for (uint32_t lane = 1; lane < b.warps[wi].lanes; ++lane) {
      const uint64_t *row = first + size_t(lane) * nb;
      if (sameRuns(row, first, nb)) {
        thread += thread0, fp += fp0, special += special0;
        continue;
      }
      if (uniform) std::copy(first, first + nb, most);
      uniform = false;
      for (size_t i = 0; i < nb; ++i) {
        thread += row[i] * costs[i].instructions;
        fp += row[i] * costs[i].fp;
        special += row[i] * costs[i].special;
        most[i] = std::max(most[i], row[i]);
      }
    }
    uint64_t warp = thread0;
    if (!uniform) {
      warp = 0;
      for (size_t i = 0; i < nb; ++i) warp += most[i] * costs[i].instructions;
    }
    c.threadInstructions += thread;
    c.fpInstructions += fp;
    c.specialInstructions += special;
    c.warpInstructions += warp;
  }
}

void runBlock(Simulator::Worker &w, LaunchCtx &l, uint64_t linear) {
  const LaunchConfig &cfg = l.cfg;
  BlockCtx &b = w.block;
  b.launch = &l;
  b.worker = &w;
  b.id[0] = uint32_t(linear % cfg.grid[0]);
  b.id[1] = uint32_t(linear / cfg.grid[0] % cfg.grid[1]);
  b.id[2] = uint32_t(linear / (uint64_t(cfg.grid[0]) * cfg.grid[1]));
  b.nthreads = cfg.blockThreads;
  b.shared = w.shared.data();
  b.sharedBytes = cfg.sharedBytes;
  b.counters = Counters{};
  b.live = b.nthreads;
  b.atBarrier = 0;
  b.barrierSite = ~0u;
  std::fill(std::begin(b.named), std::end(b.named), NamedBarrierState{});
  b.printed.clear();
  for (uint32_t i = 0; i < b.warps.size(); ++i) b.warps[i] = WarpState{std::min(uint32_t(kWarpSize), b.nthreads - kWarpSize * i), 0, 0};
  std::fill(b.warpgroupArrived.begin(), b.warpgroupArrived.end(), 0);
  if (b.wgmmaReadingCount) std::fill(b.wgmmaReading.begin(), b.wgmmaReading.end(), 0);
  for (auto &reads : b.wgmmaInFlight) reads.clear();
  b.wgmmaReadingCount = 0;
  // Shared memory starts as garbage on a GPU: poison it so reading before
  // writing shows up (0xff bytes: NaN as f32, -1 as an integer).
  std::memset(w.shared.data(), 0xff, cfg.sharedBytes);
  std::fill(w.occurrences.begin(), w.occurrences.end(), 0);
  std::fill(w.blockRuns.begin(), w.blockRuns.end(), 0);
  if (w.race.enabled()) w.race.beginBlock(w.shared.data());
  if (w.globalRace.enabled()) w.globalRace.beginBlock();

  w.runq.clear();
  for (uint32_t i = 0; i < b.nthreads; ++i) {
    ThreadCtx &t = w.threads[i];
    t.block = &b;
    t.tid = i;
    t.warp = i / kWarpSize;
    t.lane = i % kWarpSize;
    t.wait = Wait::None;
    t.warpSite = ~0u;
    t.printGroup = 0;
    t.wg.results.clear();
    t.wg.groupEnds.clear();
    t.wg.base = t.wg.completed = 0;
    t.wg.fenced = false;
    t.wg.unfencedWrite = 0;
    t.copies.clear();
    t.recentNext = 0;  // its entries are of an older epoch now
    t.committedGroups = 0;
    t.parked = MbarrierWaiter{};
    t.ctx = w.stacks.makeContext(i, fiberMain);
    w.runq.push_back(i);
  }

  while (!w.runq.empty()) {
    w.next.clear();
    for (uint32_t i : w.runq) {
      ThreadCtx &t = w.threads[i];
      tlsThread = &t;
      void *fakeStack = nullptr;
      asanStartSwitch(&fakeStack, w.stacks.stackBottom(i), w.stacks.stackBytes());
      ctx::transfer_t back = ctx::jump_fcontext(t.ctx, &t);
      asanFinishSwitch(fakeStack, nullptr, nullptr);
      t.ctx = back.fctx;
      tlsThread = nullptr;
      if (RaceShadow::Race race; w.race.enabled() && w.race.settle(race)) l.fail(raceMessage(b, race));
      if (GlobalRaceShadow::Race race; w.globalRace.enabled() && w.globalRace.settle(race))
        l.fail(globalRaceMessage(b, race));
      switch (t.wait) {
        case Wait::Done:
          --b.live;
          ++b.warps[t.warp].done;
          break;
        case Wait::Barrier:
          if (++b.atBarrier == b.nthreads) {
            // Everyone arrived: one barrier instance; all continue in order.
            ++b.counters.barriers;
            b.atBarrier = 0;
            if (w.race.enabled()) w.race.newEpoch();
            if (w.globalRace.enabled()) w.globalRace.newEpoch();
            for (uint32_t j = 0; j < b.nthreads; ++j) {
              w.threads[j].wait = Wait::None;
              w.next.push_back(j);
            }
          }
          break;
        case Wait::NamedBarrier:
          releaseNamedBarrier(w, t);  // once its count has arrived
          break;
        case Wait::Warp: {
          WarpState &ws = b.warps[t.warp];
          if (++ws.atWarp == ws.lanes) {
            // The whole warp is here: run the collective, then all its lanes
            // go on -- or, at wgmma, wait for the rest of the warpgroup.
            ThreadCtx *lanes = &w.threads[t.warp * kWarpSize];
            Resume r{t.warp, 1};
            if (lanes[0].warpOp == WarpOp::Wgmma)
              r = arriveAtWgmma(w, t.warp);
            else
              completeWarpCollective(w, lanes, ws.lanes);
            for (uint32_t wi = r.firstWarp; wi < r.firstWarp + r.count; ++wi) {
              for (uint32_t j = 0; j < b.warps[wi].lanes; ++j) {
                w.threads[wi * kWarpSize + j].wait = Wait::None;
                w.next.push_back(wi * kWarpSize + j);
              }
              b.warps[wi].atWarp = 0;
            }
          }
          break;
        }
        case Wait::Mbarrier:
          break;  // parked: the thread completing its phase hands it back (Mbarrier.cpp)
        case Wait::None:
          break;  // cannot happen: a fiber only comes back finished or at a collective
      }
    }
    std::swap(w.runq, w.next);
  }
  // Suspended fibers of a stuck block are simply abandoned: their stacks are
  // reused by the next block and nothing else refers to them.
  if (b.live > 0) reportStuck(b, w.threads);
  if (!b.printed.empty()) keepPrinted(b, linear);
  w.grouper.flush(b.counters);
  tallyInstructions(w, b);
  b.counters.blocks = 1;
  b.counters.threads = b.nthreads;
  w.counters += b.counters;
}

// The k-th block a launch runs: k itself, or of a sampled launch the k-th of
// runBlocks spread evenly from the first block to the last.
uint64_t sampledBlock(const LaunchCtx &l, uint64_t k) {
  if (l.runBlocks == l.totalBlocks) return k;
  if (l.runBlocks == 1) return 0;
  return uint64_t((unsigned __int128)k * (l.totalBlocks - 1) / (l.runBlocks - 1));
}

// A sampled launch's counts, as if all `total` blocks had run like the `ran`
// that did: each scaled by total / ran, rounded to nearest.
void scaleToGrid(Counters &c, uint64_t ran, uint64_t total) {
  auto scale = [&](uint64_t &x) { x = uint64_t(((unsigned __int128)x * total + ran / 2) / ran); };
  eachCount(c, c, [&](uint64_t &x, uint64_t) { scale(x); });
  for (SiteCounters &s : c.sites) scale(s.requests), scale(s.bytes), scale(s.sectors), scale(s.wavefronts);
}

void runWorker(Simulator::Worker &w, LaunchCtx &l) {
  try {
    while (!l.failed.load(std::memory_order_relaxed)) {
      uint64_t k = l.nextBlock.fetch_add(1, std::memory_order_relaxed);
      if (k >= l.runBlocks) break;
      runBlock(w, l, sampledBlock(l, k));
    }
  } catch (const std::exception &e) {
    l.fail("kernel " + l.kernel->name + ": " + e.what());
  }
}

void prepareWorker(Simulator::Worker &w, const LaunchCtx &l) {
  uint32_t n = l.cfg.blockThreads;
  size_t sites = l.program->sites.sites.size();
  w.stacks.reserve(n);
  if (w.threads.size() < n) w.threads.resize(n);
  size_t blocks = l.program->blocks.size();
  w.occurrences.assign(size_t(n) * std::max<size_t>(sites, 1), 0);
  w.blockRuns.assign(size_t(n) * std::max<size_t>(blocks, 1), 0);
  w.warpMostRuns.assign(blocks, 0);
  for (uint32_t i = 0; i < n; ++i) {
    w.threads[i].occurrences = w.occurrences.data() + size_t(i) * sites;
    w.threads[i].blockRuns = w.blockRuns.data() + size_t(i) * blocks;
  }
  // Per-site counts go straight to the worker's array: a worker runs one
  // block at a time, so no lock and no per-block merge are needed.
  w.siteCounters.assign(l.cfg.perSite ? sites : 0, SiteCounters{});
  w.perSite = l.cfg.perSite ? w.siteCounters.data() : nullptr;
  w.grouper.reset(l.program->sites, n, w.perSite);
  w.shared.reserve(l.cfg.sharedBytes);  // never empty: the shared base is a real address
  w.scratch.reserve(std::max<size_t>(l.program->sites.maxBytes(), 64));
  w.race.reset(l.cfg.raceCheck, l.cfg.sharedBytes);
  w.globalRace.reset(l.cfg.raceCheck);
  w.memoryHint = 0;
  w.block.warps.assign((n + kWarpSize - 1) / kWarpSize, WarpState{});
  w.block.warpgroupArrived.assign((n + 127) / 128, 0);
  w.block.wgmmaReading.assign((l.cfg.sharedBytes + 15) / 16, 0);
  w.block.wgmmaInFlight.assign((n + 127) / 128, {});
  w.block.wgmmaReadingCount = 0;
  w.counters = Counters{};
}

}  // namespace

Counters Simulator::launch(Program &p, const std::string &kernel, const LaunchConfig &cfg,
                           const std::vector<const void *> &args) {
  const Program::Impl &prog = p.impl();
  auto it = prog.kernels.find(kernel);
  if (it == prog.kernels.end()) {
    std::string names;
    for (auto &[name, k] : prog.kernels) names += (names.empty() ? "" : ", ") + name;
    throw SimError("sim: no kernel named " + kernel + " in the program (it has: " + names + ")");
  }
  const KernelInfo &k = it->second;
  std::string what = "sim: launch of " + kernel + ": ";
  if (args.size() != k.numParams)
    throw SimError(what + "the kernel takes " + std::to_string(k.numParams) + " arguments, got " +
                   std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i])
      throw SimError(what + "argument " + std::to_string(i) + " is a null pointer (want a pointer to the value)");
  if (cfg.blockThreads < 1 || cfg.blockThreads > 1024)
    throw SimError(what + std::to_string(cfg.blockThreads) + " threads per block; want 1..1024");
  if (k.numThreads > 0 && cfg.blockThreads != uint32_t(k.numThreads))
    throw SimError(what + "the kernel was lowered for " + std::to_string(k.numThreads) +
                   " threads per block, launched with " + std::to_string(cfg.blockThreads));
  for (int a = 0; a < 3; ++a)
    if (cfg.grid[a] == 0) throw SimError(what + "grid dimension " + std::to_string(a) + " is 0");
  constexpr uint32_t kMaxShared = 227 * 1024;  // the most an sm_90 block can have
  if (cfg.sharedBytes > kMaxShared)
    throw SimError(what + std::to_string(cfg.sharedBytes) + " bytes of shared memory; at most " +
                   std::to_string(kMaxShared));

  std::lock_guard lock(launchMu_);
  LaunchCtx l;
  l.program = &prog;
  l.kernel = &k;
  l.cfg = cfg;
  l.args = const_cast<void **>(reinterpret_cast<const void *const *>(args.data()));
  l.memory = memory_.snapshot();
  bindSiteBuffers(l);
  l.totalBlocks = uint64_t(cfg.grid[0]) * cfg.grid[1] * cfg.grid[2];
  l.runBlocks = cfg.sampleBlocks > 0 && cfg.sampleBlocks < l.totalBlocks ? cfg.sampleBlocks : l.totalBlocks;

  unsigned n = unsigned(std::min<uint64_t>(workers_, l.runBlocks));
  while (pool_.size() < n) pool_.push_back(std::make_unique<Worker>());
  for (unsigned i = 0; i < n; ++i) prepareWorker(*pool_[i], l);
  // The calling thread is worker 0.
  std::vector<std::thread> helpers;
  for (unsigned i = 1; i < n; ++i) helpers.emplace_back(runWorker, std::ref(*pool_[i]), std::ref(l));
  runWorker(*pool_[0], l);
  for (std::thread &h : helpers) h.join();

  flushPrinted(l);
  if (l.failed.load()) throw SimError(l.error);
  Counters total;
  for (unsigned i = 0; i < n; ++i) {
    total += pool_[i]->counters;
    if (cfg.perSite) {
      total.sites.resize(pool_[i]->siteCounters.size());
      for (size_t s = 0; s < total.sites.size(); ++s) total.sites[s] += pool_[i]->siteCounters[s];
    }
  }
  if (l.runBlocks < l.totalBlocks) scaleToGrid(total, l.runBlocks, l.totalBlocks);
  total.blocksRun = l.runBlocks;
  total.blocksTotal = l.totalBlocks;
  return total;
}

}  // namespace tk::sim
