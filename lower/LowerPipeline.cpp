// Lowering of the pipelined-operand ops (lower/PipelineDotOperands.h): the
// shared rings, async_copy as cp.async through the Target (16 bytes per
// thread per copy where the layout allows), async_commit / async_wait, and
// shared_load, which a tensor-core dot reads in place with ldmatrix.
#include <llvm/IR/Constants.h>

#include <algorithm>

#include "lower/FunctionLowering.h"

namespace tk::lower {

void FunctionLowering::planRings() {
  for (ir::Op *op : fn_.walk()) {
    if (!op->is(ir::OpKind::AsyncCopy) && !op->is(ir::OpKind::SharedLoad)) continue;
    const int64_t id = op->intAttr("buffer");
    if (rings_.count(id)) continue;
    const ir::Type &t = op->is(ir::OpKind::AsyncCopy) ? op->operand(0)->type() : op->result()->type();
    const int64_t elt = std::max(1, ir::bitWidth(t.elem.scalar) / 8);
    Ring r;
    r.offset = ringBytes_;
    r.slot = sharedSlotLayout(t.shape[0], t.shape[1], elt);
    r.stages = op->intAttr("stages");
    ringBytes_ += static_cast<int>(r.slot.bytes * r.stages);
    rings_[id] = r;
  }
  // A shared_load is read in place when every use is an a or b of a dot
  // lowered on tensor cores (lowerDotMma reads the slot with ldmatrix).
  if (rings_.empty()) return;
  auto uses = ir::computeUses(fn_);
  for (ir::Op *op : fn_.walk()) {
    if (!op->is(ir::OpKind::SharedLoad)) continue;
    bool inPlace = !uses[op->result()].empty();
    for (const auto &[user, index] : uses[op->result()]) {
      ir::LayoutRef mma = tensorCoreLayout(*user, fn_.numWarps());
      inPlace = inPlace && index < 2 && mma && ir::sameLayout(user->result()->type().layout, mma);
    }
    if (inPlace) inPlace_.insert(op->result());
  }
}

const ir::Op *FunctionLowering::inPlaceOperand(const ir::Value *v) const {
  return inPlace_.count(v) ? v->definingOp() : nullptr;
}

llvm::Value *FunctionLowering::scratchBase() {
  llvm::Value *base = target_.sharedBase(b_);
  if (!ringsLive_) return base;
  return b_.CreateGEP(b_.getInt8Ty(), base, b_.getInt32(static_cast<uint32_t>(ringBytes_)));
}

void FunctionLowering::useScratch(int64_t bytes) {
  int &most = ringsLive_ ? scratchWhileRings_ : sharedBytes_;
  most = std::max(most, static_cast<int>(bytes));
}

llvm::Value *FunctionLowering::slotBase(int64_t buffer, llvm::Value *slot) {
  const Ring &r = rings_.at(buffer);
  llvm::Value *offset = b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(r.offset)),
                                     b_.CreateMul(slot, b_.getInt32(static_cast<uint32_t>(r.slot.bytes))));
  return b_.CreateGEP(b_.getInt8Ty(), target_.sharedBase(b_), offset);
}

