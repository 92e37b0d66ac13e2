// tk sim's public interface: JIT-compile a sim-lowered LLVM module (Program)
// and run its kernels on the CPU with one fiber per GPU thread (Simulator).
// No LLVM headers here: this header is included by the runtime and tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/sim/SiteTable.h"
#include "tk/error.h"

namespace llvm {
class Module;
class LLVMContext;
}  // namespace llvm

namespace tk::sim {

// What one site (a memory instruction of the program) cost over a launch,
// counted only with LaunchConfig::perSite (docs/sim.md, "Per-site counters").
// Summed over the sites of a kind, each field equals its total in Counters.
struct SiteCounters {
  uint64_t requests = 0;    // warp-level instructions (an ldmatrix is one)
  uint64_t bytes = 0;       // bytes of the active elements (an ldmatrix: 128 per matrix)
  uint64_t sectors = 0;     // global: distinct 32-byte sectors per request, summed
  uint64_t wavefronts = 0;  // shared and ldmatrix: wavefronts per request, summed
  SiteCounters &operator+=(const SiteCounters &o) {
    requests += o.requests, bytes += o.bytes, sectors += o.sectors, wavefronts += o.wavefronts;
    return *this;
  }
};

// What a profiler would count for one launch (see docs/sim.md for how).
// Of a sampled launch (LaunchConfig::sampleBlocks) every field but blocksRun
// is scaled to the whole grid: `blocks` and `threads` are the grid's.
struct Counters {
  uint64_t globalLoadBytes = 0, globalStoreBytes = 0;
  uint64_t globalLoadRequests = 0, globalStoreRequests = 0;  // warp-level memory instructions
  uint64_t globalLoadSectors = 0, globalStoreSectors = 0;    // distinct 32-byte sectors per request, summed
  uint64_t sharedRequests = 0, sharedWavefronts = 0;         // wavefronts > requests means bank conflicts
  uint64_t barriers = 0;                                     // per block, once per barrier instance
  uint64_t blocks = 0, threads = 0;
  // Executed instructions of the optimised IR, GPU-style (docs/sim.md,
  // "Instruction counts"): summed over threads; per warp, each basic block as
  // often as its busiest lane ran it, summed over warps (what the warp
  // issues: masked-off and exited lanes still cost it); and, of the thread
  // count, floating-point arithmetic and special-function math (sin, exp,
  // sqrt, tanh, ...: the SFU or a long libdevice sequence on a GPU).
  uint64_t threadInstructions = 0, warpInstructions = 0;
  uint64_t fpInstructions = 0, specialInstructions = 0;
  // Blocks that ran and blocks in the grid: equal unless the launch sampled.
  uint64_t blocksRun = 0, blocksTotal = 0;
  // With LaunchConfig::perSite: one entry per site of the program, indexed by
  // site id (Program::sites()); barrier, shuffle and mma sites stay zero.
  // Empty otherwise.
  std::vector<SiteCounters> sites;
  Counters &operator+=(const Counters &o);
};

struct LaunchConfig {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t blockThreads = 128;  // 1-D blocks, 1..1024
  uint32_t sharedBytes = 0;     // dynamic shared memory per block
  // Report two threads of a block touching one shared or global byte between
  // two barriers, at least one of them writing (docs/sim.md, "Race check").
  bool raceCheck = false;
  // Receives the text device `print` wrote during the launch, once, after it
  // ran (also when it failed): whole lines, by block, then by thread. Unset:
  // the text goes to stdout.
  std::function<void(const std::string &)> printSink;
  // 0: run every block. N > 0 and fewer than the grid's blocks: run only N
  // blocks spread evenly over the linear block range (x fastest), the k-th of
  // them being block floor(k * (total - 1) / (N - 1)), so the first and the
  // last always run (N = 1: block 0 alone), and scale the counters to the
  // whole grid (each multiplied by total / N, rounded to nearest). The blocks
  // left out do not run at all: their outputs are not written, their prints
  // and faults never happen. For cost estimates of grids too big to run.
  uint64_t sampleBlocks = 0;
  // Count each memory site on its own as well (Counters::sites): requests,
  // bytes, sectors, wavefronts. Off: no per-site work at all.
  bool perSite = false;
};

// Device-side faults (out of bounds, races, sim memory misuse): the public
// tk::SimError (tk/error.h), so they reach a launcher's caller unwrapped.
using SimError = tk::SimError;

// The sim's "device memory": host allocations registered in a table, so every
// instrumented global access can be checked against the live allocations.
// Thread-safe. Released blocks stay in a bounded quarantine before they are
// really freed, so a use-after-free is reported as such and never touches
// memory the process reused.
class Memory {
 public:
  Memory() = default;
  Memory(const Memory &) = delete;
  Memory &operator=(const Memory &) = delete;
  ~Memory();

