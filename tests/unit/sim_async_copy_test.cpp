// tk sim's cp.async against the PTX ISA ("cp.async", "cp.async.commit_group",
// "cp.async.wait_group"): a copy's bytes are in shared memory only once a
// wait_group of the issuing thread completes its group (a barrier completes
// nothing); wait_group N leaves the N most recent groups in flight; the
// source size reads a prefix and zero-fills the rest; the global side is
// checked and counted at issue, the shared side at completion; the race check
// names both lines of a read of bytes still in flight.
#include <gtest/gtest.h>

#include "tests/unit/sim_KernelBuilder.h"
#include "lower/LocMetadata.h"

namespace tk::sim::test {
namespace {

using llvm::Value;

const char *const kCopyA = "cp.tk:4:9";
const char *const kCopyB = "cp.tk:5:9";
const char *const kRead = "cp.tk:8:13";

LaunchConfig oneWarp(uint32_t sharedBytes, bool raceCheck = false) {
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  cfg.sharedBytes = sharedBytes;
  cfg.raceCheck = raceCheck;
  return cfg;
}

lower::Target::TagAccess at(const char *loc) {
  return [loc](llvm::Instruction &i) {
    tk::lower::setSourceLoc(i, loc);
  };
}

// groups(in, out), one warp: thread t copies in[4t..4t+3] to shared byte 16t
// (group 0) and in[128+4t..] to byte 512+16t (group 1); a barrier; wait_group
// 1; out[t] = word 16t, out[32+t] = word 512+16t; wait_group 0; out[64+t] =
// word 512+16t again.
std::unique_ptr<Program> groupsKernel() {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("groups", {k.ptr(), k.ptr()}, 32);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  auto copy = [&](int word0, int byte0, const char *loc) {
    Value *src = k.gep(k.i32(), k.arg(0), b.CreateAdd(b.CreateMul(tid, b.getInt32(4)), b.getInt32(word0)));
    Value *dst = k.gep(b.getInt8Ty(), smem, b.CreateAdd(b.CreateMul(tid, b.getInt32(16)), b.getInt32(byte0)));
    t.cpAsync(b, dst, src, 16, b.getInt32(16), at(loc));
    t.cpAsyncCommitGroup(b);
  };
  copy(0, 0, kCopyA);
  copy(128, 512, kCopyB);
  t.barrier(b);
  t.cpAsyncWaitGroup(b, 1);
  auto word = [&](int byte0) {
    return k.sharedLoad(k.i32(), k.gep(b.getInt8Ty(), smem, b.CreateAdd(b.CreateMul(tid, b.getInt32(16)), b.getInt32(byte0))),
                        4, kRead);
  };
  k.store(word(0), k.gep(k.i32(), k.arg(1), tid));
  k.store(word(512), k.gep(k.i32(), k.arg(1), b.CreateAdd(tid, b.getInt32(32))));
  t.cpAsyncWaitGroup(b, 0);
  k.store(word(512), k.gep(k.i32(), k.arg(1), b.CreateAdd(tid, b.getInt32(64))));
  b.CreateRetVoid();
  return k.compile();
}

TEST(SimAsyncCopy, BytesLandAtTheWaitGroupThatCompletesTheirGroup) {
  auto prog = groupsKernel();
  Simulator sim(1);
  Buffer<uint32_t> in(sim.memory(), 256), out(sim.memory(), 96);
  for (int i = 0; i < 256; ++i) in[i] = 1000u + uint32_t(i);
  for (int i = 0; i < 96; ++i) out[i] = 0;
  void *pi = in.p, *po = out.p;
  Counters c = sim.launch(*prog, "groups", oneWarp(1024), {&pi, &po});
  for (int t = 0; t < 32; ++t) {
    EXPECT_EQ(out[t], 1000u + 4 * t) << "group 0 is complete after wait_group 1";
    EXPECT_EQ(out[32 + t], 0xffffffffu) << "group 1 is still in flight: shared memory keeps its poison";
    EXPECT_EQ(out[64 + t], 1128u + 4 * t) << "wait_group 0 completes group 1";
  }
  // Global side at issue: 2 requests of 32 lanes x 16 contiguous bytes (16
  // sectors each); shared side at completion: 2 requests of 4 wavefronts (the
  // minimum for 512 bytes), plus the three reads of one word per lane.
  EXPECT_EQ(c.globalLoadBytes, 2u * 512);
  EXPECT_EQ(c.globalLoadRequests, 2u);
  EXPECT_EQ(c.globalLoadSectors, 2u * 16);
  EXPECT_EQ(c.sharedRequests, 2u + 3);
  EXPECT_EQ(c.sharedWavefronts, 2u * 4 + 3 * 4);
}

TEST(SimAsyncCopy, ReadingBytesInFlightIsARaceNamingBothLines) {
  auto prog = groupsKernel();
  Simulator sim(1);
  Buffer<uint32_t> in(sim.memory(), 256), out(sim.memory(), 96);
  void *pi = in.p, *po = out.p;
  EXPECT_EQ(launchError(sim, *prog, "groups", oneWarp(1024, /*raceCheck=*/true), {&pi, &po}),
            std::string("kernel groups: shared-memory race on byte at offset 0x200 (block (0,0,0)): thread 0 read it (") +
                kRead + ") while thread 0's cp.async (" + kCopyB +
                ") into it was in flight (no cp.async.wait_group completed it)");
}

// zfill(in, out): thread t copies 16 bytes with source size t % 17 from byte
// 16t of `in` (a null source where the size is 0: nothing is read) to shared
// byte 16t; wait_group 0; barrier; out[4t..4t+3] = its 16 bytes.
TEST(SimAsyncCopy, SourceSizeReadsAPrefixAndZeroFills) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("zfill", {k.ptr(), k.ptr()}, 32);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  Value *size = b.CreateURem(tid, b.getInt32(17));
  Value *src = k.gep(b.getInt8Ty(), k.arg(0), b.CreateMul(tid, b.getInt32(16)));
  src = b.CreateSelect(b.CreateICmpEQ(size, b.getInt32(0)), llvm::ConstantPointerNull::get(b.getPtrTy(0)), src);
  t.cpAsync(b, k.gep(b.getInt8Ty(), smem, b.CreateMul(tid, b.getInt32(16))), src, 16, size, at(kCopyA));
  t.cpAsyncCommitGroup(b);
  t.cpAsyncWaitGroup(b, 0);
  t.barrier(b);
  for (int w = 0; w < 4; ++w) {
    Value *i = b.CreateAdd(b.CreateMul(tid, b.getInt32(4)), b.getInt32(w));
    k.store(k.sharedLoad(k.i32(), k.gep(k.i32(), smem, i), 4, kRead), k.gep(k.i32(), k.arg(1), i));
  }
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<uint8_t> in(sim.memory(), 512), out(sim.memory(), 512);
  for (int i = 0; i < 512; ++i) in[i] = uint8_t(i * 7 + 1);
  void *pi = in.p, *po = out.p;
  Counters c = sim.launch(*prog, "zfill", oneWarp(512, /*raceCheck=*/true), {&pi, &po});
  uint64_t read = 0;
  for (int t = 0; t < 32; ++t) {
    read += uint64_t(t % 17);
    for (int e = 0; e < 16; ++e)
      ASSERT_EQ(out[16 * t + e], e < t % 17 ? in[16 * t + e] : 0) << "thread " << t << " byte " << e;
  }
  EXPECT_EQ(c.globalLoadBytes, read);
}

// A copy whose source size reaches past the end of its allocation faults at
// issue, named by its line; with the size cut to what is there it does not.
std::string lastCopyError(int lastSize) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("tail", {k.ptr()}, 32);
  Value *tid = t.threadId(b);
  Value *src = k.gep(b.getInt8Ty(), k.arg(0), b.CreateMul(tid, b.getInt32(16)));
  Value *size = b.CreateSelect(b.CreateICmpEQ(tid, b.getInt32(31)), b.getInt32(uint32_t(lastSize)), b.getInt32(16));
  t.cpAsync(b, k.gep(b.getInt8Ty(), t.sharedBase(b), b.CreateMul(tid, b.getInt32(16))), src, 16, size, at(kCopyA));
  t.cpAsyncCommitGroup(b);
  t.cpAsyncWaitGroup(b, 0);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<uint8_t> in(sim.memory(), 31 * 16 + 8);
  void *pi = in.p;
  return launchError(sim, *prog, "tail", oneWarp(512), {&pi});
}

TEST(SimAsyncCopy, SourceBytesAreBoundsChecked) {
  // Like any masked access, the first byte past the end is named.
  std::string e = lastCopyError(16);
  EXPECT_NE(e.find("kernel tail: out-of-bounds load of 1 bytes at"), std::string::npos) << e;
  EXPECT_NE(e.find(std::string("(") + kCopyA + "), block (0,0,0), thread 31: byte offset 504 from parameter 0, 0 bytes past the end of its 504-byte "
                                  "buffer"),
            std::string::npos)
      << e;
  EXPECT_EQ(lastCopyError(8), "(no error)");
}

}  // namespace
}  // namespace tk::sim::test
