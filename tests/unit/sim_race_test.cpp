// tk sim race check (LaunchConfig::raceCheck): two threads of a block on one
// shared word between barriers, one writing, is reported with both sites;
// barrier-separated, own-word, read-only and atomic patterns pass; off, nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "tests/unit/sim_KernelBuilder.h"

namespace tk::sim::test {
namespace {

using llvm::Value;


LaunchConfig config(uint32_t threads, uint32_t sharedBytes, bool raceCheck, uint32_t blocks = 1) {
  LaunchConfig cfg;
  cfg.grid[0] = blocks;
  cfg.blockThreads = threads;
  cfg.sharedBytes = sharedBytes;
  cfg.raceCheck = raceCheck;
  return cfg;
}

// A 16x16 tile per block through shared memory (rows padded to 17 words):
// thread (r, c) stores in[r][c] at smem[r][c], then loads smem[c][r] into out[r][c].
constexpr int kTile = 16, kPad = 17;
std::unique_ptr<Program> transposeKernel(bool barrier) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("transpose", {k.ptr(), k.ptr()}, kTile * kTile);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  Value *r = b.CreateUDiv(tid, b.getInt32(kTile)), *c = b.CreateURem(tid, b.getInt32(kTile));
  Value *g = k.globalId(kTile * kTile);
  Value *v = k.load(k.f32(), k.gep(k.f32(), k.arg(0), g), "tr.tk:11:9");
  k.sharedStore(v, k.gep(k.f32(), smem, b.CreateAdd(b.CreateMul(r, b.getInt32(kPad)), c)), 4, "tr.tk:12:5");
  if (barrier) {
    t.barrier(b);
    k.locateLast("tr.tk:13:5");
  }
  Value *w =
      k.sharedLoad(k.f32(), k.gep(k.f32(), smem, b.CreateAdd(b.CreateMul(c, b.getInt32(kPad)), r)), 4, "tr.tk:14:9");
  k.store(w, k.gep(k.f32(), k.arg(1), g), "tr.tk:15:5");
  b.CreateRetVoid();
  return k.compile();
}

TEST(SimRace, TransposeThroughSharedMemoryIsRaceFree) {
  auto prog = transposeKernel(true);
  const int blocks = 4, n = kTile * kTile;
  Simulator sim(2);
  Buffer<float> in(sim.memory(), n * blocks), out(sim.memory(), n * blocks);
  for (int i = 0; i < n * blocks; ++i) in[i] = float(i), out[i] = -1;
  void *pi = in.p, *po = out.p;
  Counters c = sim.launch(*prog, "transpose", config(n, kTile * kPad * 4, true, blocks), {&pi, &po});
  for (int blk = 0; blk < blocks; ++blk)
    for (int r = 0; r < kTile; ++r)
      for (int col = 0; col < kTile; ++col)
        ASSERT_EQ(out[blk * n + r * kTile + col], in[blk * n + col * kTile + r]) << blk << " " << r << " " << col;
  EXPECT_EQ(c.barriers, uint64_t(blocks));
}

TEST(SimRace, TransposeWithoutBarrierIsARace) {
  auto prog = transposeKernel(false);
  const int n = kTile * kTile;
  Simulator sim(1);
  Buffer<float> in(sim.memory(), n * 2), out(sim.memory(), n * 2);
  void *pi = in.p, *po = out.p;
  // Thread 1 reads word 1*17+0 before thread 16 (row 1, column 0) writes it.
  EXPECT_EQ(launchError(sim, *prog, "transpose", config(n, kTile * kPad * 4, true, 2), {&pi, &po}),
            "kernel transpose: shared-memory race on word at offset 0x44 (block (0,0,0)): thread 1 read it "
            "(tr.tk:14:9) and thread 16 wrote it (tr.tk:12:5) with no barrier between");
  // The mode is off by default: the same launch reports nothing.
  EXPECT_EQ(launchError(sim, *prog, "transpose", config(n, kTile * kPad * 4, false, 2), {&pi, &po}), "(no error)");
}

// smem[t] = t; [barrier;] out[t] = smem[(t + n - 1) % n].
std::unique_ptr<Program> neighbourKernel(int n, bool barrier, bool located = true) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("rw", {k.ptr()}, n);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  k.sharedStore(tid, k.gep(k.i32(), smem, tid), 4, located ? "rw.tk:12:5" : "");
  if (barrier) t.barrier(b);
  Value *prev = b.CreateURem(b.CreateAdd(tid, b.getInt32(n - 1)), b.getInt32(n));
  Value *v = k.sharedLoad(k.i32(), k.gep(k.i32(), smem, prev), 4, located ? "rw.tk:14:9" : "");
  k.store(v, k.gep(k.i32(), k.arg(0), k.globalId(n)), "rw.tk:15:5");
  b.CreateRetVoid();
  return k.compile();
}

