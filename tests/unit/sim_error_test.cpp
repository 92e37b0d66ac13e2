// tk sim errors: bad memory accesses (out-of-bounds, use-after-free, shared
// overflow) named by kernel, site, block and thread; misuse of Memory, launch
// and compile rejected with a clear SimError.
#include <gtest/gtest.h>
#include <llvm/IR/Verifier.h>

#include "tests/unit/sim_KernelBuilder.h"

namespace tk::sim::test {
namespace {

using llvm::Value;

// out[i] = a[i] + 1 for every thread i (no mask: the launch decides what is in bounds).
std::unique_ptr<Program> copyKernel(int threads, llvm::Type *(*elem)(KernelBuilder &) = nullptr) {
  KernelBuilder k;
  auto &b = k.b();
  llvm::Type *t = elem ? elem(k) : k.f32();
  k.kernel("copy", {k.ptr(), k.ptr()}, threads);
  Value *i = k.globalId(threads);
  Value *v = k.load(t, k.gep(t, k.arg(0), i), "copy.tk:7:13", 4);
  k.store(v, k.gep(t, k.arg(1), i), "copy.tk:8:5", 4);
  b.CreateRetVoid();
  return k.compile();
}


std::string hex(const void *p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)(uintptr_t)p);
  return buf;
}

TEST(SimErrors, OutOfBoundsLoadNamesKernelSiteBlockAndThread) {
  auto prog = copyKernel(64);
  Simulator sim(1);
  Buffer<float> a(sim.memory(), 100), out(sim.memory(), 128);
  for (int i = 0; i < 128; ++i) out[i] = -1;
  for (int i = 0; i < 100; ++i) a[i] = float(i);
  void *pa = a.p, *po = out.p;
  LaunchConfig cfg;
  cfg.grid[0] = 2;
  cfg.blockThreads = 64;
  std::string m = launchError(sim, *prog, "copy", cfg, {&pa, &po});
  EXPECT_EQ(m, "kernel copy: out-of-bounds load of 4 bytes at " + hex(a.p + 100) +
                   " (copy.tk:7:13), block (1,0,0), thread 36: byte offset 400 from parameter 0, 0 bytes past the end "
                   "of its 400-byte buffer at " +
                   hex(a.p));
  // The threads before the fault ran normally; the bad loads read zeros instead of faulting.
  for (int i = 0; i < 100; ++i) EXPECT_EQ(out[i], float(i));
  for (int i = 100; i < 128; ++i) EXPECT_EQ(out[i], 0.0f);
}

TEST(SimErrors, OutOfBoundsStoreIsNotPerformed) {
  auto prog = copyKernel(32);
  Simulator sim(1);
  // Two allocations back to back: a store past `out` must not land in `guard`.
  Buffer<float> a(sim.memory(), 64), out(sim.memory(), 10), guard(sim.memory(), 64);
  for (int i = 0; i < 64; ++i) a[i] = 5, guard[i] = 9;
  void *pa = a.p, *po = out.p;
  LaunchConfig cfg;
  cfg.grid[0] = 2;
  cfg.blockThreads = 32;
  std::string m = launchError(sim, *prog, "copy", cfg, {&pa, &po});
  EXPECT_EQ(m.rfind("kernel copy: out-of-bounds store of 4 bytes at " + hex(out.p + 10) +
                        " (copy.tk:8:5), block (0,0,0), thread 10",
                    0),
            0u)
      << m;
  for (int i = 0; i < 64; ++i) EXPECT_EQ(guard[i], 9.0f);
}

TEST(SimErrors, WideVectorOutOfBounds) {
  auto prog = copyKernel(32, [](KernelBuilder &k) -> llvm::Type * { return llvm::FixedVectorType::get(k.f32(), 4); });
  Simulator sim(1);
  Buffer<float> a(sim.memory(), 4 * 31 + 2), out(sim.memory(), 4 * 32);
  void *pa = a.p, *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  std::string m = launchError(sim, *prog, "copy", cfg, {&pa, &po});
  EXPECT_NE(m.find("out-of-bounds load of 16 bytes at " + hex(a.p + 124) +
                   " (copy.tk:7:13), block (0,0,0), thread 31: "
                   "byte offset 496 from parameter 0, runs 8 bytes past the end of its 504-byte buffer"),
            std::string::npos)
      << m;
}

