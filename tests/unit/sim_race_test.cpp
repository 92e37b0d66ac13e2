// tk sim race check (LaunchConfig::raceCheck): two threads of a block on one
// shared byte between barriers, one writing, is reported with both sites;
// barrier-separated, own-bytes (neighbouring bytes of one word too), read-only
// and atomic patterns pass; off, nothing.
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
            "kernel transpose: shared-memory race on byte at offset 0x44 (block (0,0,0)): thread 1 read it "
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
            "kernel rw: shared-memory race on byte at offset 0x0 (block (0,0,0)): thread 0 wrote it (rw.tk:12:5) "
            "and thread 1 read it (rw.tk:14:9) with no barrier between");
  // Without !tk.loc on the shared accesses the message has no lines.
  auto unlocated = neighbourKernel(n, false, false);
  EXPECT_EQ(launchError(sim, *unlocated, "rw", config(n, n * 4, true), {&po}),
            "kernel rw: shared-memory race on byte at offset 0x0 (block (0,0,0)): thread 0 wrote it and thread 1 "
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
            "kernel ww: shared-memory race on byte at offset 0x0 (block (0,0,0)): thread 0 wrote it (ww.tk:3:1) "
            "and thread 1 wrote it (ww.tk:3:1) with no barrier between");
  // Two warps writing the same 32 words.
  auto warps = writeKernel(64, 1, 32);
  EXPECT_EQ(launchError(sim, *warps, "ww", config(64, 128, true), {}),
            "kernel ww: shared-memory race on byte at offset 0x0 (block (0,0,0)): thread 0 wrote it (ww.tk:3:1) "
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
  EXPECT_EQ(m.rfind("kernel rw: shared-memory race on byte at offset 0x0 (block (", 0), 0u) << m;
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
            "kernel same: shared-memory race on byte at offset 0x0 (block (0,0,0)): thread 0 wrote it (s.tk:2:3) and "
            "thread 40 wrote it (s.tk:2:3) with no barrier between");
}

// One shared access of a two-thread pattern: `bytes` wide (1: i8, 2: half
// (f16), 4: i32) at byte `offset`; a store writes `value`'s low bytes.
struct Touch {
  bool store;
  uint32_t bytes, offset, value = 0;
};

// Thread 0 does `first`, then thread 1 does `second` (the sim runs thread 0
// up to its first yield before thread 1), no barrier between; then a barrier
// and thread 0 copies shared word 0 to out[0]. Loads go to out[1 + tid].
std::unique_ptr<Program> pairKernel(Touch first, Touch second) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("pair", {k.ptr()}, 32);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  auto *t0 = k.block("t0"), *not0 = k.block("not0"), *t1 = k.block("t1"), *join = k.block("join");
  b.CreateCondBr(b.CreateICmpEQ(tid, b.getInt32(0)), t0, not0);
  b.SetInsertPoint(not0);
  b.CreateCondBr(b.CreateICmpEQ(tid, b.getInt32(1)), t1, join);
  auto emit = [&](const Touch &x, const std::string &loc) {
    llvm::Type *ty = x.bytes == 1 ? b.getInt8Ty() : x.bytes == 2 ? b.getHalfTy() : k.i32();
    Value *p = b.CreateGEP(b.getInt8Ty(), smem, b.getInt64(x.offset));
    if (x.store) {
      Value *v = b.getIntN(x.bytes * 8, x.value);
      k.sharedStore(x.bytes == 2 ? b.CreateBitCast(v, ty) : v, p, x.bytes, loc);
    } else {
      Value *v = k.sharedLoad(ty, p, x.bytes, loc);
      if (x.bytes == 2) v = b.CreateBitCast(v, b.getInt16Ty());
      k.store(b.CreateZExt(v, k.i32()), k.gep(k.i32(), k.arg(0), b.CreateAdd(tid, b.getInt32(1))));
    }
    b.CreateBr(join);
  };
  b.SetInsertPoint(t0);
  emit(first, "p.tk:1:1");
  b.SetInsertPoint(t1);
  emit(second, "p.tk:2:1");
  b.SetInsertPoint(join);
  t.barrier(b);
  auto *copy = k.block("copy"), *exit = k.block("exit");
  b.CreateCondBr(b.CreateICmpEQ(tid, b.getInt32(0)), copy, exit);
  b.SetInsertPoint(copy);
  k.store(k.sharedLoad(k.i32(), smem, 4), k.arg(0));
  b.CreateBr(exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return k.compile();
}

