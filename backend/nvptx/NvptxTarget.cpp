// NvptxTarget: how lowered tile IR names the GPU on NVPTX. Ids, barriers,
// shuffles and cp.async are llvm.nvvm.* intrinsics; masked accesses are
// predicated PTX; math is libdevice (__nv_*) or, without it, PTX approx
// instructions (precision in docs/backends.md). The tensor cores (ldmatrix,
// mma.sync, wgmma) are in TensorCores.cpp.
#include "backend/nvptx/NvptxTarget.h"
#include "tk/error.h"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include <stdexcept>

#include "backend/nvptx/ApproxMath.h"
#include "backend/nvptx/MaskedAccess.h"
#include "tk/gpu.h"

namespace tk::nvptx {

using namespace llvm;
using lower::MathFn;

const char *const kDataLayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64";
const char *const kTriple = "nvptx64-nvidia-cuda";

// The block's dynamic shared memory: an external zero-length array in
// addrspace(3) prints as `.extern .shared .align 16 .b8 NAME[]`.
static const char *const kSharedName = "__tk_dynamic_shared";

NvptxTarget::NvptxTarget(const CodegenOptions &o) : arch_(o.arch), libdevice_(o.libdeviceEnabled()) {
  checkArch(o.arch);
}

void NvptxTarget::configureModule(Module &m) const {
  m.setTargetTriple(kTriple);
  m.setDataLayout(kDataLayout);
}

void NvptxTarget::markKernel(Function &f, int numThreads) const {
  if (numThreads < 1 || numThreads > 1024)
    throw tk::InternalError("NvptxTarget::markKernel: " + std::to_string(numThreads) +
                                " threads per block; NVPTX allows 1..1024");
  f.setCallingConv(CallingConv::PTX_Kernel);
  LLVMContext &c = f.getContext();
  NamedMDNode *md = f.getParent()->getOrInsertNamedMetadata("nvvm.annotations");
  md->addOperand(MDNode::get(c, {ValueAsMetadata::get(&f), MDString::get(c, "maxntidx"),
                                 ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(c), numThreads))}));
}

static Value *callIntrinsic(IRBuilderBase &b, Intrinsic::ID id, ArrayRef<Value *> args = {},
                            ArrayRef<Type *> tys = {}) {
  Function *fn = Intrinsic::getDeclaration(b.GetInsertBlock()->getModule(), id, tys);
  return b.CreateCall(fn, args);
}

static void checkAxis(int axis, const char *what) {
  if (axis < 0 || axis > 2)
    throw tk::InternalError(std::string("NvptxTarget::") + what + ": axis " + std::to_string(axis) +
                                " is not 0, 1 or 2");
}

Value *NvptxTarget::threadId(IRBuilderBase &b) const { return callIntrinsic(b, Intrinsic::nvvm_read_ptx_sreg_tid_x); }