TEST(SimRace, ReadAfterWriteWithoutBarrierNamesBothSites) {
  const int n = 64;
  Simulator sim(1);
  Buffer<int32_t> out(sim.memory(), n * 3);
  void *po = out.p;
  auto racy = neighbourKernel(n, false);
  EXPECT_EQ(launchError(sim, *racy, "rw", config(n, n * 4, true, 3), {&po}),
            "kernel rw: shared-memory race on word at offset 0x0 (block (0,0,0)): thread 0 wrote it (rw.tk:12:5) "
            "and thread 1 read it (rw.tk:14:9) with no barrier between");
  // Without !tk.loc on the shared accesses the message has no lines.
  auto unlocated = neighbourKernel(n, false, false);
  EXPECT_EQ(launchError(sim, *unlocated, "rw", config(n, n * 4, true), {&po}),
            "kernel rw: shared-memory race on word at offset 0x0 (block (0,0,0)): thread 0 wrote it and thread 1 "
            "read it with no barrier between");
}

TEST(SimRace, SamePatternSeparatedByABarrierPasses) {
  const int n = 64, blocks = 3;
  auto prog = neighbourKernel(n, true);
  Simulator sim(1);
  Buffer<int32_t> out(sim.memory(), n * blocks);
  void *po = out.p;
  sim.launch(*prog, "rw", config(n, n * 4, true, blocks), {&po});
  for (int i = 0; i < n * blocks; ++i) ASSERT_EQ(out[i], (i % n + n - 1) % n) << i;
}

// smem[index(t)] = t with no barrier: write/write conflicts.
std::unique_ptr<Program> writeKernel(int n, int divisor, int modulus) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("ww", {}, n);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  Value *idx = b.CreateURem(b.CreateUDiv(tid, b.getInt32(divisor)), b.getInt32(modulus));
  k.sharedStore(tid, k.gep(k.i32(), smem, idx), 4, "ww.tk:3:1");
  b.CreateRetVoid();
  return k.compile();
}

TEST(SimRace, WriteWriteRaceIsDetected) {
  Simulator sim(1);
  // Two lanes of one warp in the same request: a GPU picks no order either.
  auto pairs = writeKernel(64, 2, 32);
  EXPECT_EQ(launchError(sim, *pairs, "ww", config(64, 128, true), {}),
            "kernel ww: shared-memory race on word at offset 0x0 (block (0,0,0)): thread 0 wrote it (ww.tk:3:1) "
            "and thread 1 wrote it (ww.tk:3:1) with no barrier between");
  // Two warps writing the same 32 words.
  auto warps = writeKernel(64, 1, 32);
  EXPECT_EQ(launchError(sim, *warps, "ww", config(64, 128, true), {}),
            "kernel ww: shared-memory race on word at offset 0x0 (block (0,0,0)): thread 0 wrote it (ww.tk:3:1) "
            "and thread 32 wrote it (ww.tk:3:1) with no barrier between");
  // Off: nothing is reported.
  EXPECT_NO_THROW(sim.launch(*warps, "ww", config(64, 128, false), {}));
  // One thread per word: no race.
  auto distinct = writeKernel(64, 1, 64);
  EXPECT_NO_THROW(sim.launch(*distinct, "ww", config(64, 256, true), {}));
}

