// tk sim's shuffle up (SimTarget::shuffleUp, what `cumsum` scans lanes
// with): lane l reads lane l - delta, a lane below delta keeps its own value,
// across full and partial warps and for 32- and 64-bit values; a lane that
// never arrives is a located error, as for the butterfly shuffle.
#include <gtest/gtest.h>

#include "tests/unit/sim_KernelBuilder.h"
#include "tk/error.h"

namespace tk::sim::test {
namespace {

using llvm::Value;

TEST(SimShuffleUp, ReadsTheLaneDeltaBelowOrItsOwn) {
  const int n = 40;  // warp 1 has lanes 0..7 only
  for (int delta : {0, 1, 3, 16, 31}) {
    KernelBuilder k;
    auto &b = k.b();
    const SimTarget &t = k.target();
    k.kernel("up", {k.ptr(), k.ptr(), k.ptr()}, n);
    Value *tid = t.threadId(b);
    k.store(t.shuffleUp(b, tid, delta), k.gep(k.i32(), k.arg(0), tid));
    Value *f = b.CreateSIToFP(tid, k.f32());
    k.store(t.shuffleUp(b, b.CreateFMul(f, llvm::ConstantFP::get(k.f32(), 0.5)), delta), k.gep(k.f32(), k.arg(1), tid));
    // 64-bit: the thread id in both halves.
    Value *wide = b.CreateZExt(tid, b.getInt64Ty());
    wide = b.CreateOr(wide, b.CreateShl(wide, 40));
    k.store(t.shuffleUp(b, wide, delta), k.gep(b.getInt64Ty(), k.arg(2), tid), "test.tk:3:1", 8);
    b.CreateRetVoid();
    auto prog = k.compile();
    Simulator sim(1);
    Buffer<int32_t> out(sim.memory(), n);
    Buffer<float> outF(sim.memory(), n);
    Buffer<int64_t> outW(sim.memory(), n);
    void *po = out.p, *pf = outF.p, *pw = outW.p;
    LaunchConfig cfg;
    cfg.blockThreads = n;
    sim.launch(*prog, "up", cfg, {&po, &pf, &pw});
    for (int i = 0; i < n; ++i) {
      int lane = i % 32;
      int src = lane >= delta ? i - delta : i;
      ASSERT_EQ(out[i], src) << "delta " << delta << " thread " << i;
      ASSERT_EQ(outF[i], src * 0.5f) << "delta " << delta << " thread " << i;
      ASSERT_EQ(outW[i], int64_t(src) | (int64_t(src) << 40)) << "delta " << delta << " thread " << i;
    }
  }
}

TEST(SimShuffleUp, ExitedLaneIsALocatedError) {
  auto up2 = [](const SimTarget &t, llvm::IRBuilder<> &b, Value *tid) { return t.shuffleUp(b, tid, 2); };
  EXPECT_EQ(exitedLaneShuffleError(40, up2, "scan.tk:4:13"),
            "kernel early_exit: warp shuffle (scan.tk:4:13) in block (0,0,0), warp 1: 31 of 32 lanes arrived; lane 8 "
            "(thread 40) never will, which has exited");
}

TEST(SimShuffleUp, RejectsDeltasOutsideTheWarp) {
  KernelBuilder k;
  k.kernel("bad", {}, 32);
  EXPECT_THROW(k.target().shuffleUp(k.b(), k.b().getInt32(1), 32), tk::InternalError);
  EXPECT_THROW(k.target().shuffleUp(k.b(), k.b().getInt32(1), -1), tk::InternalError);
}

}  // namespace
}  // namespace tk::sim::test
