// Lowering of loads, stores and layout conversions: vectorised global
// accesses with per-lane masks, and conversions through shared memory.
#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <stdexcept>

#include "lower/FunctionLowering.h"
#include "lower/LocMetadata.h"

namespace tk::lower {

void FunctionLowering::tagGlobal(llvm::Instruction *inst, const ir::Location &loc) {
  setSourceLoc(*inst, loc.str());
}

void FunctionLowering::tagEmitted(const ir::Location &loc) {
  if (!b_.GetInsertBlock()->empty()) tagGlobal(&b_.GetInsertBlock()->back(), loc);
}

void FunctionLowering::tagShared(llvm::Instruction *inst, const ir::Location &loc) {
  markShared(*inst);
  tagGlobal(inst, loc);
}

void FunctionLowering::barrier(const ir::Location &loc) {
  if (consumerThreads_)
    target_.namedBarrier(b_, 1, consumerThreads_);
  else
    target_.barrier(b_);
  tagEmitted(loc);
}

llvm::Value *FunctionLowering::guarded(llvm::Value *pred, llvm::Type *ty, const std::function<llvm::Value *()> &emit,
                                       llvm::Value *other) {
  if (!pred) return emit();
  if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(pred)) return c->isOne() ? emit() : other;
  llvm::BasicBlock *from = b_.GetInsertBlock();
  auto *then = llvm::BasicBlock::Create(ctx_, "lane", llfn_);
  auto *join = llvm::BasicBlock::Create(ctx_, "lane.join", llfn_);
  b_.CreateCondBr(pred, then, join);
  b_.SetInsertPoint(then);
  llvm::Value *v = emit();
  llvm::BasicBlock *thenEnd = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  llvm::PHINode *phi = b_.CreatePHI(ty, 2);
  phi->addIncoming(v, thenEnd);
  phi->addIncoming(other, from);
  return phi;
}

// Whether the Target's masked accesses take `ty`: integer and floating-point
// scalars and vectors of a power-of-two size up to 16 bytes.
static bool maskable(llvm::Type *ty) {
  const uint64_t bits = ty->getPrimitiveSizeInBits();
  return (ty->isIntOrIntVectorTy() || ty->isFPOrFPVectorTy()) && bits >= 8 && bits <= 128 && (bits & (bits - 1)) == 0;
}

// A predicate known only at run time, and one that always holds (none).
static bool masked(llvm::Value *pred) { return pred && !llvm::isa<llvm::Constant>(pred); }
static bool always(llvm::Value *pred) {
  auto *c = llvm::dyn_cast_or_null<llvm::ConstantInt>(pred);
  return !pred || (c && c->isOne());
}

// The address computed again where it is used: `base + sext(i)` is an add or
// two, while an address computed where its pointer tile was (often before a
// reduction) holds two registers all that time. A branch around the access
// used to let LLVM sink the address into it; a predicated access needs this.
// The first computation is left to dead-code elimination.
llvm::Value *FunctionLowering::addressHere(llvm::Value *ptr) {
  auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(ptr);
  if (!gep || gep->getNumIndices() != 1) return ptr;
  auto *copy = gep->clone();
  if (auto *ext = llvm::dyn_cast<llvm::CastInst>(gep->getOperand(1))) copy->setOperand(1, b_.Insert(ext->clone()));
  return b_.Insert(copy);
}

// A conjunction of masks (a row's and a column's, typically) computed again
// where the access uses it: computed with its tile, each of a 2-D store's
// 64 row-and-column predicates is live from there to its store, more than
// the 7 predicate registers hold (the 128 x 128 x 32 matmul stored from its
// wgmma accumulator: 168 registers, 162 with this). The operands stay where
// they are, so a row's or a column's mask is still computed once.
llvm::Value *FunctionLowering::predicateHere(llvm::Value *pred) {
  auto *conj = llvm::dyn_cast_or_null<llvm::BinaryOperator>(pred);
  if (!conj || conj->getOpcode() != llvm::Instruction::And || !conj->getType()->isIntegerTy(1)) return pred;
  return b_.Insert(conj->clone());
}

