// tk sim collectives: block barriers over shared memory, warp butterfly
// shuffles (full and partial warps), bank-conflict counting, and the errors a
// collective some threads never reach must give instead of hanging.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "tests/unit/sim_KernelBuilder.h"
#include "lower/LocMetadata.h"

namespace tk::sim::test {
namespace {

using llvm::Value;

// smem[t] = 3t+1; barrier; out[block*n + t] = smem[(t+1)%n] + 1000*block.
std::unique_ptr<Program> rotateKernel(int n) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("rotate", {k.ptr()}, n);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  k.sharedStore(b.CreateAdd(b.CreateMul(tid, b.getInt32(3)), b.getInt32(1)), k.gep(k.i32(), smem, tid));
  t.barrier(b);
  Value *next = b.CreateURem(b.CreateAdd(tid, b.getInt32(1)), b.getInt32(n));
  Value *v = k.sharedLoad(k.i32(), k.gep(k.i32(), smem, next));
  Value *blk = t.blockId(b, 0);
  k.store(b.CreateAdd(v, b.CreateMul(blk, b.getInt32(1000))), k.gep(k.i32(), k.arg(0), k.globalId(n)));
  b.CreateRetVoid();
  return k.compile();
}

TEST(SimBarrier, EveryThreadSeesItsNeighboursWrite) {
  const int n = 256, blocks = 3;
  auto prog = rotateKernel(n);
  Simulator sim(2);
  Buffer<int32_t> out(sim.memory(), n * blocks);
  for (int i = 0; i < n * blocks; ++i) out[i] = -1;
  void *po = out.p;
  LaunchConfig cfg;
  cfg.grid[0] = blocks;
  cfg.blockThreads = n;
  cfg.sharedBytes = n * 4;
  Counters c = sim.launch(*prog, "rotate", cfg, {&po});
  for (int blk = 0; blk < blocks; ++blk)
    for (int t = 0; t < n; ++t) ASSERT_EQ(out[blk * n + t], 3 * ((t + 1) % n) + 1 + 1000 * blk) << blk << " " << t;
  EXPECT_EQ(c.barriers, uint64_t(blocks));
  EXPECT_EQ(c.sharedRequests, 2u * (n / 32) * blocks);
  EXPECT_EQ(c.sharedWavefronts, c.sharedRequests);  // unit stride, even with the wrap-around: no conflicts
}

TEST(SimBarrier, BarriersInALoopCountOncePerInstance) {
  // for j in 0..5: smem[t] += 1; barrier; acc += smem[(t+j)%n]; barrier.
  const int n = 64;
  auto prog = barrierLoopKernel(n, true);
  Simulator sim(1);
  Buffer<int32_t> out(sim.memory(), n);
  void *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = n;
  cfg.sharedBytes = n * 4;
  Counters c = sim.launch(*prog, "loop", cfg, {&po});
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 1 + 2 + 3 + 4 + 5) << i;
  EXPECT_EQ(c.barriers, 1u + 5 * 2);
}

// Not a pass/fail check: threads per second when every thread meets a barrier.
TEST(SimBarrier, ThroughputReport) {
  const int n = 256, blocks = 2048;
  auto prog = rotateKernel(n);
  Simulator sim(1);
  Buffer<int32_t> out(sim.memory(), n * blocks);
  void *po = out.p;
  LaunchConfig cfg;
  cfg.grid[0] = blocks;
  cfg.blockThreads = n;
  cfg.sharedBytes = n * 4;
  auto t0 = std::chrono::steady_clock::now();
  Counters c = sim.launch(*prog, "rotate", cfg, {&po});
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ sim      ] barrier kernel, 1 worker: %.2f M threads/s\n", c.threads / s / 1e6);
  EXPECT_EQ(c.barriers, uint64_t(blocks));
}

// Odd threads return before the barrier the even ones wait at.
TEST(SimBarrier, DivergentBarrierIsAnErrorNotAHang) {
  for (bool located : {false, true}) {
    const int n = 64;
    KernelBuilder k;
    auto &b = k.b();
    const SimTarget &t = k.target();
    k.kernel("divergent", {k.ptr()}, n);
    Value *tid = t.threadId(b);
    auto *even = k.block("even"), *odd = k.block("odd");
    b.CreateCondBr(b.CreateICmpEQ(b.CreateAnd(tid, b.getInt32(1)), b.getInt32(0)), even, odd);
    b.SetInsertPoint(odd);
    b.CreateRetVoid();
    b.SetInsertPoint(even);
    t.barrier(b);
    if (located) {
      auto *call = &*std::prev(b.GetInsertPoint());
      tk::lower::setSourceLoc(*call, "div.tk:5:3");
    }
    k.store(tid, k.gep(k.i32(), k.arg(0), tid));
    b.CreateRetVoid();
    auto prog = k.compile();
    Simulator sim(2);
    Buffer<int32_t> out(sim.memory(), n);
    void *po = out.p;
    LaunchConfig cfg;
    cfg.grid[0] = 4;
    cfg.blockThreads = n;
    std::string m = launchError(sim, *prog, "divergent", cfg, {&po});
    ASSERT_NE(m, "(no error)") << "a barrier half the block skips must fail the launch";
    EXPECT_NE(m.find("kernel divergent: barrier"), std::string::npos) << m;
    EXPECT_NE(m.find("reached by only 32 of 64 threads of block ("), std::string::npos) << m;
    EXPECT_NE(m.find("thread 1 exited"), std::string::npos) << m;
    EXPECT_EQ(m.find("div.tk:5:3") != std::string::npos, located) << m;
    // The simulator stays usable after a failed launch.
    auto prog2 = rotateKernel(32);
    LaunchConfig ok;
    ok.blockThreads = 32;
    ok.sharedBytes = 128;
    EXPECT_NO_THROW(sim.launch(*prog2, "rotate", ok, {&po}));
    EXPECT_EQ(out[0], 3 * 1 + 1);
  }
}

