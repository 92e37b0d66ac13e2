// Instruction counts: countInstructions as text in (costs per block, the
// increments it inserts), then launches of hand-built kernels whose thread,
// warp, floating-point and special-function counts follow from their shape.
#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>

#include "backend/sim/CountInstructions.h"
#include "backend/sim/ProgramImpl.h"
#include "tests/unit/sim_KernelBuilder.h"

namespace tk::sim::test {
namespace {

using llvm::Value;

// Each line's cost is in its comment: instructions / fp / special.
const char *kCosted = R"(
define void @k(ptr %p, <4 x float> %v) {
entry:
  %t = call i32 @__tk_sim_tid()                              ; 0: sim plumbing
  %q = call ptr @__tk_sim_global_access(ptr %p, i32 0)       ; 0: memory hook
  %x = load float, ptr %q, align 4                           ; 1
  %y = fmul float %x, 2.0                                    ; 1 fp
  %s = call float @sinf(float %y)                            ; 1 special
  %e = call float @llvm.exp2.f32(float %s)                   ; 1 special
  %f = call float @llvm.floor.f32(float %e)                  ; 1 fp
  %w = fadd <4 x float> %v, %v                               ; 4 fp: one per lane
  %w0 = extractelement <4 x float> %w, i32 0                 ; 0
  %c = fcmp olt float %f, %w0                                ; 1 fp
  %i = sitofp i32 %t to float                                ; 1 fp
  call void @__tk_sim_barrier()                              ; 1: a collective
  %g = getelementptr float, ptr %p, i32 %t                   ; 1
  %g16 = getelementptr i8, ptr %p, i64 16                    ; 0: folds into the address
  store <8 x float> zeroinitializer, ptr %g16, align 16      ; 2: two 16-byte stores
  call void @llvm.assume(i1 true)                            ; 0
  %arg = load ptr, ptr %p, align 8, !tk.uncounted !0         ; 0: the sim's plumbing
  br i1 %c, label %a, label %b                               ; 1
a:
  %r = call i32 @__tk_sim_shfl_xor_i32(i32 %t, i32 1)        ; 1
  store i32 %r, ptr %g, align 4                              ; 1
  br label %b                                                ; 0
b:
  %z = phi float [ %i, %entry ], [ 0.0, %a ]                 ; 0
  ret void                                                   ; 1
}
declare i32 @__tk_sim_tid()
declare ptr @__tk_sim_global_access(ptr, i32)
declare void @__tk_sim_barrier()
declare i32 @__tk_sim_shfl_xor_i32(i32, i32)
declare float @sinf(float)
declare float @llvm.exp2.f32(float)
declare float @llvm.floor.f32(float)
declare void @llvm.assume(i1)
!0 = !{}
)";

// `ir` parsed and counted: the costs and the module's text afterwards.
struct Counted {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> module;
  std::vector<BlockCost> blocks;
  std::string text;
  explicit Counted(const char *ir) {
    llvm::SMDiagnostic err;
    module = llvm::parseAssemblyString(ir, err, ctx);
    if (!module) {
      text = "parse error: " + err.getMessage().str();
      return;
    }
    countInstructions(*module, blocks);
    llvm::raw_string_ostream os(text);
    if (llvm::verifyModule(*module, &os)) os << "\n(the module above does not verify)\n";
    module->print(os, nullptr);
  }
  size_t count(const std::string &s) const {
    size_t n = 0;
    for (size_t at = text.find(s); at != std::string::npos; at = text.find(s, at + 1)) ++n;
    return n;
  }
  std::string increment(int id) const { return "getelementptr inbounds i64, ptr %tk.runs, i64 " + std::to_string(id); }
};

TEST(SimCount, PricesBlocksAndCountsTheirRuns) {
  Counted k(kCosted);
  ASSERT_TRUE(k.module) << k.text;
  EXPECT_EQ(k.text.find("does not verify"), std::string::npos) << k.text;
  // `b` runs whenever `entry` does: one counter (id 0) for both, priced as
  // one; `a` is where lanes may part (id 1).
  ASSERT_EQ(k.blocks.size(), 2u);
  EXPECT_EQ(k.blocks[0].instructions, 16u + 1);
  EXPECT_EQ(k.blocks[0].fp, 8u);
  EXPECT_EQ(k.blocks[0].special, 2u);
  EXPECT_EQ(k.blocks[1].instructions, 2u);
  EXPECT_EQ(k.blocks[1].fp, 0u);
  EXPECT_EQ(k.count("call ptr @__tk_sim_block_runs()"), 1u) << k.text;  // once per function
  EXPECT_EQ(k.count(k.increment(0)), 1u) << k.text;
  EXPECT_EQ(k.count(k.increment(1)), 1u) << k.text;
  EXPECT_EQ(k.count("getelementptr inbounds i64"), 2u) << k.text;
  EXPECT_LT(k.text.find("\na:"), k.text.find(k.increment(1))) << k.text;
}

// A loop body runs more often than the blocks around it; its latch runs as
// often as its header; the exit as often as the entry.
const char *kLoop = R"(
define void @k(i32 %n) {
entry:
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %i1, %latch ]
  %c = icmp slt i32 %i, %n
  br i1 %c, label %body, label %exit
body:
  %f = sitofp i32 %i to float
  br label %latch
latch:
  %i1 = add i32 %i, 1
  br label %head
exit:
  ret void
}
)";