// A bad 64-byte aligned vector load lands in the scratch buffer, which must be
// aligned for it (the JIT may use aligned AVX-512 moves).
TEST(SimErrors, AlignedWideVectorRedirectIsSafe) {
  KernelBuilder k;
  auto &b = k.b();
  auto *v16 = llvm::FixedVectorType::get(k.f32(), 16);
  k.kernel("wide", {k.ptr(), k.ptr()}, 32);
  Value *tid = k.target().threadId(b);
  Value *v = k.load(v16, k.gep(v16, k.arg(0), tid), "w.tk:1:1", 64);
  k.store(v, k.gep(v16, k.arg(1), tid), "w.tk:2:1", 64);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<float> a(sim.memory(), 16 * 8), out(sim.memory(), 16 * 32);
  for (int i = 0; i < 16 * 32; ++i) out[i] = -1;
  void *pa = a.p, *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  std::string m = launchError(sim, *prog, "wide", cfg, {&pa, &po});
  EXPECT_NE(m.find("out-of-bounds load of 64 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("thread 8"), std::string::npos) << m;
  for (int i = 16 * 8; i < 16 * 32; ++i) EXPECT_EQ(out[i], 0.0f) << i;
}

TEST(SimErrors, UseAfterFree) {
  auto prog = copyKernel(32);
  Simulator sim(1);
  auto *a = static_cast<float *>(sim.memory().allocate(32 * 4));
  Buffer<float> out(sim.memory(), 32);
  sim.memory().release(a);
  void *pa = a, *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  std::string m = launchError(sim, *prog, "copy", cfg, {&pa, &po});
  EXPECT_EQ(m, "kernel copy: use-after-free load of 4 bytes at " + hex(a) +
                   " (copy.tk:7:13), block (0,0,0), thread 0: 0 bytes into a released allocation of 128 bytes at " +
                   hex(a));
}

TEST(SimErrors, NullPointer) {
  auto prog = copyKernel(32);
  Simulator sim(1);
  Buffer<float> out(sim.memory(), 32);
  void *pa = nullptr, *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  std::string m = launchError(sim, *prog, "copy", cfg, {&pa, &po});
  EXPECT_EQ(m,
            "kernel copy: out-of-bounds load of 4 bytes at 0x0 (copy.tk:7:13), block (0,0,0), thread 0: null pointer");
}

TEST(SimErrors, SharedMemoryOverflow) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("smem", {}, 64);
  Value *tid = t.threadId(b);
  k.sharedStore(tid, k.gep(k.i32(), t.sharedBase(b), tid));
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  LaunchConfig cfg;
  cfg.blockThreads = 64;
  cfg.sharedBytes = 128;  // room for 32 ints
  std::string m = launchError(sim, *prog, "smem", cfg, {});
  EXPECT_EQ(m,
            "kernel smem: out-of-bounds shared store of 4 bytes at shared offset 128, block (0,0,0), thread 32: "
            "the block has 128 bytes of shared memory");
  cfg.sharedBytes = 256;
  EXPECT_NO_THROW(sim.launch(*prog, "smem", cfg, {}));
}

TEST(SimErrors, FirstFaultOfManyBlocksIsReported) {
  auto prog = copyKernel(32);
  Simulator sim(4);
  Buffer<float> a(sim.memory(), 1), out(sim.memory(), 1);
  void *pa = a.p, *po = out.p;
  LaunchConfig cfg;
  cfg.grid[0] = 1000;
  cfg.blockThreads = 32;
  std::string m = launchError(sim, *prog, "copy", cfg, {&pa, &po});
  EXPECT_EQ(m.rfind("kernel copy: out-of-bounds ", 0), 0u) << m;
}

TEST(SimMemory, TableAndMisuse) {
  Memory mem;
  void *p = mem.allocate(1000);
  void *q = mem.allocate(0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  EXPECT_NE(p, q);
  EXPECT_EQ(mem.liveBytes(), 1000u);
  EXPECT_EQ(mem.sizeOf(p), 1000u);
  void *r = mem.allocate(24);
  EXPECT_EQ(mem.peakBytes(), 1024u);
  mem.release(p);
  EXPECT_EQ(mem.liveBytes(), 24u);
  EXPECT_EQ(mem.peakBytes(), 1024u);
  EXPECT_THROW(mem.sizeOf(p), SimError);
  try {
    mem.release(p);
    FAIL();
  } catch (const SimError &e) {
    EXPECT_NE(std::string(e.what()).find("double free"), std::string::npos) << e.what();
  }
  int local = 0;
  try {
    mem.release(&local);
    FAIL();
  } catch (const SimError &e) {
    EXPECT_NE(std::string(e.what()).find("not the start of a live allocation"), std::string::npos) << e.what();
  }
  EXPECT_THROW(mem.release(static_cast<char *>(r) + 4), SimError);
  mem.release(r);
  mem.release(q);
  EXPECT_EQ(mem.liveBytes(), 0u);
  EXPECT_THROW(mem.allocate(~size_t(0) - 8), SimError);
}

TEST(SimLaunchErrors, BadLaunchesAreRejected) {
  auto prog = copyKernel(32);
  Simulator sim(1);
  Buffer<float> a(sim.memory(), 32);
  void *pa = a.p;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  auto err = [&](const std::string &kernel, LaunchConfig c, std::vector<const void *> args) {
    return launchError(sim, *prog, kernel, c, args);
  };
  EXPECT_EQ(err("nope", cfg, {&pa, &pa}), "sim: no kernel named nope in the program (it has: copy)");
  EXPECT_EQ(err("copy", cfg, {&pa}), "sim: launch of copy: the kernel takes 2 arguments, got 1");
  EXPECT_EQ(err("copy", cfg, {&pa, nullptr}),
            "sim: launch of copy: argument 1 is a null pointer (want a pointer to the value)");
  LaunchConfig c = cfg;
  c.blockThreads = 64;
  EXPECT_EQ(err("copy", c, {&pa, &pa}),
            "sim: launch of copy: the kernel was lowered for 32 threads per block, launched with 64");
  c.blockThreads = 2000;
  EXPECT_EQ(err("copy", c, {&pa, &pa}), "sim: launch of copy: 2000 threads per block; want 1..1024");
  c = cfg;
  c.grid[1] = 0;
  EXPECT_EQ(err("copy", c, {&pa, &pa}), "sim: launch of copy: grid dimension 1 is 0");
  c = cfg;
  c.sharedBytes = 1 << 20;
  EXPECT_NE(err("copy", c, {&pa, &pa}).find("bytes of shared memory; at most"), std::string::npos);
}

TEST(SimCompileErrors, BadModulesAreRejected) {
  auto compileError = [](KernelBuilder &k) {
    try {
      k.compile();
    } catch (const SimError &e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  {
    KernelBuilder k;
    k.module().setTargetTriple("nvptx64-nvidia-cuda");
    k.kernel("k", {}, 32);
    k.b().CreateRetVoid();
    EXPECT_NE(compileError(k).find("was lowered for nvptx64-nvidia-cuda, not for the sim"), std::string::npos);
  }
  {
    KernelBuilder k;
    auto *f = llvm::Function::Create(llvm::FunctionType::get(k.b().getVoidTy(), false),
                                     llvm::GlobalValue::ExternalLinkage, "helper", k.module());
    k.b().SetInsertPoint(llvm::BasicBlock::Create(k.ctx(), "entry", f));
    k.b().CreateRetVoid();
    EXPECT_NE(compileError(k).find("has no kernel"), std::string::npos);
  }
  {
    KernelBuilder k;
    k.kernel("broken", {}, 32);  // no terminator
    EXPECT_NE(compileError(k).find("invalid module"), std::string::npos);
  }
  {
    KernelBuilder k;
    auto &b = k.b();
    k.kernel("unresolved", {}, 32);
    auto callee = k.module().getOrInsertFunction("no_such_function_anywhere", b.getVoidTy());
    b.CreateCall(callee);
    b.CreateRetVoid();
    EXPECT_NE(compileError(k).find("no_such_function_anywhere"), std::string::npos);
  }
  {
    KernelBuilder k;
    auto &b = k.b();
    k.kernel("gpu_space", {b.getPtrTy(1)}, 32);
    k.store(b.getInt32(1), k.arg(0), "g.tk:3:4");
    b.CreateRetVoid();
    EXPECT_NE(compileError(k).find("a memory access at g.tk:3:4 in function gpu_space uses address space 1"),
              std::string::npos);
  }
  EXPECT_THROW(Program::compile(nullptr, nullptr), SimError);
}

}  // namespace
}  // namespace tk::sim::test
