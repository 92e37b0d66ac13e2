// Provenance (docs/sim.md, "Provenance"): a global access is checked against
// the buffer of the kernel argument its address derives from, traced in the
// IR (PointerProvenance.cpp), so an index that lands inside another live
// buffer, or before the start of its own, is an error naming the parameter
// and the byte offset; where the trace fails, any live allocation will do.
#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include "backend/sim/InstrumentMemory.h"
#include "tests/unit/sim_KernelBuilder.h"

namespace tk::sim::test {
namespace {

using llvm::Value;

std::string hex(const void *p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)(uintptr_t)p);
  return buf;
}

// What instrumentMemoryAccesses records of each site's source: the
// parameter's index, "int" or "loaded" for a root pointer, "-" for none.
std::vector<std::string> traced(const char *ir) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic err;
  auto m = llvm::parseAssemblyString(ir, err, ctx);
  EXPECT_TRUE(m) << err.getMessage().str();
  if (!m) return {};
  SiteTable sites;
  instrumentMemoryAccesses(*m, sites);
  std::string broken;
  llvm::raw_string_ostream os(broken);
  EXPECT_FALSE(llvm::verifyModule(*m, &os)) << broken;
  std::vector<std::string> sources;
  for (const Site &s : sites.sites)
    sources.push_back(s.param >= 0                      ? std::to_string(s.param)
                      : s.root == SiteRoot::Integer ? "int"
                      : s.root == SiteRoot::Loaded  ? "loaded"
                                                    : "-");
  return sources;
}

TEST(SimProvenance, TracesGepsSplatsPhisAndSelectsToOneParameter) {
  const char *ir = R"(
define void @k(ptr %x, ptr %y, i64 %i, i1 %c, ptr %pp) {
entry:
  %a = getelementptr float, ptr %x, i64 %i
  %b = getelementptr float, ptr %a, i64 64
  %l0 = load float, ptr %b, !tk.loc !0
  %s0 = insertelement <4 x ptr> poison, ptr %y, i64 0
  %s1 = shufflevector <4 x ptr> %s0, <4 x ptr> poison, <4 x i32> zeroinitializer
  %v = getelementptr float, <4 x ptr> %s1, <4 x i64> <i64 0, i64 1, i64 2, i64 3>
  %e = extractelement <4 x ptr> %v, i64 2
  %l1 = load float, ptr %e, !tk.loc !0
  br label %loop
loop:
  %p = phi ptr [ %x, %entry ], [ %q, %loop ]
  %q = getelementptr float, ptr %p, i64 16
  %l2 = load float, ptr %p, !tk.loc !0
  br i1 %c, label %loop, label %done
done:
  %same = select i1 %c, ptr %a, ptr %q
  %l3 = load float, ptr %same, !tk.loc !0
  %mixed = select i1 %c, ptr %x, ptr %y
  %l4 = load float, ptr %mixed, !tk.loc !0
  %loaded = load ptr, ptr %pp
  %l5 = load float, ptr %loaded, !tk.loc !0
  %int = ptrtoint ptr %x to i64
  %made = inttoptr i64 %int to ptr
  %l6 = load float, ptr %made, !tk.loc !0
  store float 1.0, ptr %y, !tk.shared !1
  ret void
}
!0 = !{!"p.tk:1:1"}
!1 = !{}
)";
  // x; y through a splat and a vector GEP; x through a loop phi; x through a
  // select of two x pointers; unknown for x-or-y; the loaded pointer is its
  // own root; x again through ptrtoint and inttoptr; a shared access is never
  // traced.
  EXPECT_EQ(traced(ir), (std::vector<std::string>{"0", "1", "0", "0", "-", "loaded", "0", "-"}));
}

