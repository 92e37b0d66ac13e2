// tk sim's mbarriers and bulk tensor copies (sm_90a) against the PTX ISA
// ("mbarrier", "cp.async.bulk.tensor"): a box lands row after row with
// out-of-bounds elements zero and each 16-byte chunk at its swizzled
// address; phases complete on arrivals and transaction bytes, waiters park
// until the phase of their parity completes; a phase that never completes
// and misuse fail the launch naming the line; a by-value tensor map reaches
// the kernel as the caller's blob.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/unit/sim_TmaTestUtil.h"

namespace tk::sim::test {
namespace {

using llvm::Value;

const char *const kWait = "tma.tk:7:5";
const char *const kCopy = "tma.tk:5:9";
constexpr uint32_t kBoxAt = 1024;  // shared offset of the box; the mbarrier is at 0

// box(out, map, c0, c1), 32 threads: thread 0 inits the mbarrier (1
// arrival); a barrier; thread 0 expects the box's bytes and copies the box
// at (c0, c1) to shared kBoxAt; every thread waits for phase 0; a barrier;
// then the box's bytes, as they lie in shared memory, go to out.
std::unique_ptr<Program> boxKernel(uint32_t boxBytes) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  llvm::Function *f = k.kernel("box", {k.ptr(), k.ptr(), k.i32(), k.i32()}, 32);
  t.markTensorMapParam(*f, 1);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  Value *box = b.CreateConstGEP1_32(b.getInt8Ty(), smem, kBoxAt);
  onlyThread(k, tid, 0, [&] { t.mbarrierInit(b, smem, 1); });
  t.barrier(b);
  onlyThread(k, tid, 0, [&] {
    t.mbarrierArriveExpectTx(b, smem, int(boxBytes));
    t.tmaLoad(b, box, k.arg(1), {k.arg(2), k.arg(3)}, smem);
    k.locateLast(kCopy);
  });
  t.mbarrierWait(b, smem, b.getInt32(0));
  k.locateLast(kWait);
  t.barrier(b);
  for (uint32_t w = 0; w < boxBytes / 4 / 32; ++w) {
    Value *i = b.CreateAdd(tid, b.getInt32(w * 32));
    k.store(k.sharedLoad(k.i32(), k.gep(k.i32(), box, i)), k.gep(k.i32(), k.arg(0), i));
  }
  b.CreateRetVoid();
  return k.compile();
}

struct BoxCase {
  uint32_t inner, swizzle;  // box elements per row (f16), swizzle bytes
  int32_t c0, c1;
};

class SimTmaBox : public ::testing::TestWithParam<BoxCase> {};

// A 20 x 72 f16 tensor (each row 144 bytes); 8-row boxes at coordinates
// before the start, past the end, inside, and wholly outside it.
TEST_P(SimTmaBox, LandsRowAfterRowSwizzledWithOutOfBoundsZero) {
  const BoxCase c = GetParam();
  const uint32_t rows = 20, cols = 72, boxRows = 8, boxBytes = c.inner * boxRows * 2;
  auto prog = boxKernel(boxBytes);
  Simulator sim(1);
  Buffer<uint16_t> in(sim.memory(), rows * cols), out(sim.memory(), boxBytes / 2);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t x = 0; x < cols; ++x) in[r * cols + x] = uint16_t(r * 100 + x + 1);
  std::memset(out.p, 0xa5, boxBytes);
  alignas(64) TensorMap map = makeMap(in.p, 2, {cols, rows}, {c.inner, boxRows}, c.swizzle);
  void *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  cfg.sharedBytes = kBoxAt + boxBytes;
  cfg.raceCheck = true;
  Counters n = sim.launch(*prog, "box", cfg, {&po, &map, &c.c0, &c.c1});
  uint64_t inBounds = 0;
  for (uint32_t r = 0; r < boxRows; ++r)
    for (uint32_t x = 0; x < c.inner; ++x) {
      const int64_t gr = int64_t(c.c1) + r, gx = int64_t(c.c0) + x;
      const bool inside = gr >= 0 && gr < rows && gx >= 0 && gx < cols;
      inBounds += inside;
      const uint32_t at = swizzle(kBoxAt + (r * c.inner + x) * 2, c.swizzle) - kBoxAt;
      ASSERT_EQ(out[at / 2], inside ? in[size_t(gr) * cols + size_t(gx)] : 0)
          << "box element (" << r << ", " << x << ") at shared offset " << kBoxAt + at;
    }
  // One request for the whole box; only the in-bounds elements are read.
  EXPECT_EQ(n.globalLoadRequests, 1u);
  EXPECT_EQ(n.globalLoadBytes, inBounds * 2);
}

