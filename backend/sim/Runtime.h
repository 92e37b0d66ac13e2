// The sim runtime's state while a launch runs: one LaunchCtx, a BlockCtx per
// block in flight (one per worker), a ThreadCtx per GPU thread (fiber). The
// runtime functions the JIT'd code calls find all of it through `tlsThread`.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backend/sim/Coalescing.h"
#include "backend/sim/Fiber.h"
#include "backend/sim/GlobalRaceCheck.h"
#include "backend/sim/ProgramImpl.h"
#include "backend/sim/RaceCheck.h"
#include "backend/sim/Simulator.h"
#include "tk/half.h"

namespace tk::sim {

struct BlockCtx;

// The buffer a site's global accesses must stay in: the live allocation that
// holds the kernel argument its address derives from (Site::param), and that
// argument's value (offsets in errors are from it). begin == 0: unknown.
struct ParamBuffer {
  uintptr_t begin = 0, end = 0, arg = 0;
};

struct LaunchCtx {
  const Program::Impl *program = nullptr;
  const KernelInfo *kernel = nullptr;
  LaunchConfig cfg;
  void **args = nullptr;
  Memory::Snapshot memory;
  std::vector<ParamBuffer> siteBuffers;  // per site (bindSiteBuffers)
  uint64_t totalBlocks = 0;
  uint64_t runBlocks = 0;              // totalBlocks, or fewer when the launch samples (LaunchConfig::sampleBlocks)
  std::atomic<uint64_t> nextBlock{0};  // counts the blocks to run, up to runBlocks
  std::atomic<bool> failed{false};
  std::mutex errorMu;
  std::string error;
  // What `print` wrote, one entry per block that printed: (linear block id,
  // its lines). Guarded by errorMu; written to the sink in block order.
  std::vector<std::pair<uint64_t, std::string>> printed;