// Pointers made from integers: an address from an i64 loaded from a table
// (vLLM's block tables, Triton's grouped GEMM) is checked against the
// allocation the integer points into; integer arithmetic on a parameter's
// address stays that parameter's; a merge of two roots, or a root that does
// not dominate the access, is not traced.
TEST(SimProvenance, TracesIntegerMadePointersToTheirRoot) {
  const char *ir = R"(
define void @k(ptr %x, ptr %table, i64 %off, i1 %c) {
entry:
  %slot = getelementptr i64, ptr %table, i64 %off
  %addr = load i64, ptr %slot, !tk.loc !0
  %base = inttoptr i64 %addr to ptr
  %p = getelementptr float, ptr %base, i64 %off
  %l0 = load float, ptr %p, !tk.loc !0
  %xi = ptrtoint ptr %x to i64
  %bytes = shl i64 %off, 2
  %xoff = add i64 %xi, %bytes
  %xp = inttoptr i64 %xoff to ptr
  %l1 = load float, ptr %xp, !tk.loc !0
  %other = inttoptr i64 %off to ptr
  %either = select i1 %c, ptr %base, ptr %other
  %l2 = load float, ptr %either, !tk.loc !0
  br i1 %c, label %then, label %join
then:
  %late = inttoptr i64 %addr to ptr
  br label %join
join:
  %maybe = phi ptr [ %late, %then ], [ poison, %entry ]
  %l3 = load float, ptr %maybe, !tk.loc !0
  ret void
}
!0 = !{!"p.tk:1:1"}
)";
  // The table load itself (table), the integer-made pointer, x through
  // integer arithmetic, a merge of two roots, a root from one path only.
  EXPECT_EQ(traced(ir), (std::vector<std::string>{"1", "int", "0", "-", "-"}));
}

// out[i] = x[i + off] + y[i]: `off` comes from the launch, so a test can aim
// x's index anywhere.
std::unique_ptr<Program> offsetKernel() {
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("shifted", {k.ptr(), k.ptr(), k.ptr(), k.i32()}, 32);
  k.arg(0)->setName("x");
  k.arg(1)->setName("y");
  k.arg(2)->setName("out");
  Value *i = k.target().threadId(b);
  Value *xv = k.load(k.f32(), k.gep(k.f32(), k.arg(0), b.CreateAdd(i, k.arg(3))), "shift.tk:3:13");
  Value *yv = k.load(k.f32(), k.gep(k.f32(), k.arg(1), i), "shift.tk:4:13");
  k.store(b.CreateFAdd(xv, yv), k.gep(k.f32(), k.arg(2), i), "shift.tk:5:5");
  b.CreateRetVoid();
  return k.compile();
}

TEST(SimProvenance, AnIndexIntoAnotherLiveBufferIsAnError) {
  auto prog = offsetKernel();
  Simulator sim(1);
  Buffer<float> x(sim.memory(), 16), y(sim.memory(), 64), out(sim.memory(), 32);
  for (int i = 0; i < 64; ++i) y[i] = 1;
  // Aim x's index at y: every address is inside a live allocation, which is
  // all the sim checked before provenance (the load silently read y).
  const int32_t off = int32_t((reinterpret_cast<char *>(y.p) - reinterpret_cast<char *>(x.p)) / 4);
  void *px = x.p, *py = y.p, *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  std::string m = launchError(sim, *prog, "shifted", cfg, {&px, &py, &po, &off});
  const long long bytes = 4LL * off;
  // y may lie above or below x.
  const std::string how = bytes > 0 ? std::to_string(bytes - 64) + " bytes past the end"
                                    : std::to_string(-bytes) + " bytes before the start";
  EXPECT_EQ(m, "kernel shifted: out-of-bounds load of 4 bytes at " + hex(y.p) +
                   " (shift.tk:3:13), block (0,0,0), thread 0: byte offset " + std::to_string(bytes) + " from x, " +
                   how + " of its 64-byte buffer at " + hex(x.p) + "; the address is inside y's buffer");
}