TEST(SimCount, LoopsKeepTheirOwnCounters) {
  Counted k(kLoop);
  ASSERT_TRUE(k.module) << k.text;
  EXPECT_EQ(k.text.find("does not verify"), std::string::npos) << k.text;
  // {entry, exit}, {head}, {body, latch}: head runs once more than the body.
  ASSERT_EQ(k.blocks.size(), 3u) << k.text;
  EXPECT_EQ(k.blocks[0].instructions, 1u);  // ret
  EXPECT_EQ(k.blocks[1].instructions, 2u);  // icmp, br
  EXPECT_EQ(k.blocks[2].instructions, 2u);  // sitofp, add
  EXPECT_EQ(k.blocks[2].fp, 1u);
  EXPECT_LT(k.text.find("\nbody:"), k.text.find(k.increment(2))) << k.text;
  EXPECT_LT(k.text.find(k.increment(2)), k.text.find("\nlatch:")) << k.text;
}

// out[i] = (a[i] * 2 + 1) / 3, one element per thread, no branch: after O2
// the kernel is one basic block that every thread runs once.
TEST(SimCount, StraightLineKernelCountsItsBlockPerThreadAndWarp) {
  const int threads = 80;  // two full warps and one of 16 lanes
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("affine", {k.ptr(), k.ptr()}, threads);
  Value *i = k.globalId(threads);
  Value *v = k.load(k.f32(), k.gep(k.f32(), k.arg(0), i));
  v = b.CreateFDiv(
      b.CreateFAdd(b.CreateFMul(v, llvm::ConstantFP::get(k.f32(), 2.0)), llvm::ConstantFP::get(k.f32(), 1.0)),
      llvm::ConstantFP::get(k.f32(), 3.0));
  k.store(v, k.gep(k.f32(), k.arg(1), i));
  b.CreateRetVoid();
  auto prog = k.compile();
  const std::vector<BlockCost> &costs = prog->impl().blocks;
  ASSERT_EQ(costs.size(), 1u);  // the trampoline with the kernel inlined, and nothing else
  const uint32_t perThread = costs[0].instructions;
  // After O2: the two argument values (their addresses are the sim's, not
  // counted), blockId * 80 + threadId (mul, add; the ids are free), sext, gep,
  // load, fmul, fadd, fdiv, gep, store, ret.
  EXPECT_EQ(perThread, 13u);
  EXPECT_EQ(costs[0].fp, 3u);

  Simulator sim(2);
  const int blocks = 3, n = blocks * threads;
  Buffer<float> a(sim.memory(), n), out(sim.memory(), n);
  for (int j = 0; j < n; ++j) a[j] = float(j);
  void *pa = a.p, *po = out.p;
  LaunchConfig cfg;
  cfg.grid[0] = blocks;
  cfg.blockThreads = threads;
  Counters c = sim.launch(*prog, "affine", cfg, {&pa, &po});
  EXPECT_EQ(out[n - 1], (float(n - 1) * 2 + 1) / 3);
  EXPECT_EQ(c.threadInstructions, uint64_t(n) * perThread);
  EXPECT_EQ(c.warpInstructions, uint64_t(blocks) * 3 * perThread);  // the 16-lane warp costs a whole one
  EXPECT_EQ(c.fpInstructions, 3u * n);
  EXPECT_EQ(c.specialInstructions, 0u);
}