// v = f(tid); for m in 16, 8, 4, 2, 1: v += shfl_xor(v, m); out[tid] = v.
template <typename MakeValue>
std::unique_ptr<Program> butterflyKernel(int n, llvm::Type *(*type)(KernelBuilder &), MakeValue make) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("butterfly", {k.ptr()}, n);
  Value *tid = t.threadId(b);
  Value *v = make(k, tid);
  for (int m : {16, 8, 4, 2, 1}) {
    Value *o = t.shuffleXor(b, v, m);
    v = v->getType()->isFloatingPointTy() ? b.CreateFAdd(v, o) : b.CreateAdd(v, o);
  }
  k.store(v, k.gep(type(k), k.arg(0), tid), "b.tk:1:1", 8);
  b.CreateRetVoid();
  return k.compile();
}

TEST(SimShuffle, ButterflySumOverEachWarp) {
  const int n = 96;
  Simulator sim(1);
  LaunchConfig cfg;
  cfg.blockThreads = n;
  {  // f32: v = tid + 1
    auto prog = butterflyKernel(
        n, [](KernelBuilder &k) { return k.f32(); },
        [](KernelBuilder &k, Value *tid) {
          return k.b().CreateSIToFP(k.b().CreateAdd(tid, k.b().getInt32(1)), k.f32());
        });
    Buffer<float> out(sim.memory(), n);
    void *po = out.p;
    sim.launch(*prog, "butterfly", cfg, {&po});
    for (int t = 0; t < n; ++t) {
      int w = t / 32;
      ASSERT_EQ(out[t], float(32 * 32 * w + 32 * 33 / 2)) << t;
    }
  }
  {  // i32: v = tid * tid
    auto prog = butterflyKernel(
        n, [](KernelBuilder &k) { return k.i32(); },
        [](KernelBuilder &k, Value *tid) { return k.b().CreateMul(tid, tid); });
    Buffer<int32_t> out(sim.memory(), n);
    void *po = out.p;
    sim.launch(*prog, "butterfly", cfg, {&po});
    for (int t = 0; t < n; ++t) {
      int sum = 0;
      for (int l = t / 32 * 32; l < t / 32 * 32 + 32; ++l) sum += l * l;
      ASSERT_EQ(out[t], sum) << t;
    }
  }
  {  // f64 travels as two i32 shuffles: v = tid * 0.5
    auto prog = butterflyKernel(
        n, [](KernelBuilder &k) -> llvm::Type * { return k.b().getDoubleTy(); },
        [](KernelBuilder &k, Value *tid) {
          return k.b().CreateFMul(k.b().CreateSIToFP(tid, k.b().getDoubleTy()),
                                  llvm::ConstantFP::get(k.b().getDoubleTy(), 0.5));
        });
    Buffer<double> out(sim.memory(), n);
    void *po = out.p;
    sim.launch(*prog, "butterfly", cfg, {&po});
    for (int t = 0; t < n; ++t) {
      double sum = 0;
      for (int l = t / 32 * 32; l < t / 32 * 32 + 32; ++l) sum += l * 0.5;
      ASSERT_EQ(out[t], sum) << t;
    }
  }
}

TEST(SimShuffle, PartialLastWarpReadsOwnValueOutsideTheBlock) {
  const int n = 40;  // warp 1 has lanes 0..7 only
  for (int mask : {16, 4}) {
    KernelBuilder k;
    auto &b = k.b();
    const SimTarget &t = k.target();
    k.kernel("partial", {k.ptr()}, n);
    Value *tid = t.threadId(b);
    k.store(t.shuffleXor(b, tid, mask), k.gep(k.i32(), k.arg(0), tid));
    b.CreateRetVoid();
    auto prog = k.compile();
    Simulator sim(1);
    Buffer<int32_t> out(sim.memory(), n);
    void *po = out.p;
    LaunchConfig cfg;
    cfg.blockThreads = n;
    sim.launch(*prog, "partial", cfg, {&po});
    for (int i = 0; i < n; ++i) {
      int lane = i % 32, base = i / 32 * 32, lanes = i < 32 ? 32 : 8;
      int src = (lane ^ mask) < lanes ? base + (lane ^ mask) : i;
      ASSERT_EQ(out[i], src) << "mask " << mask << " thread " << i;
    }
  }
}