TEST(SimProvenance, ANegativeOffsetNamesItsOwnBuffer) {
  auto prog = offsetKernel();
  Simulator sim(1);
  Buffer<float> x(sim.memory(), 64), y(sim.memory(), 32), out(sim.memory(), 32);
  const int32_t off = -1;
  void *px = x.p, *py = y.p, *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  std::string m = launchError(sim, *prog, "shifted", cfg, {&px, &py, &po, &off});
  EXPECT_EQ(m.rfind("kernel shifted: out-of-bounds load of 4 bytes at " + hex(x.p - 1) +
                        " (shift.tk:3:13), block (0,0,0), thread 0: byte offset -4 from x, 4 bytes before the start "
                        "of its 256-byte buffer at " + hex(x.p),
                    0),
            0u)
      << m;
  // In bounds, the same kernel runs clean.
  const int32_t zero = 0;
  EXPECT_EQ(launchError(sim, *prog, "shifted", cfg, {&px, &py, &po, &zero}), "(no error)");
}

// An argument that points into the middle of an allocation (a sub-buffer)
// may reach the whole allocation: the buffer is the allocation that holds it.
TEST(SimProvenance, ASubBufferArgumentReachesItsWholeAllocation) {
  auto prog = offsetKernel();
  Simulator sim(1);
  Buffer<float> x(sim.memory(), 96), y(sim.memory(), 32), out(sim.memory(), 32);
  const int32_t back = -32;
  void *px = x.p + 32, *py = y.p, *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  EXPECT_EQ(launchError(sim, *prog, "shifted", cfg, {&px, &py, &po, &back}), "(no error)");
}

// Where the trace fails (here a select between two parameters), the access
// is checked against every live allocation, as before provenance.
TEST(SimProvenance, AnUntracedAddressFallsBackToAnyLiveAllocation) {
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("either", {k.ptr(), k.ptr(), k.ptr(), k.i32()}, 32);
  Value *i = k.target().threadId(b);
  Value *base = b.CreateSelect(b.CreateICmpEQ(k.arg(3), b.getInt32(0)), k.arg(0), k.arg(1));
  k.store(k.load(k.f32(), k.gep(k.f32(), base, i), "e.tk:2:9"), k.gep(k.f32(), k.arg(2), i), "e.tk:3:5");
  b.CreateRetVoid();
  auto prog = k.compile();
  EXPECT_EQ(prog->sites().sites[0].param, -1);
  Simulator sim(1);
  Buffer<float> x(sim.memory(), 8), y(sim.memory(), 32), out(sim.memory(), 32);
  void *px = x.p, *py = y.p, *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 32;
  const int32_t useY = 1, useX = 0;
  EXPECT_EQ(launchError(sim, *prog, "either", cfg, {&px, &py, &po, &useY}), "(no error)");
  std::string m = launchError(sim, *prog, "either", cfg, {&px, &py, &po, &useX});
  EXPECT_NE(m.find("thread 8: 0 bytes past the end of a 32-byte allocation at " + hex(x.p)), std::string::npos) << m;
  // Far from every allocation (a host pointer never allocated through tk or
  // borrowed): no buffer is blamed for it.
  void *far = reinterpret_cast<char *>(out.p) + (64 << 20);
  m = launchError(sim, *prog, "either", cfg, {&px, &far, &po, &useY});
  EXPECT_NE(m.find("thread 0: not in any allocation the sim knows (the nearest below, "), std::string::npos) << m;
  EXPECT_EQ(m.find("past the end of a"), std::string::npos) << m;
}

// gather(table, out, off): out[t] = base[t + off] for 16 threads, base the
// i64 address in table[0] made a pointer, as a block table's entry is.
std::unique_ptr<Program> tableKernel() {
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("gather", {k.ptr(), k.ptr(), k.i32()}, 16);
  k.arg(0)->setName("table");
  k.arg(1)->setName("out");
  Value *address = k.load(b.getInt64Ty(), k.arg(0), "table.tk:4:16", 8);
  Value *base = b.CreateIntToPtr(address, k.ptr());
  Value *t = k.target().threadId(b);
  Value *v = k.load(k.f32(), k.gep(k.f32(), base, b.CreateAdd(t, k.arg(2))), "table.tk:5:13");
  k.store(v, k.gep(k.f32(), k.arg(1), t), "table.tk:6:5");
  b.CreateRetVoid();
  return k.compile();
}

