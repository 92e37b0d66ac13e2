// NvptxTarget's tensor-core hooks: a hand-built kernel calling every ldmatrix
// form and both mma.sync forms, and one calling the wgmma family (sm_90a),
// emitted as PTX and, with ptxas, assembled.
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

struct Kernel {
  std::unique_ptr<LLVMContext> ctx = std::make_unique<LLVMContext>();
  std::unique_ptr<Module> m;  // destroyed before ctx
};

// One warp: lane l's row address is shared + 16 l. A comes from an x4
// ldmatrix, B from an x2.trans one; D = A B + C in f16, then again in bf16
// with the first D as C, stored to out[4 l .. 4 l + 3]. The x1, x2 and
// x4.trans results are xor-ed into bits[l] so that every form is emitted.
Kernel mmaKernel(const NvptxTarget &t) {
  Kernel k;
  k.m = std::make_unique<Module>("mma", *k.ctx);
  LLVMContext &c = *k.ctx;
  t.configureModule(*k.m);
  IRBuilder<> b(c);
  auto *gp = PointerType::get(c, t.globalAddressSpace());
  auto *fn =
      Function::Create(FunctionType::get(b.getVoidTy(), {gp, gp}, false), GlobalValue::ExternalLinkage, "mma", *k.m);
  t.markKernel(*fn, 32);
  b.SetInsertPoint(BasicBlock::Create(c, "entry", fn));
  Value *lane = t.threadId(b);
  Value *row = b.CreateGEP(b.getInt8Ty(), t.sharedBase(b), b.CreateMul(lane, b.getInt32(16)));
  std::vector<Value *> a = t.ldmatrix(b, row, 4, false);
  std::vector<Value *> bt = t.ldmatrix(b, row, 2, true);
  Value *bits = b.getInt32(0);
  for (auto [num, trans] : {std::pair{1, false}, {1, true}, {2, false}, {4, true}}) {
    std::vector<Value *> r = t.ldmatrix(b, row, num, trans);
    EXPECT_EQ(r.size(), size_t(num));
    for (Value *v : r) bits = b.CreateXor(bits, v);
  }
  Value *cv = b.CreateSIToFP(lane, b.getFloatTy());
  std::vector<Value *> d = t.mmaM16N8K16(b, false, a, bt, {cv, cv, cv, cv});
  d = t.mmaM16N8K16(b, true, a, bt, d);
  EXPECT_EQ(d.size(), 4u);
  Value *base = b.CreateMul(lane, b.getInt32(4));
  for (int i = 0; i < 4; ++i)
    b.CreateStore(d[i], b.CreateGEP(b.getFloatTy(), fn->getArg(0), b.CreateAdd(base, b.getInt32(i))));
  b.CreateStore(bits, b.CreateGEP(b.getInt32Ty(), fn->getArg(1), lane));
  b.CreateRetVoid();
  return k;
}

bool contains(const std::string &s, const std::string &what) { return s.find(what) != std::string::npos; }

class MmaPerArch : public ::testing::TestWithParam<std::string> {};

TEST_P(MmaPerArch, LdmatrixAndMmaEmitAndAssemble) {
  CodegenOptions o;
  o.arch = GetParam();
  NvptxTarget t(o);
  Kernel k = mmaKernel(t);
  std::string ptx = emitPtx(*k.m, o);
  for (const char *want :
       {"ldmatrix.sync.aligned.m8n8.x1.shared.b16", "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"})
    EXPECT_TRUE(contains(ptx, want)) << "no " << want << "\n" << ptx;
  // Registers: x4 fills four 32-bit registers, mma takes 4 + 2 + 4 and gives 4.
  EXPECT_TRUE(std::regex_search(
      ptx,
      std::regex(R"(ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16 \{%r\d+, %r\d+, %r\d+, %r\d+\}, \[%r(d)?\d+\];)")))
      << ptx;
  EXPECT_TRUE(std::regex_search(
      ptx, std::regex(R"(mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32\s+\{(%f\d+, ){3}%f\d+\},\s+)"
                      R"(\{(%r\d+, ){3}%r\d+\},\s+\{%r\d+, %r\d+\},\s+\{(%f\d+, ){3}%f\d+\};)")))
      << ptx;
  Toolkit tk = Toolkit::find();
  if (!tk.hasPtxas()) GTEST_SKIP() << "ptxas not found; PTX text checked only";
  PtxasInfo info = runPtxas(ptx, GetParam(), tk);  // throws with ptxas's log if it rejects the PTX
  EXPECT_TRUE(info.ran);
  EXPECT_EQ(info.spillStoreBytes, 0) << info.log;
}

INSTANTIATE_TEST_SUITE_P(Arches, MmaPerArch, ::testing::Values("sm_80", "sm_90"));