// out[i] = sin(a[i]) + exp(a[i]) for i < n: two special-function calls and
// one fadd per element in range, none for the masked-off tail.
TEST(SimCount, SpecialFunctionCallsArePerElement) {
  const int threads = 128;
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("sinexp", {k.ptr(), k.ptr(), k.i32()}, threads);
  Value *i = k.globalId(threads);
  auto *body = k.block("body"), *done = k.block("done");
  b.CreateCondBr(b.CreateICmpSLT(i, k.arg(2)), body, done);
  b.SetInsertPoint(body);
  Value *v = k.load(k.f32(), k.gep(k.f32(), k.arg(0), i));
  Value *r = b.CreateFAdd(t.math(b, lower::MathFn::Sin, v), t.math(b, lower::MathFn::Exp, v));
  k.store(r, k.gep(k.f32(), k.arg(1), i));
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(2);
  const int n = 1000;  // 8 blocks, the last one 104 threads in range
  Buffer<float> a(sim.memory(), n), out(sim.memory(), n);
  for (int j = 0; j < n; ++j) a[j] = float(j) / n;
  void *pa = a.p, *po = out.p;
  LaunchConfig cfg;
  cfg.grid[0] = 8;
  cfg.blockThreads = threads;
  Counters c = sim.launch(*prog, "sinexp", cfg, {&pa, &po, &n});
  EXPECT_FLOAT_EQ(out[n - 1], std::sin(a[n - 1]) + std::exp(a[n - 1]));
  EXPECT_EQ(c.specialInstructions, 2u * n);
  EXPECT_EQ(c.fpInstructions, uint64_t(n));
  EXPECT_GT(c.threadInstructions, 3u * n);
}

// out[gid] = acc after `iters` rounds of acc = acc * 1.5 + 1 (two fp
// instructions a round), run by the lanes whose lane index is below `k`;
// the others skip the loop. `mode` 1 makes the round acc + 0.5 instead
// (one fp instruction), and `mode` 2 gives even lanes the first loop and odd
// lanes the second: an if/else that splits every warp.
std::unique_ptr<Program> loopKernel(int threads) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("loops", {k.ptr(), k.i32(), k.i32(), k.i32()}, threads);
  Value *tid = t.threadId(b), *gid = k.globalId(threads);
  Value *lane = b.CreateAnd(tid, b.getInt32(31));
  Value *iters = b.CreateSelect(b.CreateICmpULT(lane, k.arg(1)), k.arg(2), b.getInt32(0));
  Value *mode = k.arg(3);
  Value *second = b.CreateOr(b.CreateICmpEQ(mode, b.getInt32(1)),
                             b.CreateAnd(b.CreateICmpEQ(mode, b.getInt32(2)), b.CreateTrunc(lane, b.getInt1Ty())));
  Value *start = b.CreateSIToFP(gid, k.f32());
  auto *mulAdd = k.block("mul_add"), *add = k.block("add"), *done = k.block("done");
  auto *pick = k.block("pick");
  b.CreateBr(pick);
  b.SetInsertPoint(pick);
  b.CreateCondBr(second, add, mulAdd);
  auto loop = [&](llvm::BasicBlock *body, bool twoOps) {
    b.SetInsertPoint(body);
    auto *j = b.CreatePHI(k.i32(), 2), *acc = b.CreatePHI(k.f32(), 2);
    j->addIncoming(b.getInt32(0), pick);
    acc->addIncoming(start, pick);
    auto *guard = k.block("guard");
    // The round runs only while j < iters: a loop with a test at the top.
    b.CreateCondBr(b.CreateICmpSLT(j, iters), guard, done);
    b.SetInsertPoint(guard);
    Value *next = twoOps ? b.CreateFAdd(b.CreateFMul(acc, llvm::ConstantFP::get(k.f32(), 1.5)),
                                        llvm::ConstantFP::get(k.f32(), 1.0))
                         : b.CreateFAdd(acc, llvm::ConstantFP::get(k.f32(), 0.5));
    j->addIncoming(b.CreateAdd(j, b.getInt32(1)), guard);
    acc->addIncoming(next, guard);
    b.CreateBr(body);
    return acc;
  };
  llvm::PHINode *accA = loop(mulAdd, true), *accB = loop(add, false);
  b.SetInsertPoint(done);
  auto *result = b.CreatePHI(k.f32(), 2);
  result->addIncoming(accA, mulAdd);
  result->addIncoming(accB, add);
  k.store(result, k.gep(k.f32(), k.arg(0), gid));
  b.CreateRetVoid();
  return k.compile();
}