INSTANTIATE_TEST_SUITE_P(Boxes, SimTmaBox,
                         ::testing::Values(BoxCase{64, 128, -8, -3}, BoxCase{64, 128, 16, 15}, BoxCase{64, 128, 0, 0},
                                           BoxCase{64, 128, 100, 2}, BoxCase{32, 64, -5, 13}, BoxCase{16, 32, 60, -7},
                                           BoxCase{64, 0, 11, -2}));

// The reference swizzle moves chunks within their 128-byte line (so the
// swizzled boxes above check placement an unswizzled copy would fail).
TEST(SimTma, SwizzleMovesChunksWithinTheirLine) {
  EXPECT_EQ(swizzle(kBoxAt + 128 + 16, 128), kBoxAt + 128);
  EXPECT_EQ(swizzle(kBoxAt + 7 * 128, 128), kBoxAt + 7 * 128 + 7 * 16);
  EXPECT_EQ(swizzle(kBoxAt + 7 * 128, 64), kBoxAt + 7 * 128 + 3 * 16);
}

// phases(out, map), 64 threads, an mbarrier of 2 arrivals: for k in 0..3,
// thread 62 arrives, thread 63 arrives expecting 256 bytes and copies
// in[64k .. 64k + 63] to shared kBoxAt; every thread waits for parity k % 2
// and stores its word to out[64k + t]; a barrier. Threads 0..62 run before
// thread 63 completes each phase, so they park and read only once woken.
TEST(SimTma, PhasesCompleteInTurnAndWakeEveryWaiter) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  llvm::Function *f = k.kernel("phases", {k.ptr(), k.ptr()}, 64);
  t.markTensorMapParam(*f, 1);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  Value *box = b.CreateConstGEP1_32(b.getInt8Ty(), smem, kBoxAt);
  onlyThread(k, tid, 0, [&] { t.mbarrierInit(b, smem, 2); });
  t.barrier(b);
  auto *entry = b.GetInsertBlock(), *loop = k.block("loop"), *exit = k.block("exit");
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  auto *phase = b.CreatePHI(k.i32(), 2);
  phase->addIncoming(b.getInt32(0), entry);
  onlyThread(k, tid, 62, [&] { t.mbarrierArriveExpectTx(b, smem, 0); });
  onlyThread(k, tid, 63, [&] {
    t.mbarrierArriveExpectTx(b, smem, 256);
    t.tmaLoad(b, box, k.arg(1), {b.CreateMul(phase, b.getInt32(64))}, smem);
  });
  t.mbarrierWait(b, smem, b.CreateAnd(phase, b.getInt32(1)));
  Value *word = k.sharedLoad(k.i32(), k.gep(k.i32(), box, tid), 4, "tma.tk:9:13");
  k.store(word, k.gep(k.i32(), k.arg(0), b.CreateAdd(b.CreateMul(phase, b.getInt32(64)), tid)));
  t.barrier(b);
  Value *next = b.CreateAdd(phase, b.getInt32(1));
  phase->addIncoming(next, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpSLT(next, b.getInt32(4)), loop, exit);
  b.SetInsertPoint(exit);
  onlyThread(k, tid, 0, [&] { t.mbarrierInval(b, smem); });
  b.CreateRetVoid();
  auto prog = k.compile();

  Simulator sim(1);
  Buffer<int32_t> in(sim.memory(), 256), out(sim.memory(), 256);
  for (int i = 0; i < 256; ++i) in[i] = 7 * i + 3, out[i] = -5;
  alignas(64) TensorMap map = makeMap(in.p, 4, {256}, {64}, 0);
  void *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 64;
  cfg.sharedBytes = kBoxAt + 256;
  cfg.raceCheck = true;  // the copies are the async proxy's, ordered by the mbarrier: no race
  Counters n = sim.launch(*prog, "phases", cfg, {&po, &map});
  for (int i = 0; i < 256; ++i) ASSERT_EQ(out[i], 7 * i + 3) << "phase " << i / 64 << ", thread " << i % 64;
  EXPECT_EQ(n.globalLoadRequests, 4u);
  EXPECT_EQ(n.globalLoadBytes, 1024u);
}

