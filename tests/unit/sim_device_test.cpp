// The sim's counters through the public launcher API: instruction counts in
// LaunchStats, and sampled launches (LaunchOptions::sampleBlocks) of a .tk
// kernel compiled for the sim.
#include <gtest/gtest.h>

#include <cmath>

#include "tk/runtime.h"

namespace {

const char *kSource = R"(
kernel sin_exp(x: *f32, out: *f32, n: i32, const BLOCK: i32 = 256) {
    let offs = program_id(0) * BLOCK + arange(BLOCK);
    let m = offs < n;
    let a = load(x + offs, mask: m, other: 0.0);
    store(out + offs, sin(a) + exp(a), mask: m);
}
)";

struct SinExp {
  static constexpr int kBlock = 256, kBlocks = 24, kN = kBlock * kBlocks;
  std::unique_ptr<tk::Device> dev = tk::Device::open("sim");
  tk::Kernel kernel;
  std::vector<float> x = std::vector<float>(kN);
  SinExp() {
    tk::CompileOptions opts;
    opts.emitPtx = false;
    opts.cache = false;
    kernel = dev->load(tk::Compiler::compileSource(kSource, "sin_exp.tk", "sin_exp", opts));
    for (int i = 0; i < kN; ++i) x[size_t(i)] = float(i % 97) / 97.0f - 0.5f;
  }
  // Launches with `opts` on an output poisoned with NaN; returns what it wrote.
  tk::LaunchStats run(const tk::LaunchOptions *opts, std::vector<float> &out) {
    tk::Buffer dx = dev->upload(x), dout = dev->upload(std::vector<float>(kN, NAN));
    std::vector<tk::Arg> args = {dx, dout, int32_t(kN)};
    tk::LaunchStats s = opts ? dev->launch(kernel, {kBlocks}, args, *opts) : dev->launch(kernel, {kBlocks}, args);
    out = dev->download<float>(dout, kN);
    return s;
  }
  bool blockWritten(const std::vector<float> &out, int blk) const {
    for (int i = blk * kBlock; i < (blk + 1) * kBlock; ++i)
      if (std::isnan(out[size_t(i)]) ||
          std::fabs(out[size_t(i)] - (std::sin(x[size_t(i)]) + std::exp(x[size_t(i)]))) > 1e-5f)
        return false;
    return true;
  }
};

TEST(SimDevice, LaunchStatsCountInstructions) {
  SinExp k;
  std::vector<float> out;
  tk::LaunchStats s = k.run(nullptr, out);
  for (int blk = 0; blk < SinExp::kBlocks; ++blk) EXPECT_TRUE(k.blockWritten(out, blk)) << blk;
  EXPECT_EQ(s.blocksRun, uint64_t(SinExp::kBlocks));
  EXPECT_EQ(s.blocksTotal, uint64_t(SinExp::kBlocks));
  EXPECT_EQ(s.specialInstructions, 2u * SinExp::kN);  // one sin and one exp per element
  EXPECT_GE(s.fpInstructions, uint64_t(SinExp::kN));  // at least the add
  EXPECT_GT(s.threadInstructions, s.fpInstructions + s.specialInstructions);
  EXPECT_GE(s.warpInstructions * 32, s.threadInstructions);  // a warp issues at least its lanes' average
}

TEST(SimDevice, SampledLaunchScalesTheCountsOfTheBlocksItRan) {
  SinExp k;
  std::vector<float> full, sampled;
  tk::LaunchStats f = k.run(nullptr, full);
  tk::LaunchOptions opts;
  opts.sampleBlocks = 4;  // blocks 0, 7, 15 and 23 of 24
  tk::LaunchStats s = k.run(&opts, sampled);
  EXPECT_EQ(s.blocksRun, 4u);
  EXPECT_EQ(s.blocksTotal, uint64_t(SinExp::kBlocks));
  for (int blk = 0; blk < SinExp::kBlocks; ++blk)
    EXPECT_EQ(k.blockWritten(sampled, blk), blk == 0 || blk == 7 || blk == 15 || blk == 23) << blk;
  // Every block does the same work: the scaled counts are the full launch's.
  EXPECT_EQ(s.globalLoadBytes, f.globalLoadBytes);
  EXPECT_EQ(s.globalStoreBytes, f.globalStoreBytes);
  EXPECT_EQ(s.loadRequests, f.loadRequests);
  EXPECT_EQ(s.storeSectors, f.storeSectors);
  EXPECT_EQ(s.threadInstructions, f.threadInstructions);
  EXPECT_EQ(s.warpInstructions, f.warpInstructions);
  EXPECT_EQ(s.fpInstructions, f.fpInstructions);
  EXPECT_EQ(s.specialInstructions, f.specialInstructions);
  EXPECT_EQ(s.barriers, f.barriers);
  // Asking for the whole grid or more runs it all.
  opts.sampleBlocks = SinExp::kBlocks;
  tk::LaunchStats all = k.run(&opts, sampled);
  EXPECT_EQ(all.blocksRun, uint64_t(SinExp::kBlocks));
  EXPECT_TRUE(k.blockWritten(sampled, 1));
}

}  // namespace
