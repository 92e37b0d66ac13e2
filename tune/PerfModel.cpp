// The performance model (include/tk/perf.h): occupancy from the GPU's limits,
// then the time as the largest of memory, issue and shared-memory terms, plus
// per-wave latency and the launch. Each constant is explained in
// docs/autotune.md; change both together.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "tk/perf.h"
#include "tk/gpu.h"

namespace tk {

namespace {

// Fraction of peak DRAM bandwidth a streaming kernel reaches (STREAM-like
// copies reach 85-92% on A100 and H100).
constexpr double kDramEfficiency = 0.9;
// Independent memory requests a warp keeps in flight at most (loads issued
// back to back before their first use).
constexpr double kMaxRequestsInFlight = 8;
// Warps per scheduler needed to hide arithmetic latency (about 4 cycles
// with an instruction-level parallelism of 2).
constexpr double kWarpsToHideLatency = 2;
// Issue slots a math-library call costs a warp beyond the call itself
// (libdevice sin/exp/tanh are 10-30 instructions on the GPU; the sim counts
// a libm call as one).
constexpr double kSpecialIssueSlots = 16;
// Cycles a block-wide barrier costs the block.
constexpr double kBarrierCycles = 20;
// Cycles for the SM to retire a block and start the next one.
constexpr double kBlockStartCycles = 150;

}  // namespace

namespace {
// The figures that differ between the GPUs tk models; the rest (registers,
// threads and blocks per SM, schedulers) are the same on sm_80 and sm_90.
// Shared memory per block is the SM's less the 1 KB the driver reserves.
GpuSpec gpu(const char *name, const char *arch, int sms, double clockGhz, double dramGBps, double latencyNs,
            int sharedKbPerSm, int fp32Lanes) {
  GpuSpec g;
  g.name = name;
  g.arch = arch;
  g.sms = sms;
  g.clockGhz = clockGhz;
  g.dramGBps = dramGBps;
  g.dramLatencyNs = latencyNs;
  g.sharedPerSm = sharedKbPerSm * 1024;
  g.sharedPerBlock = (sharedKbPerSm - 1) * 1024;
  g.fp32LanesPerSm = fp32Lanes;
  g.launchUs = 3.0;
  return g;
}
}  // namespace

const GpuSpec &GpuSpec::named(const std::string &name) {
  // H100 SXM5: 132 SMs, 1980 MHz boost, 3.35 TB/s HBM3, 228 KB shared per SM.
  static const GpuSpec h100 = gpu("H100 SXM", "sm_90", 132, 1.98, 3350, 600, 228, 128);
  // A100 SXM4 80 GB: 108 SMs, 1410 MHz boost, 2.039 TB/s HBM2e, 164 KB shared per SM.
  static const GpuSpec a100 = gpu("A100 SXM", "sm_80", 108, 1.41, 2039, 550, 164, 64);
  // Names compare without case: --gpu h100 is H100.
  std::string upper = name;
  for (char &c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "H100" || upper == "H100-SXM" || upper == "H100 SXM") return h100;
  if (upper == "A100" || upper == "A100-SXM" || upper == "A100 SXM") return a100;
  throw Error("unknown GPU '" + name + "' for the performance model (known: H100, A100)");
}

std::vector<std::string> GpuSpec::names() { return {"H100", "A100"}; }

ModelInput modelInput(const LaunchStats &s, Dim3 grid, const Bundle &bundle, const std::string &arch) {
  ModelInput in;
  in.grid = grid;
  in.numWarps = bundle.numWarps + bundle.producerWarps;  // every warp the block launches
  in.sharedBytes = bundle.sharedBytes;
  if (auto it = bundle.resources.find(arch); it != bundle.resources.end()) {
    in.registers = it->second.registers;
    in.spillBytes = it->second.spillStoreBytes + it->second.spillLoadBytes;
    in.sharedBytes += it->second.sharedStaticBytes;
  }
  in.loadSectors = s.loadSectors;
  in.storeSectors = s.storeSectors;
  in.loadRequests = s.loadRequests;
  in.storeRequests = s.storeRequests;
  in.sharedWavefronts = s.sharedWavefronts;
  in.barriers = s.barriers;
  in.warpInstructions = s.warpInstructions;
  in.fpInstructions = s.fpInstructions;
  in.specialInstructions = s.specialInstructions;
  return in;
}

ModelEstimate estimateTime(const GpuSpec &gpu, const ModelInput &in) {
  ModelEstimate e;
  const int threads = in.numWarps * kWarpSize;
  const uint64_t blocks = uint64_t(in.grid.x) * in.grid.y * in.grid.z;
  auto refuse = [&](std::string why) {
    e.launchable = false;
    e.whyNot = std::move(why);
    return e;
  };
  if (threads > gpu.maxThreadsPerBlock)
    return refuse(std::to_string(threads) + " threads per block; " + gpu.name + " allows " +
                  std::to_string(gpu.maxThreadsPerBlock));
  if (in.sharedBytes > gpu.sharedPerBlock)
    return refuse(std::to_string(in.sharedBytes) + " bytes of shared memory per block; " + gpu.name + " allows " +
                  std::to_string(gpu.sharedPerBlock));
  if (in.registers > gpu.maxRegsPerThread)
    return refuse(std::to_string(in.registers) + " registers per thread; " + gpu.name + " allows " +
                  std::to_string(gpu.maxRegsPerThread));
  if (in.registers > 0 && int64_t(in.registers) * threads > gpu.regsPerSm)
    return refuse(std::to_string(in.registers) + " registers x " + std::to_string(threads) +
                  " threads exceed the SM's " + std::to_string(gpu.regsPerSm) + " registers");

  // Occupancy: the tightest of the SM's limits.
  struct Limit {
    const char *what;
    int blocks;
  };
  std::vector<Limit> limits = {{"blocks", gpu.maxBlocksPerSm}, {"threads", gpu.maxThreadsPerSm / threads}};
  if (in.registers > 0) {
    int perWarp = (in.registers * kWarpSize + gpu.regAllocUnit - 1) / gpu.regAllocUnit * gpu.regAllocUnit;
    limits.push_back({"registers", gpu.regsPerSm / perWarp / in.numWarps});
  } else {
    e.note = "registers unknown (no ptxas): occupancy from threads and shared memory only";
  }
  if (in.sharedBytes > 0) {
    int perBlock = (in.sharedBytes + gpu.sharedReservedPerBlock + 127) / 128 * 128;
    limits.push_back({"shared memory", gpu.sharedPerSm / perBlock});
  }
  auto tightest = std::min_element(limits.begin(), limits.end(), [](const Limit &a, const Limit &b) { return a.blocks < b.blocks; });
  e.blocksPerSm = tightest->blocks;
  e.limitedBy = tightest->what;
  if (e.blocksPerSm < 1) return refuse("not one block fits on an SM (limited by " + e.limitedBy + ")");
  if (blocks == 0) return refuse("an empty grid");

  const double clockHz = gpu.clockGhz * 1e9;
  const uint64_t concurrent = uint64_t(gpu.sms) * e.blocksPerSm;
  e.waves = int(std::min<uint64_t>((blocks + concurrent - 1) / concurrent, 1u << 30));
  const double activeSms = double(std::min<uint64_t>(blocks, gpu.sms));
  const double blocksOnBusiestSm = std::ceil(double(blocks) / gpu.sms);
  const double residentBlocks = std::min<double>(e.blocksPerSm, blocksOnBusiestSm);
  const double residentWarps = residentBlocks * in.numWarps;
  e.occupancy = residentWarps * kWarpSize / gpu.maxThreadsPerSm;

  // Memory: every 32-byte sector a request touched crosses to DRAM (L2 hits
  // are not modelled), spills add their bytes per thread. Bandwidth is the
  // smaller of the achievable peak and what the resident warps keep in
  // flight over one latency (Little's law).
  const double totalWarps = double(blocks) * in.numWarps;
  const double spill = double(std::max(0, in.spillBytes)) * double(blocks) * threads;
  e.dramBytes = double(in.loadSectors + in.storeSectors) * 32 + spill;
  const double requests = double(in.loadRequests + in.storeRequests);
  if (e.dramBytes > 0) {
    const double bytesPerRequest = requests > 0 ? double(in.loadSectors + in.storeSectors) * 32 / requests : 128;
    const double requestsPerWarp = std::max(1.0, std::min(kMaxRequestsInFlight, double(in.loadRequests) / totalWarps));
    const double inFlight = activeSms * residentWarps * bytesPerRequest * requestsPerWarp;
    const double littleBps = inFlight / (gpu.dramLatencyNs * 1e-9);
    const double bps = std::min(gpu.dramGBps * 1e9 * kDramEfficiency, littleBps);
    e.memoryUs = e.dramBytes / bps * 1e6;
  }

  // Issue: the busiest SM's share of warp instructions over its schedulers,
  // slowed when too few warps are resident to hide latency; FP32 lanes bound
  // separately (A100 has half as many as it has issue slots).
  const double perBlockIssue =
      (double(in.warpInstructions) + double(in.specialInstructions) / kWarpSize * kSpecialIssueSlots) / double(blocks);
  const double perBlockFp = double(in.fpInstructions) / kWarpSize / double(blocks);
  const double hide = std::min(1.0, residentWarps / gpu.schedulersPerSm / kWarpsToHideLatency);
  const double issueCycles = std::max(perBlockIssue / gpu.schedulersPerSm, perBlockFp / (gpu.fp32LanesPerSm / double(kWarpSize)));
  const double barrierCycles = double(in.barriers) / double(blocks) * kBarrierCycles / residentBlocks;
  e.computeUs = blocksOnBusiestSm * (issueCycles / hide + barrierCycles) / clockHz * 1e6;

  // Shared memory: one wavefront per cycle per SM.
  e.sharedUs = blocksOnBusiestSm * (double(in.sharedWavefronts) / double(blocks)) / clockHz * 1e6;

  // Every wave waits at least one DRAM round trip and a block start.
  e.latencyUs = e.waves * (gpu.dramLatencyNs * 1e-3 + kBlockStartCycles / clockHz * 1e6);
  e.launchUs = gpu.launchUs;

  struct Term {
    const char *what;
    double us;
  };
  Term terms[] = {{"memory", e.memoryUs}, {"compute", e.computeUs}, {"shared memory", e.sharedUs}};
  const Term *top = std::max_element(std::begin(terms), std::end(terms), [](const Term &a, const Term &b) { return a.us < b.us; });
  e.us = e.launchUs + top->us + e.latencyUs;
  e.bound = top->us >= e.latencyUs && top->us >= e.launchUs ? top->what : e.latencyUs >= e.launchUs ? "latency" : "launch";
  return e;
}

}  // namespace tk
