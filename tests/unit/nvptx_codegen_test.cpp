// NVPTX codegen: hand-built kernels through NvptxTarget's hooks, emitted as
// PTX for sm_80/sm_90 and, when the toolkit has ptxas, assembled by it.
#include <gtest/gtest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <cmath>
#include <random>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "backend/cuda/Context.h"
#include "backend/nvptx/Codegen.h"
#include "backend/nvptx/NvptxTarget.h"
#include "backend/nvptx/Ptxas.h"
#include "tk/error.h"

using namespace llvm;
using namespace tk::nvptx;
using tk::lower::MathFn;

namespace {

// Every math function of ir/Ops.def.
const MathFn kAllMath[] = {
#define TK_MATH_OP(E, NAME, ARITY, DOC) MathFn::E,
#include "ir/Ops.def"
};

struct Kernel {
  std::unique_ptr<LLVMContext> ctx = std::make_unique<LLVMContext>();
  std::unique_ptr<Module> m;  // destroyed before ctx
};

CodegenOptions options(const std::string &arch, bool libdevice = true) {
  CodegenOptions o;
  o.arch = arch;
  o.useLibdevice = libdevice;
  return o;
}

// out[i..i+4] = f(x[i..i+4]) (or x+x), one <4 x T> per thread, 16-byte
// aligned vectors through addrspace(1) pointers.
Kernel elementwise(const NvptxTarget &t, bool f64, std::optional<MathFn> f, int threads = 128) {
  Kernel k;
  k.m = std::make_unique<Module>("ew", *k.ctx);
  LLVMContext &c = *k.ctx;
  t.configureModule(*k.m);
  IRBuilder<> b(c);
  Type *elt = f64 ? b.getDoubleTy() : b.getFloatTy();
  auto *vec = FixedVectorType::get(elt, 4);
  auto *gp = PointerType::get(c, t.globalAddressSpace());
  auto *fn = Function::Create(FunctionType::get(b.getVoidTy(), {gp, gp, b.getInt32Ty()}, false),
                              GlobalValue::ExternalLinkage, "ew", *k.m);
  fn->addParamAttr(0, Attribute::NoAlias);
  fn->addParamAttr(1, Attribute::NoAlias);
  t.markKernel(*fn, threads);
  auto *entry = BasicBlock::Create(c, "entry", fn), *body = BasicBlock::Create(c, "body", fn),
       *exit = BasicBlock::Create(c, "exit", fn);
  b.SetInsertPoint(entry);
  Value *idx = b.CreateMul(b.CreateAdd(b.CreateMul(t.blockId(b, 0), b.getInt32(threads)), t.threadId(b)),
                           b.getInt32(4));
  b.CreateCondBr(b.CreateICmpSLE(b.CreateAdd(idx, b.getInt32(4)), fn->getArg(2)), body, exit);
  b.SetInsertPoint(body);
  Value *off = b.CreateSExt(idx, b.getInt64Ty());
  Value *v = b.CreateAlignedLoad(vec, b.CreateGEP(elt, fn->getArg(0), off), Align(16));
  // A binary function gets the loaded value as both operands: pow(v, v), atan2(v, v).
  Value *r = !f ? b.CreateFAdd(v, v) : tk::lower::mathFnArity(*f) == 2 ? t.math(b, *f, v, v) : t.math(b, *f, v);
  b.CreateAlignedStore(r, b.CreateGEP(elt, fn->getArg(1), off), Align(16));
  b.CreateBr(exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return k;
}

// out[block] = sum of x over the block's 128 threads: butterfly shuffles in
// each warp, then the four warp sums through dynamic shared memory. A 64-bit
// shuffle of the thread id rides along to cover the split path.
Kernel blockSum(const NvptxTarget &t) {
  Kernel k;
  k.m = std::make_unique<Module>("sum", *k.ctx);
  LLVMContext &c = *k.ctx;
  t.configureModule(*k.m);
  IRBuilder<> b(c);
  auto *gp = PointerType::get(c, t.globalAddressSpace());
  auto *fn = Function::Create(FunctionType::get(b.getVoidTy(), {gp, gp, gp}, false), GlobalValue::ExternalLinkage,
                              "block_sum", *k.m);
  t.markKernel(*fn, 128);
  auto *entry = BasicBlock::Create(c, "entry", fn), *lane0 = BasicBlock::Create(c, "lane0", fn),
       *sync = BasicBlock::Create(c, "sync", fn), *first = BasicBlock::Create(c, "first", fn),
       *exit = BasicBlock::Create(c, "exit", fn);
  b.SetInsertPoint(entry);
  Value *tid = t.threadId(b), *bid = t.blockId(b, 0);
  Value *gid = b.CreateSExt(b.CreateAdd(b.CreateMul(bid, b.getInt32(128)), tid), b.getInt64Ty());
  Value *v = b.CreateAlignedLoad(b.getFloatTy(), b.CreateGEP(b.getFloatTy(), fn->getArg(0), gid), Align(4));
  for (int mask = 16; mask >= 1; mask /= 2) v = b.CreateFAdd(v, t.shuffleXor(b, v, mask));
  Value *wide = t.shuffleXor(b, b.CreateSIToFP(gid, b.getDoubleTy()), 1);
  b.CreateAlignedStore(wide, b.CreateGEP(b.getDoubleTy(), fn->getArg(2), gid), Align(8));
  Value *smem = t.sharedBase(b);
  EXPECT_EQ(smem, t.sharedBase(b)) << "one dynamic shared base per module";
  Value *warp = b.CreateLShr(tid, 5);
  b.CreateCondBr(b.CreateICmpEQ(b.CreateAnd(tid, 31), b.getInt32(0)), lane0, sync);
  b.SetInsertPoint(lane0);
  b.CreateAlignedStore(v, b.CreateGEP(b.getFloatTy(), smem, warp), Align(4));
  b.CreateBr(sync);
  b.SetInsertPoint(sync);
  t.barrier(b);
  b.CreateCondBr(b.CreateICmpEQ(tid, b.getInt32(0)), first, exit);
  b.SetInsertPoint(first);
  Value *s = ConstantFP::get(b.getFloatTy(), 0.0);
  for (int w = 0; w < 4; ++w)
    s = b.CreateFAdd(s, b.CreateAlignedLoad(b.getFloatTy(), b.CreateGEP(b.getFloatTy(), smem, b.getInt32(w)),
                                            Align(4)));
  b.CreateAlignedStore(s, b.CreateGEP(b.getFloatTy(), fn->getArg(1), bid), Align(4));
  b.CreateBr(exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return k;
}

const char *nameOf(MathFn f) { return tk::lower::mathFnName(f); }

bool contains(const std::string &s, const std::string &what) { return s.find(what) != std::string::npos; }

// Assembles `ptx` and checks it has no spills; false when ptxas is absent.
bool assembles(const std::string &ptx, const std::string &arch, PtxasInfo *out = nullptr) {
  Toolkit tk = Toolkit::find();
  if (!tk.hasPtxas()) return false;
  PtxasInfo info = runPtxas(ptx, arch, tk);
  EXPECT_TRUE(info.ran);
  EXPECT_GT(info.registers, 0) << info.log;
  EXPECT_EQ(info.spillStoreBytes, 0) << info.log;
  EXPECT_EQ(info.spillLoadBytes, 0) << info.log;
  EXPECT_GE(info.cubin.size(), 4u);
  if (info.cubin.size() >= 4) {
    EXPECT_EQ(std::string(info.cubin.data(), 4), "\x7f" "ELF");
  }
  if (out) *out = info;
  return true;
}

class PerArch : public ::testing::TestWithParam<std::string> {};

TEST_P(PerArch, ElementwiseVectorKernel) {
  CodegenOptions o = options(GetParam());
  NvptxTarget t(o);
  Kernel k = elementwise(t, false, std::nullopt);
  std::string ptx = emitPtx(*k.m, o);
  EXPECT_TRUE(contains(ptx, ".target " + GetParam())) << ptx;
  EXPECT_TRUE(contains(ptx, ".version 8.0")) << ptx;
  EXPECT_TRUE(contains(ptx, ".entry ew(")) << ptx;
  EXPECT_TRUE(contains(ptx, ".maxntid 128, 1, 1")) << ptx;
  EXPECT_TRUE(std::regex_search(ptx, std::regex(R"(ld\.global(\.nc)?\.v4\.f32)"))) << ptx;
  EXPECT_TRUE(contains(ptx, "st.global.v4.f32")) << ptx;
  PtxasInfo info;
  if (!assembles(ptx, GetParam(), &info)) GTEST_SKIP() << "ptxas not found; PTX text checked only";
  ASSERT_EQ(info.kernels.size(), 1u);
  EXPECT_EQ(info.kernels[0].name, "ew");
}

TEST_P(PerArch, ShuffleBarrierSharedKernel) {
  CodegenOptions o = options(GetParam());
  NvptxTarget t(o);
  Kernel k = blockSum(t);
  std::string ptx = emitPtx(*k.m, o);
  EXPECT_TRUE(contains(ptx, ".entry block_sum(")) << ptx;
  EXPECT_TRUE(contains(ptx, "shfl.sync.bfly.b32")) << ptx;
  EXPECT_TRUE(contains(ptx, "bar.sync")) << ptx;
  EXPECT_TRUE(contains(ptx, ".extern .shared .align 1024 .b8 __tk_dynamic_shared[]")) << ptx;
  EXPECT_TRUE(contains(ptx, "st.shared.f32")) << ptx;
  EXPECT_TRUE(contains(ptx, "%ctaid.x")) << ptx;
  if (!assembles(ptx, GetParam())) GTEST_SKIP() << "ptxas not found; PTX text checked only";
}

INSTANTIATE_TEST_SUITE_P(Arches, PerArch, ::testing::Values("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"));

TEST(NvptxCodegen, IdsCoverEveryAxis) {
  CodegenOptions o = options("sm_80");
  NvptxTarget t(o);
  Kernel k;
  k.m = std::make_unique<Module>("ids", *k.ctx);
  t.configureModule(*k.m);
  IRBuilder<> b(*k.ctx);
  auto *gp = PointerType::get(*k.ctx, 1);
  auto *fn = Function::Create(FunctionType::get(b.getVoidTy(), {gp}, false), GlobalValue::ExternalLinkage, "ids",
                              *k.m);
  t.markKernel(*fn, 32);
  b.SetInsertPoint(BasicBlock::Create(*k.ctx, "entry", fn));
  for (int axis = 0; axis < 3; ++axis) {
    Value *v = b.CreateAdd(t.blockId(b, axis), t.gridDim(b, axis));
    b.CreateStore(v, b.CreateGEP(b.getInt32Ty(), fn->getArg(0), b.getInt32(axis)));
  }
  b.CreateRetVoid();
  std::string ptx = emitPtx(*k.m, o);
  for (const char *reg : {"%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z"})
    EXPECT_TRUE(contains(ptx, reg)) << reg << "\n" << ptx;
  EXPECT_EQ(k.m->getDataLayoutStr(), kDataLayout) << "configureModule's layout is the TargetMachine's";
}

// Libdevice math is linked, inlined and leaves no external __nv_ function.
TEST(NvptxMath, LibdeviceLinkedForEveryFunction) {
  if (!Toolkit::find().hasLibdevice()) GTEST_SKIP() << "libdevice not found";
  for (bool f64 : {false, true}) {
    for (MathFn f : kAllMath) {
      CodegenOptions o = options("sm_80");
      NvptxTarget t(o);
      ASSERT_TRUE(t.usesLibdevice());
      Kernel k = elementwise(t, f64, f);
      std::string name = std::string("__nv_") + nameOf(f) + (f64 ? "" : "f");
      // div_rn, sqrt_rn and fdiv are instructions (FallbackForEveryFunction).
      if (!tk::lower::mathFnIsLibraryCall(f)) {
        EXPECT_EQ(k.m->getFunction(name), nullptr) << name;
        continue;
      }
      ASSERT_NE(k.m->getFunction(name), nullptr) << name;
      std::string ptx = emitPtx(*k.m, o);
      EXPECT_FALSE(contains(ptx, ".extern .func")) << name << "\n" << ptx;
      // Trigonometric functions stay out of line (see Codegen.cpp), as
      // `.func` definitions inside the module, and so does the f64 pow,
      // which O3's inliner finds too large; everything else inlines.
      bool outOfLine = f == MathFn::Sin || f == MathFn::Cos || f == MathFn::Tan || (f64 && f == MathFn::Pow);
      EXPECT_EQ(contains(ptx, "call.uni"), outOfLine) << name << "\n" << ptx;
      assembles(ptx, "sm_80");
    }
  }
}

// Without libdevice every function still compiles, to the documented PTX.
TEST(NvptxMath, FallbackForEveryFunction) {
  // Parallel to kAllMath, in ir/Ops.def's order.
  const char *expectF32[] = {"ex2.approx", "ex2.approx", "lg2.approx", "lg2.approx", "sqrt.rn.f32",
                             "rsqrt.approx", "sin.approx", "cos.approx", "tanh.approx.f32", "cvt.rmi.f32.f32",
                             "cvt.rpi.f32.f32", "ex2.approx", "lg2.approx", "ex2.approx", "lg2.approx", "div.rn.f32",
                             // tan asin acos atan sinh cosh asinh acosh atanh
                             "sin.approx", "sqrt.rn.f32", "sqrt.rn.f32", "div.rn.f32", "ex2.approx", "ex2.approx",
                             "lg2.approx", "lg2.approx", "lg2.approx",
                             // log10 exp10 cbrt erfc trunc round rint hypot fmod
                             "lg2.approx", "ex2.approx", "lg2.approx", "ex2.approx", "cvt.rzi.f32.f32",
                             "cvt.rzi.f32.f32", "cvt.rni.f32.f32", "sqrt.rn.f32", "cvt.rzi.f32.f32",
                             // div_rn sqrt_rn fdiv
                             "div.rn.f32", "sqrt.rn.f32", "div.full.f32"};
  const char *expectF64[] = {"ex2.approx", "ex2.approx", "lg2.approx", "lg2.approx", "sqrt.rn.f64",
                             "rcp.rn.f64", "sin.approx", "cos.approx", "tanh.approx.f32", "cvt.rmi.f64.f64",
                             "cvt.rpi.f64.f64", "ex2.approx", "lg2.approx", "ex2.approx", "lg2.approx", "div.rn.f32",
                             "sin.approx", "sqrt.rn.f32", "sqrt.rn.f32", "div.rn.f32", "ex2.approx", "ex2.approx",
                             "lg2.approx", "lg2.approx", "lg2.approx",
                             "lg2.approx", "ex2.approx", "lg2.approx", "ex2.approx", "cvt.rzi.f64.f64",
                             "cvt.rzi.f64.f64", "cvt.rni.f64.f64", "sqrt.rn.f64", "cvt.rzi.f64.f64",
                             "div.rn.f64", "sqrt.rn.f64", "div.rn.f64"};
  static_assert(std::size(expectF32) == std::size(kAllMath) && std::size(expectF64) == std::size(kAllMath));
  bool ptxas = Toolkit::find().hasPtxas();
  std::ifstream docsFile(std::string(TK_SOURCE_DIR) + "/docs/backends.md");
  std::string docs((std::istreambuf_iterator<char>(docsFile)), {});
  for (const char *want : expectF32) EXPECT_TRUE(contains(docs, want)) << "docs/backends.md does not name " << want;
  for (const char *want : expectF64) EXPECT_TRUE(contains(docs, want)) << "docs/backends.md does not name " << want;
  for (bool f64 : {false, true}) {
    for (size_t i = 0; i < std::size(kAllMath); ++i) {
      for (const char *arch : {"sm_80", "sm_90"}) {
        CodegenOptions o = options(arch, /*libdevice=*/false);
        NvptxTarget t(o);
        ASSERT_FALSE(t.usesLibdevice());
        Kernel k = elementwise(t, f64, kAllMath[i]);
        std::string ptx = emitPtx(*k.m, o);
        const char *want = f64 ? expectF64[i] : expectF32[i];
        EXPECT_TRUE(contains(ptx, want)) << nameOf(kAllMath[i]) << (f64 ? " f64" : " f32")
                                         << ": no " << want << "\n" << ptx;
        EXPECT_FALSE(contains(ptx, "__nv_")) << ptx;
        assembles(ptx, arch);
      }
    }
  }
  if (!ptxas) GTEST_SKIP() << "ptxas not found; PTX text checked only";
}

TEST(NvptxCodegen, CompileLatency) {
  if (!Toolkit::find().hasLibdevice()) GTEST_SKIP() << "libdevice not found";
  using clock = std::chrono::steady_clock;
  double best = 1e9;
  for (int run = 0; run < 5; ++run) {
    CodegenOptions o = options("sm_90");
    NvptxTarget t(o);
    Kernel k = elementwise(t, false, MathFn::Sin);
    auto start = clock::now();
    CodegenTimes times;
    std::string ptx = emitPtx(*k.m, o, &times);
    double ms = std::chrono::duration<double, std::milli>(clock::now() - start).count();
    best = std::min(best, ms);
    EXPECT_LE(times.linkMs + times.optimizeMs + times.codegenMs, ms + 0.01);
    EXPECT_GT(times.linkMs, 0.0);
    std::printf("[latency] emitPtx run %d: %.1f ms (link %.1f, O3 %.1f, codegen %.1f)\n", run, ms, times.linkMs,
                times.optimizeMs, times.codegenMs);
  }
  std::printf("[latency] best of 5 emitPtx (link + O3 + codegen), sm_90, sin kernel: %.1f ms\n", best);
  EXPECT_LT(best, 1000.0) << "emitPtx of a small kernel should take tens of ms";
}

// Every optLevel resolves libdevice's __nvvm_reflect (NVVMReflect runs at O0 too).
TEST(NvptxCodegen, EveryOptLevelWithLibdevice) {
  if (!Toolkit::find().hasLibdevice()) GTEST_SKIP() << "libdevice not found";
  for (int level = 0; level <= 3; ++level) {
    CodegenOptions o = options("sm_80");
    o.optLevel = level;
    NvptxTarget t(o);
    Kernel k = elementwise(t, false, MathFn::Tanh);
    std::string ptx = emitPtx(*k.m, o);
    EXPECT_FALSE(contains(ptx, "__nvvm_reflect")) << "O" << level << "\n" << ptx;
    EXPECT_FALSE(contains(ptx, ".extern .func")) << "O" << level;
    assembles(ptx, "sm_80");
  }
  CodegenOptions bad = options("sm_80");
  bad.optLevel = 4;
  NvptxTarget t(bad);
  Kernel k = elementwise(t, false, std::nullopt);
  EXPECT_THROW(emitPtx(*k.m, bad), tk::Error);
}

// The autotuner compiles variants in parallel: each thread has its own
// LLVMContext; the libdevice cache and target registration are shared.
TEST(NvptxCodegen, ParallelEmitMatchesSerial) {
  auto compile = [](MathFn f) {
    CodegenOptions o = options("sm_90");
    NvptxTarget t(o);
    Kernel k = elementwise(t, false, f);
    return emitPtx(*k.m, o);
  };
  const MathFn fns[] = {MathFn::Sin, MathFn::Exp, MathFn::Tanh, MathFn::Log};
  std::string serial[4], parallel[4];
  for (int i = 0; i < 4; ++i) serial[i] = compile(fns[i]);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { parallel[i] = compile(fns[i]); });
  for (auto &th : threads) th.join();
  // NVPTX numbers call sequences in comments with a process-wide counter;
  // everything else must match.
  auto uncommented = [](std::string ptx) {
    std::string out, line;
    std::istringstream in(ptx);
    while (std::getline(in, line))
      if (line.find("// callseq") == std::string::npos) out += line + "\n";
    return out;
  };
  for (int i = 0; i < 4; ++i) EXPECT_EQ(uncommented(parallel[i]), uncommented(serial[i])) << nameOf(fns[i]);
}

TEST(NvptxErrors, UnknownArch) {
  CodegenOptions o = options("sm_75");
  try {
    NvptxTarget t(o);
    FAIL() << "sm_75 accepted";
  } catch (const tk::Error &e) {
    EXPECT_TRUE(contains(e.what(), "unknown NVPTX arch 'sm_75'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "sm_80, sm_86, sm_89, sm_90, sm_90a")) << e.what();
  }
  LLVMContext c;
  Module m("m", c);
  EXPECT_THROW(emitPtx(m, options("sm_100")), tk::Error);
  EXPECT_THROW(emitPtx(m, options("")), tk::Error);
  EXPECT_THROW(runPtxas("", "compute_80", Toolkit::find()), tk::Error);
}

TEST(NvptxErrors, BadHookArguments) {
  NvptxTarget t(options("sm_80"));
  LLVMContext c;
  Module m("m", c);
  auto *fn = Function::Create(FunctionType::get(Type::getVoidTy(c), false), GlobalValue::ExternalLinkage, "k", m);
  IRBuilder<> b(BasicBlock::Create(c, "entry", fn));
  EXPECT_THROW(t.markKernel(*fn, 0), tk::InternalError);
  EXPECT_THROW(t.markKernel(*fn, 2048), tk::InternalError);
  EXPECT_THROW(t.blockId(b, 3), tk::InternalError);
  EXPECT_THROW(t.gridDim(b, -1), tk::InternalError);
  EXPECT_THROW(t.shuffleXor(b, b.getInt32(1), 32), tk::InternalError);
  EXPECT_THROW(t.shuffleXor(b, ConstantFP::get(Type::getFP128Ty(c), 1.0), 1), tk::InternalError);
  EXPECT_THROW(t.math(b, MathFn::Exp, b.getInt32(1)), tk::InternalError);
}

TEST(NvptxErrors, BadModules) {
  LLVMContext c;
  {
    Module m("x86", c);
    m.setTargetTriple("x86_64-pc-linux-gnu");
    try {
      emitPtx(m, options("sm_80"));
      FAIL() << "x86 module accepted";
    } catch (const tk::Error &e) {
      EXPECT_TRUE(contains(e.what(), "x86_64-pc-linux-gnu")) << e.what();
    }
  }
  {
    Module m("broken", c);  // a block with no terminator
    auto *fn = Function::Create(FunctionType::get(Type::getVoidTy(c), false), GlobalValue::ExternalLinkage, "k", m);
    BasicBlock::Create(c, "entry", fn);
    try {
      emitPtx(m, options("sm_80"));
      FAIL() << "invalid IR accepted";
    } catch (const tk::InternalError &e) {
      EXPECT_TRUE(contains(e.what(), "invalid LLVM IR")) << e.what();
    }
  }
  {
    CodegenOptions o = options("sm_80");
    Kernel k = elementwise(NvptxTarget(o), false, MathFn::Exp);  // calls __nv_expf when libdevice was found
    if (!k.m->getFunction("__nv_expf")) GTEST_SKIP() << "libdevice not found";
    o.toolkit = Toolkit{};
    try {
      emitPtx(*k.m, o);
      FAIL() << "libdevice call compiled without libdevice";
    } catch (const tk::Error &e) {
      EXPECT_TRUE(contains(e.what(), "no CUDA toolkit with libdevice")) << e.what();
    }
  }
}

TEST(NvptxErrors, PtxasRejectsBadPtx) {
  Toolkit tk = Toolkit::find();
  if (!tk.hasPtxas()) GTEST_SKIP() << "ptxas not found";
  try {
    runPtxas(".version 8.0\n.target sm_80\n.address_size 64\n.entry k() { bogus.instr; }\n", "sm_80", tk);
    FAIL() << "bad PTX accepted";
  } catch (const tk::Error &e) {
    EXPECT_TRUE(contains(e.what(), "ptxas -arch=sm_80 failed")) << e.what();
    EXPECT_TRUE(contains(e.what(), "bogus")) << e.what();  // ptxas's own message
  }
}

TEST(NvptxErrors, NoPtxasIsReportedNotThrown) {
  PtxasInfo info = runPtxas(".version 8.0\n", "sm_80", Toolkit{});
  EXPECT_FALSE(info.ran);
  EXPECT_TRUE(contains(info.log, "ptxas not found")) << info.log;
}

// ---- on a GPU: the emitted PTX runs and computes the right numbers --------

class NvptxOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      tk::cuda::Driver::get();
    } catch (const tk::cuda::Unavailable &e) {
      GTEST_SKIP() << "no CUDA device: " << e.what();
    }
    ctx.emplace(0);
    int cc = ctx->computeCapability();
    if (cc < 80) GTEST_SKIP() << "device is sm_" << cc << "; tk targets sm_80+";
    arch = cc >= 90 ? "sm_90" : cc >= 89 ? "sm_89" : cc >= 86 ? "sm_86" : "sm_80";
  }
  std::optional<tk::cuda::Context> ctx;
  std::string arch;
};

TEST_F(NvptxOnGpu, MathMatchesDoubleReference) {
  const int n = 98432;  // the kernel handles whole vectors of 4
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(0.05f, 20.0f);
  std::vector<float> x(n);
  for (float &v : x) v = dist(rng);
  for (bool libdevice : {true, false}) {
    for (MathFn f : kAllMath) {
      CodegenOptions o = options(arch, libdevice);
      NvptxTarget t(o);
      Kernel k = elementwise(t, false, f);
      tk::cuda::Module mod = ctx->loadModule(emitPtx(*k.m, o));
      tk::cuda::Function fn = ctx->function(mod, "ew");
      uint64_t dx = ctx->alloc(n * 4), dout = ctx->alloc(n * 4);
      ctx->copyToDevice(dx, x.data(), n * 4);
      ctx->memset(dout, 0xFF, n * 4);
      int count = n;
      void *args[] = {&dx, &dout, &count};
      ctx->launch(fn, {unsigned(n / 4 / 128), 1, 1}, {128, 1, 1}, 0, args);
      std::vector<float> got(n);
      ctx->copyToHost(got.data(), dout, n * 4);
      ctx->free(dx);
      ctx->free(dout);
      // libdevice: a few ulp; approx fallback: the bounds in docs/backends.md.
      double tol = libdevice ? 4e-7 : (f == MathFn::Tanh ? 1e-3 : 2e-5);
      for (int i = 0; i < n; ++i) {
        double v = x[i], want = 0;
        switch (f) {
          case MathFn::Exp: want = std::exp(v); break;
          case MathFn::Exp2: want = std::exp2(v); break;
          case MathFn::Log: want = std::log(v); break;
          case MathFn::Log2: want = std::log2(v); break;
          case MathFn::Sqrt: want = std::sqrt(v); break;
          case MathFn::Rsqrt: want = 1 / std::sqrt(v); break;
          case MathFn::Sin: want = std::sin(v); break;
          case MathFn::Cos: want = std::cos(v); break;
          case MathFn::Tanh: want = std::tanh(v); break;
          case MathFn::Floor: want = std::floor(v); break;
          case MathFn::Ceil: want = std::ceil(v); break;
          case MathFn::Erf: want = std::erf(v); break;
          case MathFn::Log1p: want = std::log1p(v); break;
          case MathFn::Expm1: want = std::expm1(v); break;
          case MathFn::Pow: want = std::pow(v, v); break;
          case MathFn::Atan2: want = std::atan2(v, v); break;
          case MathFn::Tan: want = std::tan(v); break;
          case MathFn::Asin: want = std::asin(v); break;  // NaN past 1
          case MathFn::Acos: want = std::acos(v); break;
          case MathFn::Atan: want = std::atan(v); break;
          case MathFn::Sinh: want = std::sinh(v); break;
          case MathFn::Cosh: want = std::cosh(v); break;
          case MathFn::Asinh: want = std::asinh(v); break;
          case MathFn::Acosh: want = std::acosh(v); break;
          case MathFn::Atanh: want = std::atanh(v); break;
          case MathFn::Log10: want = std::log10(v); break;
          case MathFn::Exp10: want = std::pow(10.0, v); break;
          case MathFn::Cbrt: want = std::cbrt(v); break;
          case MathFn::Erfc: want = std::erfc(v); break;
          case MathFn::Trunc: want = std::trunc(v); break;
          case MathFn::Round: want = std::round(v); break;
          case MathFn::Rint: want = std::nearbyint(v); break;
          case MathFn::Hypot: want = std::hypot(v, v); break;
          case MathFn::Fmod: want = std::fmod(v, v); break;
          case MathFn::DivRn: case MathFn::Fdiv: want = 1; break;
          case MathFn::SqrtRn: want = std::sqrt(v); break;
        }
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(got[i])) << nameOf(f) << " x=" << v << " got " << got[i];
          continue;
        }
        double scale = std::max(1.0, std::abs(want));
        if (f == MathFn::Exp || f == MathFn::Exp2 || f == MathFn::Expm1 || f == MathFn::Sinh || f == MathFn::Cosh)
          scale = std::abs(want) * (1 + std::abs(v));
        if (f == MathFn::Exp10) scale = std::abs(want) * (1 + 3.33 * std::abs(v));
        if (f == MathFn::Pow) scale = std::abs(want) * (1 + std::abs(v * std::log2(v)));
        if (f == MathFn::Tan) scale = std::max(1.0, std::abs(want)) * (1 + want * want);  // tan's condition
        // libdevice's newer functions: CUDA's bounds reach 4 ulp (tanf, acoshf, erfcf).
        if (libdevice && f >= MathFn::Tan) scale *= 2.5;
        ASSERT_LE(std::abs(got[i] - want), tol * scale)
            << nameOf(f) << (libdevice ? " (libdevice)" : " (approx)") << " x=" << v << " got " << got[i];
      }
    }
  }
}