Value *NvptxTarget::blockId(IRBuilderBase &b, int axis) const {
  checkAxis(axis, "blockId");
  static const Intrinsic::ID ids[] = {Intrinsic::nvvm_read_ptx_sreg_ctaid_x, Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                      Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  return callIntrinsic(b, ids[axis]);
}

Value *NvptxTarget::gridDim(IRBuilderBase &b, int axis) const {
  checkAxis(axis, "gridDim");
  static const Intrinsic::ID ids[] = {Intrinsic::nvvm_read_ptx_sreg_nctaid_x, Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                      Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
  return callIntrinsic(b, ids[axis]);
}

void NvptxTarget::barrier(IRBuilderBase &b) const { callIntrinsic(b, Intrinsic::nvvm_barrier0); }

// A full-warp shuffle of `v` (mode `i32`/`f32` intrinsics, lane operand `b`,
// clamp/segment operand `c`). Anything but i32/f32 of at most 64 bits
// travels as one or two i32 shuffles.
static Value *shuffleSync(IRBuilderBase &b, Value *v, Intrinsic::ID i32Id, Intrinsic::ID f32Id, int lane, int c,
                          const char *what) {
  Type *t = v->getType();
  Value *all = b.getInt32(-1), *laneV = b.getInt32(lane), *cV = b.getInt32(c);
  if (t->isFloatTy()) return callIntrinsic(b, f32Id, {all, v, laneV, cV});
  if (t->isIntegerTy(32)) return callIntrinsic(b, i32Id, {all, v, laneV, cV});
  unsigned bits = t->getPrimitiveSizeInBits();
  if (t->isVectorTy() || t->isPointerTy() || bits == 0 || bits > 64)
    throw tk::InternalError(std::string("NvptxTarget::") + what +
                                ": cannot shuffle a value of this type (want a scalar of at most 64 bits)");
  Value *asInt = b.CreateBitCast(v, b.getIntNTy(bits));
  auto shfl = [&](Value *word) { return callIntrinsic(b, i32Id, {all, word, laneV, cV}); };
  Value *out;
  if (bits <= 32) {
    out = b.CreateTrunc(shfl(b.CreateZExt(asInt, b.getInt32Ty())), b.getIntNTy(bits));
  } else {
    Value *lo = shfl(b.CreateTrunc(asInt, b.getInt32Ty()));
    Value *hi = shfl(b.CreateTrunc(b.CreateLShr(asInt, 32), b.getInt32Ty()));
    out = b.CreateOr(b.CreateZExt(lo, b.getInt64Ty()), b.CreateShl(b.CreateZExt(hi, b.getInt64Ty()), 32));
  }
  return b.CreateBitCast(out, t);
}

Value *NvptxTarget::shuffleXor(IRBuilderBase &b, Value *v, int laneMask) const {
  if (laneMask < 0 || laneMask > kWarpSize - 1)
    throw tk::InternalError("NvptxTarget::shuffleXor: lane mask " + std::to_string(laneMask) + " is not in 0.." + std::to_string(kWarpSize - 1));
  return shuffleSync(b, v, Intrinsic::nvvm_shfl_sync_bfly_i32, Intrinsic::nvvm_shfl_sync_bfly_f32, laneMask, 31,
                     "shuffleXor");
}

Value *NvptxTarget::sharedBase(IRBuilderBase &b) const {
  Module *m = b.GetInsertBlock()->getModule();
  if (GlobalVariable *g = m->getGlobalVariable(kSharedName)) return g;
  auto *ty = ArrayType::get(b.getInt8Ty(), 0);
  auto *g = new GlobalVariable(*m, ty, /*isConstant=*/false, GlobalValue::ExternalLinkage, nullptr, kSharedName,
                               nullptr, GlobalValue::NotThreadLocal, sharedAddressSpace());
  // 1024 bytes: wgmma's 128-byte swizzle repeats every 1024 bytes of the
  // shared window, and descriptors assume the pattern starts there.
  g->setAlignment(Align(1024));
  return g;
}

// ---- masked global accesses -------------------------------------------------

namespace {
// How a masked access of a type travels through inline PTX: `count` (1, 2
// or 4) registers of `word`, the vector of them having the type's bits.
// Elements of at most 32 bits are packed into b32 words, as LLVM packs an
// unmasked <8 x half> into ld.global.v4.b32; one byte travels in a 16-bit
// register, PTX's narrowest.
struct Words {
  Type *word;
  unsigned count;
  const char *ptxType;     // "b16", "b32", "b64" or "u8"
  const char *constraint;  // "h", "r" or "l"
};

Words wordsOf(IRBuilderBase &b, Type *ty, unsigned align, const char *what) {
  Type *elem = ty->getScalarType();
  const unsigned bits = unsigned(ty->getPrimitiveSizeInBits());
  const bool sized = bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 128;
  if (!(elem->isIntegerTy() || elem->isFloatingPointTy()) || !sized)
    throw tk::InternalError(std::string("NvptxTarget::") + what +
                                ": want an integer or floating-point scalar or vector of 1, 2, 4, 8 or 16 bytes");
  if (ty->isVectorTy() && align * 8 < bits)
    throw tk::InternalError(std::string("NvptxTarget::") + what + ": a vector access must be aligned to its size");
  if (bits == 8) return {b.getInt16Ty(), 1, "u8", "h"};
  if (bits == 16) return {b.getInt16Ty(), 1, "b16", "h"};
  if (elem->getPrimitiveSizeInBits() == 64) return {b.getInt64Ty(), bits / 64, "b64", "l"};
  return {b.getInt32Ty(), bits / 32, "b32", "r"};
}

// ty's bits as the words of `w` (one word, or a vector of them), and back.
Value *toWords(IRBuilderBase &b, Value *v, const Words &w) {
  if (v->getType()->getPrimitiveSizeInBits() == 8) return b.CreateZExt(b.CreateBitCast(v, b.getInt8Ty()), w.word);
  return b.CreateBitCast(v, w.count == 1 ? w.word : FixedVectorType::get(w.word, w.count));
}
Value *fromWords(IRBuilderBase &b, Value *v, Type *ty) {
  if (ty->getPrimitiveSizeInBits() == 8) return b.CreateBitCast(b.CreateTrunc(v, b.getInt8Ty()), ty);
  return b.CreateBitCast(v, ty);
}

std::string vectorSuffix(const Words &w) { return w.count == 1 ? "" : ".v" + std::to_string(w.count); }

// LLVM's own rule for ld.global.nc (NVPTXISelDAGToDAG's canLowerToLDG): every
// object the pointer may be based on is a noalias, read-only kernel parameter.
bool readOnlyGlobal(Value *ptr) {
  SmallVector<const Value *, 4> objects;
  getUnderlyingObjects(ptr, objects);
  for (const Value *o : objects) {
    auto *arg = dyn_cast<Argument>(o);
    if (!arg || !arg->hasNoAliasAttr() || !arg->onlyReadsMemory()) return false;
  }
  return !objects.empty();
}

// The opcode of a global access up to its vector suffix, PTX ISA "ld"/"st":
// `ld.global[.cop][.nc]`, or `ld.global.L1::evict_P` where an eviction
// policy comes without a cache operator (the two are alternative forms),
// then `.L2::cache_hint` with an L2 policy operand for any eviction policy
// (what Triton emits), or `ld.volatile.global` alone.
std::string accessOpcode(const char *op, const ir::MemoryHints &h, bool nc) {
  if (h.isVolatile) return std::string(op) + ".volatile.global";
  std::string s = std::string(op) + ".global";
  if (!h.cache.empty()) s += "." + h.cache;
  if (nc) s += ".nc";
  if (!h.evict.empty()) s += (h.cache.empty() ? ".L1::evict_" + h.evict : std::string()) + ".L2::cache_hint";
  return s;
}

// The 64-bit L2 cache policy `.L2::cache_hint` reads: every line this
// access touches gets the eviction priority (fraction 1.0). No memory
// access, so LLVM computes it once per kernel where it can.
Value *l2Policy(IRBuilderBase &b, const std::string &evict) {
  auto *fn = InlineAsm::get(FunctionType::get(b.getInt64Ty(), false),
                            "createpolicy.fractional.L2::evict_" + evict + ".b64 $0, 1.0;", "=l",
                            /*hasSideEffects=*/false);
  CallInst *call = b.CreateCall(fn);
  call->setDoesNotAccessMemory();
  call->setDoesNotThrow();
  return call;
}

// The access as structure (backend/nvptx/MaskedAccess.h).
MaskedAccess maskedAccess(bool load, const std::string &opcode, const Words &w, bool policy) {
  return MaskedAccess{load, opcode + vectorSuffix(w) + "." + w.ptxType, w.count, w.constraint[0], policy};
}
}  // namespace

// `@p ld.global[...][.vN].bW {...}, [ptr][, policy];` with the outputs tied
// to `other`, so a masked-off lane keeps it. The asm only reads memory: the
// call says so (optimizations may drop it when unused, never move a store
// across it), and the "memory" clobber makes the machine instruction a
// memory access that later passes keep in order. A volatile load is a side
// effect, so none of that happens to it.
Value *NvptxTarget::maskedLoad(IRBuilderBase &b, Type *ty, Value *ptr, Value *pred, Value *other, unsigned align,
                               const ir::MemoryHints &hints, const TagAccess &tag) const {
  Words w = wordsOf(b, ty, align, "maskedLoad");
  const unsigned n = w.count;
  // Operands: the n outputs, the pointer, the predicate, the n tied inputs,
  // the policy (the predicate and the policy where there is one).
  const bool nc = !hints.isVolatile && (hints.cache.empty() || hints.cache == "ca" || hints.cache == "cg" ||
                                        hints.cache == "cs") && readOnlyGlobal(ptr);
  const MaskedAccess access = maskedAccess(true, accessOpcode("ld", hints, nc), w, !hints.evict.empty());

  std::vector<Type *> results(n, w.word);
  Type *ret = n == 1 ? w.word : static_cast<Type *>(StructType::get(b.getContext(), results));
  std::vector<Value *> args{ptr};
  if (pred) args.push_back(pred);
  Value *otherWords = toWords(b, other, w);
  for (unsigned i = 0; i < n; ++i) args.push_back(n == 1 ? otherWords : b.CreateExtractElement(otherWords, uint64_t(i)));
  if (!hints.evict.empty()) args.push_back(l2Policy(b, hints.evict));
  std::vector<Type *> params;
  for (Value *a : args) params.push_back(a->getType());
  auto *asmFn = InlineAsm::get(FunctionType::get(ret, params, false), access.text(pred != nullptr),
                               access.constraints(pred != nullptr), hints.isVolatile);
  CallInst *call = b.CreateCall(asmFn, args);
  if (!hints.isVolatile) {
    call->setOnlyReadsMemory();
    call->addFnAttr(Attribute::WillReturn);
  }
  call->setDoesNotThrow();
  if (pred) access.attachTo(*call);  // recomputeAccessPredicates may render it again
  tag(*call);
  Value *loaded = call;
  if (n > 1) {
    loaded = PoisonValue::get(FixedVectorType::get(w.word, n));
    for (unsigned i = 0; i < n; ++i) loaded = b.CreateInsertElement(loaded, b.CreateExtractValue(call, i), uint64_t(i));
  }
  return fromWords(b, loaded, ty);
}

// `@p st.global[...][.vN].bW [ptr], {...}[, policy];`: a side effect, so it
// is never dropped or moved across another memory access.
void NvptxTarget::maskedStore(IRBuilderBase &b, Value *value, Value *ptr, Value *pred, unsigned align,
                              const ir::MemoryHints &hints, const TagAccess &tag) const {
  Words w = wordsOf(b, value->getType(), align, "maskedStore");
  const unsigned n = w.count;
  // Operands: the pointer, the predicate, the n words, the policy.
  const MaskedAccess access = maskedAccess(false, accessOpcode("st", hints, false), w, !hints.evict.empty());
  std::vector<Value *> args{ptr};
  if (pred) args.push_back(pred);
  Value *words = toWords(b, value, w);
  for (unsigned i = 0; i < n; ++i) args.push_back(n == 1 ? words : b.CreateExtractElement(words, uint64_t(i)));
  if (!hints.evict.empty()) args.push_back(l2Policy(b, hints.evict));
  std::vector<Type *> params;
  for (Value *a : args) params.push_back(a->getType());
  auto *asmFn = InlineAsm::get(FunctionType::get(b.getVoidTy(), params, false), access.text(pred != nullptr),
                               access.constraints(pred != nullptr), /*hasSideEffects=*/true);
  CallInst *call = b.CreateCall(asmFn, args);
  if (!hints.isVolatile) call->setOnlyWritesMemory();
  call->setDoesNotThrow();
  if (pred) access.attachTo(*call);  // recomputeAccessPredicates may render it again
  tag(*call);
}

// ---- asynchronous copies ------------------------------------------------

void NvptxTarget::cpAsync(IRBuilderBase &b, Value *dst, Value *src, int bytes, Value *srcBytes,
                          const TagAccess &tag) const {
  if (bytes != 4 && bytes != 8 && bytes != 16)
    throw tk::InternalError("NvptxTarget::cpAsync: " + std::to_string(bytes) + " bytes; want 4, 8 or 16");
  auto *dt = dyn_cast<PointerType>(dst->getType());
  auto *st = dyn_cast<PointerType>(src->getType());
  if (!dt || dt->getAddressSpace() != sharedAddressSpace() || !st || st->getAddressSpace() != globalAddressSpace())
    throw tk::InternalError(
        "NvptxTarget::cpAsync: want a shared (addrspace 3) destination and a global "
        "(addrspace 1) source");
  // 16 bytes go .cg (L2 only: an operand tile is read once per block);
  // smaller copies exist only as .ca.
  static const Intrinsic::ID full[3] = {Intrinsic::nvvm_cp_async_ca_shared_global_4,
                                        Intrinsic::nvvm_cp_async_ca_shared_global_8,
                                        Intrinsic::nvvm_cp_async_cg_shared_global_16};
  static const Intrinsic::ID sized[3] = {Intrinsic::nvvm_cp_async_ca_shared_global_4_s,
                                         Intrinsic::nvvm_cp_async_ca_shared_global_8_s,
                                         Intrinsic::nvvm_cp_async_cg_shared_global_16_s};
  const int k = bytes == 4 ? 0 : bytes == 8 ? 1 : 2;
  auto *c = dyn_cast<ConstantInt>(srcBytes);
  Value *call = c && c->getZExtValue() == uint64_t(bytes) ? callIntrinsic(b, full[k], {dst, src})
                                                          : callIntrinsic(b, sized[k], {dst, src, srcBytes});
  tag(*cast<Instruction>(call));
}

void NvptxTarget::cpAsyncCommitGroup(IRBuilderBase &b) const {
  callIntrinsic(b, Intrinsic::nvvm_cp_async_commit_group);
}

void NvptxTarget::cpAsyncWaitGroup(IRBuilderBase &b, int n) const {
  if (n < 0) throw tk::InternalError("NvptxTarget::cpAsyncWaitGroup: negative group count");
  callIntrinsic(b, Intrinsic::nvvm_cp_async_wait_group, {b.getInt32(static_cast<uint32_t>(n))});
}

// ---- math ---------------------------------------------------------------

// __nv_NAME (f64) or __nv_NAMEf (f32), e.g. __nv_erff, __nv_atan2f.
static Value *libdeviceCall(IRBuilderBase &b, MathFn f, Value *x, Value *y) {
  Type *t = x->getType();
  std::string name = std::string("__nv_") + lower::mathFnName(f) + (t->isFloatTy() ? "f" : "");
  std::vector<Value *> args = {x};
  if (y) args.push_back(y);
  std::vector<Type *> params(args.size(), t);
  FunctionCallee fn = b.GetInsertBlock()->getModule()->getOrInsertFunction(name, FunctionType::get(t, params, false));
  CallInst *call = b.CreateCall(fn, args);
  call->setDoesNotAccessMemory();
  call->setDoesNotThrow();
  return call;
}

// The math that is one PTX instruction whatever the libdevice setting:
// div.rn and sqrt.rn (what libdevice's __nv_fdiv_rn and __nv_fsqrt_rn call,
// without their ftz variants: tk keeps denormals), and div.full.f32, the
// fast division CUDA's __fdividef and Triton's fdiv use, which LLVM 19 has
// no intrinsic for. PTX has no div.full.f64: fdiv on f64 is div.rn.f64.
static Value *instructionMath(IRBuilderBase &b, MathFn f, Value *x, Value *y) {
  const bool f32 = x->getType()->isFloatTy();
  Module *m = b.GetInsertBlock()->getModule();
  switch (f) {
    case MathFn::Fdiv:
      if (f32) {
        auto *fty = FunctionType::get(b.getFloatTy(), {b.getFloatTy(), b.getFloatTy()}, false);
        CallInst *call = b.CreateCall(InlineAsm::get(fty, "div.full.f32 $0, $1, $2;", "=f,f,f", false), {x, y});
        call->setDoesNotAccessMemory();
        return call;
      }
      [[fallthrough]];
    case MathFn::DivRn:
      return b.CreateCall(Intrinsic::getDeclaration(m, f32 ? Intrinsic::nvvm_div_rn_f : Intrinsic::nvvm_div_rn_d),
                          {x, y});
    case MathFn::SqrtRn:
      return b.CreateCall(Intrinsic::getDeclaration(m, f32 ? Intrinsic::nvvm_sqrt_rn_f : Intrinsic::nvvm_sqrt_rn_d),
                          {x});
    default: break;
  }
  throw tk::InternalError(std::string("NvptxTarget::math: no instruction for ") + lower::mathFnName(f));
}

Value *NvptxTarget::math(IRBuilderBase &b, MathFn f, Value *x, Value *y) const {
  Type *t = x->getType();
  const bool binary = lower::mathFnArity(f) == 2;
  if (binary && (!y || y->getType() != t))
    throw tk::InternalError(std::string("NvptxTarget::math: ") + lower::mathFnName(f) +
                                " takes two operands of one type");
  if (auto *vt = dyn_cast<FixedVectorType>(t)) {  // lane by lane
    Value *out = PoisonValue::get(vt);
    for (unsigned i = 0; i < vt->getNumElements(); ++i)
      out = b.CreateInsertElement(
          out, math(b, f, b.CreateExtractElement(x, i), binary ? b.CreateExtractElement(y, i) : nullptr), i);
    return out;
  }
  if (!t->isFloatTy() && !t->isDoubleTy())
    throw tk::InternalError(std::string("NvptxTarget::math: ") + lower::mathFnName(f) +
                                " takes f32 or f64 (lowering computes f16/bf16 in f32)");
  if (!binary) y = nullptr;
  if (!lower::mathFnIsLibraryCall(f)) return instructionMath(b, f, x, y);
  if (libdevice_) return libdeviceCall(b, f, x, y);
  return approxMath(b, f, x, y);
}

// ---- print and assert -------------------------------------------------------

// A string constant in global memory, as the generic pointer the CUDA
// runtime's functions take.
static Value *genericString(IRBuilderBase &b, const std::string &s) {
  GlobalVariable *g = b.CreateGlobalString(s, "tk.str", /*AddressSpace=*/1, b.GetInsertBlock()->getModule());
  return b.CreateAddrSpaceCast(g, b.getPtrTy(0));
}

// vprintf(format, buffer): the arguments are packed into a local buffer, each
// aligned to its size (i32: 4; i64, double, pointers: 8), which is what an
// LLVM struct of them lays out.
void NvptxTarget::print(IRBuilderBase &b, const std::string &format, const std::vector<Value *> &args,
                        Value * /*element*/) const {
  Module *m = b.GetInsertBlock()->getModule();
  FunctionCallee vprintf =
      m->getOrInsertFunction("vprintf", FunctionType::get(b.getInt32Ty(), {b.getPtrTy(0), b.getPtrTy(0)}, false));
  Value *buffer = ConstantPointerNull::get(b.getPtrTy(0));
  if (!args.empty()) {
    std::vector<Type *> fields;
    for (Value *a : args) fields.push_back(a->getType());
    StructType *ty = StructType::get(b.getContext(), fields);
    // In the entry block, so it is a fixed slot of the frame, not a dynamic alloca.
    BasicBlock &entry = b.GetInsertBlock()->getParent()->getEntryBlock();
    IRBuilder<> eb(&entry, entry.getFirstInsertionPt());
    AllocaInst *slot = eb.CreateAlloca(ty, nullptr, "printf.args");
    const uint64_t bytes = m->getDataLayout().getTypeAllocSize(ty);
    b.CreateLifetimeStart(slot, b.getInt64(bytes));
    for (size_t i = 0; i < args.size(); ++i) b.CreateStore(args[i], b.CreateStructGEP(ty, slot, unsigned(i)));
    b.CreateCall(vprintf, {genericString(b, format), slot});
    b.CreateLifetimeEnd(slot, b.getInt64(bytes));
    return;
  }
  b.CreateCall(vprintf, {genericString(b, format), buffer});
}

// __assertfail(message, file, line, function, charSize): prints CUDA's
// "Assertion `message` failed." line and traps the kernel.
void NvptxTarget::assertFail(IRBuilderBase &b, const std::string &message, const std::string &file, int line,
                             int /*col*/, const std::string &function) const {
  Module *m = b.GetInsertBlock()->getModule();
  Type *ptr = b.getPtrTy(0);
  FunctionCallee fail = m->getOrInsertFunction(
      "__assertfail", FunctionType::get(b.getVoidTy(), {ptr, ptr, b.getInt32Ty(), ptr, b.getInt64Ty()}, false));
  const std::string text = message.empty() ? "assertion failed" : message;
  b.CreateCall(fail, {genericString(b, text), genericString(b, file), b.getInt32(uint32_t(line)),
                      genericString(b, function), b.getInt64(1)});
}

}  // namespace tk::nvptx