// smem[0] = tid == odd ? 5 : 7 by every thread; barrier; out[tid] = smem[0].
std::unique_ptr<Program> sameValueKernel(int n) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("same", {k.ptr(), b.getInt32Ty()}, n);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  k.sharedStore(b.CreateSelect(b.CreateICmpEQ(tid, k.arg(1)), b.getInt32(5), b.getInt32(7)), smem, 4, "s.tk:2:3");
  t.barrier(b);
  k.store(k.sharedLoad(k.i32(), smem, 4, "s.tk:4:9"), k.gep(k.i32(), k.arg(0), tid));
  b.CreateRetVoid();
  return k.compile();
}

TEST(SimRace, FirstRaceOfManyBlocksOnManyWorkersIsReported) {
  const int n = 64, blocks = 200;
  auto prog = neighbourKernel(n, false);
  Simulator sim(4);
  Buffer<int32_t> out(sim.memory(), n * blocks);
  void *po = out.p;
  std::string m = launchError(sim, *prog, "rw", config(n, n * 4, true, blocks), {&po});
  EXPECT_EQ(m.rfind("kernel rw: shared-memory race on word at offset 0x0 (block (", 0), 0u) << m;
  EXPECT_NE(m.find(")): thread 0 wrote it (rw.tk:12:5) and thread 1 read it (rw.tk:14:9) with no barrier between"),
            std::string::npos)
      << m;
  // The workers' shadows are reused by the next launch: a race-free one passes.
  auto good = neighbourKernel(n, true);
  EXPECT_NO_THROW(sim.launch(*good, "rw", config(n, n * 4, true, blocks), {&po}));
}

TEST(SimRace, WritesOfTheSameValueAreNotRaces) {
  // Replicated elements of a layout are stored by every thread that holds
  // them: harmless while they agree, a race as soon as one differs.
  const int n = 64;
  auto prog = sameValueKernel(n);
  Simulator sim(1);
  Buffer<int32_t> out(sim.memory(), n);
  void *po = out.p;
  int32_t none = -1, odd = 40;
  sim.launch(*prog, "same", config(n, 4, true), {&po, &none});
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 7) << i;
  EXPECT_EQ(launchError(sim, *prog, "same", config(n, 4, true), {&po, &odd}),
            "kernel same: shared-memory race on word at offset 0x0 (block (0,0,0)): thread 0 wrote it (s.tk:2:3) and "
            "thread 40 wrote it (s.tk:2:3) with no barrier between");
}

