// tk sim: JIT + trampoline + launch of hand-built kernels, checked element by
// element, with exact global-memory counters (bytes, requests, sectors).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>

#include "tests/unit/sim_KernelBuilder.h"
#include "lower/LocMetadata.h"

namespace tk::sim::test {
namespace {

using llvm::Type;
using llvm::Value;

TEST(SimLaunch, ElementwiseCountsUnitStride) {
  auto prog = scaleKernel(128);
  ASSERT_TRUE(prog->hasKernel("scale"));
  EXPECT_EQ(prog->kernelNumThreads("scale"), 128);
  Simulator sim(2);
  const int n = 128 * 8;
  Buffer<float> a(sim.memory(), n), out(sim.memory(), n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-10, 10);
  for (int i = 0; i < n; ++i) a[i] = dist(rng), out[i] = -1234.5f;
  void *pa = a.p, *po = out.p;
  LaunchConfig cfg;
  cfg.grid[0] = 8;
  Counters c = sim.launch(*prog, "scale", cfg, {&pa, &po, &n});
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] * 2) << i;
  EXPECT_EQ(c.blocks, 8u);
  EXPECT_EQ(c.threads, 1024u);
  EXPECT_EQ(c.globalLoadBytes, 4u * n);
  EXPECT_EQ(c.globalStoreBytes, 4u * n);
  EXPECT_EQ(c.globalLoadRequests, n / 32u);
  EXPECT_EQ(c.globalStoreRequests, n / 32u);
  EXPECT_EQ(c.globalLoadSectors, 4u * (n / 32));  // 32 lanes x 4 bytes = 4 sectors
  EXPECT_EQ(c.globalStoreSectors, 4u * (n / 32));
  EXPECT_EQ(c.sharedRequests, 0u);
  EXPECT_EQ(c.barriers, 0u);
}

TEST(SimLaunch, ElementwiseMaskedTail) {
  auto prog = scaleKernel(128);
  Simulator sim(3);
  const int n = 1000;  // the last block runs 104 of 128 threads: 3 full warps and 8 lanes
  Buffer<float> a(sim.memory(), n), out(sim.memory(), n);
  for (int i = 0; i < n; ++i) a[i] = float(i) * 0.5f, out[i] = -1;
  void *pa = a.p, *po = out.p;
  LaunchConfig cfg;
  cfg.grid[0] = 8;
  Counters c = sim.launch(*prog, "scale", cfg, {&pa, &po, &n});
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], float(i)) << i;
  EXPECT_EQ(c.globalLoadBytes, 4000u);
  EXPECT_EQ(c.globalLoadRequests, 32u);  // 31 full warps + 1 partial
  EXPECT_EQ(c.globalLoadSectors, 31u * 4 + 1);
  EXPECT_EQ(c.globalStoreSectors, 31u * 4 + 1);
}

TEST(SimLaunch, StridedAccessTouchesOneSectorPerLane) {
  auto prog = scaleKernel(64, 8);
  Simulator sim(2);
  const int n = 64 * 4;
  Buffer<float> a(sim.memory(), n * 8), out(sim.memory(), n * 8);
  for (int i = 0; i < n * 8; ++i) a[i] = float(i), out[i] = 7;
  void *pa = a.p, *po = out.p;
  LaunchConfig cfg;
  cfg.grid[0] = 4;
  cfg.blockThreads = 64;
  Counters c = sim.launch(*prog, "scale", cfg, {&pa, &po, &n});
  for (int i = 0; i < n * 8; ++i) ASSERT_EQ(out[i], i % 8 ? 7.f : 2.f * i) << i;
  EXPECT_EQ(c.globalLoadRequests, n / 32u);
  EXPECT_EQ(c.globalLoadSectors, 32u * (n / 32));
  EXPECT_EQ(c.globalStoreSectors, 32u * (n / 32));
}