// stuck(): thread 0 inits the mbarrier for `arrivals`, a barrier, thread 0
// arrives expecting `bytes` (and copies nothing), every thread waits for
// phase 0 at kWait.
std::string stuckError(int arrivals, int bytes) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("stuck", {}, 64);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  onlyThread(k, tid, 0, [&] { t.mbarrierInit(b, smem, arrivals); });
  t.barrier(b);
  onlyThread(k, tid, 0, [&] { t.mbarrierArriveExpectTx(b, smem, bytes); });
  t.mbarrierWait(b, smem, b.getInt32(0));
  k.locateLast(kWait);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  LaunchConfig cfg;
  cfg.blockThreads = 64;
  cfg.sharedBytes = 64;
  return launchError(sim, *prog, "stuck", cfg, {});
}

TEST(SimTma, APhaseThatNeverCompletesFailsTheLaunch) {
  EXPECT_EQ(stuckError(2, 0), std::string("kernel stuck: mbarrier wait at ") + kWait +
                                  " in block (0,0,0), warp 0: the phase of parity 0 never completes (1 of 2 arrivals "
                                  "pending, 0 transaction bytes outstanding)");
  EXPECT_EQ(stuckError(1, 256), std::string("kernel stuck: mbarrier wait at ") + kWait +
                                    " in block (0,0,0), warp 0: the phase of parity 0 never completes (0 of 1 "
                                    "arrivals pending, 256 transaction bytes outstanding)");
  EXPECT_EQ(stuckError(1, 0), "(no error)");
}

// misuse(map, c0): thread 0 runs `ops` on the mbarrier at shared 0 (the box
// goes to shared `dst`), then every thread waits for phase 0 at kWait.
enum class Misuse { WaitUninitialised, ArriveAfterInval, Underflow, MisalignedSwizzled, OutsideTensor };
std::string misuseError(Misuse what) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  llvm::Function *f = k.kernel("misuse", {k.ptr()}, 32);
  t.markTensorMapParam(*f, 0);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  const uint32_t dst = what == Misuse::MisalignedSwizzled ? kBoxAt + 64 : kBoxAt;
  onlyThread(k, tid, 0, [&] {
    if (what != Misuse::WaitUninitialised) t.mbarrierInit(b, smem, 1);
    if (what == Misuse::ArriveAfterInval) t.mbarrierInval(b, smem);
    if (what == Misuse::WaitUninitialised) return;
    t.mbarrierArriveExpectTx(b, smem, what == Misuse::Underflow ? 16 : 1024);
    k.locateLast("tma.tk:4:5");
    if (what == Misuse::ArriveAfterInval) return;
    t.tmaLoad(b, b.CreateConstGEP1_32(b.getInt8Ty(), smem, dst), k.arg(0), {b.getInt32(0), b.getInt32(0)}, smem);
    k.locateLast(kCopy);
  });
  t.mbarrierWait(b, smem, b.getInt32(0));
  k.locateLast(kWait);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  // 8 rows of 64 f16; OutsideTensor claims 9 rows of a buffer that holds 8.
  Buffer<uint16_t> in(sim.memory(), 8 * 64);
  alignas(64) TensorMap map = makeMap(in.p, 2, {64, what == Misuse::OutsideTensor ? 9u : 8u}, {64, 8}, 128);
  if (what == Misuse::OutsideTensor) map.box[1] = 9;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  cfg.sharedBytes = 4096;
  return launchError(sim, *prog, "misuse", cfg, {&map});
}

