// The performance model alone: occupancy limits, and that what a GPU
// programmer knows is slow -- spills, low occupancy, tiny blocks, too many
// waves -- is estimated slower than the clean config.
#include <gtest/gtest.h>

#include "tk/perf.h"

namespace {

// A streaming kernel over n f32 elements read twice and written once, with
// BLOCK elements per block.
tk::ModelInput streaming(uint64_t n, uint32_t block, int warps, int registers) {
  tk::ModelInput in;
  in.grid = tk::Dim3{uint32_t((n + block - 1) / block)};
  in.numWarps = warps;
  in.registers = registers;
  const uint64_t warpsTotal = uint64_t(in.grid.x) * warps;
  const uint64_t perWarp = std::max<uint64_t>(1, block / (32 * warps));  // elements per thread
  in.loadRequests = 2 * warpsTotal * perWarp;
  in.storeRequests = warpsTotal * perWarp;
  in.loadSectors = 2 * n * 4 / 32;
  in.storeSectors = n * 4 / 32;
  in.warpInstructions = warpsTotal * (20 + 10 * perWarp);
  in.fpInstructions = n * 6;
  in.specialInstructions = n * 2;
  return in;
}

TEST(PerfModel, KnownGpus) {
  EXPECT_EQ(tk::GpuSpec::named("H100").sms, 132);
  EXPECT_EQ(tk::GpuSpec::named("A100").arch, "sm_80");
  EXPECT_THROW(tk::GpuSpec::named("V100"), tk::Error);
  EXPECT_EQ(&tk::GpuSpec::named("h100-sxm"), &tk::GpuSpec::named("H100"));
}

TEST(PerfModel, OccupancyLimits) {
  const tk::GpuSpec &h100 = tk::GpuSpec::named("H100");
  tk::ModelInput in = streaming(1 << 22, 1024, 4, 32);
  tk::ModelEstimate e = tk::estimateTime(h100, in);
  ASSERT_TRUE(e.launchable);
  EXPECT_EQ(e.blocksPerSm, 16);  // 2048 threads / 128
  EXPECT_EQ(e.limitedBy, "threads");
  in.registers = 128;  // 128 x 32 = 4096 per warp: 16 warps = 4 blocks
  e = tk::estimateTime(h100, in);
  EXPECT_EQ(e.blocksPerSm, 4);
  EXPECT_EQ(e.limitedBy, "registers");
  in.registers = 32;
  in.sharedBytes = 100 * 1024;  // two blocks' worth fit in 228 KB
  e = tk::estimateTime(h100, in);
  EXPECT_EQ(e.blocksPerSm, 2);
  EXPECT_EQ(e.limitedBy, "shared memory");
  in.sharedBytes = 228 * 1024;
  e = tk::estimateTime(h100, in);
  EXPECT_FALSE(e.launchable);
  EXPECT_NE(e.whyNot.find("shared memory"), std::string::npos) << e.whyNot;
  in.sharedBytes = 0;
  in.numWarps = 32;
  in.registers = 255;
  e = tk::estimateTime(h100, in);
  EXPECT_FALSE(e.launchable);
  EXPECT_NE(e.whyNot.find("registers"), std::string::npos) << e.whyNot;
}

TEST(PerfModel, RanksBadConfigsBelowGoodOnes) {
  for (const char *gpu : {"H100", "A100"}) {
    const tk::GpuSpec &g = tk::GpuSpec::named(gpu);
    const double clean = tk::estimateTime(g, streaming(1 << 22, 1024, 4, 32)).us;
    EXPECT_GT(tk::estimateTime(g, streaming(1 << 22, 32, 4, 32)).us, 2 * clean) << gpu << ": tiny blocks";
    tk::ModelInput spilling = streaming(1 << 22, 1024, 4, 255);
    spilling.spillBytes = 512;
    EXPECT_GT(tk::estimateTime(g, spilling).us, 1.5 * clean) << gpu << ": spills";
    // One warp per block at 255 registers, 4 elements per thread: 8 warps
    // per SM cannot keep enough loads in flight.
    EXPECT_GT(tk::estimateTime(g, streaming(1 << 22, 128, 1, 255)).us, 1.5 * clean) << gpu << ": occupancy";
    // 64 blocks leave half the SMs idle.
    EXPECT_GT(tk::estimateTime(g, streaming(1 << 22, 1 << 16, 4, 64)).us, 1.5 * clean) << gpu << ": grid";
  }
  // The same work on the GPU with more bandwidth is faster.
  EXPECT_LT(tk::estimateTime(tk::GpuSpec::named("H100"), streaming(1 << 22, 1024, 4, 32)).us,
            tk::estimateTime(tk::GpuSpec::named("A100"), streaming(1 << 22, 1024, 4, 32)).us);
}

TEST(PerfModel, StreamingIsMemoryBoundNearPeak) {
  const tk::GpuSpec &h100 = tk::GpuSpec::named("H100");
  tk::ModelEstimate e = tk::estimateTime(h100, streaming(1 << 26, 1024, 4, 32));
  EXPECT_EQ(e.bound, "memory");
  const double bytes = 3.0 * (1 << 26) * 4;
  const double peakUs = bytes / (h100.dramGBps * 1e9) * 1e6;
  EXPECT_GT(e.us, peakUs);
  EXPECT_LT(e.us, 1.3 * peakUs);
}

}  // namespace