TEST(SimLaunch, VectorAccessesCountSixteenSectors) {
  const int threads = 96;
  KernelBuilder k;
  auto &b = k.b();
  Type *v4 = llvm::FixedVectorType::get(k.f32(), 4);
  k.kernel("scale4", {k.ptr(), k.ptr()}, threads);
  Value *i = k.globalId(threads);
  Value *v = k.load(v4, k.gep(v4, k.arg(0), i), "v.tk:1:1", 16);
  k.store(b.CreateFMul(v, llvm::ConstantFP::get(v4, 2.0)), k.gep(v4, k.arg(1), i), "v.tk:2:1", 16);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim;
  const int blocks = 5, n = blocks * threads * 4;
  Buffer<float> a(sim.memory(), n), out(sim.memory(), n);
  for (int j = 0; j < n; ++j) a[j] = float(j) - 3, out[j] = 0;
  void *pa = a.p, *po = out.p;
  LaunchConfig cfg;
  cfg.grid[0] = blocks;
  cfg.blockThreads = threads;
  Counters c = sim.launch(*prog, "scale4", cfg, {&pa, &po});
  for (int j = 0; j < n; ++j) ASSERT_EQ(out[j], 2 * a[j]) << j;
  uint64_t requests = blocks * threads / 32;
  EXPECT_EQ(c.globalLoadBytes, 16u * blocks * threads);
  EXPECT_EQ(c.globalLoadRequests, requests);
  EXPECT_EQ(c.globalLoadSectors, 16 * requests);
  EXPECT_EQ(c.globalStoreRequests, requests);
  EXPECT_EQ(c.globalStoreSectors, 16 * requests);
}

TEST(SimLaunch, GridIdsAndSizesOnAllAxes) {
  const int threads = 32;
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("ids", {k.ptr()}, threads);
  Value *bx = t.blockId(b, 0), *by = t.blockId(b, 1), *bz = t.blockId(b, 2);
  Value *nx = t.gridDim(b, 0), *ny = t.gridDim(b, 1), *nz = t.gridDim(b, 2);
  Value *linear = b.CreateAdd(bx, b.CreateMul(nx, b.CreateAdd(by, b.CreateMul(ny, bz))));
  Value *slot = b.CreateAdd(b.CreateMul(linear, b.getInt32(threads)), t.threadId(b));
  // code = x + 10 y + 100 z + 1000 nx + 10000 ny + 100000 nz
  Value *code = bx;
  int scale = 10;
  for (Value *v : {by, bz, nx, ny, nz}) code = b.CreateAdd(code, b.CreateMul(v, b.getInt32(scale))), scale *= 10;
  k.store(code, k.gep(k.i32(), k.arg(0), slot));
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(4);
  LaunchConfig cfg;
  cfg.grid[0] = 3, cfg.grid[1] = 2, cfg.grid[2] = 4;
  cfg.blockThreads = threads;
  const int total = 3 * 2 * 4 * threads;
  Buffer<int32_t> out(sim.memory(), total);
  void *po = out.p;
  Counters c = sim.launch(*prog, "ids", cfg, {&po});
  EXPECT_EQ(c.blocks, 24u);
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 3; ++x)
        for (int th = 0; th < threads; ++th)
          ASSERT_EQ(out[((z * 2 + y) * 3 + x) * threads + th],
                    x + 10 * y + 100 * z + 1000 * 3 + 10000 * 2 + 100000 * 4);
}

TEST(SimLaunch, ScalarParametersOfEveryWidth) {
  KernelBuilder k;
  auto &b = k.b();
  // params(out: ptr, a: i8, b: i16, c: i32, d: i64, e: f32, f: f64); out[0] = a+b+c+d+e+f as f64.
  k.kernel("params", {k.ptr(), b.getInt8Ty(), b.getInt16Ty(), k.i32(), b.getInt64Ty(), k.f32(), b.getDoubleTy()}, 1);
  Value *sum = b.CreateSIToFP(k.arg(1), b.getDoubleTy());
  for (unsigned a = 2; a <= 4; ++a) sum = b.CreateFAdd(sum, b.CreateSIToFP(k.arg(a), b.getDoubleTy()));
  sum = b.CreateFAdd(sum, b.CreateFPExt(k.arg(5), b.getDoubleTy()));
  sum = b.CreateFAdd(sum, k.arg(6));
  k.store(sum, k.arg(0), "p.tk:1:1", 8);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<double> out(sim.memory(), 1);
  void *po = out.p;
  int8_t a = -3;
  int16_t s = 300;
  int32_t c = 70000;
  int64_t d = int64_t(1) << 40;
  float e = 0.25f;
  double f = 1e-3;
  LaunchConfig cfg;
  cfg.blockThreads = 1;
  sim.launch(*prog, "params", cfg, {&po, &a, &s, &c, &d, &e, &f});
  EXPECT_EQ(out[0], -3.0 + 300 + 70000 + double(int64_t(1) << 40) + 0.25 + 1e-3);
}

TEST(SimLaunch, CountersDoNotDependOnWorkers) {
  auto prog = scaleKernel(256);
  const int n = 256 * 37 - 5;
  Counters first;
  for (unsigned workers : {1u, 2u, 5u}) {
    Simulator sim(workers);
    Buffer<float> a(sim.memory(), n), out(sim.memory(), n);
    std::memset(a.p, 0, n * 4);
    void *pa = a.p, *po = out.p;
    LaunchConfig cfg;
    cfg.grid[0] = 37;
    cfg.blockThreads = 256;
    Counters c = sim.launch(*prog, "scale", cfg, {&pa, &po, &n});
    if (workers == 1) first = c;
    EXPECT_EQ(c.globalLoadSectors, first.globalLoadSectors);
    EXPECT_EQ(c.globalStoreRequests, first.globalStoreRequests);
    EXPECT_EQ(c.globalLoadBytes, 4u * n);
  }
}