struct LoopRun {
  std::unique_ptr<Program> prog = loopKernel(64);
  Counters operator()(int32_t lanes, int32_t iters, int32_t mode) {
    Simulator sim(2);
    Buffer<float> out(sim.memory(), 4 * 64);
    void *po = out.p;
    LaunchConfig cfg;
    cfg.grid[0] = 4;
    cfg.blockThreads = 64;
    Counters c = sim.launch(*prog, "loops", cfg, {&po, &lanes, &iters, &mode});
    // The last thread (lane 31, odd) ran a loop when 31 is below `lanes`.
    float acc = float(4 * 64 - 1);
    for (int j = 0; j < (31 < lanes ? iters : 0); ++j) acc = mode != 0 ? acc + 0.5f : acc * 1.5f + 1.0f;
    EXPECT_EQ(out[4 * 64 - 1], acc);
    return c;
  }
};

TEST(SimCount, FloatingPointCountsFollowTheTripCount) {
  LoopRun run;
  const uint64_t threads = 4 * 64;
  Counters c0 = run(32, 0, 0), c16 = run(32, 16, 0), c32 = run(32, 32, 0), c48 = run(32, 48, 0);
  EXPECT_EQ(c16.fpInstructions - c0.fpInstructions, threads * 16 * 2);
  EXPECT_EQ(c48.fpInstructions - c32.fpInstructions, threads * 16 * 2);
  Counters a16 = run(32, 16, 1);
  EXPECT_EQ(a16.fpInstructions - c0.fpInstructions, threads * 16);  // the one-op loop
  // Instructions grow by the same amount for the same extra rounds (trip
  // counts are multiples of 16, whatever the host unrolled by).
  EXPECT_GT(c32.threadInstructions, c16.threadInstructions);
  EXPECT_EQ(c32.threadInstructions - c16.threadInstructions, c48.threadInstructions - c32.threadInstructions);
  EXPECT_EQ(c48.specialInstructions, 0u);
}

TEST(SimCount, AWarpPaysForItsBusiestLanes) {
  LoopRun run;
  const uint64_t warps = 4 * 2;
  Counters none = run(0, 40, 0), half = run(16, 40, 0), all = run(32, 40, 0);
  // Per thread the counts add up lane by lane.
  EXPECT_EQ(2 * half.threadInstructions, none.threadInstructions + all.threadInstructions);
  EXPECT_EQ(2 * half.fpInstructions, none.fpInstructions + all.fpInstructions);
  // Uniform warps issue what each of their lanes runs.
  EXPECT_EQ(all.warpInstructions * 32, all.threadInstructions);
  EXPECT_EQ(none.warpInstructions * 32, none.threadInstructions);
  // Half the lanes skip the loop, yet their warp runs it for the others: it
  // costs what a busy warp costs, not the average of its lanes.
  EXPECT_EQ(half.warpInstructions, all.warpInstructions);
  EXPECT_GT(half.warpInstructions * 32, half.threadInstructions);
  EXPECT_EQ(all.warpInstructions % warps, 0u);
}

TEST(SimCount, ADivergedWarpIssuesBothSidesOfABranch) {
  LoopRun run;
  Counters first = run(32, 40, 0), second = run(32, 40, 1), split = run(32, 40, 2);
  EXPECT_EQ(2 * split.threadInstructions, first.threadInstructions + second.threadInstructions);
  // Even lanes run one loop and odd lanes the other: the warp issues both,
  // more than either side alone, less than both whole kernels (the code
  // around the branch is issued once).
  EXPECT_GT(split.warpInstructions, std::max(first.warpInstructions, second.warpInstructions));
  EXPECT_LT(split.warpInstructions, first.warpInstructions + second.warpInstructions);
}

}  // namespace
}  // namespace tk::sim::test
