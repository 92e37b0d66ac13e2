// NvptxTarget's TMA-store hooks (sm_90a): cp.async.bulk.tensor from shared
// to global in its bulk group, commit_group and wait_group.read, emitted as
// PTX in a hand-built kernel and, with ptxas, assembled; bad operands throw
// before anything is emitted.
#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <regex>

#include "backend/nvptx/Codegen.h"
#include "backend/nvptx/NvptxTarget.h"
#include "backend/nvptx/Ptxas.h"
#include "tk/error.h"

using namespace llvm;
using namespace tk::nvptx;

namespace {

CodegenOptions sm90a() {
  CodegenOptions o;
  o.arch = "sm_90a";
  return o;
}

// store(map, x, y), 128 threads: every thread writes a word of the box to
// shared memory and fences it for the async proxy; a barrier; thread 0
// stores the box at (x, y) (2-d) and again at (x, y, 1, 2, 3) (5-d),
// commits the group and waits until the group has read shared memory.
std::string storePtx() {
  NvptxTarget t(sm90a());
  LLVMContext c;
  Module m("store", c);
  t.configureModule(m);
  IRBuilder<> b(c);
  auto *fn = Function::Create(FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getInt32Ty(), b.getInt32Ty()}, false),
                              GlobalValue::ExternalLinkage, "store", m);
  t.markKernel(*fn, 128);
  t.markTensorMapParam(*fn, 0);
  auto *entry = BasicBlock::Create(c, "entry", fn), *issue = BasicBlock::Create(c, "issue", fn),
       *exit = BasicBlock::Create(c, "exit", fn);
  b.SetInsertPoint(entry);
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  b.CreateStore(tid, b.CreateGEP(b.getInt32Ty(), smem, tid));
  t.fenceProxyAsync(b);
  t.barrier(b);
  b.CreateCondBr(b.CreateICmpEQ(tid, b.getInt32(0)), issue, exit);
  b.SetInsertPoint(issue);
  Value *x = fn->getArg(1), *y = fn->getArg(2);
  t.tmaStore(b, smem, fn->getArg(0), {x, y});
  t.tmaStore(b, smem, fn->getArg(0), {x, y, b.getInt32(1), b.getInt32(2), b.getInt32(3)});
  t.bulkCommitGroup(b);
  t.bulkWaitGroupRead(b, 0);
  b.CreateBr(exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return emitPtx(m, sm90a());
}

TEST(NvptxTmaStore, EmitsAndAssemblesForSm90a) {
  const std::string ptx = storePtx();
  // [map, {coordinates}], [shared source]: a 64-bit map address, 32-bit
  // coordinates and shared address.
  const std::string reg = R"(%r\d+)";
  const std::regex store2d(R"(cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.tile\.bulk_group \[%rd\d+, \{)" + reg +
                           ", " + reg + R"(\}\], \[)" + reg + R"(\];)");
  const std::regex store5d(R"(cp\.async\.bulk\.tensor\.5d\.global\.shared::cta\.tile\.bulk_group \[%rd\d+, \{)" + reg +
                           ", " + reg + ", " + reg + ", " + reg + ", " + reg + R"(\}\], \[)" + reg + R"(\];)");
  EXPECT_TRUE(std::regex_search(ptx, store2d)) << ptx;
  EXPECT_TRUE(std::regex_search(ptx, store5d)) << ptx;
  EXPECT_NE(ptx.find("cp.async.bulk.commit_group;"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("cp.async.bulk.wait_group.read 0;"), std::string::npos) << ptx;
  // The fence stays above the barrier and the stores: the hooks touch memory.
  const size_t fence = ptx.find("fence.proxy.async.shared::cta;"), store = ptx.find("cp.async.bulk.tensor.2d");
  ASSERT_NE(fence, std::string::npos) << ptx;
  EXPECT_LT(fence, store) << ptx;
  tk::nvptx::Toolkit tk = Toolkit::find();
  if (!tk.hasPtxas()) GTEST_SKIP() << "ptxas not found; PTX text checked only";
  PtxasInfo info = runPtxas(ptx, "sm_90a", tk);  // throws with ptxas's log if it rejects the PTX
  EXPECT_TRUE(info.ran);
}

TEST(NvptxTmaStore, BadOperandsThrowAndEmitNothing) {
  NvptxTarget t(sm90a());
  LLVMContext c;
  Module m("m", c);
  t.configureModule(m);
  auto *fn = Function::Create(FunctionType::get(Type::getVoidTy(c), {PointerType::get(c, 0)}, false),
                              GlobalValue::ExternalLinkage, "k", m);
  IRBuilder<> b(BasicBlock::Create(c, "entry", fn));
  Value *smem = ConstantPointerNull::get(PointerType::get(c, 3)), *map = fn->getArg(0);
  EXPECT_THROW(t.tmaStore(b, smem, map, {}), tk::InternalError);
  std::vector<Value *> six(6, b.getInt32(0));
  EXPECT_THROW(t.tmaStore(b, smem, map, six), tk::InternalError);
  EXPECT_THROW(t.tmaStore(b, smem, map, {b.getInt64(0)}), tk::InternalError);
  EXPECT_THROW(t.bulkWaitGroupRead(b, -1), tk::InternalError);
  EXPECT_THROW(t.bulkWaitGroupRead(b, 64), tk::InternalError);
  EXPECT_TRUE(fn->getEntryBlock().empty()) << "a rejected call emits nothing";
  try {
    t.bulkWaitGroupRead(b, 64);
  } catch (const tk::InternalError &e) {
    EXPECT_NE(std::string(e.what()).find("NvptxTarget::bulkWaitGroupRead"), std::string::npos) << e.what();
  }
}

}  // namespace
