// tk's performance model: an estimate of a launch's time on a named GPU from
// what the sim counted and what ptxas reported. It is a model, and says so
// wherever it prints. The autotuner ranks by it on the sim; `tkc report`
// shows it. Constants, formula and their sources: docs/autotune.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tk/runtime.h"

namespace tk {

// The figures of a GPU the model needs (datasheets and the CUDA programming
// guide's compute-capability tables; see docs/autotune.md).
struct GpuSpec {
  std::string name;  // "H100 SXM"
  std::string arch;  // the arch tk compiles for it: "sm_90"
  int sms = 0;
  double clockGhz = 0;      // boost clock
  double dramGBps = 0;      // peak DRAM bandwidth, GB/s
  double dramLatencyNs = 0;  // a load's round trip to DRAM
  int maxThreadsPerSm = 2048, maxBlocksPerSm = 32, maxThreadsPerBlock = 1024;
  int regsPerSm = 65536, maxRegsPerThread = 255, regAllocUnit = 256;  // registers, allocated per warp in units
  int sharedPerSm = 0, sharedPerBlock = 0, sharedReservedPerBlock = 1024;
  int schedulersPerSm = 4;  // each issues one warp instruction per cycle
  int fp32LanesPerSm = 128;
  double launchUs = 0;  // host launch to kernel start and back, for an empty kernel

  // "H100" (the default; also "H100-SXM") or "A100" ("A100-SXM"), in any
  // case. Throws tk::Error listing the known names.
  static const GpuSpec &named(const std::string &name);
  static std::vector<std::string> names();
};

// What one launch did: the sim's counters (scaled to the whole grid when the
// sim ran a sample of the blocks) and the variant's resources.
struct ModelInput {
  Dim3 grid;
  int numWarps = 4;
  int registers = -1;     // per thread, from ptxas; -1: unknown (no CUDA toolkit)
  int spillBytes = 0;     // per thread, spill stores + loads, from ptxas
  int sharedBytes = 0;    // per block, static + dynamic
  uint64_t loadSectors = 0, storeSectors = 0, loadRequests = 0, storeRequests = 0;
  uint64_t sharedWavefronts = 0, barriers = 0;
  uint64_t warpInstructions = 0;     // issued per warp
  uint64_t fpInstructions = 0;       // thread level
  uint64_t specialInstructions = 0;  // thread level: math-library calls (sin, exp, ...)
};

struct ModelEstimate {
  bool launchable = true;
  std::string whyNot;  // when not launchable: what exceeds the GPU
  double us = 0;       // the estimate, microseconds
  double launchUs = 0, memoryUs = 0, computeUs = 0, sharedUs = 0, latencyUs = 0;
  int blocksPerSm = 0;        // resident blocks per SM (occupancy)
  double occupancy = 0;       // resident warps / the SM's maximum
  std::string limitedBy;      // what caps blocksPerSm: "threads", "registers", "shared memory", "blocks"
  std::string bound;          // the largest term: "memory", "compute", "shared memory", "latency", "launch"
  double dramBytes = 0;
  int waves = 0;
  std::string note;  // e.g. "registers unknown (no ptxas): occupancy from threads and shared memory only"
};

ModelEstimate estimateTime(const GpuSpec &gpu, const ModelInput &in);

// The model's input for a launch of `bundle` on `grid` that the sim counted
// in `stats`, with ptxas's resources for `arch` when the bundle has them
// (CompileOptions::ptxasResources). One construction for the tuner and
// `tkc report`.
ModelInput modelInput(const LaunchStats &stats, Dim3 grid, const Bundle &bundle, const std::string &arch);

}  // namespace tk