Target::TagAccess FunctionLowering::tagAs(const ir::Location &loc) {
  return [this, &loc](llvm::Instruction &inst) { tagGlobal(&inst, loc); };
}

// `if (pred) v = *ptr; else v = other;` touching memory only where `pred`
// holds, since a masked-off lane's address may be out of bounds: the
// Target's masked load (predicated on a GPU, no branch), or a branch around
// a plain load for what it does not take.
llvm::Value *FunctionLowering::guardedLoad(llvm::Value *pred, llvm::Type *ty, llvm::Value *ptr, llvm::Value *other,
                                           const ir::Location &loc, const ir::MemoryHints &hints) {
  const bool isBool = ty->isIntegerTy(1);
  llvm::Type *memTy = isBool ? b_.getInt8Ty() : ty;
  const unsigned align = static_cast<unsigned>(std::max<uint64_t>(1, memTy->getPrimitiveSizeInBits() / 8));
  if (maskable(memTy) && (masked(pred) || (hints.any() && always(pred)))) {
    llvm::Value *memOther = isBool ? b_.CreateZExt(other, memTy) : other;
    llvm::Value *v = target_.maskedLoad(b_, memTy, addressHere(ptr), masked(pred) ? pred : nullptr, memOther, align,
                                        hints, tagAs(loc));
    return isBool ? b_.CreateICmpNE(v, b_.getInt8(0)) : v;
  }
  auto load = [&]() -> llvm::Value * {
    auto *ld = b_.CreateAlignedLoad(memTy, ptr, llvm::Align(align));
    tagGlobal(ld, loc);
    return isBool ? b_.CreateICmpNE(ld, b_.getInt8(0)) : static_cast<llvm::Value *>(ld);
  };
  return guarded(pred, ty, load, other);
}

void FunctionLowering::ifThen(llvm::Value *pred, const std::function<void()> &body, const char *name) {
  if (auto *c = llvm::dyn_cast_or_null<llvm::ConstantInt>(pred)) {
    if (c->isOne()) body();
    return;
  }
  if (!pred) return body();
  auto *then = llvm::BasicBlock::Create(ctx_, name, llfn_);
  auto *join = llvm::BasicBlock::Create(ctx_, std::string(name) + ".join", llfn_);
  b_.CreateCondBr(pred, then, join);
  b_.SetInsertPoint(then);
  body();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
}

// `if (pred) *ptr = val;` by the Target's masked store where it takes the
// type, else a branch around a plain store.
void FunctionLowering::guardedStore(llvm::Value *pred, llvm::Value *val, llvm::Value *ptr, const ir::Location &loc,
                                    const ir::MemoryHints &hints) {
  llvm::Value *v = val->getType()->isIntegerTy(1) ? b_.CreateZExt(val, b_.getInt8Ty()) : val;
  const unsigned align = static_cast<unsigned>(std::max<uint64_t>(1, v->getType()->getPrimitiveSizeInBits() / 8));
  if (maskable(v->getType()) && (masked(pred) || (hints.any() && always(pred)))) {
    target_.maskedStore(b_, v, addressHere(ptr), masked(pred) ? pred : nullptr, align, hints, tagAs(loc));
    return;
  }
  ifThen(pred, [&] { tagGlobal(b_.CreateAlignedStore(v, ptr, llvm::Align(align)), loc); }, "store.lane");
}