TEST(SimRace, WordGranuleCoversSubWordAndVectorAccesses) {
  Simulator sim(1);
  {
    // i16 stores to smem16[t]: threads 0 and 1 share the word at offset 0.
    KernelBuilder k;
    auto &b = k.b();
    const SimTarget &t = k.target();
    k.kernel("halves", {}, 32);
    Value *tid = t.threadId(b);
    k.sharedStore(b.CreateTrunc(tid, b.getInt16Ty()), k.gep(b.getInt16Ty(), t.sharedBase(b), tid), 2, "h.tk:1:1");
    b.CreateRetVoid();
    auto prog = k.compile();
    std::string m = launchError(sim, *prog, "halves", config(32, 64, true), {});
    EXPECT_NE(m.find("race on word at offset 0x0 (block (0,0,0)): thread 0 wrote it (h.tk:1:1) and thread 1 wrote it"),
              std::string::npos)
        << m;
  }
  {
    // <4 x float> per thread; then each thread reads its neighbour's vector:
    // the race is on the neighbour's first word, 16 bytes further on.
    for (bool barrier : {false, true}) {
      KernelBuilder k;
      auto &b = k.b();
      const SimTarget &t = k.target();
      auto *v4 = llvm::FixedVectorType::get(k.f32(), 4);
      k.kernel("vec", {k.ptr()}, 32);
      Value *tid = t.threadId(b), *smem = t.sharedBase(b);
      k.sharedStore(llvm::ConstantFP::get(v4, 1.0), k.gep(v4, smem, tid), 16, "v.tk:1:1");
      if (barrier) t.barrier(b);
      Value *next = b.CreateURem(b.CreateAdd(tid, b.getInt32(1)), b.getInt32(32));
      k.store(k.sharedLoad(v4, k.gep(v4, smem, next), 16, "v.tk:2:1"), k.gep(v4, k.arg(0), tid), "v.tk:3:1", 16);
      b.CreateRetVoid();
      auto prog = k.compile();
      Buffer<float> out(sim.memory(), 128);
      void *po = out.p;
      std::string m = launchError(sim, *prog, "vec", config(32, 512, true), {&po});
      if (barrier) {
        EXPECT_EQ(m, "(no error)");
      } else {
        EXPECT_EQ(m,
                  "kernel vec: shared-memory race on word at offset 0x10 (block (0,0,0)): thread 0 read it "
                  "(v.tk:2:1) and thread 1 wrote it (v.tk:1:1) with no barrier between");
      }
    }
  }
}

TEST(SimRace, EpochsAdvanceAtEveryBarrier) {
  const int n = 64;
  Simulator sim(1);
  Buffer<int32_t> out(sim.memory(), n);
  void *po = out.p;
  auto good = barrierLoopKernel(n, true);
  Counters c = sim.launch(*good, "loop", config(n, n * 4, true), {&po});
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 1 + 2 + 3 + 4 + 5) << i;
  EXPECT_EQ(c.barriers, 1u + 5 * 2);
  auto bad = barrierLoopKernel(n, false);
  // Iteration 1: thread 0 reads word 1, then thread 1 increments it.
  EXPECT_EQ(launchError(sim, *bad, "loop", config(n, n * 4, true), {&po}),
            "kernel loop: shared-memory race on word at offset 0x4 (block (0,0,0)): thread 0 read it (l.tk:5:10) "
            "and thread 1 wrote it (l.tk:3:3) with no barrier between");
}

TEST(SimRace, NothingCarriesOverBetweenBlocks) {
  // In block b only thread b writes and reads smem[0]: each block alone is
  // race-free, even though one worker runs them all on the same shared buffer.
  const int n = 32, blocks = 8;
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("owner", {k.ptr()}, n);
  Value *tid = t.threadId(b), *blk = t.blockId(b, 0), *smem = t.sharedBase(b);
  auto *mine = k.block("mine"), *done = k.block("done");
  b.CreateCondBr(b.CreateICmpEQ(tid, blk), mine, done);
  b.SetInsertPoint(mine);
  k.sharedStore(tid, smem, 4, "o.tk:2:3");
  k.store(k.sharedLoad(k.i32(), smem, 4, "o.tk:3:3"), k.gep(k.i32(), k.arg(0), blk));
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<int32_t> out(sim.memory(), blocks);
  void *po = out.p;
  sim.launch(*prog, "owner", config(n, 4, true, blocks), {&po});
  for (int i = 0; i < blocks; ++i) EXPECT_EQ(out[i], i);
}