  // Records a fault; the first one wins and stops workers taking new blocks.
  void fail(std::string message);
};

// Where a suspended fiber waits: a block barrier, a named barrier
// (ThreadCtx::namedBarrier), a warp collective (a shuffle, ldmatrix or mma,
// which `warpOp` tells apart; wgmma waits for the other warps of its
// warpgroup too), or an mbarrier's phase (ThreadCtx::parked).
enum class Wait : uint8_t { None, Barrier, NamedBarrier, Warp, Mbarrier, Done };
enum class WarpOp : uint8_t { Shuffle, Ldmatrix, Mma, Wgmma };

// The mma.sync shapes the sim runs, by input type (the last argument of
// __tk_sim_mma): m16n8k16 f16 and bf16, m16n8k8 tf32 (f32 accumulators),
// m16n8k32 s8 (s32 accumulators, passed as f32 bits).
// (kMmaE4M3E5M2: A e4m3 by B e5m2, and the other way round.)
enum MmaType : uint32_t {
  kMmaF16 = 0,
  kMmaBf16 = 1,
  kMmaTf32 = 2,
  kMmaS8 = 3,
  kMmaE4M3 = 4,
  kMmaE5M2 = 5,
  kMmaE4M3E5M2 = 6,
  kMmaE5M2E4M3 = 7,
};

// A lane's operands and results at ldmatrix or mma (WarpCollective.cpp).
struct MatrixOperands {
  uintptr_t row = 0;  // ldmatrix: this lane's row address
  uint32_t num = 0;   // ldmatrix: 1, 2 or 4 matrices
  bool trans = false;
  uint32_t kind = 0;  // mma: the MmaType of its inputs
  uint32_t a[4] = {}, b[2] = {};
  uint32_t c[4] = {};    // C's f32 (or, for s8, i32) bits
  uint32_t out[4] = {};  // the lane's result registers (of mma: D's f32 or i32 bits)
};

// The bits of WgmmaThread::flags (__tk_sim_wgmma's last operand): the element types
// (f16 unless a bit says otherwise, A's fp8 bits for A, B's for B), the
// operands' majorness and A's source.
enum WgmmaFlags : uint32_t {
  kWgmmaBf16 = 1,
  kWgmmaMMajorA = 2,
  kWgmmaNMajorB = 4,
  kWgmmaRegA = 8,
  kWgmmaE4m3A = 16,
  kWgmmaE5m2A = 32,
  kWgmmaE4m3B = 64,
  kWgmmaE5m2B = 128,
};
// A thread's wgmma state (Wgmma.cpp): the operands of the wgmma.mma_async it
// waits at, and the results of those in flight. Until a wait_group completes
// its group, a thread's accumulator registers hold tokens (signalling NaNs
// naming an entry of `results`), so reading them early gives NaN, as the
// ISA leaves it undefined.
struct WgmmaThread {
  uint64_t descA = 0, descB = 0;
  uint32_t n = 0, flags = 0;  // WgmmaFlags
  uint32_t a[4] = {};         // A's register fragment (kWgmmaRegA), from __tk_sim_wgmma_a
  float *acc = nullptr;       // the thread's n / 2 accumulators (in: C, out: tokens)
  // Results are numbered from the launch's start on (a token names its
  // number mod 2^16): `results` holds those from `base` on, the completed
  // ones dropped at each wait_group, so a loop that keeps a group in flight
  // across iterations never runs out of numbers.
  std::vector<float> results;
  uint64_t base = 0;                // the number of results[0]
  std::vector<uint64_t> groupEnds;  // per pending group: the number past its last result
  uint64_t completed = 0;           // results numbered below it are complete
  bool fenced = false;                          // a wgmma.fence since the last wait_group
  // 1 + the block's barrier count when this thread last wrote shared memory
  // without a fence.proxy.async after it (0: none).
  uint64_t unfencedWrite = 0;
};

// A cp.async in flight: what it read at issue, landing in shared memory
// when a wait_group completes its group (AsyncCopy.cpp).
struct PendingCopy {
  uintptr_t dst = 0;
  uint32_t bytes = 0, group = 0, site = 0;  // site: its shared-store side
  unsigned char data[16] = {};
};

// A thread parked at mbarrier.try_wait.parity (Wait::Mbarrier): the
// barrier's shared offset, the parity whose phase it waits for, and the
// wait's site (~0u: unlocated).
struct MbarrierWaiter {
  uint32_t offset = 0, parity = 0, site = ~0u;
};

struct ThreadCtx {
  BlockCtx *block = nullptr;
  uint32_t tid = 0, warp = 0, lane = 0;
  FiberContext ctx = nullptr;    // this fiber, while suspended
  FiberContext sched = nullptr;  // the block scheduler, while this fiber runs
  Wait wait = Wait::None;
  WarpOp warpOp = WarpOp::Shuffle;  // the warp collective waited at (wait == Wait::Warp)
  uint32_t warpSite = ~0u;          // its site, when located (ldmatrix and mma always are)
  uint32_t shflIn = 0, shflMask = 0, shflOut = 0;
  MatrixOperands mx;
  WgmmaThread wg;
  uint32_t *occurrences = nullptr;  // per site: how often this thread ran it
  uint64_t *blockRuns = nullptr;    // per basic block of the program: how often this thread ran it
  uint32_t printGroup = 0;          // print groups begun so far (0: none)
  std::vector<PendingCopy> copies;  // cp.async in flight, oldest first
  // With the race check: this thread's last global reads (a ring), so a
  // conflict between replicas of one load can be told apart (GlobalAccess.cpp).
  struct RecentRead {
    uintptr_t lo = 0, hi = 0;
    uint32_t site = 0, epoch = 0;
  };
  std::vector<RecentRead> recentReads;
  uint32_t recentNext = 0;
  uint32_t committedGroups = 0;     // cp.async groups committed so far (the open one is this number)
  MbarrierWaiter parked;            // while wait == Wait::Mbarrier (Mbarrier.cpp)
  uint32_t namedBarrier = 0;        // the barrier id, while wait == Wait::NamedBarrier (NamedBarrier.cpp)

