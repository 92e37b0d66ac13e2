// SimTarget: the lowering's machine hooks answered with calls into the sim
// runtime (extern "C" functions in this process, bound by the JIT) and libm.
#include "backend/sim/SimTarget.h"
#include "tk/error.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/TargetSelect.h>

#include <functional>
#include <mutex>
#include <stdexcept>

#include "backend/sim/Runtime.h"
#include "backend/sim/Simulator.h"
#include "tk/gpu.h"

namespace tk::sim {

using namespace llvm;
using lower::MathFn;

const HostTarget &hostTarget() {
  // Process-wide and immutable once built: LLVM's target registry is global.
  static const HostTarget host = [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    auto jtmb = orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) throw SimError("sim: cannot detect the host target: " + toString(jtmb.takeError()));
    auto dl = jtmb->getDefaultDataLayoutForTarget();
    if (!dl) throw SimError("sim: no data layout for the host: " + toString(dl.takeError()));
    return HostTarget{jtmb->getTargetTriple().str(), dl->getStringRepresentation()};
  }();
  return host;
}

SimTarget::SimTarget(std::string arch)
    : triple_(hostTarget().triple), dataLayout_(hostTarget().dataLayout), arch_(std::move(arch)) {}

void SimTarget::configureModule(Module &m) const {
  m.setTargetTriple(triple_);
  m.setDataLayout(dataLayout_);
}

void SimTarget::markKernel(Function &f, int numThreads) const {
  if (numThreads < 1 || numThreads > 1024)
    throw tk::InternalError("SimTarget::markKernel: " + std::to_string(numThreads) +
                                " threads per block; the sim allows 1..1024");
  f.setLinkage(GlobalValue::ExternalLinkage);
  f.addFnAttr(kNumThreadsAttr, std::to_string(numThreads));
}

// Ids and the shared base are constant for a thread's whole run, so they are
// declared pure: the optimizer may hoist and merge them.
static Function *pureFn(Module &m, const char *name, Type *ret, ArrayRef<Type *> params) {
  FunctionCallee c = m.getOrInsertFunction(name, FunctionType::get(ret, params, false));
  auto *f = cast<Function>(c.getCallee());
  f->setDoesNotThrow();
  f->setDoesNotAccessMemory();
  f->setWillReturn();
  f->addFnAttr(Attribute::Speculatable);
  return f;
}

// Collectives must not be moved across control flow or merged: convergent,
// and treated as touching memory (a barrier orders shared-memory accesses).
static Function *collectiveFn(Module &m, const char *name, Type *ret, ArrayRef<Type *> params) {
  FunctionCallee c = m.getOrInsertFunction(name, FunctionType::get(ret, params, false));
  auto *f = cast<Function>(c.getCallee());
  f->setDoesNotThrow();
  f->setConvergent();
  return f;
}

static Module &moduleOf(IRBuilderBase &b) { return *b.GetInsertBlock()->getModule(); }

static void checkAxis(int axis, const char *what) {
  if (axis < 0 || axis > 2)
    throw tk::InternalError(std::string("SimTarget::") + what + ": axis " + std::to_string(axis) +
                                " is not 0, 1 or 2");
}

Value *SimTarget::threadId(IRBuilderBase &b) const {
  return b.CreateCall(pureFn(moduleOf(b), kFnTid, b.getInt32Ty(), {}));
}

Value *SimTarget::blockId(IRBuilderBase &b, int axis) const {
  checkAxis(axis, "blockId");
  return b.CreateCall(pureFn(moduleOf(b), kFnCtaid, b.getInt32Ty(), {b.getInt32Ty()}), {b.getInt32(axis)});
}

Value *SimTarget::gridDim(IRBuilderBase &b, int axis) const {
  checkAxis(axis, "gridDim");
  return b.CreateCall(pureFn(moduleOf(b), kFnNctaid, b.getInt32Ty(), {b.getInt32Ty()}), {b.getInt32(axis)});
}