// A pointer read from a table as an i64 and run 16 elements past its
// 16-element buffer lands in the next buffer: inside a live allocation, so
// the check against all allocations saw nothing. Checked against the
// allocation that held the pointer when it was made, it is an error.
TEST(SimProvenance, AnIntegerMadePointerStaysInItsAllocation) {
  auto prog = tableKernel();
  EXPECT_EQ(prog->sites().sites[1].root, SiteRoot::Integer);
  Simulator sim(1);
  Buffer<float> a(sim.memory(), 16), next(sim.memory(), 64), out(sim.memory(), 16);
  Buffer<int64_t> table(sim.memory(), 1);
  // Aim at `next` whichever side of `a` it lies: 16 elements past a's end,
  // or a's start moved so that 16 past its end is next's first element.
  const bool above = next.p > a.p;
  float *start = above ? a.p : next.p;
  const int64_t gap = (reinterpret_cast<char *>(above ? next.p : a.p) - reinterpret_cast<char *>(start)) / 4;
  table[0] = int64_t(reinterpret_cast<uintptr_t>(start));
  void *pt = table.p, *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 16;
  const int32_t inBounds = 0;
  EXPECT_EQ(launchError(sim, *prog, "gather", cfg, {&pt, &po, &inBounds}), "(no error)");
  const int32_t past = int32_t(gap);
  const std::string m = launchError(sim, *prog, "gather", cfg, {&pt, &po, &past});
  const int64_t size = above ? 64 : 256;
  EXPECT_EQ(m, "kernel gather: out-of-bounds load of 4 bytes at " + hex(start + gap) +
                   " (table.tk:5:13), block (0,0,0), thread 0: byte offset " + std::to_string(4 * gap) +
                   " from the integer-made pointer " + hex(start) + ", " + std::to_string(4 * gap - size) +
                   " bytes past the end of its " + std::to_string(size) + "-byte buffer at " + hex(start) +
                   "; the address is inside another live allocation");
}

// A pointer loaded from memory (a `**f32` element) is a root too; when it
// points into a parameter's buffer, the error says whose.
TEST(SimProvenance, ALoadedPointerNamesTheParameterItPointsInto) {
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("through", {k.ptr(), k.ptr(), k.ptr(), k.i32()}, 16);
  k.arg(0)->setName("ptrs");
  k.arg(1)->setName("x");
  k.arg(2)->setName("out");
  Value *base = k.load(k.ptr(), k.arg(0), "ptrs.tk:4:16", 8);
  Value *t = k.target().threadId(b);
  Value *v = k.load(k.f32(), k.gep(k.f32(), base, b.CreateAdd(t, k.arg(3))), "ptrs.tk:5:13");
  k.store(b.CreateFAdd(v, k.load(k.f32(), k.gep(k.f32(), k.arg(1), t), "ptrs.tk:6:13")), k.gep(k.f32(), k.arg(2), t),
          "ptrs.tk:7:5");
  b.CreateRetVoid();
  auto prog = k.compile();
  EXPECT_EQ(prog->sites().sites[1].root, SiteRoot::Loaded);
  Simulator sim(1);
  Buffer<float> x(sim.memory(), 16), out(sim.memory(), 16);
  Buffer<float *> ptrs(sim.memory(), 1);
  ptrs[0] = x.p;
  void *pp = ptrs.p, *px = x.p, *po = out.p;
  LaunchConfig cfg;
  cfg.blockThreads = 16;
  const int32_t inBounds = 0, past = 1;
  EXPECT_EQ(launchError(sim, *prog, "through", cfg, {&pp, &px, &po, &inBounds}), "(no error)");
  EXPECT_EQ(launchError(sim, *prog, "through", cfg, {&pp, &px, &po, &past}),
            "kernel through: out-of-bounds load of 4 bytes at " + hex(x.p + 16) +
                " (ptrs.tk:5:13), block (0,0,0), thread 15: byte offset 64 from the loaded pointer " + hex(x.p) +
                " (into x's buffer), 0 bytes past the end of its 64-byte buffer at " + hex(x.p));
}

}  // namespace
}  // namespace tk::sim::test