// Each thread copies its runs of `vec` elements along dim 1 (the layout's
// order[0]: assign-layouts anchors the copy like a load, coalesced). A run of
// 4, 8 or 16 bytes is one cp.async whose source size is the bytes its mask
// keeps (mask_run: all or none; mask_prefix: a leading part). Anything else
// (a column-contiguous source, scalar runs, masks of no such shape) is copied
// synchronously through registers, with masked-off elements zero: still
// correct, since readers wait at the async_wait's barrier either way.
void FunctionLowering::lowerAsyncCopy(ir::Op &op) {
  const ir::Type &pt = op.operand(0)->type();
  const ir::ElemType elem{pt.elem.scalar, false};
  llvm::Type *ty = elemType(elem);
  const int64_t elt = static_cast<int64_t>(module_.getDataLayout().getTypeAllocSize(ty));
  const Ring &ring = rings_.at(op.intAttr("buffer"));
  RegisterMap rm(pt.layout, pt.shape);
  const ir::Layout &l = *rm.root().blocked;
  const Regs &ptrs = regs(op.operand(0));
  const Regs *mask = op.numOperands() > 2 ? &regs(op.operand(2)) : nullptr;
  // The first copy of a loop's prologue: scratch users before it may still
  // read what its bytes overwrite (they lie where scratch starts then).
  if (!ringsLive_) {
    barrier(op.loc());
    ringsLive_ = true;
  }
  llvm::Value *base = slotBase(op.intAttr("buffer"), regs(op.operand(1))[0]);

  const int vec = op.hasAttr("vec") && l.order[0] == 1 ? static_cast<int>(op.intAttr("vec")) : 1;
  const int64_t bytes = vec * elt;
  const bool wholeRuns = !mask || (op.hasAttr("mask_run") && op.intAttr("mask_run") >= vec);
  const bool async = (bytes == 4 || bytes == 8 || bytes == 16) && rm.contiguousPerThread(1) % vec == 0 &&
                     (wholeRuns || op.hasAttr("mask_prefix"));
  const int run = async ? vec : 1;
  // Replicated elements are copied by their owner only.
  llvm::Value *owner = rm.replicated() ? ownerPredicate(pt, rm) : nullptr;

  // Without replication no index wraps around the tile, so register r sits
  // a constant distance from register 0: one address per thread and
  // immediate offsets, instead of an address per register held across the loop.
  auto linear = [&](const std::vector<llvm::Value *> &idx) {
    return b_.CreateAdd(b_.CreateMul(idx[0], b_.getInt32(static_cast<uint32_t>(ring.slot.rowStride))), idx[1]);
  };
  llvm::Value *first = owner ? nullptr : b_.CreateGEP(ty, base, linear(elementIndex(pt, rm, 0)));
  for (int r = 0; r < rm.numRegisters(); r += run) {
    llvm::Value *dst;
    if (first) {
      std::vector<int> k = rm.coords(r);
      const int64_t delta = rm.staticOffset(0, k[0]) * ring.slot.rowStride + rm.staticOffset(1, k[1]);
      dst = b_.CreateGEP(ty, first, b_.getInt32(static_cast<uint32_t>(delta)));
    } else {
      dst = b_.CreateGEP(ty, base, linear(elementIndex(pt, rm, r)));
    }
    if (!async) {
      llvm::Value *v = guardedLoad(mask ? (*mask)[r] : nullptr, ty, ptrs[r], llvm::Constant::getNullValue(ty), op.loc());
      ifThen(owner, [&] { tagShared(b_.CreateAlignedStore(v, dst, llvm::Align(static_cast<uint64_t>(elt))), op.loc()); },
             "copy.owner");
      continue;
    }
    llvm::Value *srcBytes = b_.getInt32(static_cast<uint32_t>(bytes));
    if (mask && wholeRuns) {
      srcBytes = b_.CreateSelect((*mask)[r], srcBytes, b_.getInt32(0));
    } else if (mask) {
      srcBytes = b_.getInt32(0);
      for (int e = 0; e < vec; ++e)
        srcBytes = b_.CreateAdd(srcBytes, b_.CreateSelect((*mask)[r + e], b_.getInt32(static_cast<uint32_t>(elt)),
                                                          b_.getInt32(0)));
    }
    ifThen(owner, [&] { target_.cpAsync(b_, dst, ptrs[r], static_cast<int>(bytes), srcBytes, tagAs(op.loc())); },
           "copy.owner");
  }
}

// A wait for every group outside a loop ends a pipeline: the rings are dead
// after its barrier and scratch starts at the base again.
void FunctionLowering::lowerAsyncWait(ir::Op &op) {
  target_.cpAsyncWaitGroup(b_, static_cast<int>(op.intAttr("pending")));
  barrier(op.loc());
  if (op.intAttr("pending") == 0 && !op.parentBlock()->parentOp()) ringsLive_ = false;
}

// A slot read into registers, for uses other than tensor-core dots.
Regs FunctionLowering::lowerSharedLoad(ir::Op &op) {
  if (inPlace_.count(op.result())) return {};
  const ir::Type &t = op.result()->type();
  llvm::Type *ty = elemType(t.elem);
  const Ring &ring = rings_.at(op.intAttr("buffer"));
  llvm::Value *base = slotBase(op.intAttr("buffer"), regs(op.operand(0))[0]);
  RegisterMap rm(t.layout, t.shape);
  std::vector<llvm::Value *> addresses;
  for (int r = 0; r < rm.numRegisters(); ++r) {
    std::vector<llvm::Value *> idx = elementIndex(t, rm, r);
    addresses.push_back(b_.CreateGEP(
        ty, base, b_.CreateAdd(b_.CreateMul(idx[0], b_.getInt32(static_cast<uint32_t>(ring.slot.rowStride))), idx[1])));
  }
  return loadShared(ty, addresses, op.loc());
}

}  // namespace tk::lower
