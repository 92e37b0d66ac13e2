// Sampled launches (LaunchConfig::sampleBlocks): which blocks run, what they
// write, and counters scaled to the whole grid.
#include <gtest/gtest.h>

#include <set>

#include "tests/unit/sim_KernelBuilder.h"

namespace tk::sim::test {
namespace {

using llvm::Value;


// Every field of a and b but blocksRun.
void expectSameCounts(const Counters &a, const Counters &b) {
  EXPECT_EQ(a.globalLoadBytes, b.globalLoadBytes);
  EXPECT_EQ(a.globalStoreBytes, b.globalStoreBytes);
  EXPECT_EQ(a.globalLoadRequests, b.globalLoadRequests);
  EXPECT_EQ(a.globalStoreRequests, b.globalStoreRequests);
  EXPECT_EQ(a.globalLoadSectors, b.globalLoadSectors);
  EXPECT_EQ(a.globalStoreSectors, b.globalStoreSectors);
  EXPECT_EQ(a.sharedRequests, b.sharedRequests);
  EXPECT_EQ(a.sharedWavefronts, b.sharedWavefronts);
  EXPECT_EQ(a.barriers, b.barriers);
  EXPECT_EQ(a.blocks, b.blocks);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_EQ(a.threadInstructions, b.threadInstructions);
  EXPECT_EQ(a.warpInstructions, b.warpInstructions);
  EXPECT_EQ(a.fpInstructions, b.fpInstructions);
  EXPECT_EQ(a.specialInstructions, b.specialInstructions);
  EXPECT_EQ(a.blocksTotal, b.blocksTotal);
}

struct ScaleRun {
  static constexpr int kThreads = 64;
  std::unique_ptr<Program> prog = scaleKernel(kThreads);
  Simulator sim{2};
  std::vector<float> out;  // what the launch wrote; poisoned (-1) where it did not