void SimTarget::barrier(IRBuilderBase &b) const {
  b.CreateCall(collectiveFn(moduleOf(b), kFnBarrier, b.getVoidTy(), {}));
}

// A shuffle through runtime entry points `i32Fn`/`f32Fn`(value, lane operand).
// Like NvptxTarget: other scalars of at most 64 bits travel as one or two i32s.
static Value *shuffleCall(IRBuilderBase &b, Value *v, const char *i32Fn, const char *f32Fn, int lane,
                          const char *what) {
  Module &m = moduleOf(b);
  Type *t = v->getType();
  Type *i32 = b.getInt32Ty();
  Value *laneV = b.getInt32(lane);
  if (t->isFloatTy()) return b.CreateCall(collectiveFn(m, f32Fn, t, {t, i32}), {v, laneV});
  auto shfl = [&](Value *word) { return b.CreateCall(collectiveFn(m, i32Fn, i32, {i32, i32}), {word, laneV}); };
  if (t->isIntegerTy(32)) return shfl(v);
  unsigned bits = t->getPrimitiveSizeInBits();
  if (t->isVectorTy() || t->isPointerTy() || bits == 0 || bits > 64)
    throw tk::InternalError(std::string("SimTarget::") + what +
                                ": cannot shuffle a value of this type (want a scalar "
                                "of at most 64 bits)");
  Value *asInt = b.CreateBitCast(v, b.getIntNTy(bits));
  Value *out;
  if (bits <= 32) {
    out = b.CreateTrunc(shfl(b.CreateZExt(asInt, i32)), b.getIntNTy(bits));
  } else {
    Value *lo = shfl(b.CreateTrunc(asInt, i32));
    Value *hi = shfl(b.CreateTrunc(b.CreateLShr(asInt, 32), i32));
    out = b.CreateOr(b.CreateZExt(lo, b.getInt64Ty()), b.CreateShl(b.CreateZExt(hi, b.getInt64Ty()), 32));
  }
  return b.CreateBitCast(out, t);
}

Value *SimTarget::shuffleXor(IRBuilderBase &b, Value *v, int laneMask) const {
  if (laneMask < 0 || laneMask > kWarpSize - 1)
    throw tk::InternalError("SimTarget::shuffleXor: lane mask " + std::to_string(laneMask) + " is not in 0.." + std::to_string(kWarpSize - 1));
  return shuffleCall(b, v, kFnShflI32, kFnShflF32, laneMask, "shuffleXor");
}

Value *SimTarget::sharedBase(IRBuilderBase &b) const {
  return b.CreateCall(pureFn(moduleOf(b), kFnSharedBase, b.getPtrTy(0), {}));
}

// A masked access is a branch around a plain one: the instrumentation sees
// and counts the plain access like any other, and a masked-off lane never
// reaches it, so its address is neither checked nor read.
static void onlyWhere(IRBuilderBase &b, Value *pred, const char *name, const std::function<void()> &access) {
  Function *f = b.GetInsertBlock()->getParent();
  auto *then = BasicBlock::Create(b.getContext(), name, f);
  auto *join = BasicBlock::Create(b.getContext(), std::string(name) + ".join", f);
  b.CreateCondBr(pred, then, join);
  b.SetInsertPoint(then);
  access();
  b.CreateBr(join);
  b.SetInsertPoint(join);
}

// Cache operators and eviction policies mean nothing to the host's caches; a
// volatile access stays a volatile LLVM access, so the JIT keeps each one
// (a flag polled in a loop is read every iteration).
Value *SimTarget::maskedLoad(IRBuilderBase &b, Type *ty, Value *ptr, Value *pred, Value *other, unsigned align,
                             const ir::MemoryHints &hints, const TagAccess &tag) const {
  auto load = [&] {
    LoadInst *ld = b.CreateAlignedLoad(ty, ptr, Align(align), hints.isVolatile);
    tag(*ld);
    return ld;
  };
  if (!pred) return load();
  BasicBlock *from = b.GetInsertBlock();
  LoadInst *ld = nullptr;
  onlyWhere(b, pred, "lane", [&] { ld = load(); });
  PHINode *phi = b.CreatePHI(ty, 2);
  phi->addIncoming(ld, ld->getParent());
  phi->addIncoming(other, from);
  return phi;
}