  // For AddressSanitizer's fiber annotations (unused without ASan).
  void *asanFakeStack = nullptr;
  const void *schedStackBottom = nullptr;
  size_t schedStackSize = 0;
};

// One of a block's 16 barriers used as `bar.sync id, threads` (the block
// barrier, `barrier()`, keeps its own count: BlockCtx::atBarrier): the
// threads the current instance waits for (0: no instance open), those
// arrived, and the first arrival's thread and site (~0u: unlocated).
struct NamedBarrierState {
  uint32_t count = 0, arrived = 0, firstTid = 0, site = ~0u;
};
inline constexpr uint32_t kNamedBarriers = 16;

struct WarpState {
  uint32_t lanes = 0, atWarp = 0, done = 0;  // lanes, of them at a warp collective, and exited
};

struct BlockCtx {
  LaunchCtx *launch = nullptr;
  Simulator::Worker *worker = nullptr;
  uint32_t id[3] = {0, 0, 0};
  uint32_t nthreads = 0;
  char *shared = nullptr;
  uint32_t sharedBytes = 0;
  Counters counters;
  uint32_t live = 0, atBarrier = 0;
  uint32_t barrierSite = ~0u;  // site of the barrier being waited at, when located
  NamedBarrierState named[kNamedBarriers];  // by id; 0 stays unused (NamedBarrier.cpp)
  std::vector<WarpState> warps;
  std::vector<uint8_t> warpgroupArrived;  // per warpgroup: its warps waiting at wgmma
  // Shared memory that wgmma.mma_async instructions still read (Wgmma.cpp):
  // issued, their group not yet completed by a wait_group. A GPU reads the
  // operands any time until then, so a write to those bytes meanwhile is a
  // fault (the sim itself reads them at issue). Per 16-byte chunk, how many
  // such instructions read it; per warpgroup, each instruction's chunks with
  // the result count that ends it (WgmmaThread::results) and its name.
  struct WgmmaReads {
    uint64_t resultsEnd = 0;
    std::string what;
    std::vector<uint32_t> chunks;
  };
  std::vector<uint16_t> wgmmaReading;
  std::vector<std::vector<WgmmaReads>> wgmmaInFlight;
  uint64_t wgmmaReadingCount = 0;  // the sum of wgmmaReading: 0 skips the check
  // Lines `print` made, in the order printed (thread by thread); the thread's
  // print group (Target::beginPrintGroup), the element and the thread order
  // them at the end.
  struct Line {
    uint32_t group, element, tid;
    std::string text;
  };
  std::vector<Line> printed;
};

// A zero-initialised byte buffer aligned for any vector access the JIT'd code
// may make through it (up to 64-byte AVX-512 vectors).
class AlignedBuffer {
 public:
  static constexpr size_t kAlign = 256;
  char *data() { return p_.get(); }
  size_t size() const { return size_; }
  // Makes room for at least `bytes` (contents are not kept).
  void reserve(size_t bytes);