// Each thread handles 4 floats with llvm.masked.load/store, masked by i < n.
TEST(SimLaunch, MaskedVectorAccessesCheckAndCountActiveLanesOnly) {
  const int threads = 32;
  KernelBuilder k;
  auto &b = k.b();
  auto *v4 = llvm::FixedVectorType::get(k.f32(), 4);
  k.kernel("masked", {k.ptr(), k.ptr(), k.i32()}, threads);
  Value *base = b.CreateMul(k.globalId(threads), b.getInt32(4));
  Value *lanes = b.CreateAdd(b.CreateVectorSplat(4, base),
                             llvm::ConstantVector::get({b.getInt32(0), b.getInt32(1), b.getInt32(2), b.getInt32(3)}));
  Value *mask = b.CreateICmpSLT(lanes, b.CreateVectorSplat(4, k.arg(2)));
  auto *ld =
      b.CreateMaskedLoad(v4, k.gep(k.f32(), k.arg(0), base), llvm::Align(16), mask, llvm::ConstantFP::get(v4, 0.0));
  tk::lower::setSourceLoc(*ld, "m.tk:1:1");
  auto *st = b.CreateMaskedStore(b.CreateFAdd(ld, llvm::ConstantFP::get(v4, 1.0)), k.gep(k.f32(), k.arg(1), base),
                                 llvm::Align(16), mask);
  tk::lower::setSourceLoc(*st, "m.tk:2:1");
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  const int n = 4 * 32 - 6;  // the allocations end exactly at n: masked-off lanes lie outside them
  Buffer<float> a(sim.memory(), n), out(sim.memory(), n);
  for (int i = 0; i < n; ++i) a[i] = float(i), out[i] = -1;
  void *pa = a.p, *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = threads;
  Counters c = sim.launch(*prog, "masked", cfg, {&pa, &po, &n});
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], float(i) + 1) << i;
  EXPECT_EQ(c.globalLoadBytes, 4u * n);
  EXPECT_EQ(c.globalStoreBytes, 4u * n);
  EXPECT_EQ(c.globalLoadRequests, 1u);
  EXPECT_EQ(c.globalLoadSectors, 16u);  // 488 bytes from a 256-aligned base still touch 16 sectors
  // One element too many is out of bounds.
  const int tooMany = n + 1;
  std::string m = launchError(sim, *prog, "masked", cfg, {&pa, &po, &tooMany});
  ASSERT_NE(m, "(no error)");
  EXPECT_NE(m.find("out-of-bounds load of 4 bytes at"), std::string::npos) << m;
  EXPECT_NE(m.find("(m.tk:1:1), block (0,0,0), thread 30"), std::string::npos) << m;
}

// sum over j < trips of a[j*n + tid]: lane 0 runs all its iterations before
// lane 1 starts, yet every iteration's 32 loads still form one request.
TEST(SimLaunch, LoopWithoutBarriersGroupsRequestsPerIteration) {
  const int n = 64, trips = 1000;
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("rowsum", {k.ptr(), k.ptr()}, n);
  Value *tid = k.target().threadId(b);
  auto *entry = b.GetInsertBlock(), *loop = k.block("loop"), *exit = k.block("exit");
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  auto *j = b.CreatePHI(k.i32(), 2);
  auto *acc = b.CreatePHI(k.f32(), 2);
  j->addIncoming(b.getInt32(0), entry);
  acc->addIncoming(llvm::ConstantFP::get(k.f32(), 0.0), entry);
  Value *v = k.load(k.f32(), k.gep(k.f32(), k.arg(0), b.CreateAdd(b.CreateMul(j, b.getInt32(n)), tid)));
  Value *acc2 = b.CreateFAdd(acc, v);
  Value *j2 = b.CreateAdd(j, b.getInt32(1));
  j->addIncoming(j2, loop);
  acc->addIncoming(acc2, loop);
  b.CreateCondBr(b.CreateICmpSLT(j2, b.getInt32(trips)), loop, exit);
  b.SetInsertPoint(exit);
  k.store(acc2, k.gep(k.f32(), k.arg(1), tid));
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<float> a(sim.memory(), n * trips), out(sim.memory(), n);
  for (int i = 0; i < n * trips; ++i) a[i] = float(i % 7);
  void *pa = a.p, *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = n;
  cfg.grid[0] = 3;
  Counters c = sim.launch(*prog, "rowsum", cfg, {&pa, &po});
  for (int t = 0; t < n; ++t) {
    float ref = 0;
    for (int r = 0; r < trips; ++r) ref += float((r * n + t) % 7);
    ASSERT_EQ(out[t], ref) << t;
  }
  EXPECT_EQ(c.globalLoadRequests, 3u * trips * (n / 32));
  EXPECT_EQ(c.globalLoadSectors, 4 * c.globalLoadRequests);
}