TEST_F(NvptxOnGpu, ShuffleBarrierSharedAndCubin) {
  CodegenOptions o = options(arch);
  NvptxTarget t(o);
  Kernel k = blockSum(t);
  std::string ptx = emitPtx(*k.m, o);
  const int blocks = 769, n = blocks * 128;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = float((i * 37) % 101) - 50.0f;
  // Load the PTX, and the cubin too when ptxas is here.
  std::vector<std::string> images = {ptx};
  if (Toolkit::find().hasPtxas()) {
    PtxasInfo info = runPtxas(ptx, arch, Toolkit::find());
    images.emplace_back(info.cubin.begin(), info.cubin.end());
  }
  for (const std::string &image : images) {
    tk::cuda::Module mod = ctx->loadModule(image);
    tk::cuda::Function fn = ctx->function(mod, "block_sum");
    uint64_t dx = ctx->alloc(n * 4), dsum = ctx->alloc(blocks * 4), dwide = ctx->alloc(n * 8);
    ctx->copyToDevice(dx, x.data(), n * 4);
    ctx->memset(dsum, 0xFF, blocks * 4);
    void *args[] = {&dx, &dsum, &dwide};
    ctx->launch(fn, {blocks, 1, 1}, {128, 1, 1}, 4 * sizeof(float), args);
    std::vector<float> sums(blocks);
    std::vector<double> wide(n);
    ctx->copyToHost(sums.data(), dsum, blocks * 4);
    ctx->copyToHost(wide.data(), dwide, n * 8);
    for (int b = 0; b < blocks; ++b) {
      double want = 0;
      for (int i = 0; i < 128; ++i) want += x[b * 128 + i];
      ASSERT_EQ(sums[b], float(want)) << "block " << b;  // small integers: exact
    }
    for (int i = 0; i < n; ++i) ASSERT_EQ(wide[i], double(i ^ 1)) << i;
    ctx->free(dx);
    ctx->free(dsum);
    ctx->free(dwide);
  }
}

}  // namespace