namespace {
// The registers of a tile grouped into runs that are contiguous in memory.
struct VectorGroups {
  int vec = 1;
  int numRegs = 0;
};

VectorGroups vectorGroups(const ir::Op &op, const ir::Type &ptrType, const RegisterMap &rm) {
  VectorGroups g;
  g.numRegs = rm.numRegisters();
  int64_t want = op.hasAttr("vec") ? op.intAttr("vec") : 1;
  if (ptrType.isTile() && ptrType.elem.scalar != ir::ScalarKind::I1) {
    int fast = rm.root().blocked->order[0];
    // The run along the fastest dim is registers [r, r + vec): it has stride 1.
    g.vec = static_cast<int>(std::min<int64_t>(want, rm.contiguousPerThread(fast)));
  }
  return g;
}

llvm::Value *andAll(llvm::IRBuilder<> &b, const std::vector<llvm::Value *> &preds) {
  llvm::Value *all = nullptr;
  for (llvm::Value *p : preds) all = all ? b.CreateAnd(all, p) : p;
  return all;
}
}  // namespace

// Whether one predicate serves a whole vector run: assign-layouts proved its
// mask one value over `mask_run` elements (e.g. `c0 + arange(B) < D` with D a
// multiple of 16), or the predicates are the same value.
static bool uniformRun(const ir::Op &op, const std::vector<llvm::Value *> &preds) {
  if (op.hasAttr("mask_run") && op.intAttr("mask_run") >= int64_t(preds.size())) return true;
  return std::all_of(preds.begin(), preds.end(), [&](llvm::Value *p) { return p == preds[0]; });
}

// Pointers in memory (a `**f32` buffer's elements) travel as the i64
// addresses they are: the vector and masked accesses below, and the
// Target's, then only ever see numbers.
Regs FunctionLowering::pointersOf(Regs ints, const ir::ElemType &elem) {
  for (llvm::Value *&v : ints) v = b_.CreateIntToPtr(v, elemType(elem));
  return ints;
}

Regs FunctionLowering::lowerLoad(ir::Op &op) {
  const ir::Type &pt = op.operand(0)->type();
  const ir::Type &rt = op.result()->type();
  const bool pointers = rt.isPtr();
  llvm::Type *ty = pointers ? b_.getInt64Ty() : elemType(rt.elem);
  const Regs &ptrs = regs(op.operand(0));
  const Regs *mask = op.numOperands() > 1 ? &regs(op.operand(1)) : nullptr;
  const Regs *other = op.numOperands() > 2 ? &regs(op.operand(2)) : nullptr;
  const ir::MemoryHints hints = ir::memoryHintsOf(op);
  llvm::Value *zero = llvm::Constant::getNullValue(ty);
  auto otherAt = [&](size_t r) {
    if (!other) return zero;
    return pointers ? b_.CreatePtrToInt((*other)[r], ty) : (*other)[r];
  };

  if (!pt.isTile()) {
    Regs one{guardedLoad(mask ? (*mask)[0] : nullptr, ty, ptrs[0], otherAt(0), op.loc(), hints)};
    return pointers ? pointersOf(std::move(one), rt.elem) : one;
  }

  RegisterMap rm(pt.layout, pt.shape);
  VectorGroups g = vectorGroups(op, pt, rm);
  Regs out(g.numRegs);
  for (int r = 0; r < g.numRegs; r += g.vec) {
    if (g.vec == 1) {
      out[r] = guardedLoad(mask ? (*mask)[r] : nullptr, ty, ptrs[r], otherAt(r), op.loc(), hints);
      continue;
    }
    auto *vty = llvm::FixedVectorType::get(ty, g.vec);
    const unsigned bytes = g.vec * (ty->getPrimitiveSizeInBits() / 8);
    if (!mask) {
      llvm::Value *ld = nullptr;
      if (hints.any()) {
        ld = guardedLoad(nullptr, vty, ptrs[r], llvm::Constant::getNullValue(vty), op.loc(), hints);
      } else {
        auto *plain = b_.CreateAlignedLoad(vty, ptrs[r], llvm::Align(bytes));
        tagGlobal(plain, op.loc());
        ld = plain;
      }
      for (int i = 0; i < g.vec; ++i) out[r + i] = b_.CreateExtractElement(ld, uint64_t(i));
      continue;
    }
    // One vector access where all its elements are on; where only some are,
    // those elements one by one (on the sim, the same accesses as a branch
    // between the two would make). Without branches, a GPU issues both forms,
    // each predicated; a mask that is one value for the whole run needs only
    // the first.
    std::vector<llvm::Value *> preds(mask->begin() + r, mask->begin() + r + g.vec);
    const bool uniform = uniformRun(op, preds);
    llvm::Value *all = uniform ? preds[0] : andAll(b_, preds);
    llvm::Value *others = llvm::PoisonValue::get(vty);
    for (int i = 0; i < g.vec; ++i) others = b_.CreateInsertElement(others, otherAt(r + i), uint64_t(i));
    llvm::Value *whole = guardedLoad(all, vty, ptrs[r], others, op.loc(), hints);
    for (int i = 0; i < g.vec; ++i) out[r + i] = b_.CreateExtractElement(whole, uint64_t(i));
    if (uniform) continue;
    llvm::Value *notAll = b_.CreateNot(all);
    for (int i = 0; i < g.vec; ++i)
      out[r + i] = guardedLoad(b_.CreateAnd(preds[i], notAll), ty, ptrs[r + i], out[r + i], op.loc(), hints);
  }
  return pointers ? pointersOf(std::move(out), rt.elem) : out;
}