// 128 threads: shared memory written, fence.proxy.async, barrier;
// accumulators from the thread id; wgmma.fence; chained m64n{n}k16 (f16,
// then bf16 with N-major B), m64n{n}k32 (e4m3 x e5m2, K-major), and f16
// with A from registers; commit; wait 0; D stored.
Kernel wgmmaKernel(const NvptxTarget &t, int n) {
  Kernel k;
  k.m = std::make_unique<Module>("wg", *k.ctx);
  LLVMContext &c = *k.ctx;
  t.configureModule(*k.m);
  IRBuilder<> b(c);
  auto *gp = PointerType::get(c, t.globalAddressSpace());
  auto *fn = Function::Create(FunctionType::get(b.getVoidTy(), {gp}, false), GlobalValue::ExternalLinkage, "wg", *k.m);
  t.markKernel(*fn, 128);
  b.SetInsertPoint(BasicBlock::Create(c, "entry", fn));
  Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  b.CreateStore(tid, b.CreateGEP(b.getInt32Ty(), smem, tid));
  t.fenceProxyAsync(b);
  t.barrier(b);
  Value *start = b.CreateZExt(b.CreateLShr(t.sharedWindowAddress(b, smem), b.getInt32(4)), b.getInt64Ty());
  Value *descA = b.CreateOr(start, b.getInt64(uint64_t(64 >> 4) << 32 | uint64_t(2) << 62));
  Value *descB = b.CreateOr(start, b.getInt64(uint64_t(1024 >> 4) << 32 | uint64_t(4096 >> 4) << 16 | uint64_t(1) << 62));
  std::vector<Value *> acc(size_t(n / 2), b.CreateSIToFP(tid, b.getFloatTy()));
  t.wgmmaFence(b);
  using tk::ir::ScalarKind;
  acc = t.wgmmaMmaAsync(b, n, ScalarKind::F16, ScalarKind::F16, false, false, descA, descB, acc);
  acc = t.wgmmaMmaAsync(b, n, ScalarKind::BF16, ScalarKind::BF16, false, true, descA, descB, acc);
  acc = t.wgmmaMmaAsync(b, n, ScalarKind::F8E4M3, ScalarKind::F8E5M2, false, false, descA, descB, acc);
  std::vector<Value *> aRegs;
  for (int q = 0; q < 4; ++q) aRegs.push_back(b.CreateAdd(tid, b.getInt32(q)));
  aRegs[3] = t.packHalves(b, acc[0], acc[1], false);
  acc = t.wgmmaMmaAsyncRegA(b, n, false, true, aRegs, descB, acc);
  t.wgmmaCommitGroup(b);
  acc = t.wgmmaWaitGroup(b, 0, acc);
  EXPECT_EQ(acc.size(), size_t(n / 2));
  for (size_t i = 0; i < acc.size(); ++i)
    b.CreateStore(acc[i], b.CreateGEP(b.getFloatTy(), fn->getArg(0),
                                      b.CreateAdd(b.CreateMul(tid, b.getInt32(n / 2)), b.getInt32(int(i)))));
  b.CreateRetVoid();
  return k;
}

TEST(NvptxWgmma, EmitsAndAssemblesForSm90a) {
  CodegenOptions o;
  o.arch = "sm_90a";
  NvptxTarget t(o);
  EXPECT_TRUE(t.hasWgmma());
  EXPECT_FALSE(NvptxTarget(CodegenOptions{}).hasWgmma());  // sm_80
  for (int n : {8, 128, 256}) {
    Kernel k = wgmmaKernel(t, n);
    std::string ptx = emitPtx(*k.m, o);
    for (const std::string &want :
         {std::string("fence.proxy.async.shared::cta;"), std::string("wgmma.fence.sync.aligned;"),
          std::string("cvt.rn.f16x2.f32"),
          "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32.f16.f16",
          "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32.bf16.bf16",
          "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k32.f32.e4m3.e5m2",
          std::string("wgmma.commit_group.sync.aligned;"), std::string("wgmma.wait_group.sync.aligned 0;"),
          std::string(".extern .shared .align 1024")})
      EXPECT_TRUE(contains(ptx, want)) << "no " << want << "\n" << ptx;
    // n / 2 f32 accumulators, two descriptors, scale-d, then the immediates.
    EXPECT_TRUE(std::regex_search(
        ptx, std::regex(R"(m64n)" + std::to_string(n) + R"(k16\.f32\.bf16\.bf16 \{(%f\d+, ){)" + std::to_string(n / 2 - 1) +
                        R"(}%f\d+\}, %rd\d+, %rd\d+, p, 1, 1, 0, 1;)")))
        << ptx;
    // The 8-bit floats take no transpose immediates.
    EXPECT_TRUE(std::regex_search(
        ptx, std::regex(R"(m64n)" + std::to_string(n) + R"(k32\.f32\.e4m3\.e5m2 \{(%f\d+, ){)" + std::to_string(n / 2 - 1) +
                        R"(}%f\d+\}, %rd\d+, %rd\d+, p, 1, 1;)")))
        << ptx;
    // A from registers: four .b32, then descB, scale-d and imm-trans-b only.
    EXPECT_TRUE(std::regex_search(
        ptx, std::regex(R"(m64n)" + std::to_string(n) + R"(k16\.f32\.f16\.f16 \{(%f\d+, ){)" + std::to_string(n / 2 - 1) +
                        R"(}%f\d+\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, p, 1, 1, 1;)")))
        << ptx;
    Toolkit tk = Toolkit::find();
    if (!tk.hasPtxas()) GTEST_SKIP() << "ptxas not found; PTX text checked only";
    PtxasInfo info = runPtxas(ptx, "sm_90a", tk);  // throws with ptxas's log if it rejects the PTX
    EXPECT_TRUE(info.ran);
    EXPECT_EQ(info.spillStoreBytes, 0) << info.log;
    EXPECT_EQ(info.log.find("serializ"), std::string::npos) << "ptxas serialized the wgmma: " << info.log;
  }
}

