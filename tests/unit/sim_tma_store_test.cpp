// tk sim's TMA stores (sm_90a) against the PTX ISA ("cp.async.bulk.tensor",
// global.shared::cta): a box goes from shared memory, read where a load
// would have put it (rows in order, each 16-byte chunk at its swizzled
// address), to the tensor, and elements outside the tensor's shape are not
// written; a load and a store of a box are inverses; shared writes not
// fenced for the async proxy, a misaligned source, a write outside the
// buffer and a race with another thread's store fail the launch.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "tests/unit/sim_TmaTestUtil.h"
#include "tk/error.h"

namespace tk::sim::test {
namespace {

using llvm::Value;

const char *const kStore = "store.tk:6:5";
constexpr uint32_t kBoxAt = 1024;  // shared offset of the box; an mbarrier, when any, is at 0

// How the kernel below breaks the rules, if it does.
enum class Flaw { None, NoFence, IssuerWritesAfterFence, MisalignedSource, OtherThreadStores };

// store(image, map, c0, c1), 32 threads: shared kBoxAt.. = image (`boxBytes`
// bytes, a word per thread at a time), each thread fences its writes for the
// async proxy; a barrier; thread 0 stores the box at (c0, c1), commits the
// bulk group and waits until it has read shared memory.
std::unique_ptr<Program> storeKernel(uint32_t boxBytes, Flaw flaw = Flaw::None) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  llvm::Function *f = k.kernel("store", {k.ptr(), k.ptr(), k.i32(), k.i32()}, 32);
  t.markTensorMapParam(*f, 1);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  Value *box = b.CreateConstGEP1_32(b.getInt8Ty(), smem, kBoxAt);
  for (uint32_t w = 0; w < boxBytes / 4 / 32; ++w) {
    Value *i = b.CreateAdd(tid, b.getInt32(w * 32));
    k.sharedStore(k.load(k.i32(), k.gep(k.i32(), k.arg(0), i)), k.gep(k.i32(), box, i), 4, "store.tk:2:5");
  }
  if (flaw != Flaw::NoFence) t.fenceProxyAsync(b);
  t.barrier(b);
  // The other thread's store lands on the box's first element.
  if (flaw == Flaw::OtherThreadStores)
    onlyThread(k, tid, 1, [&] {
      Value *first = b.CreateLoad(k.ptr(), k.arg(1));  // the tensor map's base
      k.store(b.getInt32(0x7eadbeef), first, "store.tk:4:5");
    });
  onlyThread(k, tid, 0, [&] {
    if (flaw == Flaw::IssuerWritesAfterFence) k.sharedStore(b.getInt32(1), box, 4, "store.tk:5:5");
    Value *src = b.CreateConstGEP1_32(b.getInt8Ty(), box, flaw == Flaw::MisalignedSource ? 64 : 0);
    t.tmaStore(b, src, k.arg(1), {k.arg(2), k.arg(3)});
    k.locateLast(kStore);
    t.bulkCommitGroup(b);
    t.bulkWaitGroupRead(b, 0);
  });
  b.CreateRetVoid();
  return k.compile();
}

struct StoreCase {
  uint32_t elemBytes, inner, swizzle;  // element size, box elements per row, swizzle bytes
  int32_t c0, c1;
};

class SimTmaStore : public ::testing::TestWithParam<StoreCase> {};

// A 20-row tensor of 72 (f16) or 36 (f32) elements a row, 8 more a row of
// padding and 2 rows more in its buffer, all poisoned; 8-row boxes at
// coordinates before the start, past the end, inside, and wholly outside.
TEST_P(SimTmaStore, WritesTheBoxInsideTheTensorOnly) {
  const StoreCase c = GetParam();
  const uint32_t eb = c.elemBytes, rows = 20, cols = 144 / eb, pitch = cols + 8, boxRows = 8;
  const uint32_t boxBytes = c.inner * boxRows * eb;
  auto prog = storeKernel(boxBytes);
  Simulator sim(1);
  Buffer<uint8_t> image(sim.memory(), boxBytes), out(sim.memory(), size_t(rows + 2) * pitch * eb);
  std::mt19937 rng(uint32_t(c.c0 * 31 + c.c1 + c.swizzle + eb));
  for (uint32_t i = 0; i < boxBytes; ++i) image[i] = uint8_t(rng());
  const uint8_t poison = 0xa5;
  std::memset(out.p, poison, out.n);
  alignas(64) TensorMap map = makeMap(out.p, eb, {cols, rows}, {c.inner, boxRows}, c.swizzle, pitch);
  void *pi = image.p;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  cfg.sharedBytes = kBoxAt + boxBytes;
  cfg.raceCheck = true;
  Counters n = sim.launch(*prog, "store", cfg, {&pi, &map, &c.c0, &c.c1});
  // Where each element of the buffer should have come from: the box element
  // over it, if the element is in the tensor, else nothing (poison).
  uint64_t inBounds = 0;
  for (uint32_t r = 0; r < rows + 2; ++r)
    for (uint32_t x = 0; x < pitch; ++x) {
      const int64_t br = int64_t(r) - c.c1, bx = int64_t(x) - c.c0;
      const bool written = r < rows && x < cols && br >= 0 && br < boxRows && bx >= 0 && bx < c.inner;
      inBounds += written;
      const uint32_t at = written ? swizzle(kBoxAt + uint32_t(br * c.inner + bx) * eb, c.swizzle) - kBoxAt : 0;
      for (uint32_t e = 0; e < eb; ++e)
        ASSERT_EQ(out[(size_t(r) * pitch + x) * eb + e], written ? image[at + e] : poison)
            << "element (" << r << ", " << x << ") byte " << e;
    }
  // One request for the whole box; only the in-bounds elements are written.
  EXPECT_EQ(n.globalStoreRequests, 1u);
  EXPECT_EQ(n.globalStoreBytes, inBounds * eb);
}

INSTANTIATE_TEST_SUITE_P(Boxes, SimTmaStore,
                         ::testing::Values(StoreCase{2, 64, 128, -8, -3}, StoreCase{2, 64, 128, 16, 15},
                                           StoreCase{2, 64, 128, 0, 0}, StoreCase{2, 64, 128, 100, 2},
                                           StoreCase{2, 24, 0, 60, -5}, StoreCase{2, 24, 0, -7, 17},
                                           StoreCase{4, 32, 128, -5, 13}, StoreCase{4, 32, 128, 10, 4},
                                           StoreCase{4, 12, 0, 30, -2}, StoreCase{4, 12, 0, -3, 0}));

// roundtrip(src, dst, c0, c1, d0, d1), 32 threads: thread 0 inits an
// mbarrier, loads the box of src at (c0, c1) into shared memory, all wait
// for it; a barrier; thread 0 stores it into dst at (d0, d1). The box is
// the load's: source elements outside src are zeros.
struct RoundTrip {
  uint32_t elemBytes, inner, swizzle;
};
class SimTmaRoundTrip : public ::testing::TestWithParam<RoundTrip> {};

TEST_P(SimTmaRoundTrip, StoringALoadedBoxCopiesIt) {
  const RoundTrip c = GetParam();
  const uint32_t eb = c.elemBytes, rows = 12, cols = 160 / eb, pitch = cols + 16 / eb, boxRows = 8;
  const uint32_t boxBytes = c.inner * boxRows * eb;
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  llvm::Function *f = k.kernel("roundtrip", {k.ptr(), k.ptr(), k.i32(), k.i32(), k.i32(), k.i32()}, 32);
  t.markTensorMapParam(*f, 0);
  t.markTensorMapParam(*f, 1);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  Value *box = b.CreateConstGEP1_32(b.getInt8Ty(), smem, kBoxAt);
  onlyThread(k, tid, 0, [&] { t.mbarrierInit(b, smem, 1); });
  t.barrier(b);
  onlyThread(k, tid, 0, [&] {
    t.mbarrierArriveExpectTx(b, smem, int(boxBytes));
    t.tmaLoad(b, box, k.arg(0), {k.arg(2), k.arg(3)}, smem);
  });
  t.mbarrierWait(b, smem, b.getInt32(0));
  t.barrier(b);
  onlyThread(k, tid, 0, [&] {
    t.tmaStore(b, box, k.arg(1), {k.arg(4), k.arg(5)});
    t.bulkCommitGroup(b);
    t.bulkWaitGroupRead(b, 0);
  });
  b.CreateRetVoid();
  auto prog = k.compile();

  Simulator sim(1);
  const size_t elems = size_t(rows) * pitch;
  Buffer<uint8_t> in(sim.memory(), elems * eb), out(sim.memory(), elems * eb);
  std::mt19937 rng(c.swizzle + eb);
  for (size_t i = 0; i < in.n; ++i) in[i] = uint8_t(rng());
  std::memset(out.p, 0xa5, out.n);
  alignas(64) TensorMap src = makeMap(in.p, eb, {cols, rows}, {c.inner, boxRows}, c.swizzle, pitch);
  alignas(64) TensorMap dst = makeMap(out.p, eb, {cols, rows}, {c.inner, boxRows}, c.swizzle, pitch);
  // The load reads past the top left corner, the store writes past the bottom right.
  const int32_t c0 = -3, c1 = -2, d0 = int32_t(cols - c.inner + 5), d1 = int32_t(rows - 6);
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  cfg.sharedBytes = kBoxAt + boxBytes;
  cfg.raceCheck = true;
  sim.launch(*prog, "roundtrip", cfg, {&src, &dst, &c0, &c1, &d0, &d1});
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t x = 0; x < pitch; ++x) {
      const int64_t br = int64_t(r) - d1, bx = int64_t(x) - d0;
      const bool written = x < cols && br >= 0 && br < boxRows && bx >= 0 && bx < c.inner;
      const int64_t sr = c1 + br, sx = c0 + bx;
      const bool loaded = sr >= 0 && sr < rows && sx >= 0 && sx < cols;
      for (uint32_t e = 0; e < eb; ++e) {
        const uint8_t want = !written ? 0xa5 : loaded ? in[(size_t(sr) * pitch + size_t(sx)) * eb + e] : 0;
        ASSERT_EQ(out[(size_t(r) * pitch + x) * eb + e], want) << "element (" << r << ", " << x << ") byte " << e;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Layouts, SimTmaRoundTrip,
                         ::testing::Values(RoundTrip{2, 64, 128}, RoundTrip{4, 16, 64}, RoundTrip{2, 16, 32},
                                           RoundTrip{4, 8, 0}));

// The error of storeKernel(512 bytes: 8 rows of 32 f16, 64-byte swizzle)
// with `flaw`, the box at (0, 0) of an 8 x 32 tensor (9 rows claimed by
// `tooTall`, of a buffer that holds 8).
std::string storeError(Flaw flaw, bool tooTall = false) {
  auto prog = storeKernel(512, flaw);
  Simulator sim(1);
  Buffer<uint16_t> image(sim.memory(), 256), out(sim.memory(), 256);
  std::memset(image.p, 0x11, 512);
  alignas(64) TensorMap map = makeMap(out.p, 2, {32, tooTall ? 9u : 8u}, {32, tooTall ? 9u : 8u}, 64, 32);
  void *pi = image.p;
  const int32_t zero = 0;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  cfg.sharedBytes = 4096;
  cfg.raceCheck = flaw == Flaw::OtherThreadStores;
  return launchError(sim, *prog, "store", cfg, {&pi, &map, &zero, &zero});
}

TEST(SimTmaStoreErrors, MisuseFailsTheLaunchNamingTheRuleAndLine) {
  EXPECT_EQ(storeError(Flaw::None), "(no error)");
  const std::string head =
      std::string("kernel store: cp.async.bulk.tensor (") + kStore + "), block (0,0,0), thread 0: ";
  EXPECT_EQ(storeError(Flaw::NoFence),
            head +
                "thread 0 wrote shared memory before the last barrier with no fence.proxy.async after the write; "
                "the bulk tensor store reads shared memory through the async proxy");
  EXPECT_EQ(storeError(Flaw::IssuerWritesAfterFence),
            head +
                "thread 0 (the issuing thread) wrote shared memory after the last barrier with no "
                "fence.proxy.async after the write; the bulk tensor store reads shared memory through the async "
                "proxy");
  EXPECT_EQ(storeError(Flaw::MisalignedSource),
            head + "the source, shared offset 0x440, is not 128-byte aligned (a swizzled copy needs 128)");
  const std::string outside = storeError(Flaw::None, /*tooTall=*/true);
  EXPECT_NE(outside.find("kernel store: out-of-bounds store of 64 bytes at "), std::string::npos) << outside;
  EXPECT_NE(outside.find(std::string("(") + kStore +
                         "), block (0,0,0), thread 0: byte offset 512 from the tensor map's base"),
            std::string::npos)
      << outside;
  const std::string race = storeError(Flaw::OtherThreadStores);
  EXPECT_NE(race.find("kernel store: global-memory race on byte at "), std::string::npos) << race;
  EXPECT_NE(race.find("store.tk:4:5"), std::string::npos) << race;
  EXPECT_NE(race.find(kStore), std::string::npos) << race;
}

TEST(SimTmaStoreErrors, BadOperandsThrowAtLowering) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("bad", {k.ptr()}, 32);
  Value *smem = t.sharedBase(b);
  EXPECT_THROW(t.tmaStore(b, smem, k.arg(0), {}), tk::InternalError);
  EXPECT_THROW(t.tmaStore(b, smem, k.arg(0), std::vector<Value *>(6, b.getInt32(0))), tk::InternalError);
  EXPECT_THROW(t.tmaStore(b, smem, k.arg(0), {b.getInt64(0)}), tk::InternalError);
  EXPECT_THROW(t.bulkWaitGroupRead(b, -1), tk::InternalError);
  EXPECT_THROW(t.bulkWaitGroupRead(b, 64), tk::InternalError);
  try {
    t.bulkWaitGroupRead(b, 64);
  } catch (const tk::InternalError &e) {
    EXPECT_NE(std::string(e.what()).find("SimTarget::bulkWaitGroupRead: 64 pending groups"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tk::sim::test