void FunctionLowering::lowerStore(ir::Op &op) {
  const ir::Type &pt = op.operand(0)->type();
  const Regs &ptrs = regs(op.operand(0));
  Regs vals = regs(op.operand(1));
  if (op.operand(1)->type().isPtr())  // stored as i64 addresses, as lowerLoad reads them
    for (llvm::Value *&v : vals) v = b_.CreatePtrToInt(v, b_.getInt64Ty());
  const Regs *mask = op.numOperands() > 2 ? &regs(op.operand(2)) : nullptr;
  const ir::MemoryHints hints = ir::memoryHintsOf(op);

  if (!pt.isTile()) {
    // A scalar store is one store of the block, made by its first thread.
    llvm::Value *first = b_.CreateICmpEQ(tid_, b_.getInt32(0));
    guardedStore(mask ? b_.CreateAnd((*mask)[0], first) : first, vals[0], ptrs[0], op.loc(), hints);
    return;
  }
  RegisterMap rm(pt.layout, pt.shape);
  VectorGroups g = vectorGroups(op, pt, rm);
  // Threads holding copies of an element leave the store to its owner.
  llvm::Value *owner = rm.replicated() ? ownerPredicate(pt, rm) : nullptr;
  auto pred = [&](int r) -> llvm::Value * {
    // Vector stores only: moved to scalar stores (after an exchange into a
    // blocked layout), the predicates cost ptxas 240 registers instead of
    // 220 for the unit-stride 128 x 128 x 32 matmul on sm_90a.
    llvm::Value *m = mask ? (g.vec > 1 ? predicateHere((*mask)[r]) : (*mask)[r]) : nullptr;
    if (owner) m = m ? b_.CreateAnd(m, owner) : owner;
    return m;
  };
  for (int r = 0; r < g.numRegs; r += g.vec) {
    if (g.vec == 1) {
      guardedStore(pred(r), vals[r], ptrs[r], op.loc(), hints);
      continue;
    }
    llvm::Type *ty = vals[r]->getType();
    auto *vty = llvm::FixedVectorType::get(ty, g.vec);
    llvm::Value *v = llvm::PoisonValue::get(vty);
    for (int i = 0; i < g.vec; ++i) v = b_.CreateInsertElement(v, vals[r + i], uint64_t(i));
    std::vector<llvm::Value *> preds;
    for (int i = 0; i < g.vec; ++i) preds.push_back(pred(r + i));
    // As for loads: the vector where all its elements are on, else each
    // element that is.
    const bool uniform = uniformRun(op, preds);
    // A prefix mask (assign-layouts' `mask_prefix`, e.g. `n < N` along n):
    // a run partly on has its last element off, so that element needs no
    // single store. `all` stays the AND of the bits (not the last one alone,
    // which is the same value): the single stores' predicates `bit && !all`
    // are then those of a masked load of the same mask, which
    // StorePredicates recomputes in the store's asm (dropout on sm_80: 32
    // registers, 35 with the last bit).
    const bool prefix = !owner && op.hasAttr("mask_prefix");
    llvm::Value *all = !preds[0] ? nullptr : uniform ? preds[0] : andAll(b_, preds);
    guardedStore(all, v, ptrs[r], op.loc(), hints);
    if (uniform) continue;
    llvm::Value *notAll = b_.CreateNot(all);
    for (int i = 0; i < g.vec - (prefix ? 1 : 0); ++i)
      guardedStore(b_.CreateAnd(preds[i], notAll), vals[r + i], ptrs[r + i], op.loc(), hints);
  }
}