void SimTarget::maskedStore(IRBuilderBase &b, Value *value, Value *ptr, Value *pred, unsigned align,
                            const ir::MemoryHints &hints, const TagAccess &tag) const {
  auto store = [&] { tag(*b.CreateAlignedStore(value, ptr, Align(align), hints.isVolatile)); };
  if (!pred) return store();
  onlyWhere(b, pred, "store.lane", store);
}

// The sim's atomics are the host's: blocks on different workers run
// concurrently, so the ordering matters to the host compiler and CPU as it
// does on a GPU (a spin lock's protected accesses must stay inside it). The
// host has one scope, the system, which is at least as strong as any asked.
static AtomicOrdering hostOrdering(ir::AtomicSem sem) {
  switch (sem) {
    case ir::AtomicSem::Relaxed: return AtomicOrdering::Monotonic;
    case ir::AtomicSem::Acquire: return AtomicOrdering::Acquire;
    case ir::AtomicSem::Release: return AtomicOrdering::Release;
    case ir::AtomicSem::AcqRel: return AtomicOrdering::AcquireRelease;
  }
  return AtomicOrdering::SequentiallyConsistent;
}

Value *SimTarget::atomicRmw(IRBuilderBase &b, lower::AtomicRmwOp op, Value *ptr, Value *value, ir::AtomicSem sem,
                            ir::AtomicScope, const TagAccess &tag) const {
  using lower::AtomicRmwOp;
  const bool fp = value->getType()->isFloatingPointTy();
  if (fp && op != AtomicRmwOp::Add) throw tk::InternalError("SimTarget::atomicRmw: only add takes a float");
  AtomicRMWInst::BinOp bin = AtomicRMWInst::Add;
  switch (op) {
    case AtomicRmwOp::Add: bin = fp ? AtomicRMWInst::FAdd : AtomicRMWInst::Add; break;
    case AtomicRmwOp::Max: bin = AtomicRMWInst::Max; break;
    case AtomicRmwOp::Min: bin = AtomicRMWInst::Min; break;
    case AtomicRmwOp::UMax: bin = AtomicRMWInst::UMax; break;
    case AtomicRmwOp::UMin: bin = AtomicRMWInst::UMin; break;
    case AtomicRmwOp::Exch: bin = AtomicRMWInst::Xchg; break;
    case AtomicRmwOp::And: bin = AtomicRMWInst::And; break;
    case AtomicRmwOp::Or: bin = AtomicRMWInst::Or; break;
    case AtomicRmwOp::Xor: bin = AtomicRMWInst::Xor; break;
  }
  const Align align(value->getType()->getPrimitiveSizeInBits() / 8);
  // sem is a success ordering, never seq_cst (the front end offers none), so
  // AcquireRelease is valid for atomicrmw.
  AtomicRMWInst *x = b.CreateAtomicRMW(bin, ptr, value, align, hostOrdering(sem));
  tag(*x);
  return x;
}

Value *SimTarget::atomicCas(IRBuilderBase &b, Value *ptr, Value *expected, Value *desired, ir::AtomicSem sem,
                            ir::AtomicScope, const TagAccess &tag) const {
  const AtomicOrdering success = hostOrdering(sem);
  // A failed compare-and-swap only reads: it keeps the acquire half.
  const AtomicOrdering failure = isAcquireOrStronger(success) ? AtomicOrdering::Acquire : AtomicOrdering::Monotonic;
  const Align align(expected->getType()->getPrimitiveSizeInBits() / 8);
  AtomicCmpXchgInst *x = b.CreateAtomicCmpXchg(ptr, expected, desired, align, success, failure);
  tag(*x);
  return b.CreateExtractValue(x, 0);
}

