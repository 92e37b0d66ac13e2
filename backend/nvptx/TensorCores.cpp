// NvptxTarget's tensor cores: ldmatrix and mma.sync (llvm.nvvm.* intrinsics,
// sm_80+), and Hopper's warpgroup wgmma (sm_90a), which LLVM 19 has no
// intrinsics for, written as inline PTX (FACTS.md). Apart from the rest of
// the target because the matrix paths grow on their own (docs/backends.md).
#include "backend/nvptx/NvptxTarget.h"
#include "backend/nvptx/Codegen.h"
#include "tk/error.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include <string>
#include <vector>

namespace tk::nvptx {

using namespace llvm;

// ---- tensor cores -----------------------------------------------------------

// NVVM declares ldmatrix and mma without `convergent`: mark the calls, so no
// pass moves them into code only some lanes of the warp run.
static CallInst *warpCollective(IRBuilderBase &b, Intrinsic::ID id, ArrayRef<Value *> args, ArrayRef<Type *> tys = {}) {
  Function *fn = Intrinsic::getDeclaration(b.GetInsertBlock()->getModule(), id, tys);
  CallInst *call = b.CreateCall(fn, args);
  call->addFnAttr(Attribute::Convergent);
  return call;
}

// The fields of a multi-register result, or the one register itself.
static std::vector<Value *> registersOf(IRBuilderBase &b, Value *call) {
  auto *st = dyn_cast<StructType>(call->getType());
  if (!st) return {call};
  std::vector<Value *> out;
  for (unsigned i = 0; i < st->getNumElements(); ++i) out.push_back(b.CreateExtractValue(call, i));
  return out;
}

std::vector<Value *> NvptxTarget::ldmatrix(IRBuilderBase &b, Value *rowAddress, int num, bool trans) const {
  static const Intrinsic::ID ids[3][2] = {
      {Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_b16, Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_trans_b16},
      {Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16, Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16},
      {Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16, Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16}};
  if (num != 1 && num != 2 && num != 4)
    throw tk::InternalError("NvptxTarget::ldmatrix: " + std::to_string(num) + " matrices; want 1, 2 or 4");
  auto *pt = dyn_cast<PointerType>(rowAddress->getType());
  if (!pt || pt->getAddressSpace() != sharedAddressSpace())
    throw tk::InternalError(
        "NvptxTarget::ldmatrix: the row address must be a pointer into shared memory "
        "(addrspace 3)");
  // The intrinsic is overloaded on its pointer type; naming addrspace(3)
  // gives `ldmatrix...shared.b16` (a generic pointer crashes LLVM 19).
  CallInst *call = warpCollective(b, ids[num == 1 ? 0 : num == 2 ? 1 : 2][trans ? 1 : 0], {rowAddress}, {pt});
  return registersOf(b, call);
}

// Every mma.sync form takes 4 i32 of A and 2 of B per lane, and 4 C
// accumulators: f32, or i32 for s8 (`intAcc`).
static void checkMmaFragments(const std::string &name, const std::vector<Value *> &a,
                              const std::vector<Value *> &bFrag, const std::vector<Value *> &c, bool intAcc) {
  auto check = [&](const std::vector<Value *> &v, size_t n, bool f32, const char *what) {
    bool ok = v.size() == n;
    for (Value *x : v) ok = ok && (f32 ? x->getType()->isFloatTy() : x->getType()->isIntegerTy(32));
    if (!ok)
      throw tk::InternalError("NvptxTarget::" + name + ": " + what + " must be " + std::to_string(n) +
                              (f32 ? " f32" : " i32") + " values");
  };
  check(a, 4, false, "A");
  check(bFrag, 2, false, "B");
  check(c, 4, !intAcc, "C");
}

// Both variants return a {float x 4}. f16 operands are <2 x half>, bf16 ones
// i32 (LLVM 19's IntrinsicsNVVM.td): the same bits, so f16 is a bitcast.
// `.f32.f32` (D and C types) is the f16-input, f32-accumulate form; the
// `.f32.f16` intrinsic builds but ptxas rejects what it prints.
std::vector<Value *> NvptxTarget::mmaM16N8K16(IRBuilderBase &b, bool bf16, const std::vector<Value *> &a,
                                              const std::vector<Value *> &bFrag, const std::vector<Value *> &c) const {
  checkMmaFragments("mmaM16N8K16", a, bFrag, c, /*intAcc=*/false);
  Type *pair = FixedVectorType::get(b.getHalfTy(), 2);
  std::vector<Value *> args;
  for (const std::vector<Value *> *part : {&a, &bFrag})
    for (Value *v : *part) args.push_back(bf16 ? v : b.CreateBitCast(v, pair));
  args.insert(args.end(), c.begin(), c.end());
  Intrinsic::ID id = bf16 ? Intrinsic::nvvm_mma_m16n8k16_row_col_bf16 : Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32;
  return registersOf(b, warpCollective(b, id, args));
}

// tf32 and s8 operands are i32 registers, as the intrinsics take them;
// their accumulators are f32 (tf32) and i32 (s8).
static std::vector<Value *> nvptxMma(IRBuilderBase &b, const char *name, Intrinsic::ID id, bool intAcc,
                                     const std::vector<Value *> &a, const std::vector<Value *> &bFrag,
                                     const std::vector<Value *> &c) {
  checkMmaFragments(name, a, bFrag, c, intAcc);
  std::vector<Value *> args(a);
  args.insert(args.end(), bFrag.begin(), bFrag.end());
  args.insert(args.end(), c.begin(), c.end());
  return registersOf(b, warpCollective(b, id, args));
}

std::vector<Value *> NvptxTarget::mmaM16N8K8Tf32(IRBuilderBase &b, const std::vector<Value *> &a,
                                                 const std::vector<Value *> &bFrag,
                                                 const std::vector<Value *> &c) const {
  return nvptxMma(b, "mmaM16N8K8Tf32", Intrinsic::nvvm_mma_m16n8k8_row_col_tf32, false, a, bFrag, c);
}

std::vector<Value *> NvptxTarget::mmaM16N8K32S8(IRBuilderBase &b, const std::vector<Value *> &a,
                                                const std::vector<Value *> &bFrag,
                                                const std::vector<Value *> &c) const {
  return nvptxMma(b, "mmaM16N8K32S8", Intrinsic::nvvm_mma_m16n8k32_row_col_s8, true, a, bFrag, c);
}

// LLVM 19 has no fp8 mma intrinsic: inline PTX, which needs PTX ISA 8.4.
// The module records that (kMinPtxFlag), and the code generator raises
// the PTX version for it alone (Codegen.cpp): every other kernel keeps 8.0.
std::vector<Value *> NvptxTarget::mmaM16N8K32Fp8(IRBuilderBase &b, ir::ScalarKind atype, ir::ScalarKind btype,
                                                 const std::vector<Value *> &a, const std::vector<Value *> &bFrag,
                                                 const std::vector<Value *> &c) const {
  if (!usesFp8Mma()) throw tk::InternalError("NvptxTarget::mmaM16N8K32Fp8: " + arch_ + " has no fp8 mma");
  if (!ir::isFp8(atype) || !ir::isFp8(btype))
    throw tk::InternalError("NvptxTarget::mmaM16N8K32Fp8: operands must be f8e4m3 or f8e5m2");
  checkMmaFragments("mmaM16N8K32Fp8", a, bFrag, c, /*intAcc=*/false);
  const std::string text = std::string("mma.sync.aligned.m16n8k32.row.col.f32.") + lower::ptxTypeName(atype) + "." +
                           lower::ptxTypeName(btype) +
                           ".f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};";
  std::vector<Type *> params(6, b.getInt32Ty());
  params.insert(params.end(), 4, b.getFloatTy());
  std::vector<Value *> args(a);
  args.insert(args.end(), bFrag.begin(), bFrag.end());
  args.insert(args.end(), c.begin(), c.end());
  auto *fty = FunctionType::get(StructType::get(b.getContext(), std::vector<Type *>(4, b.getFloatTy())), params, false);
  auto *asmFn = InlineAsm::get(fty, text, "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f", /*hasSideEffects=*/false);
  CallInst *call = b.CreateCall(asmFn, args);
  call->addFnAttr(Attribute::Convergent);
  Module &m = *b.GetInsertBlock()->getModule();
  if (!m.getModuleFlag(kMinPtxFlag)) m.addModuleFlag(Module::Max, kMinPtxFlag, 84);
  return registersOf(b, call);
}

Value *NvptxTarget::roundToTf32(IRBuilderBase &b, Value *x) const {
  if (!x->getType()->isFloatTy()) throw tk::InternalError("NvptxTarget::roundToTf32: x must be f32");
  return b.CreateIntrinsic(Intrinsic::nvvm_f2tf32_rna, {}, {x});
}

// sm_90 converts to and from the 8-bit floats in one instruction per pair
// (PTX ISA, cvt: the value converted from `a` goes to the upper half of d,
// `b`'s to the lower). A scalar uses the lower half: the code of `f` is the
// low byte of cvt(0.0, f), and a code zero-extended to 16 bits converts to
// the low f16 of the pair, which is exact in f32. LLVM 19 has no intrinsics
// for them. sm_89 has them too but from PTX ISA 8.1, past the 8.0 tk emits
// (ptxas: "requires PTX ISA .version 8.1"), so it keeps the generic form.
static bool hasFp8Cvt(const std::string &arch) { return arch == "sm_90" || arch == "sm_90a"; }

Value *NvptxTarget::floatToFp8(IRBuilderBase &b, Value *f, ir::ScalarKind k) const {
  if (!hasFp8Cvt(arch_)) return Target::floatToFp8(b, f, k);
  const std::string type = k == ir::ScalarKind::F8E4M3 ? "e4m3x2" : "e5m2x2";
  auto *fty = FunctionType::get(b.getInt16Ty(), {b.getFloatTy(), b.getFloatTy()}, false);
  auto *cvt = InlineAsm::get(fty, "cvt.rn.satfinite." + type + ".f32 $0, $1, $2;", "=h,f,f", false);
  CallInst *pair = b.CreateCall(cvt, {ConstantFP::get(b.getFloatTy(), 0.0), f});
  pair->setDoesNotAccessMemory();
  return b.CreateTrunc(pair, b.getInt8Ty());
}

Value *NvptxTarget::fp8ToFloat(IRBuilderBase &b, Value *code, ir::ScalarKind k) const {
  if (!hasFp8Cvt(arch_)) return Target::fp8ToFloat(b, code, k);
  const std::string type = k == ir::ScalarKind::F8E4M3 ? "e4m3x2" : "e5m2x2";
  auto *fty = FunctionType::get(b.getFloatTy(), {b.getInt16Ty()}, false);
  auto *cvt = InlineAsm::get(
      fty, "{ .reg .b32 t; .reg .b16 lo, hi; cvt.rn.f16x2." + type + " t, $1; mov.b32 {lo, hi}, t; cvt.f32.f16 $0, lo; }",
      "=f,h", false);
  CallInst *value = b.CreateCall(cvt, {b.CreateZExt(code, b.getInt16Ty())});
  value->setDoesNotAccessMemory();
  return value;
}

// The intrinsic's first operand goes to the upper half (PTX: `cvt.rn.f16x2.f32
// d, a, b` puts a in d's upper half).
Value *NvptxTarget::packHalves(IRBuilderBase &b, Value *lo, Value *hi, bool bf16) const {
  if (!lo->getType()->isFloatTy() || !hi->getType()->isFloatTy())
    throw tk::InternalError("NvptxTarget::packHalves: lo and hi must be f32");
  Value *pair = b.CreateIntrinsic(bf16 ? Intrinsic::nvvm_ff2bf16x2_rn : Intrinsic::nvvm_ff2f16x2_rn, {}, {hi, lo});
  return b.CreateBitCast(pair, b.getInt32Ty());
}

// ---- warpgroup tensor cores (wgmma, sm_90a) ---------------------------------

// A void inline-PTX statement with side effects: a fence, commit or wait
// must stay where the lowering put it.
static void ptxStatement(IRBuilderBase &b, const std::string &text) {
  auto *asmFn = InlineAsm::get(FunctionType::get(b.getVoidTy(), false), text, "~{memory}", /*hasSideEffects=*/true);
  CallInst *call = b.CreateCall(asmFn);
  call->addFnAttr(Attribute::Convergent);
}

// A shared-window address fits 32 bits; ptrtoint of an addrspace(3) pointer
// is that address.
Value *NvptxTarget::sharedWindowAddress(IRBuilderBase &b, Value *ptr) const {
  auto *pt = dyn_cast<PointerType>(ptr->getType());
  if (!pt || pt->getAddressSpace() != sharedAddressSpace())
    throw tk::InternalError("NvptxTarget::sharedWindowAddress: want a pointer into shared memory (addrspace 3)");
  return b.CreateTrunc(b.CreatePtrToInt(ptr, b.getInt64Ty()), b.getInt32Ty());
}

void NvptxTarget::fenceProxyAsync(IRBuilderBase &b) const { ptxStatement(b, "fence.proxy.async.shared::cta;"); }
void NvptxTarget::wgmmaFence(IRBuilderBase &b) const { ptxStatement(b, "wgmma.fence.sync.aligned;"); }
void NvptxTarget::wgmmaCommitGroup(IRBuilderBase &b) const { ptxStatement(b, "wgmma.commit_group.sync.aligned;"); }

// Outputs $0 .. $(k-1) are the accumulators, tied to inputs 0 .. k-1 after
// the instruction's own operands: "+f" in C terms.
static std::string tiedAccumulators(size_t k, const std::string &inputs) {
  std::string c;
  for (size_t i = 0; i < k; ++i) c += "=f,";
  c += inputs;
  for (size_t i = 0; i < k; ++i) c += "," + std::to_string(i);
  return c;
}

static std::vector<Value *> checkedAccumulators(const std::vector<Value *> &acc, size_t k, const char *what) {
  bool ok = acc.size() == k;
  for (Value *v : acc) ok = ok && v->getType()->isFloatTy();
  if (!ok)
    throw tk::InternalError(std::string("NvptxTarget::") + what + ": want " + std::to_string(k) +
                                " f32 accumulators, got " + std::to_string(acc.size()));
  return acc;
}

// {d0, .., d(n/2-1)}, descA, descB, p (scale-d: 1, so D accumulates),
// imm-scale-a 1, imm-scale-b 1, and for the 16-bit types imm-trans-a,
// imm-trans-b (the 8-bit floats have no transpose operands).
std::vector<Value *> NvptxTarget::wgmmaMmaAsync(IRBuilderBase &b, int n, ir::ScalarKind atype,
                                                ir::ScalarKind btype, bool transA, bool transB, Value *descA,
                                                Value *descB, const std::vector<Value *> &acc) const {
  if (n < 8 || n > 256 || n % 8)
    throw tk::InternalError("NvptxTarget::wgmmaMmaAsync: n " + std::to_string(n) +
                                " is not a multiple of 8 in [8, 256]");
  if (!lower::wgmmaInputsValid(atype, btype, transA, transB))
    throw tk::InternalError(std::string("NvptxTarget::wgmmaMmaAsync: no wgmma multiplies ") +
                            lower::ptxTypeName(atype) + (transA ? "^T" : "") + " by " +
                            lower::ptxTypeName(btype) + (transB ? "^T" : ""));
  const size_t k = size_t(n / 2);
  checkedAccumulators(acc, k, "wgmmaMmaAsync");
  if (!descA->getType()->isIntegerTy(64) || !descB->getType()->isIntegerTy(64))
    throw tk::InternalError("NvptxTarget::wgmmaMmaAsync: descriptors must be i64");
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(k + 2) + ", 0;\n" +
                     "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k" +
                     std::to_string(lower::wgmmaK(atype)) + ".f32." + lower::ptxTypeName(atype) + "." +
                     lower::ptxTypeName(btype) + " {";
  for (size_t i = 0; i < k; ++i) text += (i ? ", $" : "$") + std::to_string(i);
  text += "}, $" + std::to_string(k) + ", $" + std::to_string(k + 1) + ", p, 1, 1";
  if (!ir::isFp8(atype)) text += std::string(", ") + (transA ? "1" : "0") + ", " + (transB ? "1" : "0");
  text += ";\n}";
  std::vector<Type *> outs(k, b.getFloatTy());
  std::vector<Type *> params{b.getInt64Ty(), b.getInt64Ty(), b.getInt32Ty()};
  params.insert(params.end(), k, b.getFloatTy());
  std::vector<Value *> args{descA, descB, b.getInt32(1)};
  args.insert(args.end(), acc.begin(), acc.end());
  auto *fty = FunctionType::get(StructType::get(b.getContext(), outs), params, false);
  auto *asmFn = InlineAsm::get(fty, text, tiedAccumulators(k, "l,l,r") + ",~{memory}", /*hasSideEffects=*/true);
  CallInst *call = b.CreateCall(asmFn, args);
  call->addFnAttr(Attribute::Convergent);
  return registersOf(b, call);
}

// {d0, .., d(n/2-1)}, {a0, a1, a2, a3}, descB, p, imm-scale-a 1,
// imm-scale-b 1, imm-trans-b (the register form has no imm-trans-a).
std::vector<Value *> NvptxTarget::wgmmaMmaAsyncRegA(IRBuilderBase &b, int n, bool bf16, bool transB,
                                                    const std::vector<Value *> &a, Value *descB,
                                                    const std::vector<Value *> &acc) const {
  if (n < 8 || n > 256 || n % 8)
    throw tk::InternalError("NvptxTarget::wgmmaMmaAsyncRegA: n " + std::to_string(n) +
                                " is not a multiple of 8 in [8, 256]");
  const size_t k = size_t(n / 2);
  checkedAccumulators(acc, k, "wgmmaMmaAsyncRegA");
  bool ok = a.size() == 4 && descB->getType()->isIntegerTy(64);
  for (Value *v : a) ok = ok && v->getType()->isIntegerTy(32);
  if (!ok) throw tk::InternalError("NvptxTarget::wgmmaMmaAsyncRegA: want 4 i32 A registers and an i64 descriptor");
  const std::string ty = bf16 ? "bf16" : "f16";
  auto arg = [&](size_t i) { return "$" + std::to_string(k + i); };
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + arg(5) + ", 0;\n" + "wgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + "k16.f32." + ty + "." + ty + " {";
  for (size_t i = 0; i < k; ++i) text += (i ? ", $" : "$") + std::to_string(i);
  text += "}, {" + arg(0) + ", " + arg(1) + ", " + arg(2) + ", " + arg(3) + "}, " + arg(4) + ", p, 1, 1, " +
          (transB ? "1" : "0") + ";\n}";
  std::vector<Type *> outs(k, b.getFloatTy());
  std::vector<Type *> params(4, b.getInt32Ty());
  params.push_back(b.getInt64Ty());
  params.push_back(b.getInt32Ty());
  params.insert(params.end(), k, b.getFloatTy());
  std::vector<Value *> args(a);
  args.push_back(descB);
  args.push_back(b.getInt32(1));
  args.insert(args.end(), acc.begin(), acc.end());
  auto *fty = FunctionType::get(StructType::get(b.getContext(), outs), params, false);
  auto *asmFn = InlineAsm::get(fty, text, tiedAccumulators(k, "r,r,r,r,l,r") + ",~{memory}", /*hasSideEffects=*/true);
  CallInst *call = b.CreateCall(asmFn, args);
  call->addFnAttr(Attribute::Convergent);
  return registersOf(b, call);
}

std::vector<Value *> NvptxTarget::wgmmaWaitGroup(IRBuilderBase &b, int pending, const std::vector<Value *> &acc) const {
  if (pending < 0 || pending > 7)
    throw tk::InternalError("NvptxTarget::wgmmaWaitGroup: " + std::to_string(pending) +
                                " pending groups; want 0..7");
  if (acc.empty()) {
    ptxStatement(b, "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";");
    return {};
  }
  checkedAccumulators(acc, acc.size(), "wgmmaWaitGroup");
  const size_t k = acc.size();
  std::vector<Type *> outs(k, b.getFloatTy()), params(k, b.getFloatTy());
  Type *ret = k == 1 ? outs[0] : static_cast<Type *>(StructType::get(b.getContext(), outs));
  std::string constraints;
  for (size_t i = 0; i < k; ++i) constraints += "=f,";
  for (size_t i = 0; i < k; ++i) constraints += (i ? "," : "") + std::to_string(i);
  auto *asmFn = InlineAsm::get(FunctionType::get(ret, params, false),
                               "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";",
                               constraints + ",~{memory}", /*hasSideEffects=*/true);
  CallInst *call = b.CreateCall(asmFn, acc);
  call->addFnAttr(Attribute::Convergent);
  return registersOf(b, call);
}

}  // namespace tk::nvptx