// Row-major element addresses of a tile's registers in shared memory (or
// slot 0 for a scalar). Computed where the caller stands, so they dominate
// the branches and barriers that follow.
llvm::Value *FunctionLowering::linearIndex(const std::vector<int64_t> &shape, const std::vector<llvm::Value *> &idx,
                                           int skip) {
  llvm::Value *linear = b_.getInt32(0);
  for (size_t d = 0; d < idx.size(); ++d)
    if (static_cast<int>(d) != skip)
      linear = b_.CreateAdd(b_.CreateMul(linear, b_.getInt32(static_cast<uint32_t>(shape[d]))), idx[d]);
  return linear;
}

std::vector<llvm::Value *> FunctionLowering::sharedAddresses(const ir::Type &t, llvm::Type *memTy, size_t count,
                                                             int64_t pad) {
  llvm::Value *base = scratchBase();
  std::unique_ptr<RegisterMap> rm;
  if (t.isTile()) rm = std::make_unique<RegisterMap>(t.layout, t.shape);
  std::vector<int64_t> padded = t.shape;
  if (!padded.empty()) padded.back() += pad;
  std::vector<llvm::Value *> out;
  for (size_t r = 0; r < count; ++r) {
    llvm::Value *linear = rm ? linearIndex(padded, elementIndex(t, *rm, static_cast<int>(r))) : b_.getInt32(0);
    out.push_back(b_.CreateGEP(memTy, base, linear));
  }
  return out;
}

// Elements added to each row of a 2-D conversion's scratch that turns the
// contiguous dim (a transpose: `trans`, a column-major store), so that
// consecutive rows start one 4-byte bank apart: with rows of 2^k words the
// side that walks down columns would serialise 32 ways (a 64x64 f16 trans:
// 16.5 shared wavefronts a request, 1.00 padded). Conversions that keep the
// contiguous dim (a dot's epilogue) stay unpadded: their accesses are
// conflict-free already, and the padded address arithmetic costs the
// 128x128 matmul 12 registers on sm_80.
static int64_t rowPadding(const ir::Type &from, const ir::Type &to, int eltBytes) {
  const ir::LayoutRef &a = from.layout, &b = to.layout;
  if (from.rank() != 2 || from.shape != to.shape || !a || !b || a->kind != ir::Layout::Kind::Blocked ||
      b->kind != ir::Layout::Kind::Blocked || a->order[0] == b->order[0])
    return 0;
  return std::max(1, 4 / eltBytes);
}