// Both return a 16-byte vector (in a register, as the runtime's C functions
// return theirs) of which the first `num` (ldmatrix) or 4 (mma) lanes count.
std::vector<Value *> SimTarget::ldmatrix(IRBuilderBase &b, Value *rowAddress, int num, bool trans) const {
  if (num != 1 && num != 2 && num != 4)
    throw tk::InternalError("SimTarget::ldmatrix: " + std::to_string(num) + " matrices; want 1, 2 or 4");
  if (!rowAddress->getType()->isPointerTy() || rowAddress->getType()->getPointerAddressSpace() != 0)
    throw tk::InternalError("SimTarget::ldmatrix: the row address must be a pointer in address space 0");
  Type *i32 = b.getInt32Ty();
  Function *fn = collectiveFn(moduleOf(b), kFnLdmatrix, FixedVectorType::get(i32, 4), {b.getPtrTy(0), i32, i32});
  Value *regs = b.CreateCall(fn, {rowAddress, b.getInt32(num), b.getInt32(trans ? 1 : 0)});
  std::vector<Value *> out;
  for (int i = 0; i < num; ++i) out.push_back(b.CreateExtractElement(regs, uint64_t(i)));
  return out;
}

// The operands travel as scalars (integer and float registers), which every
// host ABI passes the same way from IR and from C; s8's i32 C and D travel
// as f32 bits. `kind` is an MmaType (Runtime.h).
static std::vector<Value *> simMma(IRBuilderBase &b, const char *name, uint32_t kind, const std::vector<Value *> &a,
                                   const std::vector<Value *> &bFrag, const std::vector<Value *> &c) {
  const bool intAcc = kind == kMmaS8;
  auto check = [&](const std::vector<Value *> &v, size_t n, bool f32, const char *what) {
    bool ok = v.size() == n;
    for (Value *x : v) ok = ok && (f32 ? x->getType()->isFloatTy() : x->getType()->isIntegerTy(32));
    if (!ok)
      throw tk::InternalError(std::string("SimTarget::") + name + ": " + what + " must be " + std::to_string(n) +
                                  (f32 ? " f32" : " i32") + " values");
  };
  check(a, 4, false, "A");
  check(bFrag, 2, false, "B");
  check(c, 4, !intAcc, "C");
  Type *i32 = b.getInt32Ty(), *f32 = b.getFloatTy();
  std::vector<Type *> params(6, i32);
  params.insert(params.end(), 4, f32);
  params.push_back(i32);
  Function *fn = collectiveFn(moduleOf(b), kFnMma, FixedVectorType::get(f32, 4), params);
  std::vector<Value *> args(a);
  args.insert(args.end(), bFrag.begin(), bFrag.end());
  for (Value *x : c) args.push_back(intAcc ? b.CreateBitCast(x, f32) : x);
  args.push_back(b.getInt32(kind));
  Value *d = b.CreateCall(fn, args);
  std::vector<Value *> out;
  for (int i = 0; i < 4; ++i) {
    Value *x = b.CreateExtractElement(d, uint64_t(i));
    out.push_back(intAcc ? b.CreateBitCast(x, i32) : x);
  }
  return out;
}

std::vector<Value *> SimTarget::mmaM16N8K16(IRBuilderBase &b, bool bf16, const std::vector<Value *> &a,
                                            const std::vector<Value *> &bFrag, const std::vector<Value *> &c) const {
  return simMma(b, "mmaM16N8K16", bf16 ? kMmaBf16 : kMmaF16, a, bFrag, c);
}
std::vector<Value *> SimTarget::mmaM16N8K8Tf32(IRBuilderBase &b, const std::vector<Value *> &a,
                                               const std::vector<Value *> &bFrag, const std::vector<Value *> &c) const {
  return simMma(b, "mmaM16N8K8Tf32", kMmaTf32, a, bFrag, c);
}
std::vector<Value *> SimTarget::mmaM16N8K32S8(IRBuilderBase &b, const std::vector<Value *> &a,
                                              const std::vector<Value *> &bFrag, const std::vector<Value *> &c) const {
  return simMma(b, "mmaM16N8K32S8", kMmaS8, a, bFrag, c);
}
std::vector<Value *> SimTarget::mmaM16N8K32Fp8(IRBuilderBase &b, ir::ScalarKind atype, ir::ScalarKind btype,
                                               const std::vector<Value *> &a,
                                               const std::vector<Value *> &bFrag, const std::vector<Value *> &c) const {
  if (!usesFp8Mma()) throw tk::InternalError("SimTarget::mmaM16N8K32Fp8: " + arch_ + " has no fp8 mma");
  if (!ir::isFp8(atype) || !ir::isFp8(btype))
    throw tk::InternalError("SimTarget::mmaM16N8K32Fp8: operands must be f8e4m3 or f8e5m2");
  const bool e5A = atype == ir::ScalarKind::F8E5M2, e5B = btype == ir::ScalarKind::F8E5M2;
  const MmaType kind = e5A == e5B ? (e5A ? kMmaE5M2 : kMmaE4M3) : e5A ? kMmaE5M2E4M3 : kMmaE4M3E5M2;
  return simMma(b, "mmaM16N8K32Fp8", kind, a, bFrag, c);
}