  Counters operator()(uint32_t blocks, uint64_t sample, int n) {
    Buffer<float> a(sim.memory(), size_t(blocks) * kThreads), o(sim.memory(), size_t(blocks) * kThreads);
    for (int i = 0; i < int(blocks) * kThreads; ++i) a[i] = float(i), o[i] = -1;
    void *pa = a.p, *po = o.p;
    LaunchConfig cfg;
    cfg.grid[0] = blocks;
    cfg.blockThreads = kThreads;
    cfg.sampleBlocks = sample;
    Counters c = sim.launch(*prog, "scale", cfg, {&pa, &po, &n});
    out.assign(o.p, o.p + size_t(blocks) * kThreads);
    return c;
  }
  // The blocks whose first element was written.
  std::set<int> written() const {
    std::set<int> s;
    for (size_t blk = 0; blk * kThreads < out.size(); ++blk)
      if (out[blk * kThreads] != -1) s.insert(int(blk));
    return s;
  }
};

TEST(SimSample, UniformBlocksScaleToTheFullLaunchExactly) {
  ScaleRun run;
  const uint32_t blocks = 37;
  const int n = int(blocks) * ScaleRun::kThreads;
  Counters full = run(blocks, 0, n);
  EXPECT_EQ(full.blocksRun, 37u);
  EXPECT_EQ(full.blocksTotal, 37u);
  EXPECT_EQ(run.written().size(), 37u);
  Counters sampled = run(blocks, 5, n);
  EXPECT_EQ(sampled.blocksRun, 5u);
  EXPECT_EQ(sampled.blocksTotal, 37u);
  EXPECT_EQ(sampled.blocks, 37u);
  EXPECT_EQ(sampled.threads, 37u * ScaleRun::kThreads);
  EXPECT_GT(sampled.threadInstructions, 0u);
  expectSameCounts(sampled, full);
  // Block k of 5 is floor(k * 36 / 4): the first, the last and evenly between.
  EXPECT_EQ(run.written(), (std::set<int>{0, 9, 18, 27, 36}));
  for (int blk : {0, 36})
    for (int t = 0; t < ScaleRun::kThreads; ++t) {
      int i = blk * ScaleRun::kThreads + t;
      ASSERT_EQ(run.out[size_t(i)], 2.0f * i) << i;
    }
}

TEST(SimSample, UnevenBlocksScaleRounded) {
  ScaleRun run;
  const int n = 3 * ScaleRun::kThreads + 10;  // 4 blocks, the last with 10 threads in range
  Counters sampled = run(4, 3, n);
  // Blocks 0, 1 and 3 ran: 64 + 64 + 10 elements of 4 bytes, in 2 + 2 + 1
  // requests over 8 + 8 + 2 sectors, each scaled by 4/3 and rounded.
  EXPECT_EQ(run.written(), (std::set<int>{0, 1, 3}));
  EXPECT_EQ(sampled.globalLoadBytes, 736u);   // 552 * 4 / 3
  EXPECT_EQ(sampled.globalLoadRequests, 7u);  // 5 * 4 / 3 = 6.67
  EXPECT_EQ(sampled.globalLoadSectors, 24u);  // 18 * 4 / 3
  EXPECT_EQ(sampled.globalStoreBytes, 736u);
  EXPECT_EQ(sampled.threads, 4u * ScaleRun::kThreads);
  Counters two = run(4, 2, n);  // blocks 0 and 3: 296 bytes, scaled by 2
  EXPECT_EQ(two.globalLoadBytes, 592u);
  EXPECT_EQ(two.globalLoadRequests, 6u);
  EXPECT_EQ(run.written(), (std::set<int>{0, 3}));
}

TEST(SimSample, OneBlockIsTheFirst) {
  ScaleRun run;
  Counters c = run(9, 1, 9 * ScaleRun::kThreads);
  EXPECT_EQ(c.blocksRun, 1u);
  EXPECT_EQ(run.written(), (std::set<int>{0}));
  EXPECT_EQ(c.globalLoadBytes, 9u * ScaleRun::kThreads * 4);
}

TEST(SimSample, AsManyBlocksAsTheGridOrMoreRunsThemAll) {
  ScaleRun run;
  const int n = 6 * ScaleRun::kThreads;
  Counters full = run(6, 0, n);
  for (uint64_t sample : {6u, 7u, 1000u}) {
    Counters c = run(6, sample, n);
    EXPECT_EQ(c.blocksRun, 6u) << sample;
    EXPECT_EQ(run.written().size(), 6u) << sample;
    expectSameCounts(c, full);
  }
}

// Thread 0 of each block sets flags[x + nx * y]: sampled blocks of a 2-D grid
// are linear ids (x fastest) mapped back to (x, y).
TEST(SimSample, TwoDimensionalGridsSampleLinearIds) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("flag", {k.ptr()}, 32);
  auto *first = k.block("first"), *done = k.block("done");
  b.CreateCondBr(b.CreateICmpEQ(t.threadId(b), b.getInt32(0)), first, done);
  b.SetInsertPoint(first);
  Value *linear = b.CreateAdd(t.blockId(b, 0), b.CreateMul(t.gridDim(b, 0), t.blockId(b, 1)));
  k.store(b.getInt32(1), k.gep(k.i32(), k.arg(0), linear));
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(3);
  Buffer<int32_t> flags(sim.memory(), 15);
  for (int i = 0; i < 15; ++i) flags[i] = 0;
  void *pf = flags.p;
  LaunchConfig cfg;
  cfg.grid[0] = 5;
  cfg.grid[1] = 3;
  cfg.blockThreads = 32;
  cfg.sampleBlocks = 4;
  Counters c = sim.launch(*prog, "flag", cfg, {&pf});
  std::set<int> set;
  for (int i = 0; i < 15; ++i)
    if (flags[i]) set.insert(i);
  EXPECT_EQ(set, (std::set<int>{0, 4, 9, 14}));  // floor(k * 14 / 3)
  EXPECT_EQ(c.blocksRun, 4u);
  EXPECT_EQ(c.blocksTotal, 15u);
  EXPECT_EQ(c.globalStoreRequests, 15u);  // one per block, scaled
}

}  // namespace
}  // namespace tk::sim::test