TEST(SimShuffle, ExitedLaneIsAnError) {
  // A shuffle call carrying !tk.loc is named by its line.
  for (bool located : {false, true}) {
    auto xor1 = [](const SimTarget &t, llvm::IRBuilder<> &b, Value *tid) { return t.shuffleXor(b, tid, 1); };
    std::string m = exitedLaneShuffleError(37, xor1, located ? "ee.tk:9:7" : "");
    ASSERT_NE(m, "(no error)") << "a shuffle missing an exited lane must fail";
    EXPECT_EQ(m, std::string("kernel early_exit: warp shuffle") + (located ? " (ee.tk:9:7)" : "") +
                     " in block (0,0,0), warp 1: 31 of 32 lanes arrived; lane 5 (thread 37) never will, which has "
                     "exited");
  }
}

TEST(SimShuffle, ShuffleAgainstBarrierIsAnError) {
  // Warp 0 shuffles while warp 1... waits at a barrier warp 0 only reaches after a
  // shuffle lane 3 of warp 0 skips: nobody can proceed.
  const int n = 64;
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("mixed", {k.ptr()}, n);
  Value *tid = t.threadId(b);
  auto *shfl = k.block("shfl"), *bar = k.block("bar");
  b.CreateCondBr(b.CreateICmpEQ(tid, b.getInt32(3)), bar, shfl);
  b.SetInsertPoint(shfl);
  k.store(t.shuffleXor(b, tid, 2), k.gep(k.i32(), k.arg(0), tid));
  b.CreateBr(bar);
  b.SetInsertPoint(bar);
  t.barrier(b);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<int32_t> out(sim.memory(), n);
  void *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = n;
  std::string m = launchError(sim, *prog, "mixed", cfg, {&po});
  ASSERT_NE(m, "(no error)") << "deadlock must be reported";
  EXPECT_NE(m.find("lane 3 (thread 3) never will, which waits at a barrier"), std::string::npos) << m;
}

// Shared f32 accesses at smem[t * stride] by one warp: a store then a load.
Counters sharedStride(int stride, bool broadcast = false) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("banks", {k.ptr()}, 32);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  Value *idx = broadcast ? b.getInt32(0) : b.CreateMul(tid, b.getInt32(stride));
  Value *p = k.gep(k.f32(), smem, idx);
  k.sharedStore(b.CreateSIToFP(tid, k.f32()), p);
  t.barrier(b);
  k.store(k.sharedLoad(k.f32(), p), k.gep(k.f32(), k.arg(0), tid));
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<float> out(sim.memory(), 32);
  void *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  cfg.sharedBytes = 32 * 32 * 4;
  Counters c = sim.launch(*prog, "banks", cfg, {&po});
  if (!broadcast) {
    for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], float(i));
  }
  return c;
}

TEST(SimSharedMemory, BankConflictsCountWavefronts) {
  Counters s1 = sharedStride(1), s2 = sharedStride(2), s32 = sharedStride(32), s33 = sharedStride(33);
  EXPECT_EQ(s1.sharedRequests, 2u);
  EXPECT_EQ(s1.sharedWavefronts, 2u);
  EXPECT_EQ(s2.sharedWavefronts, 2u * 2);
  EXPECT_EQ(s32.sharedRequests, 2u);
  EXPECT_EQ(s32.sharedWavefronts, 2u * 32);
  EXPECT_EQ(s33.sharedWavefronts, 2u);  // padding by one word removes the conflict
  // All lanes on one word: one wavefront each for the store (one write wins) and the load (a broadcast).
  Counters bc = sharedStride(0, true);
  EXPECT_EQ(bc.sharedWavefronts, 2u);
}

TEST(SimSharedMemory, VectorSharedAccessNeedsFourWavefronts) {
  // <4 x float> per lane, contiguous: 512 bytes over 32 banks = 4 wavefronts.
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  auto *v4 = llvm::FixedVectorType::get(k.f32(), 4);
  k.kernel("vec", {k.ptr()}, 32);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  k.sharedStore(llvm::ConstantFP::get(v4, 1.0), k.gep(v4, smem, tid), 16);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  cfg.sharedBytes = 512;
  void *unused = nullptr;
  Counters c = sim.launch(*prog, "vec", cfg, {&unused});
  EXPECT_EQ(c.sharedRequests, 1u);
  EXPECT_EQ(c.sharedWavefronts, 4u);
}

}  // namespace
}  // namespace tk::sim::test