// cvt.rna.tf32.f32 in plain IR: add half of the dropped 13 bits' weight to
// the magnitude (ties away from zero; a carry into the exponent rounds up,
// to infinity past the largest tf32) and clear them. NaN and infinity pass
// unchanged.
// fptrunc rounds to nearest even, as cvt.rn does.
Value *SimTarget::packHalves(IRBuilderBase &b, Value *lo, Value *hi, bool bf16) const {
  if (!lo->getType()->isFloatTy() || !hi->getType()->isFloatTy())
    throw tk::InternalError("SimTarget::packHalves: lo and hi must be f32");
  Type *half = bf16 ? b.getBFloatTy() : b.getHalfTy();
  Value *pair = PoisonValue::get(FixedVectorType::get(half, 2));
  pair = b.CreateInsertElement(pair, b.CreateFPTrunc(lo, half), uint64_t(0));
  pair = b.CreateInsertElement(pair, b.CreateFPTrunc(hi, half), uint64_t(1));
  return b.CreateBitCast(pair, b.getInt32Ty());
}

Value *SimTarget::roundToTf32(IRBuilderBase &b, Value *x) const {
  if (!x->getType()->isFloatTy()) throw tk::InternalError("SimTarget::roundToTf32: x must be f32");
  Value *bits = b.CreateBitCast(x, b.getInt32Ty());
  Value *rounded = b.CreateAnd(b.CreateAdd(bits, b.getInt32(0x1000)), b.getInt32(0xffffe000u));
  Value *special = b.CreateICmpEQ(b.CreateAnd(bits, b.getInt32(0x7f800000)), b.getInt32(0x7f800000));
  return b.CreateSelect(special, bits, rounded);
}

// ---- wgmma (sm_90a) -----------------------------------------------------------

Value *SimTarget::sharedWindowAddress(IRBuilderBase &b, Value *ptr) const {
  if (!ptr->getType()->isPointerTy() || ptr->getType()->getPointerAddressSpace() != 0)
    throw tk::InternalError("SimTarget::sharedWindowAddress: want a pointer in address space 0");
  Value *offset = b.CreateSub(b.CreatePtrToInt(ptr, b.getInt64Ty()), b.CreatePtrToInt(sharedBase(b), b.getInt64Ty()));
  return b.CreateTrunc(offset, b.getInt32Ty());
}

// Per-thread runtime calls (no yield): they touch only the thread's wgmma
// state, but must stay in order with the collectives around them.
static void threadCall(IRBuilderBase &b, const char *name) {
  b.CreateCall(collectiveFn(moduleOf(b), name, b.getVoidTy(), {}));
}

void SimTarget::fenceProxyAsync(IRBuilderBase &b) const { threadCall(b, kFnFenceProxyAsync); }
void SimTarget::wgmmaFence(IRBuilderBase &b) const { threadCall(b, kFnWgmmaFence); }
void SimTarget::wgmmaCommitGroup(IRBuilderBase &b) const { threadCall(b, kFnWgmmaCommit); }