 private:
  struct Free {
    void operator()(char *p) const;
  };
  std::unique_ptr<char, Free> p_;
  size_t size_ = 0;
};

struct Simulator::Worker {
  StackPool stacks;
  std::vector<ThreadCtx> threads;
  std::vector<uint32_t> occurrences;   // [thread * numSites + site]
  std::vector<uint64_t> blockRuns;     // [thread * numBasicBlocks + block] (CountInstructions.h)
  std::vector<uint64_t> warpMostRuns;  // per basic block, while a warp is tallied: the most a lane ran it
  std::vector<uint32_t> runq, next;
  AccessGrouper grouper;
  std::vector<SiteCounters> siteCounters;  // per site, with LaunchConfig::perSite (else empty)
  SiteCounters *perSite = nullptr;         // siteCounters.data(), or null when not counting per site
  AlignedBuffer shared;                    // the block's shared memory
  AlignedBuffer scratch;                   // where bad accesses are redirected; zeroed per use
  RaceShadow race;                         // shared-memory race check (LaunchConfig::raceCheck)
  GlobalRaceShadow globalRace;             // its global-memory half, within the block
  size_t memoryHint = 0;                   // index of the allocation the last access hit
  BlockCtx block;
  Counters counters;  // this worker's blocks, merged once at the end of the launch
};

// The current GPU thread of this OS thread (null outside a kernel).
extern thread_local ThreadCtx *tlsThread;

// The checked and counted global and shared accesses of the instrumented
// code (p, or scratch memory for a bad access), for runtime parts that
// access memory on a thread's behalf.
// `root`: the pointer a rooted site's address derives from (Site::root), else 0.
void *checkedGlobalAccess(void *p, uint32_t site, uint64_t mask, uintptr_t root = 0);
void *checkedSharedAccess(void *p, uint32_t site, uint64_t mask);
// A read (a GlobalLoad site) or write (GlobalStore) of [lo, hi) at global
// site `site` on thread t's behalf, in the tensor whose base pointer is
// `root` (a bulk tensor copy's row): checked as a rooted access is (against
// the live allocation holding `root`, else against every live allocation),
// a write also by the global race check; not counted. False when the launch
// failed (outside, or a race).
bool checkedGlobalRange(ThreadCtx *t, uint32_t site, uintptr_t lo, uintptr_t hi, uintptr_t root);

// Fills l.siteBuffers from the sites' parameters and the launch's arguments
// (GlobalAccess.cpp); after l.memory, before any block runs.
void bindSiteBuffers(LaunchCtx &l);

// cp.async of the current thread (AsyncCopy.cpp): issue (reads the source
// now, srcBytes of it, zero-fills the rest), commit_group, wait_group n.
void cpAsyncIssue(void *dst, const void *src, int32_t bytes, int32_t srcBytes, uint32_t globalSite,
                  uint32_t sharedSite);
void cpAsyncCommit();
void cpAsyncWait(int32_t n);

// sim:overflow's checks (IndexOverflow.cpp): the current thread computed
// `a OP b` (OP the site's IndexOp) or truncated v to i32 on the way to an
// address; a result i32 cannot hold fails the launch.
void checkIndexI32(int32_t a, int32_t b, uint32_t site);
void checkIndexTrunc(int64_t v, uint32_t site);

// Suspends the current fiber and returns to its block scheduler.
void yieldToScheduler(ThreadCtx *t);

// Pieces of launch errors: "0x1f00"; "block (x,y,z), thread t"; " (file:line:col)" for a located site.
std::string hexAddress(uintptr_t a);
std::string threadWhere(const ThreadCtx *t);
std::string siteLoc(const Site &s);
// The byte range [lo, hi) a (possibly masked) access at `a` touches; false when no lane is active.
bool activeRange(const Site &s, uintptr_t a, uint64_t mask, uintptr_t &lo, uintptr_t &hi);
// Where a bad access goes instead: the worker's scratch, its first s.bytes zeroed.
void *redirectToScratch(ThreadCtx *t, const Site &s);

// "kernel K: shared-memory race on byte at offset 0x.. (block (x,y,z)): ..."
std::string raceMessage(const BlockCtx &b, const RaceShadow::Race &r);
// "kernel K: global-memory race on byte at 0x.. (byte offset N from P, block (x,y,z)): ..."
std::string globalRaceMessage(const BlockCtx &b, const GlobalRaceShadow::Race &r);
// "block (x,y,z)", and " (file:line:col)" for a located site (else "").
std::string blockName(const BlockCtx &b);
std::string siteSuffix(const LaunchCtx &l, uint32_t site);

// Names the JIT binds to runtime addresses: the __tk_sim_* entry points and
// the f16/bf16 conversion libcalls x86 codegen may emit.
std::vector<std::pair<const char *, void *>> runtimeSymbols();

// The f16/bf16 conversions (floatToHalfBits, ...) are tk's, in tk/half.h.

}  // namespace tk::sim
