// The race check's global-memory half (docs/sim.md, "Race check"): two
// threads of one block touching a global byte with no barrier between, one
// of them writing, name both lines; a barrier, the same stored value, atomics
// and accesses of one thread are no race.
#include <gtest/gtest.h>

#include "tests/unit/sim_KernelBuilder.h"

namespace tk::sim::test {
namespace {

using llvm::Value;

// out[t] = in[t]; [barrier;] out2[t] = out[t ^ 1]: each thread reads the
// element its neighbour stored (Liger's cross entropy without its barrier).
std::unique_ptr<Program> mirrorKernel(bool barrier) {
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("mirror", {k.ptr(), k.ptr(), k.ptr()}, 64);
  k.arg(1)->setName("out");
  Value *t = k.target().threadId(b);
  k.store(k.load(k.f32(), k.gep(k.f32(), k.arg(0), t), "m.tk:2:13"), k.gep(k.f32(), k.arg(1), t), "m.tk:2:5");
  if (barrier) {
    k.target().barrier(b);
    k.locateLast("m.tk:3:5");
  }
  Value *v = k.load(k.f32(), k.gep(k.f32(), k.arg(1), b.CreateXor(t, b.getInt32(1))), "m.tk:4:13");
  k.store(v, k.gep(k.f32(), k.arg(2), t), "m.tk:5:5");
  b.CreateRetVoid();
  return k.compile();
}

LaunchConfig raceCheckOn(uint32_t threads, uint32_t blocks = 1) {
  LaunchConfig cfg;
  cfg.blockThreads = threads;
  cfg.grid[0] = blocks;
  cfg.raceCheck = true;
  return cfg;
}

std::string hex(const void *p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)(uintptr_t)p);
  return buf;
}

TEST(SimGlobalRace, AStoreReadByAnotherThreadWithoutABarrierIsARace) {
  auto racy = mirrorKernel(false), fenced = mirrorKernel(true);
  Simulator sim(1);
  Buffer<float> in(sim.memory(), 64), out(sim.memory(), 64), out2(sim.memory(), 64);
  for (int i = 0; i < 64; ++i) in[i] = float(i);
  void *pi = in.p, *po = out.p, *p2 = out2.p;
  // Thread 0 reads out[1] before thread 1 stored it: thread 1's store comes
  // second (threads run in order) and is the access named second.
  EXPECT_EQ(launchError(sim, *racy, "mirror", raceCheckOn(64), {&pi, &po, &p2}),
            "kernel mirror: global-memory race on byte at " + hex(out.p + 1) +
                " (byte offset 4 from out, block (0,0,0)): thread 0 read it (m.tk:4:13) and thread 1 wrote it "
                "(m.tk:2:5) with no barrier between");
  EXPECT_EQ(launchError(sim, *fenced, "mirror", raceCheckOn(64, 3), {&pi, &po, &p2}), "(no error)");
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out2[i], float(i ^ 1));
  // Off, nothing is checked.
  LaunchConfig off = raceCheckOn(64);
  off.raceCheck = false;
  EXPECT_EQ(launchError(sim, *racy, "mirror", off, {&pi, &po, &p2}), "(no error)");
}

// Every thread stores flag[0] = value (a replicated element); with `atomic`,
// atomically adds 1 to it instead. Then every thread stores its own out[t].
std::unique_ptr<Program> sharedFlagKernel(bool atomic, bool sameValue) {
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("flag", {k.ptr(), k.ptr()}, 32);
  Value *t = k.target().threadId(b);
  if (atomic) {
    auto *rmw = b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, k.arg(0), b.getInt32(1), llvm::MaybeAlign(4),
                                  llvm::AtomicOrdering::Monotonic);
    tk::lower::setSourceLoc(*rmw, "f.tk:2:5");
  } else {
    k.store(sameValue ? b.getInt32(7) : t, k.arg(0), "f.tk:2:5");
  }
  k.store(t, k.gep(k.i32(), k.arg(1), t), "f.tk:3:5");
  b.CreateRetVoid();
  return k.compile();
}

TEST(SimGlobalRace, SameValueStoresAtomicsAndOwnBytesAreNoRace) {
  Simulator sim(1);
  Buffer<int32_t> flag(sim.memory(), 1), out(sim.memory(), 32);
  flag[0] = 0;
  void *pf = flag.p, *po = out.p;
  EXPECT_EQ(launchError(sim, *sharedFlagKernel(false, true), "flag", raceCheckOn(32), {&pf, &po}), "(no error)");
  EXPECT_EQ(launchError(sim, *sharedFlagKernel(true, false), "flag", raceCheckOn(32, 4), {&pf, &po}), "(no error)");
  EXPECT_EQ(flag[0], 7 + 4 * 32);
  // Different values: the first thread whose store changed the byte is named.
  std::string m = launchError(sim, *sharedFlagKernel(false, false), "flag", raceCheckOn(32), {&pf, &po});
  EXPECT_EQ(m, "kernel flag: global-memory race on byte at " + hex(flag.p) +
                   " (byte offset 0 from parameter 0, block (0,0,0)): thread 0 wrote it (f.tk:2:5) and thread 1 wrote "
                   "it (f.tk:2:5) with no barrier between");
}

// A layout's replicas: threads t and t + 32 load element t % 32 at one site,
// only the first stores it back (load; store of Triton's `x += 1` on a tile
// smaller than the block). The replica reads a byte its owner wrote, but at
// the site its owner read it too: the lowering's duplication, not a race.
TEST(SimGlobalRace, ReplicasOfOneLoadAreNoRace) {
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("bump", {k.ptr()}, 128);
  Value *t = k.target().threadId(b);
  Value *e = b.CreateAnd(t, b.getInt32(31));
  Value *p = k.gep(k.i32(), k.arg(0), e);
  Value *v = k.load(k.i32(), p, "b.tk:2:13");
  auto *owner = k.block("owner"), *done = k.block("done");
  b.CreateCondBr(b.CreateICmpULT(t, b.getInt32(32)), owner, done);
  b.SetInsertPoint(owner);
  k.store(b.CreateAdd(v, b.getInt32(1)), p, "b.tk:3:5");
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<int32_t> x(sim.memory(), 32);
  for (int i = 0; i < 32; ++i) x[i] = i;
  void *px = x.p;
  EXPECT_EQ(launchError(sim, *prog, "bump", raceCheckOn(128), {&px}), "(no error)");
  for (int i = 0; i < 32; ++i) EXPECT_EQ(x[i], i + 1);
}

// Blocks are not ordered by barriers at all; the check covers one block's
// threads (as compute-sanitizer's racecheck does for shared memory).
TEST(SimGlobalRace, DifferentBlocksAreNotChecked) {
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("same", {k.ptr()}, 1);
  k.store(k.target().blockId(b, 0), k.arg(0), "s.tk:2:5");
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<int32_t> out(sim.memory(), 1);
  void *po = out.p;
  EXPECT_EQ(launchError(sim, *prog, "same", raceCheckOn(1, 8), {&po}), "(no error)");
}

}  // namespace
}  // namespace tk::sim::test