// The function's accumulator array ([128 x float], the most an m64n256 needs),
// made once in its entry block.
static Value *accumulatorArray(IRBuilderBase &b) {
  Function *f = b.GetInsertBlock()->getParent();
  BasicBlock &entry = f->getEntryBlock();
  for (Instruction &i : entry)
    if (i.getName() == "tk.wgmma.acc") return &i;
  IRBuilder<> at(&entry, entry.getFirstInsertionPt());
  return at.CreateAlloca(ArrayType::get(b.getFloatTy(), 128), nullptr, "tk.wgmma.acc");
}

static Value *spill(IRBuilderBase &b, const std::vector<Value *> &acc, const char *what) {
  if (acc.size() > 128) throw tk::InternalError(std::string("SimTarget::") + what + ": more than 128 accumulators");
  Value *array = accumulatorArray(b);
  for (size_t i = 0; i < acc.size(); ++i) {
    if (!acc[i]->getType()->isFloatTy())
      throw tk::InternalError(std::string("SimTarget::") + what + ": accumulators must be f32");
    b.CreateStore(acc[i], b.CreateConstGEP1_32(b.getFloatTy(), array, unsigned(i)));
  }
  return array;
}

static std::vector<Value *> reload(IRBuilderBase &b, Value *array, size_t n) {
  std::vector<Value *> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(b.CreateLoad(b.getFloatTy(), b.CreateConstGEP1_32(b.getFloatTy(), array, unsigned(i))));
  return out;
}

std::vector<Value *> SimTarget::wgmmaMmaAsync(IRBuilderBase &b, int n, ir::ScalarKind atype, ir::ScalarKind btype,
                                              bool transA, bool transB, Value *descA, Value *descB,
                                              const std::vector<Value *> &acc) const {
  if (n < 8 || n > 256 || n % 8)
    throw tk::InternalError("SimTarget::wgmmaMmaAsync: n " + std::to_string(n) +
                                " is not a multiple of 8 in [8, 256]");
  if (!lower::wgmmaInputsValid(atype, btype, transA, transB))
    throw tk::InternalError(std::string("SimTarget::wgmmaMmaAsync: no wgmma multiplies ") +
                            lower::ptxTypeName(atype) + (transA ? "^T" : "") + " by " +
                            lower::ptxTypeName(btype) + (transB ? "^T" : ""));
  if (acc.size() != size_t(n / 2))
    throw tk::InternalError("SimTarget::wgmmaMmaAsync: want " + std::to_string(n / 2) + " accumulators");
  if (!descA->getType()->isIntegerTy(64) || !descB->getType()->isIntegerTy(64))
    throw tk::InternalError("SimTarget::wgmmaMmaAsync: descriptors must be i64");
  Value *array = spill(b, acc, "wgmmaMmaAsync");
  Type *i32 = b.getInt32Ty(), *i64 = b.getInt64Ty();
  Function *fn = collectiveFn(moduleOf(b), kFnWgmma, b.getVoidTy(), {i64, i64, b.getPtrTy(0), i32, i32});
  auto fp8 = [](ir::ScalarKind k, uint32_t e4m3, uint32_t e5m2) {
    return k == ir::ScalarKind::F8E4M3 ? e4m3 : k == ir::ScalarKind::F8E5M2 ? e5m2 : 0u;
  };
  const uint32_t flags = (atype == ir::ScalarKind::BF16 ? kWgmmaBf16 : 0u) | (transA ? kWgmmaMMajorA : 0u) |
                         (transB ? kWgmmaNMajorB : 0u) | fp8(atype, kWgmmaE4m3A, kWgmmaE5m2A) |
                         fp8(btype, kWgmmaE4m3B, kWgmmaE5m2B);
  b.CreateCall(fn, {descA, descB, array, b.getInt32(n), b.getInt32(flags)});
  return reload(b, array, acc.size());
}

