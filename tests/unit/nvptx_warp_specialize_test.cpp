// NvptxTarget's warp-specialisation hooks (sm_90a): mbarrier.arrive, a named
// barrier, setmaxnreg and .maxnreg in a hand-built kernel, emitted as PTX
// and, with ptxas, assembled; ptxas honours setmaxnreg only in a kernel
// whose register count at entry it knows (.maxnreg).
#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <regex>

#include "backend/nvptx/Codegen.h"
#include "backend/nvptx/NvptxTarget.h"
#include "backend/nvptx/Ptxas.h"
#include "tk/error.h"

using namespace llvm;
using namespace tk::nvptx;

namespace {

bool contains(const std::string &s, const std::string &what) { return s.find(what) != std::string::npos; }

CodegenOptions sm90a() {
  CodegenOptions o;
  o.arch = "sm_90a";
  return o;
}

// ws(), 256 threads, .maxnreg 168 unless `maxNReg` is 0: thread 0 inits an
// mbarrier for 4 arrivals; a barrier; warps 0-3 raise their registers to
// 232, meet at bar.sync 1, 128, and lane 0 of each arrives on the mbarrier;
// warps 4-7 lower theirs to 40.
std::string wsPtx(int maxNReg) {
  NvptxTarget t(sm90a());
  LLVMContext c;
  Module m("ws", c);
  t.configureModule(m);
  IRBuilder<> b(c);
  auto *fn = Function::Create(FunctionType::get(b.getVoidTy(), false), GlobalValue::ExternalLinkage, "ws", m);
  t.markKernel(*fn, 256);
  if (maxNReg) t.markMaxNReg(*fn, maxNReg);
  auto *entry = BasicBlock::Create(c, "entry", fn), *init = BasicBlock::Create(c, "init", fn),
       *synced = BasicBlock::Create(c, "synced", fn), *consumer = BasicBlock::Create(c, "consumer", fn),
       *lane0 = BasicBlock::Create(c, "lane0", fn), *producer = BasicBlock::Create(c, "producer", fn),
       *exit = BasicBlock::Create(c, "exit", fn);
  b.SetInsertPoint(entry);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  b.CreateCondBr(b.CreateICmpEQ(tid, b.getInt32(0)), init, synced);
  b.SetInsertPoint(init);
  t.mbarrierInit(b, smem, 4);
  b.CreateBr(synced);
  b.SetInsertPoint(synced);
  t.barrier(b);
  b.CreateCondBr(b.CreateICmpULT(tid, b.getInt32(128)), consumer, producer);
  b.SetInsertPoint(consumer);
  t.setMaxNReg(b, true, 232);
  t.namedBarrier(b, 1, 128);
  b.CreateCondBr(b.CreateICmpEQ(b.CreateAnd(tid, b.getInt32(31)), b.getInt32(0)), lane0, exit);
  b.SetInsertPoint(lane0);
  t.mbarrierArrive(b, smem);
  b.CreateBr(exit);
  b.SetInsertPoint(producer);
  t.setMaxNReg(b, false, 40);
  b.CreateBr(exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return emitPtx(m, sm90a());
}

TEST(NvptxWarpSpecialize, EmitsAndAssemblesForSm90a) {
  const std::string ptx = wsPtx(168);
  for (const char *want :
       {".maxnreg 168", "setmaxnreg.inc.sync.aligned.u32 232;", "setmaxnreg.dec.sync.aligned.u32 40;",
        "mbarrier.arrive.shared::cta.b64 _, [", ".maxntid 256, 1, 1"})
    EXPECT_TRUE(contains(ptx, want)) << "no " << want << "\n" << ptx;
  EXPECT_TRUE(std::regex_search(ptx, std::regex(R"((barrier|bar)\.sync\s+1, 128;)"))) << ptx;
  Toolkit tk = Toolkit::find();
  if (!tk.hasPtxas()) GTEST_SKIP() << "ptxas not found; PTX text checked only";
  PtxasInfo info = runPtxas(ptx, "sm_90a", tk);  // throws with ptxas's log if it rejects the PTX
  EXPECT_TRUE(info.ran);
  EXPECT_FALSE(contains(info.log, "setmaxnreg' ignored")) << info.log;
  // With setmaxnreg, ptxas gives the kernel exactly its .maxnreg.
  EXPECT_EQ(info.registers, 168) << info.log;
}

// What markMaxNReg is for: without .maxnreg, ptxas 12.x/13.0 drops every
// setmaxnreg with an info line (C7508), not an error. (.maxntid alone is not
// enough; with .minnctapersm too it is, which tk does not emit.)
TEST(NvptxWarpSpecialize, PtxasIgnoresSetmaxnregWithoutMaxnreg) {
  const std::string ptx = wsPtx(0);
  EXPECT_FALSE(contains(ptx, ".maxnreg")) << ptx;
  Toolkit tk = Toolkit::find();
  if (!tk.hasPtxas()) GTEST_SKIP() << "ptxas not found; PTX text checked only";
  PtxasInfo info = runPtxas(ptx, "sm_90a", tk);
  EXPECT_TRUE(contains(info.log, "'setmaxnreg' ignored")) << info.log;
}

TEST(NvptxWarpSpecialize, BadArgumentsThrow) {
  NvptxTarget t(sm90a());
  LLVMContext c;
  Module m("m", c);
  t.configureModule(m);
  auto *fn = Function::Create(FunctionType::get(Type::getVoidTy(c), false), GlobalValue::ExternalLinkage, "k", m);
  IRBuilder<> b(BasicBlock::Create(c, "entry", fn));
  EXPECT_THROW(t.namedBarrier(b, 0, 128), tk::InternalError);
  EXPECT_THROW(t.namedBarrier(b, 16, 128), tk::InternalError);
  EXPECT_THROW(t.namedBarrier(b, 1, 100), tk::InternalError);
  EXPECT_THROW(t.namedBarrier(b, 1, 0), tk::InternalError);
  EXPECT_THROW(t.namedBarrier(b, 1, 1056), tk::InternalError);
  EXPECT_THROW(t.setMaxNReg(b, true, 20), tk::InternalError);
  EXPECT_THROW(t.setMaxNReg(b, false, 236), tk::InternalError);
  EXPECT_THROW(t.setMaxNReg(b, true, 264), tk::InternalError);
  EXPECT_THROW(t.markMaxNReg(*fn, 256), tk::InternalError);
  EXPECT_THROW(t.markMaxNReg(*fn, 16), tk::InternalError);
  EXPECT_EQ(&fn->getEntryBlock(), b.GetInsertBlock());
  EXPECT_TRUE(fn->getEntryBlock().empty()) << "a rejected call emits nothing";
}

}  // namespace
