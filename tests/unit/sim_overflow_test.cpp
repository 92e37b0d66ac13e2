// sim:overflow (docs/sim.md, "Index overflow"): which integer operations
// instrumentIndexOverflow checks (those whose result reaches a global
// address; not a hash's, not the rest of the kernel's), and what the runtime
// reports when one of them wraps.
#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include "backend/sim/InstrumentOverflow.h"
#include "tests/unit/sim_KernelBuilder.h"

namespace tk::sim::test {
namespace {

const char *opName(IndexOp op) {
  switch (op) {
    case IndexOp::Add: return "add";
    case IndexOp::Sub: return "sub";
    case IndexOp::Mul: return "mul";
    case IndexOp::Shl: return "shl";
    case IndexOp::Trunc: return "trunc";
  }
  return "?";
}

// "op loc -> reaches" of each site instrumentIndexOverflow adds to `ir`.
std::vector<std::string> checkedOps(const char *ir) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic err;
  auto m = llvm::parseAssemblyString(ir, err, ctx);
  EXPECT_TRUE(m) << err.getMessage().str();
  if (!m) return {};
  SiteTable sites;
  const unsigned added = instrumentIndexOverflow(*m, sites);
  std::string broken;
  llvm::raw_string_ostream os(broken);
  EXPECT_FALSE(llvm::verifyModule(*m, &os)) << broken;
  std::vector<std::string> ops;
  for (const Site &s : sites.sites) {
    EXPECT_EQ(s.kind, SiteKind::IndexOverflow);
    ops.push_back(std::string(opName(s.indexOp)) + " " + s.loc + " -> " + s.reaches);
  }
  EXPECT_EQ(added, ops.size());
  return ops;
}

TEST(SimOverflow, ChecksTheIndexMathThatReachesAnAddressOnly) {
  const char *ir = R"(
define void @k(ptr %x, ptr %out, i32 %pid, i32 %stride, i32 %seed, i64 %wide, i32 %n) {
entry:
  %row = mul i32 %pid, %stride, !tk.loc !1
  %offs = add i32 %row, 7, !tk.loc !2
  %w = sext i32 %offs to i64
  %p = getelementptr float, ptr %x, i64 %w
  %v = load float, ptr %p, !tk.loc !3
  %h = mul i32 %seed, -1640531535, !tk.loc !1
  %hs = shl i32 %h, 3
  %hm = and i32 %hs, 31
  %q = getelementptr float, ptr %out, i32 %hm
  store float %v, ptr %q, !tk.loc !4
  %count = add i32 %n, %stride
  %t = trunc i64 %wide to i32
  %tw = shl i32 %t, 2
  %r = getelementptr i8, ptr %out, i32 %tw
  store float %v, ptr %r, !tk.loc !5
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %next = add i32 %i, %stride
  %pi = getelementptr float, ptr %x, i32 %i
  %li = load float, ptr %pi, !tk.loc !6
  %s = load float, ptr %pi, !tk.shared !0
  %c = icmp slt i32 %next, %count
  br i1 %c, label %loop, label %done
done:
  ret void
}
!0 = !{}
!1 = !{!"o.tk:3:20"}
!2 = !{!"o.tk:3:29"}
!3 = !{!"o.tk:4:23"}
!4 = !{!"o.tk:5:5"}
!5 = !{!"o.tk:6:5"}
!6 = !{!"o.tk:8:9"}
)";
  // The row and offset math of the first load; the truncated i64 index and
  // its shift; the loop's induction step, through its phi. Not the hash
  // (masked before it reaches the store), nor %count, which reaches only a
  // compare: each wraps without touching an address.
  EXPECT_EQ(checkedOps(ir), (std::vector<std::string>{"mul o.tk:3:20 -> load at o.tk:4:23",
                                                      "add o.tk:3:29 -> load at o.tk:4:23",
                                                      "trunc  -> store at o.tk:6:5", "shl  -> store at o.tk:6:5",
                                                      "add  -> load at o.tk:8:9"}));
}