// atomicrmw add from every thread of many blocks (on several workers) to one counter.
TEST(SimLaunch, AtomicsAreCheckedAndAtomicAcrossWorkers) {
  const int threads = 128, blocks = 64;
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("count", {k.ptr()}, threads);
  Value *slot = k.gep(k.i32(), k.arg(0), b.CreateAnd(k.target().threadId(b), b.getInt32(1)));
  auto *rmw = b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, slot, b.getInt32(1), llvm::MaybeAlign(4),
                                llvm::AtomicOrdering::Monotonic);
  tk::lower::setSourceLoc(*rmw, "a.tk:1:1");
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(4);
  Buffer<int32_t> counter(sim.memory(), 2);
  counter[0] = counter[1] = 0;
  void *pc = counter.p;
  LaunchConfig cfg;
  cfg.grid[0] = blocks;
  cfg.blockThreads = threads;
  Counters c = sim.launch(*prog, "count", cfg, {&pc});
  EXPECT_EQ(counter[0], threads * blocks / 2);
  EXPECT_EQ(counter[1], threads * blocks / 2);
  EXPECT_EQ(c.globalStoreBytes, 4u * threads * blocks);
  EXPECT_EQ(c.globalStoreRequests, uint64_t(blocks * threads / 32));
  EXPECT_EQ(c.globalStoreSectors, c.globalStoreRequests);  // both words in one sector
  Buffer<int32_t> tooSmall(sim.memory(), 1);
  void *ps = tooSmall.p;
  std::string m = launchError(sim, *prog, "count", cfg, {&ps});
  ASSERT_NE(m, "(no error)");
  EXPECT_NE(m.find("out-of-bounds atomic of 4 bytes"), std::string::npos) << m;
}

// Registers and the stack are not memory the sim checks or counts.
TEST(SimLaunch, UnmarkedAccessesAreNotInstrumented) {
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("local", {k.ptr()}, 32);
  Value *tid = k.target().threadId(b);
  auto *arr = b.CreateAlloca(llvm::ArrayType::get(k.i32(), 32));
  Value *slot = b.CreateGEP(arr->getAllocatedType(), arr, {b.getInt64(0), b.CreateZExt(tid, b.getInt64Ty())});
  b.CreateStore(b.CreateMul(tid, tid), slot, /*isVolatile=*/true);
  Value *v = b.CreateLoad(k.i32(), slot, /*isVolatile=*/true);
  k.store(v, k.gep(k.i32(), k.arg(0), tid));
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<int32_t> out(sim.memory(), 32);
  void *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  Counters c = sim.launch(*prog, "local", cfg, {&po});
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], i * i);
  EXPECT_EQ(c.globalLoadBytes, 0u);
  EXPECT_EQ(c.globalStoreBytes, 128u);
  EXPECT_EQ(c.globalStoreRequests, 1u);
}

// Not a pass/fail check: how many simple GPU threads per second this machine runs.
TEST(SimLaunch, ThroughputReport) {
  auto prog = scaleKernel(256);
  for (unsigned workers : {1u, 0u}) {
    Simulator sim(workers);
    const int n = 1 << 20;
    Buffer<float> a(sim.memory(), n), out(sim.memory(), n);
    std::memset(a.p, 0, size_t(n) * 4);
    void *pa = a.p, *po = out.p;
    LaunchConfig cfg;
    cfg.grid[0] = n / 256;
    cfg.blockThreads = 256;
    sim.launch(*prog, "scale", cfg, {&pa, &po, &n});  // warm the stacks
    auto t0 = std::chrono::steady_clock::now();
    Counters c = sim.launch(*prog, "scale", cfg, {&pa, &po, &n});
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ sim      ] %u worker(s): %llu threads in %.3f s = %.2f M threads/s (%.2f M/s per worker)\n",
                sim.workers(), (unsigned long long)c.threads, s, c.threads / s / 1e6,
                c.threads / s / 1e6 / sim.workers());
    EXPECT_EQ(c.threads, uint64_t(n));
  }
}

}  // namespace
}  // namespace tk::sim::test