TEST(SimTma, MisuseFailsTheLaunchNamingTheRuleAndLine) {
  EXPECT_EQ(misuseError(Misuse::WaitUninitialised),
            std::string("kernel misuse: mbarrier.try_wait.parity (") + kWait +
                "), block (0,0,0), thread 0: the mbarrier at shared offset 0x0 is not initialised (no mbarrier.init, "
                "or invalidated since)");
  EXPECT_EQ(misuseError(Misuse::ArriveAfterInval),
            "kernel misuse: mbarrier.arrive.expect_tx (tma.tk:4:5), block (0,0,0), thread 0: the mbarrier at shared "
            "offset 0x0 is not initialised (no mbarrier.init, or invalidated since)");
  EXPECT_EQ(misuseError(Misuse::Underflow),
            std::string("kernel misuse: cp.async.bulk.tensor (") + kCopy +
                "), block (0,0,0), thread 0: the copy completes 1024 transaction bytes on the mbarrier at shared "
                "offset 0x0, whose phase expects only 16 more (an mbarrier.arrive.expect_tx must announce them "
                "first)");
  EXPECT_EQ(misuseError(Misuse::MisalignedSwizzled),
            std::string("kernel misuse: cp.async.bulk.tensor (") + kCopy +
                "), block (0,0,0), thread 0: the destination, shared offset 0x440, is not 128-byte aligned (a "
                "swizzled copy needs 128)");
  const std::string outside = misuseError(Misuse::OutsideTensor);
  EXPECT_NE(outside.find(std::string("kernel misuse: out-of-bounds load of 128 bytes at ")), std::string::npos)
      << outside;
  EXPECT_NE(outside.find(std::string("(") + kCopy +
                         "), block (0,0,0), thread 0: byte offset 1024 from the tensor map's base"),
            std::string::npos)
      << outside;
}

// A tensor-map parameter reaches the kernel as the blob its argument points
// at, wherever that lies, in a kernel the trampoline calls rather than
// inlines (a byval parameter aligned 64 read as zeros there): map(out, pad,
// map) stores the blob's first and last 8 bytes.
TEST(SimTma, TrampolinePassesAByValueParameterAsTheCallersBlob) {
  KernelBuilder k;
  auto &b = k.b();
  llvm::Function *f = k.kernel("map", {k.ptr(), k.i32(), k.ptr()}, 1);
  k.target().markTensorMapParam(*f, 2);
  f->addFnAttr(llvm::Attribute::NoInline);
  llvm::Type *i64 = b.getInt64Ty();
  k.store(b.CreateLoad(i64, k.arg(2)), k.arg(0), "map.tk:1:1", 8);
  Value *last = b.CreateLoad(i64, b.CreateConstGEP1_32(b.getInt8Ty(), k.arg(2), 120));
  k.store(last, b.CreateConstGEP1_32(i64, k.arg(0), 1), "map.tk:2:1", 8);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<uint64_t> out(sim.memory(), 2);
  // The blob 8 bytes past a 64-byte boundary.
  alignas(64) unsigned char storage[192] = {};
  unsigned char *blob = storage + 8;
  const uint64_t first = 0x0123456789abcdefull, lastWord = 0xfedcba9876543210ull;
  std::memcpy(blob, &first, 8);
  std::memcpy(blob + 120, &lastWord, 8);
  void *po = out.p;
  int32_t pad = 0;
  LaunchConfig cfg;
  cfg.blockThreads = 1;
  sim.launch(*prog, "map", cfg, {&po, &pad, blob});
  EXPECT_EQ(out[0], first);
  EXPECT_EQ(out[1], lastWord);
}

}  // namespace
}  // namespace tk::sim::test