// The check is per byte: accesses race only where their bytes overlap.
TEST(SimRace, AccessesRaceOnlyOnBytesTheyShare) {
  struct Case {
    Touch first, second;
    std::string race;  // "" for none, else the message's middle
  };
  const std::string w0 = "thread 0 wrote it (p.tk:1:1)", r0 = "thread 0 read it (p.tk:1:1)";
  const std::string w1 = "thread 1 wrote it (p.tk:2:1)", r1 = "thread 1 read it (p.tk:2:1)";
  auto at = [](const std::string &offset, const std::string &first, const std::string &second) {
    return offset + " (block (0,0,0)): " + first + " and " + second;
  };
  const Case cases[] = {
      // Two halves of one word (an i16 and an f16 store), or two of its bytes.
      {{true, 2, 0, 0x1111}, {true, 2, 2, 0x2222}, ""},
      {{true, 1, 3, 0x44}, {true, 1, 0, 0x11}, ""},
      // An i32 store over another thread's f16 store: a race on its bytes.
      {{true, 2, 2, 0x3c00}, {true, 4, 0, 0x01020304}, at("0x2", w0, w1)},
      // A read of a byte another thread wrote, or the other way round.
      {{true, 2, 2, 0x3c00}, {false, 4, 0}, at("0x2", w0, r1)},
      {{true, 1, 3, 0x44}, {false, 2, 2}, at("0x3", w0, r1)},
      {{false, 4, 0}, {true, 1, 1, 0x55}, at("0x1", r0, w1)},
      // Bytes next to a store are free to read.
      {{true, 1, 3, 0x44}, {false, 2, 0}, ""},
      // Same value, byte by byte: 0x11223344 holds 0x1122 at byte 2; 0x2122
      // changes only byte 3.
      {{true, 4, 0, 0x11223344}, {true, 2, 2, 0x1122}, ""},
      {{true, 4, 0, 0x11223344}, {true, 2, 2, 0x2122}, at("0x3", w0, w1)},
  };
  Simulator sim(1);
  Buffer<uint32_t> out(sim.memory(), 33);
  void *po = out.p;
  for (const Case &c : cases) {
    SCOPED_TRACE(std::to_string(c.first.bytes) + "@" + std::to_string(c.first.offset) + " then " +
                 std::to_string(c.second.bytes) + "@" + std::to_string(c.second.offset));
    auto prog = pairKernel(c.first, c.second);
    std::string m = launchError(sim, *prog, "pair", config(32, 4, true), {&po});
    if (c.race.empty()) {
      EXPECT_EQ(m, "(no error)");
    } else {
      EXPECT_EQ(m, "kernel pair: shared-memory race on byte at offset " + c.race + " with no barrier between");
    }
  }
  // The two halves land side by side.
  auto halves = pairKernel({true, 2, 0, 0x1111}, {true, 2, 2, 0x2222});
  out[0] = 0xdeadbeef;
  sim.launch(*halves, "pair", config(32, 4, true), {&po});
  EXPECT_EQ(out[0], 0x22221111u);
}

// Every thread of two warps stores one 1- or 2-byte element at smem[tid]
// (2 or 4 threads share each word); [barrier;] each reads the whole word
// holding its element. With the barrier nothing races and every word holds
// its threads' elements; without it, thread 0's read of word 0 meets thread
// 1's store to the next element.
std::unique_ptr<Program> packedKernel(int n, uint32_t elemBytes, bool barrier) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("packed", {k.ptr()}, n);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  Value *bits = b.CreateTrunc(b.CreateAdd(tid, b.getInt32(0x3c00)), b.getIntNTy(elemBytes * 8));
  llvm::Type *ty = elemBytes == 2 ? b.getHalfTy() : b.getInt8Ty();  // f16 or i8 elements
  k.sharedStore(b.CreateBitCast(bits, ty), k.gep(ty, smem, tid), elemBytes, "e.tk:1:1");
  if (barrier) t.barrier(b);
  Value *word = b.CreateUDiv(tid, b.getInt32(4 / elemBytes));
  k.store(k.sharedLoad(k.i32(), k.gep(k.i32(), smem, word), 4, "e.tk:2:1"), k.gep(k.i32(), k.arg(0), tid));
  b.CreateRetVoid();
  return k.compile();
}

TEST(SimRace, ThreadsStoringNeighbouringBytesOfAWordDoNotRace) {
  const int n = 64;
  Simulator sim(1);
  Buffer<uint32_t> out(sim.memory(), n);
  void *po = out.p;
  for (uint32_t eb : {1u, 2u}) {
    SCOPED_TRACE(eb);
    auto good = packedKernel(n, eb, true);
    for (int i = 0; i < n; ++i) out[i] = 0xdeadbeef;
    sim.launch(*good, "packed", config(n, n * eb, true), {&po});
    const uint32_t per = 4 / eb, mask = eb == 1 ? 0xff : 0xffff;
    for (uint32_t i = 0; i < uint32_t(n); ++i) {
      uint32_t want = 0, first = i / per * per;
      for (uint32_t j = 0; j < per; ++j) want |= ((first + j + 0x3c00) & mask) << (8 * eb * j);
      ASSERT_EQ(out[i], want) << i;
    }
    auto bad = packedKernel(n, eb, false);
    EXPECT_EQ(launchError(sim, *bad, "packed", config(n, n * eb, true), {&po}),
              "kernel packed: shared-memory race on byte at offset 0x" + std::to_string(eb) +
                  " (block (0,0,0)): thread 0 read it (e.tk:2:1) and thread 1 wrote it (e.tk:1:1) with no barrier "
                  "between");
  }
}

TEST(SimRace, VectorAccessesCoverEveryByte) {
  Simulator sim(1);
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
                  "kernel vec: shared-memory race on byte at offset 0x10 (block (0,0,0)): thread 0 read it "
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
            "kernel loop: shared-memory race on byte at offset 0x4 (block (0,0,0)): thread 0 read it (l.tk:5:10) "
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
                "kernel masked: shared-memory race on byte at offset 0x10 (block (0,0,0)): thread 0 read it "
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
