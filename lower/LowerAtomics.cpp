// Lowering of atomic_rmw and atomic_cas: one Target atomic per element, made
// by the element's owner, with f32/f64 max and min built from integer
// atomics and a scalar atomic's ordering widened to the whole program.
#include <stdexcept>

#include "lower/FunctionLowering.h"

namespace tk::lower {

// Atomics: one instruction per element, by the element's owner only (a
// scalar atomic by the block's first thread), so each happens once. The old
// values reach the other threads through shared memory when they are used.
//
// A scalar atomic is the program's, not one thread's: a program that stores a
// tile and then releases a lock with `atomic_xchg(lock, 0)` means all of its
// stores, though thread 0 alone makes the xchg. So one that releases waits at
// a barrier first (the barrier orders every thread's earlier accesses before
// thread 0's release, which is cumulative in PTX's memory model), and one
// that acquires is followed by a barrier (shareFromOwners' when its result is
// used) that orders the acquire before every thread's later accesses. The
// first barrier also keeps a scalar loaded by every thread uniform: without
// it thread 0's `atomic_xchg(count, 1)` may land before thread 1's
// `load(count)`, and the threads branch apart (tests/kernels/
// layer_norm_bwd.tk then fails on the sim with a barrier only thread 0
// reaches). Tile atomics keep CUDA's and Triton's per-thread semantics.
Regs FunctionLowering::lowerAtomic(ir::Op &op) {
  const bool cas = op.is(ir::OpKind::AtomicCas);
  const ir::Type &pt = op.operand(0)->type();
  const ir::Type &rt = op.result()->type();
  llvm::Type *ty = elemType(rt.elem);
  const Regs &ptrs = regs(op.operand(0));
  const Regs &a = regs(op.operand(1));
  const Regs *b = cas ? &regs(op.operand(2)) : nullptr;
  const size_t maskAt = cas ? 3 : 2;
  const Regs *mask = op.numOperands() > maskAt ? &regs(op.operand(maskAt)) : nullptr;
  const ir::AtomicSem sem = ir::atomicSemOf(op);
  const bool scalar = !pt.isTile();
  llvm::Value *owner = nullptr;
  if (scalar) {
    owner = b_.CreateICmpEQ(tid_, b_.getInt32(0));
  } else {
    RegisterMap rm(pt.layout, pt.shape);
    if (rm.replicated()) owner = ownerPredicate(pt, rm);
  }
  if (scalar && ir::atomicReleases(sem)) barrier(op.loc());
  Regs out;
  for (size_t r = 0; r < ptrs.size(); ++r) {
    llvm::Value *pred = mask ? (*mask)[r] : nullptr;
    if (owner) pred = pred ? b_.CreateAnd(pred, owner) : owner;
    auto emit = [&]() { return atomicElement(op, ptrs[r], a[r], b ? (*b)[r] : nullptr); };
    out.push_back(guarded(pred, ty, emit, llvm::Constant::getNullValue(ty)));
  }
  if (owner && used_.count(op.result())) return shareFromOwners(rt, out, owner, op.loc());
  if (scalar && ir::atomicAcquires(sem)) barrier(op.loc());
  return out;
}

// One element's atomic at `ptr` with operand `a` (and `b`, compare-and-swap's
// new value): the old value. xchg on floats moves the bits. Float max and min
// order by the bits, as IEEE 754's totalOrder: a value with its sign bit
// clear (+0.0 .. +inf, +NaN) compares as a signed integer, above every
// sign-set one; among sign-set values (-0.0 .. -inf, -NaN) the larger
// magnitude is the smaller float, and the larger unsigned integer. So max is
// a signed max for a sign-clear value and an unsigned min for a sign-set one
// (min mirrors it), each right whatever sign the memory holds. Hence -0.0 <
// +0.0, and a NaN is above +inf (sign clear) or below -inf (sign set).
llvm::Value *FunctionLowering::atomicElement(const ir::Op &op, llvm::Value *ptr, llvm::Value *a, llvm::Value *b) {
  const ir::AtomicSem sem = ir::atomicSemOf(op);
  const ir::AtomicScope scope = ir::atomicScopeOf(op);
  auto tag = [&](llvm::Instruction &i) { tagGlobal(&i, op.loc()); };
  if (op.is(ir::OpKind::AtomicCas)) return target_.atomicCas(b_, ptr, a, b, sem, scope, tag);
  llvm::Type *ty = a->getType();
  const ir::AtomicKind kind = op.enumAttr<ir::AtomicKind>("kind");
  const bool fp = ty->isFloatingPointTy();
  llvm::Type *ity = b_.getIntNTy(ty->getPrimitiveSizeInBits());
  auto rmw = [&](AtomicRmwOp o, llvm::Value *v) { return target_.atomicRmw(b_, o, ptr, v, sem, scope, tag); };
  switch (kind) {
    case ir::AtomicKind::Add: return rmw(AtomicRmwOp::Add, a);
    case ir::AtomicKind::And: return rmw(AtomicRmwOp::And, a);
    case ir::AtomicKind::Or: return rmw(AtomicRmwOp::Or, a);
    case ir::AtomicKind::Xor: return rmw(AtomicRmwOp::Xor, a);
    case ir::AtomicKind::Xchg:
      if (!fp) return rmw(AtomicRmwOp::Exch, a);
      return b_.CreateBitCast(rmw(AtomicRmwOp::Exch, b_.CreateBitCast(a, ity)), ty);
    case ir::AtomicKind::Max:
    case ir::AtomicKind::Min: {
      const bool max = kind == ir::AtomicKind::Max;
      if (!fp) return rmw(max ? AtomicRmwOp::Max : AtomicRmwOp::Min, a);
      llvm::Value *bits = b_.CreateBitCast(a, ity);
      llvm::Value *negative = b_.CreateICmpSLT(bits, llvm::ConstantInt::get(ity, 0));
      llvm::Value *zero = llvm::ConstantInt::get(ity, 0);
      llvm::Value *whenClear =
          guarded(b_.CreateNot(negative), ity, [&] { return rmw(max ? AtomicRmwOp::Max : AtomicRmwOp::Min, bits); }, zero);
      llvm::Value *old = guarded(
          negative, ity, [&] { return rmw(max ? AtomicRmwOp::UMin : AtomicRmwOp::UMax, bits); }, whenClear);
      return b_.CreateBitCast(old, ty);
    }
  }
  throw std::logic_error("lowerAtomic: unknown kind");
}

}  // namespace tk::lower