std::vector<Value *> SimTarget::wgmmaMmaAsyncRegA(IRBuilderBase &b, int n, bool bf16, bool transB,
                                                  const std::vector<Value *> &a, Value *descB,
                                                  const std::vector<Value *> &acc) const {
  if (n < 8 || n > 256 || n % 8)
    throw tk::InternalError("SimTarget::wgmmaMmaAsyncRegA: n " + std::to_string(n) +
                                " is not a multiple of 8 in [8, 256]");
  if (acc.size() != size_t(n / 2))
    throw tk::InternalError("SimTarget::wgmmaMmaAsyncRegA: want " + std::to_string(n / 2) + " accumulators");
  bool ok = a.size() == 4 && descB->getType()->isIntegerTy(64);
  for (Value *v : a) ok = ok && v->getType()->isIntegerTy(32);
  if (!ok) throw tk::InternalError("SimTarget::wgmmaMmaAsyncRegA: want 4 i32 A registers and an i64 descriptor");
  Type *i32 = b.getInt32Ty(), *i64 = b.getInt64Ty();
  FunctionCallee handA =
      moduleOf(b).getOrInsertFunction(kFnWgmmaA, FunctionType::get(b.getVoidTy(), {i32, i32, i32, i32}, false));
  b.CreateCall(handA, a);
  Value *array = spill(b, acc, "wgmmaMmaAsyncRegA");
  Function *fn = collectiveFn(moduleOf(b), kFnWgmma, b.getVoidTy(), {i64, i64, b.getPtrTy(0), i32, i32});
  const uint32_t flags = (bf16 ? kWgmmaBf16 : 0u) | (transB ? kWgmmaNMajorB : 0u) | kWgmmaRegA;
  b.CreateCall(fn, {b.getInt64(0), descB, array, b.getInt32(n), b.getInt32(flags)});
  return reload(b, array, acc.size());
}

std::vector<Value *> SimTarget::wgmmaWaitGroup(IRBuilderBase &b, int pending, const std::vector<Value *> &acc) const {
  if (pending < 0 || pending > 7)
    throw tk::InternalError("SimTarget::wgmmaWaitGroup: " + std::to_string(pending) + " pending groups; want 0..7");
  Value *array = spill(b, acc, "wgmmaWaitGroup");
  Type *i32 = b.getInt32Ty();
  Function *fn = collectiveFn(moduleOf(b), kFnWgmmaWait, b.getVoidTy(), {i32, b.getPtrTy(0), i32});
  b.CreateCall(fn, {b.getInt32(pending), array, b.getInt32(int(acc.size()))});
  return reload(b, array, acc.size());
}

// The copy calls keep LLVM's default of touching any memory: no shared
// access may move across the wait that completes the copies it reads.
void SimTarget::cpAsync(IRBuilderBase &b, Value *dst, Value *src, int bytes, Value *srcBytes,
                        const TagAccess &tag) const {
  if (bytes != 4 && bytes != 8 && bytes != 16)
    throw tk::InternalError("SimTarget::cpAsync: " + std::to_string(bytes) + " bytes; want 4, 8 or 16");
  Type *ptr = b.getPtrTy(0), *i32 = b.getInt32Ty();
  FunctionCallee fn =
      moduleOf(b).getOrInsertFunction(kFnCpAsync, FunctionType::get(b.getVoidTy(), {ptr, ptr, i32, i32}, false));
  CallInst *call = b.CreateCall(fn, {dst, src, b.getInt32(static_cast<uint32_t>(bytes)), srcBytes});
  tag(*call);
}

void SimTarget::cpAsyncCommitGroup(IRBuilderBase &b) const {
  b.CreateCall(moduleOf(b).getOrInsertFunction(kFnCpAsyncCommit, FunctionType::get(b.getVoidTy(), {}, false)));
}

void SimTarget::cpAsyncWaitGroup(IRBuilderBase &b, int n) const {
  if (n < 0) throw tk::InternalError("SimTarget::cpAsyncWaitGroup: negative group count");
  FunctionCallee fn =
      moduleOf(b).getOrInsertFunction(kFnCpAsyncWait, FunctionType::get(b.getVoidTy(), {b.getInt32Ty()}, false));
  b.CreateCall(fn, {b.getInt32(static_cast<uint32_t>(n))});
}