  void *allocate(size_t bytes);  // 256-byte aligned; throws SimError when out of memory
  void release(void *p);         // throws SimError for an unknown pointer or a double free
  size_t liveBytes() const;
  size_t peakBytes() const;
  // The size of the live allocation that starts at p; throws SimError if none does.
  size_t sizeOf(const void *p) const;
  // Memory the caller owns (tk::Device::borrow on the sim): [p, p + bytes)
  // joins the table, so accesses to it are checked like an allocation's, but
  // it is never freed here and does not count as live bytes. Borrowed ranges
  // may overlap each other (the table holds their union). Returns the key to
  // forget(); 0 when nothing was registered (an empty range, or one inside an
  // allocation of this Memory). A range partly over one of this Memory's
  // allocations is a SimError.
  uintptr_t adopt(const void *p, size_t bytes);
  // Drops the range adopt() registered under `key` (0: nothing).
  void forget(uintptr_t key);

  // A launch's frozen view of the table (sorted, non-overlapping ranges).
  struct Range {
    uintptr_t begin, end;
  };
  struct Snapshot {
    std::vector<Range> live, released;
  };
  Snapshot snapshot() const;

  // Bytes of released allocations kept (not freed) to diagnose use-after-free.
  static constexpr size_t kQuarantineBytes = size_t(256) << 20;

 private:
  mutable std::mutex mu_;
  std::map<uintptr_t, size_t> live_;                     // begin -> bytes
  std::map<uintptr_t, std::pair<uintptr_t, size_t>> borrowed_;  // adopt() key -> (begin, bytes)
  std::set<uintptr_t> adoptedBegins_;  // the ranges of live_ that are unions of borrowed ones: never freed
  uintptr_t nextBorrowKey_ = 1;
  void rebuildAdopted();  // with mu_ held
  std::deque<std::pair<uintptr_t, size_t>> quarantine_;  // oldest first
  size_t quarantineBytes_ = 0, liveBytes_ = 0, peakBytes_ = 0;
};

// Checks compiled into a Program beyond the memory checks every program has.
struct ProgramOptions {
  // sim:overflow: report the first i32 add, sub, mul or shl (or i64 -> i32
  // truncation) that wraps on its way into a global address (docs/sim.md,
  // "Index overflow"). Off, the code has no trace of it.
  bool overflowCheck = false;
};

// One JIT-compiled module (ORC LLJIT) holding one or more kernels.
class Program {
 public:
  // Instruments memory accesses, adds an entry trampoline per kernel, runs the
  // O2 pipeline, makes each basic block count its runs and JIT-compiles.
  // Kernels are the functions SimTarget::markKernel marked. Throws SimError
  // when the module is invalid or was not lowered for sim.
  static std::unique_ptr<Program> compile(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                                          const ProgramOptions &options = {});
  // The text of the module as compile would JIT it (instrumented, with its
  // trampolines, after O2 and the block counters): `tkc compile --emit
  // sim-llvm-opt`. Throws SimError as compile does.
  static std::string optimizedIR(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                                 const ProgramOptions &options = {});
  ~Program();

  bool hasKernel(const std::string &name) const;
  std::vector<std::string> kernelNames() const;
  // Threads per block the kernel was lowered for (SimTarget::markKernel).
  int kernelNumThreads(const std::string &name) const;  // throws SimError if unknown
  // The instrumented operations, by site id: kind, access width, "file:line:col".
  const SiteTable &sites() const;

  struct Impl;  // JIT, kernel entries, memory-access sites, block costs (backend/sim/ProgramImpl.h)
  Impl &impl() { return *impl_; }

 private:
  Program();
  std::unique_ptr<Impl> impl_;
};

// Runs kernels. Launches on one Simulator are serialised; blocks of a launch
// run in parallel on `workers` threads.
class Simulator {
 public:
  explicit Simulator(unsigned workers = 0 /* 0: hardware_concurrency */);
  ~Simulator();
  Simulator(const Simulator &) = delete;
  Simulator &operator=(const Simulator &) = delete;

  Memory &memory() { return memory_; }
  unsigned workers() const { return workers_; }

  // args[i] points at the value of kernel parameter i (a void* for a pointer
  // parameter, an int32_t for i32, a float for f32, ...). Throws SimError on bad
  // use or a kernel fault (out-of-bounds, use-after-free, divergent barrier, ...).
  Counters launch(Program &p, const std::string &kernel, const LaunchConfig &cfg,
                  const std::vector<const void *> &args);

  struct Worker;  // per-worker fiber stacks and scratch, reused across launches

 private:
  Memory memory_;
  unsigned workers_;
  std::mutex launchMu_;
  std::vector<std::unique_ptr<Worker>> pool_;
};

}  // namespace tk::sim