TEST(SimRace, SharedAtomicsAreNotRaces) {
  const int n = 64;
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("count", {k.ptr()}, n);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  auto *zero = k.block("zero"), *add = k.block("add");
  b.CreateCondBr(b.CreateICmpEQ(tid, b.getInt32(0)), zero, add);
  b.SetInsertPoint(zero);
  k.sharedStore(b.getInt32(0), smem, 4, "a.tk:1:1");
  b.CreateBr(add);
  b.SetInsertPoint(add);
  t.barrier(b);
  auto *rmw =
      b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, smem, b.getInt32(1), llvm::Align(4), llvm::AtomicOrdering::Monotonic);
  k.markShared(rmw, "a.tk:2:1");
  t.barrier(b);
  auto *last = k.block("last"), *exit = k.block("exit");
  b.CreateCondBr(b.CreateICmpEQ(tid, b.getInt32(0)), last, exit);
  b.SetInsertPoint(last);
  k.store(k.sharedLoad(k.i32(), smem, 4, "a.tk:3:1"), k.arg(0));
  b.CreateBr(exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<int32_t> out(sim.memory(), 1);
  void *po = out.p;
  sim.launch(*prog, "count", config(n, 4, true), {&po});
  EXPECT_EQ(out[0], n);
}

TEST(SimRace, MaskedSharedAccessesCheckActiveLanesOnly) {
  // Each thread stores a <4 x i32> at smem[4t..4t+3] with only lane 0 active,
  // then loads its right neighbour's vector with only lanes 1..3 active: the
  // active words never meet, so no race; with all lanes active they do.
  for (bool allLanes : {false, true}) {
    KernelBuilder k;
    auto &b = k.b();
    const SimTarget &t = k.target();
    auto *v4 = llvm::FixedVectorType::get(k.i32(), 4);
    k.kernel("masked", {}, 32);
    Value *tid = t.threadId(b), *smem = t.sharedBase(b);
    auto mask = [&](std::initializer_list<bool> on) {
      std::vector<llvm::Constant *> bits;
      for (bool x : on) bits.push_back(b.getInt1(x || allLanes));
      return llvm::ConstantVector::get(bits);
    };
    auto *st = b.CreateMaskedStore(llvm::ConstantInt::get(v4, 7), k.gep(v4, smem, tid), llvm::Align(16),
                                   mask({true, false, false, false}));
    k.markShared(st, "m.tk:1:1");
    Value *next = b.CreateURem(b.CreateAdd(tid, b.getInt32(1)), b.getInt32(32));
    auto *ld = b.CreateMaskedLoad(v4, k.gep(v4, smem, next), llvm::Align(16), mask({false, true, true, true}),
                                  llvm::ConstantInt::get(v4, 0));
    k.markShared(ld, "m.tk:2:1");
    b.CreateRetVoid();
    auto prog = k.compile();
    Simulator sim(1);
    std::string m = launchError(sim, *prog, "masked", config(32, 512, true), {});
    if (allLanes) {
      EXPECT_EQ(m,
                "kernel masked: shared-memory race on word at offset 0x10 (block (0,0,0)): thread 0 read it "
                "(m.tk:2:1) and thread 1 wrote it (m.tk:1:1) with no barrier between");
    } else {
      EXPECT_EQ(m, "(no error)");
    }
  }
}

// Not a pass/fail check: the cost of the mode, off and on, on a kernel whose
// every thread stores, meets a barrier and loads shared memory.
TEST(SimRace, CostReport) {
  const int n = 256, blocks = 2048;
  auto prog = neighbourKernel(n, true);
  Simulator sim(1);
  Buffer<int32_t> out(sim.memory(), n * blocks);
  void *po = out.p;
  double seconds[2];
  for (bool on : {false, true}) {
    sim.launch(*prog, "rw", config(n, n * 4, on, 16), {&po});  // warm up the worker's stacks
    auto t0 = std::chrono::steady_clock::now();
    sim.launch(*prog, "rw", config(n, n * 4, on, blocks), {&po});
    seconds[on] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::printf("[ sim      ] race check off: %.2f M threads/s, on: %.2f M threads/s\n", n * blocks / seconds[0] / 1e6,
              n * blocks / seconds[1] / 1e6);
  for (int i = 0; i < n * blocks; ++i) ASSERT_EQ(out[i], (i % n + n - 1) % n) << i;
}

}  // namespace
}  // namespace tk::sim::test