// libm names are mathFnName's, f32 with the `f` suffix (round is C's round,
// halves away from zero; rint rounds halves to even in the default rounding
// mode); rsqrt has no libm function: 1/sqrt(x).
static const char *libmName(MathFn f) { return f == MathFn::Rsqrt ? "sqrt" : mathFnName(f); }

Value *SimTarget::math(IRBuilderBase &b, MathFn f, Value *x, Value *y) const {
  Type *t = x->getType();
  const bool binary = lower::mathFnArity(f) == 2;
  if ((!t->isFloatTy() && !t->isDoubleTy()) || (binary && (!y || y->getType() != t)))
    throw tk::InternalError(std::string("SimTarget::math: ") + mathFnName(f) + " wants " +
                                (binary ? "two f32 or f64 scalars of one type" : "an f32 or f64 scalar"));
  // The host's division and sqrt round to nearest even, as div.rn and
  // sqrt.rn; fdiv's div.full.f32 (within 2 ulp) is modelled by the exact
  // quotient, one of the values the GPU may give.
  switch (f) {
    case MathFn::DivRn:
    case MathFn::Fdiv: return b.CreateFDiv(x, y);
    case MathFn::SqrtRn: return b.CreateUnaryIntrinsic(Intrinsic::sqrt, x);
    default: break;
  }
  std::string name = libmName(f);
  if (t->isFloatTy()) name += "f";
  // GPU math has no errno: declaring libm pure lets LLVM hoist, merge and
  // vectorize the calls (the JIT'd code never reads errno).
  std::vector<Type *> params(binary ? 2 : 1, t);
  Function *fn = pureFn(moduleOf(b), name.c_str(), t, params);
  fn->removeFnAttr(Attribute::Speculatable);
  Value *r = binary ? b.CreateCall(fn, {x, y}) : b.CreateCall(fn, {x});
  if (f == MathFn::Rsqrt) r = b.CreateFDiv(ConstantFP::get(t, 1.0), r);
  return r;
}

// print and assert call the runtime, which formats the line with vsnprintf
// (the arguments travel as C varargs) and buffers it for the launch.
void SimTarget::print(IRBuilderBase &b, const std::string &format, const std::vector<Value *> &args,
                      Value *element) const {
  FunctionCallee fn = moduleOf(b).getOrInsertFunction(
      kFnPrint, FunctionType::get(b.getVoidTy(), {b.getInt32Ty(), b.getPtrTy(0)}, true));
  std::vector<Value *> all = {element, b.CreateGlobalString(format, "tk.str", 0, &moduleOf(b))};
  all.insert(all.end(), args.begin(), args.end());
  b.CreateCall(fn, all);
}

void SimTarget::beginPrintGroup(IRBuilderBase &b) const {
  b.CreateCall(moduleOf(b).getOrInsertFunction(kFnPrintGroup, FunctionType::get(b.getVoidTy(), {}, false)));
}

void SimTarget::assertFail(IRBuilderBase &b, const std::string &message, const std::string &file, int line, int col,
                           const std::string & /*function*/) const {
  Type *ptr = b.getPtrTy(0);
  FunctionCallee fn =
      moduleOf(b).getOrInsertFunction(kFnAssertFail, FunctionType::get(b.getVoidTy(), {ptr, ptr}, false));
  std::string where = file + ":" + std::to_string(line) + ":" + std::to_string(col);
  b.CreateCall(fn, {b.CreateGlobalString(message, "tk.str", 0, &moduleOf(b)),
                    b.CreateGlobalString(where, "tk.str", 0, &moduleOf(b))});
}

lower::LoweredKernel lowerForSim(ir::Function &fn, const std::string &arch, llvm::LLVMContext &ctx) {
  const SimTarget target(arch);
  try {
    return lower::lowerToLLVM(fn, target, ctx);
  } catch (const std::logic_error &e) {
    throw InternalError(e.what());
  }
}

}  // namespace tk::sim