TEST(NvptxMma, BadArgumentsThrow) {
  NvptxTarget t;
  LLVMContext c;
  Module m("m", c);
  t.configureModule(m);
  auto *fn = Function::Create(FunctionType::get(Type::getVoidTy(c), false), GlobalValue::ExternalLinkage, "k", m);
  IRBuilder<> b(BasicBlock::Create(c, "entry", fn));
  Value *shared = t.sharedBase(b);
  EXPECT_THROW(t.ldmatrix(b, shared, 3, false), tk::InternalError);
  EXPECT_THROW(t.ldmatrix(b, ConstantPointerNull::get(b.getPtrTy(0)), 4, false), tk::InternalError);
  EXPECT_THROW(t.ldmatrix(b, b.getInt32(0), 1, false), tk::InternalError);
  std::vector<Value *> i4(4, b.getInt32(0)), i2(2, b.getInt32(0)), f4(4, ConstantFP::get(b.getFloatTy(), 0.0));
  EXPECT_THROW(t.mmaM16N8K16(b, false, i2, i2, f4), tk::InternalError);
  EXPECT_THROW(t.mmaM16N8K16(b, true, i4, i4, f4), tk::InternalError);
  EXPECT_THROW(t.mmaM16N8K16(b, false, i4, i2, i4), tk::InternalError);
  EXPECT_EQ(t.mmaM16N8K16(b, true, i4, i2, f4).size(), 4u);
  EXPECT_EQ(t.ldmatrix(b, shared, 1, true).size(), 1u);
  Value *d64 = b.getInt64(0);
  std::vector<Value *> f64(64, ConstantFP::get(b.getFloatTy(), 0.0));
  using tk::ir::ScalarKind;
  const ScalarKind h = ScalarKind::F16, e4 = ScalarKind::F8E4M3;
  EXPECT_THROW(t.wgmmaMmaAsync(b, 12, h, h, false, false, d64, d64, f64), tk::InternalError);
  EXPECT_THROW(t.wgmmaMmaAsync(b, 128, h, h, false, false, d64, d64, f4), tk::InternalError);
  EXPECT_THROW(t.wgmmaMmaAsync(b, 128, h, h, false, false, b.getInt32(0), d64, f64), tk::InternalError);
  // No mixed 16-bit types, no f16 by fp8, no transposed fp8, no f32.
  EXPECT_THROW(t.wgmmaMmaAsync(b, 128, h, ScalarKind::BF16, false, false, d64, d64, f64), tk::InternalError);
  EXPECT_THROW(t.wgmmaMmaAsync(b, 128, h, e4, false, false, d64, d64, f64), tk::InternalError);
  EXPECT_THROW(t.wgmmaMmaAsync(b, 128, e4, e4, false, true, d64, d64, f64), tk::InternalError);
  EXPECT_THROW(t.wgmmaMmaAsync(b, 128, ScalarKind::F32, ScalarKind::F32, false, false, d64, d64, f64),
               tk::InternalError);
  EXPECT_THROW(t.wgmmaMmaAsyncRegA(b, 128, false, false, i2, d64, f64), tk::InternalError);
  EXPECT_THROW(t.wgmmaMmaAsyncRegA(b, 128, false, false, i4, b.getInt32(0), f64), tk::InternalError);
  EXPECT_THROW(t.wgmmaMmaAsyncRegA(b, 128, false, false, i4, d64, f4), tk::InternalError);
  EXPECT_THROW(t.packHalves(b, b.getInt32(0), f4[0], false), tk::InternalError);
  EXPECT_THROW(t.wgmmaWaitGroup(b, 8, f4), tk::InternalError);
  EXPECT_THROW(t.sharedWindowAddress(b, ConstantPointerNull::get(b.getPtrTy(0))), tk::InternalError);
}

}  // namespace