// rows(x, stride, n): thread t of block b loads x[b * stride + t] when that
// index is below n, as a masked `load(x + offs, mask: offs < n)` does; in
// i64 when `wide`. With stride 2^30, block 2's index wraps to -2^31, which
// passes the mask: the silent overflow of triton-lang/triton#6748.
std::unique_ptr<Program> rowsKernel(bool wide, bool overflowCheck) {
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("rows", {k.ptr(), k.i32(), k.i32()}, 32);
  k.arg(0)->setName("x");
  llvm::Value *pid = k.target().blockId(b, 0), *stride = k.arg(1), *n = k.arg(2);
  if (wide) pid = b.CreateSExt(pid, b.getInt64Ty()), stride = b.CreateSExt(stride, b.getInt64Ty());
  auto *row = llvm::cast<llvm::Instruction>(b.CreateMul(pid, stride));
  tk::lower::setSourceLoc(*row, "rows.tk:3:20");
  llvm::Value *tid = k.target().threadId(b);
  llvm::Value *offs = b.CreateAdd(row, wide ? b.CreateSExt(tid, b.getInt64Ty()) : tid);
  llvm::Value *inRange = b.CreateICmpSLT(offs, wide ? b.CreateSExt(n, b.getInt64Ty()) : n);
  llvm::BasicBlock *then = k.block("then"), *done = k.block("done");
  b.CreateCondBr(inRange, then, done);
  b.SetInsertPoint(then);
  llvm::Value *address = b.CreateGEP(k.f32(), k.arg(0), wide ? offs : b.CreateSExt(offs, b.getInt64Ty()));
  k.store(k.load(k.f32(), address, "rows.tk:4:13"), address, "rows.tk:5:5");
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  ProgramOptions options;
  options.overflowCheck = overflowCheck;
  return k.compile(options);
}

std::string runRows(Program &p, Simulator &sim, Buffer<float> &x) {
  void *px = x.p;
  const int32_t stride = 1 << 30, n = 32;
  LaunchConfig cfg;
  cfg.grid[0] = 3;
  cfg.blockThreads = 32;
  return launchError(sim, p, "rows", cfg, {&px, &stride, &n});
}

TEST(SimOverflow, AnI32IndexThatWrapsIsReportedBeforeTheAccess) {
  Simulator sim(1);
  Buffer<float> x(sim.memory(), 32);
  EXPECT_EQ(runRows(*rowsKernel(false, true), sim, x),
            "kernel rows: i32 overflow in an index (rows.tk:3:20), block (2,0,0), thread 0: 2 * 1073741824 = "
            "2147483648, which wraps to -2147483648 in i32; the value reaches the address of the load at rows.tk:4:13 "
            "(compute the index in i64)");
  // Without the check the wrapped index reaches memory 8 GiB before x.
  const std::string off = runRows(*rowsKernel(false, false), sim, x);
  EXPECT_NE(off.find("(rows.tk:4:13), block (2,0,0), thread 0: byte offset -8589934592 from x"), std::string::npos)
      << off;
  // The same index math in i64 is masked off in block 2, as meant.
  EXPECT_EQ(runRows(*rowsKernel(true, true), sim, x), "(no error)");
}

// Off, the program is what it was before the check existed: no hook calls,
// no sites; on, one check for the one multiply on the way to the address.
TEST(SimOverflow, OffLeavesNoTraceInTheCode) {
  auto scaled = [](bool overflowCheck) {
    KernelBuilder k;
    auto &b = k.b();
    k.kernel("scaled", {k.ptr(), k.i32()}, 32);
    llvm::Value *i = b.CreateMul(k.target().threadId(b), k.arg(1));
    k.store(llvm::ConstantFP::get(k.f32(), 1.0), k.gep(k.f32(), k.arg(0), i));
    b.CreateRetVoid();
    ProgramOptions options;
    options.overflowCheck = overflowCheck;
    return k.optimizedIR(options);
  };
  EXPECT_EQ(scaled(false).find(kFnIndexI32), std::string::npos);
  EXPECT_NE(scaled(true).find(std::string("call void @") + kFnIndexI32), std::string::npos);
}

}  // namespace
}  // namespace tk::sim::test