// Stores `vals` (i1 as i8) at `addresses`, only where `writer` holds (all
// threads when null): one writer per word keeps the race check quiet and the
// bank traffic honest.
void FunctionLowering::storeShared(const Regs &vals, const std::vector<llvm::Value *> &addresses, llvm::Value *writer,
                                   const ir::Location &loc) {
  llvm::BasicBlock *written = nullptr;
  if (writer) {
    auto *write = llvm::BasicBlock::Create(ctx_, "shared.write", llfn_);
    written = llvm::BasicBlock::Create(ctx_, "shared.written", llfn_);
    b_.CreateCondBr(writer, write, written);
    b_.SetInsertPoint(write);
  }
  for (size_t r = 0; r < vals.size(); ++r) {
    llvm::Value *v = vals[r]->getType()->isIntegerTy(1) ? b_.CreateZExt(vals[r], b_.getInt8Ty()) : vals[r];
    const unsigned bytes = static_cast<unsigned>(module_.getDataLayout().getTypeAllocSize(v->getType()));
    tagShared(b_.CreateAlignedStore(v, addresses[r], llvm::Align(bytes)), loc);
  }
  if (writer) {
    b_.CreateBr(written);
    b_.SetInsertPoint(written);
  }
}

Regs FunctionLowering::loadShared(llvm::Type *ty, const std::vector<llvm::Value *> &addresses, const ir::Location &loc) {
  llvm::Type *memTy = ty->isIntegerTy(1) ? b_.getInt8Ty() : ty;
  const unsigned bytes = static_cast<unsigned>(module_.getDataLayout().getTypeAllocSize(memTy));
  Regs out;
  for (llvm::Value *a : addresses) {
    llvm::Instruction *ld = b_.CreateAlignedLoad(memTy, a, llvm::Align(bytes));
    tagShared(ld, loc);
    out.push_back(ty->isIntegerTy(1) ? b_.CreateICmpNE(ld, b_.getInt8(0)) : static_cast<llvm::Value *>(ld));
  }
  return out;
}

Regs FunctionLowering::shareFromOwners(const ir::Type &t, const Regs &vals, llvm::Value *owner,
                                       const ir::Location &loc) {
  llvm::Type *ty = vals[0]->getType();
  llvm::Type *memTy = ty->isIntegerTy(1) ? b_.getInt8Ty() : ty;
  const int eltBytes = static_cast<int>(module_.getDataLayout().getTypeAllocSize(memTy));
  useScratch(static_cast<int>(t.isTile() ? t.numElements() : 1) * eltBytes);
  std::vector<llvm::Value *> addresses = sharedAddresses(t, memTy, vals.size());
  storeShared(vals, addresses, owner, loc);
  barrier(loc);
  Regs out = loadShared(ty, addresses, loc);
  barrier(loc);  // the buffer is reused by the next exchange
  return out;
}

// Every element's owner writes it to shared memory at its row-major
// position, the block synchronises, and every thread reads the elements the
// new layout gives it.
Regs FunctionLowering::lowerConvertLayout(ir::Op &op) {
  const ir::Type &st = op.operand(0)->type();
  const ir::Type &rt = op.result()->type();
  llvm::Type *ty = elemType(rt.elem);
  llvm::Type *memTy = ty->isIntegerTy(1) ? b_.getInt8Ty() : ty;
  const int eltBytes = static_cast<int>(module_.getDataLayout().getTypeAllocSize(memTy));
  const int64_t pad = rowPadding(st, rt, eltBytes);  // never for a reshape (two shapes)
  const int64_t rows = st.numElements() / st.shape.back();
  useScratch((st.numElements() + rows * pad) * eltBytes);

  RegisterMap in(st.layout, st.shape), out(rt.layout, rt.shape);
  const Regs &src = regs(op.operand(0));
  std::vector<llvm::Value *> from = sharedAddresses(st, memTy, src.size(), pad);
  std::vector<llvm::Value *> to = sharedAddresses(rt, memTy, out.numRegisters(), pad);
  storeShared(src, from, in.replicated() ? ownerPredicate(st, in) : nullptr, op.loc());
  barrier(op.loc());
  Regs result = loadShared(ty, to, op.loc());
  barrier(op.loc());  // the buffer is reused by the next conversion
  return result;
}

}  // namespace tk::lower
