// Lowering of the pipelined-operand ops (lower/PipelineDotOperands.h): the
// shared rings, async_copy as cp.async through the Target (16 bytes per
// thread per copy where the layout allows), async_commit / async_wait, and
// shared_load, which a tensor-core dot reads in place with ldmatrix.
#include <llvm/IR/Constants.h>

#include <algorithm>
#include <set>

#include "lower/FunctionLowering.h"

namespace tk::lower {

// Rings and scratch are placed from the base, whose alignment (1024 bytes
// on NVPTX and the sim) covers every `align` asked for.
static int64_t alignedUp(int64_t bytes, int64_t align) { return (bytes + align - 1) / align * align; }

void FunctionLowering::planRings() {
  std::vector<int64_t> order;
  std::map<int64_t, std::vector<const ir::Op *>> copies;
  for (ir::Op *op : fn_.walk()) {
    if (!op->is(ir::OpKind::AsyncCopy) && !op->is(ir::OpKind::SharedLoad) && !op->is(ir::OpKind::TmaCopy)) continue;
    const int64_t id = op->intAttr("buffer");
    if (op->is(ir::OpKind::AsyncCopy)) copies[id].push_back(op);
    if (rings_.count(id)) continue;
    // A tma_copy's ring is its block, of its base's elements.
    const ir::Type t = op->is(ir::OpKind::AsyncCopy)  ? op->operand(0)->type()
                       : op->is(ir::OpKind::TmaCopy) ? ir::Type::tile(op->operand(0)->type().elem.pointee(),
                                                                      op->intListAttr("block"))
                                                      : op->result()->type();
    const int64_t elt = std::max(1, ir::bitWidth(t.elem.scalar) / 8);
    Ring r;
    r.slot = sharedSlotLayout(t.shape[0], t.shape[1], elt);
    r.stages = op->intAttr("stages");
    rings_[id] = r;
    order.push_back(id);
  }
  if (rings_.empty()) return;
  // Every copy into the ring runs along dim 0 in runs of more than one
  // element (a column-contiguous source: attention's k as [D, BLOCK_N]).
  auto alongColumns = [&](int64_t id) {
    bool columns = !copies[id].empty();
    for (const ir::Op *copy : copies[id]) {
      const ir::Type &pt = copy->operand(0)->type();
      const RootView root = rootView(pt.layout, pt.shape);
      columns = columns && pt.rank() == 2 && root.shape.size() == 2 && root.blocked->order[0] == 0 &&
                copy->hasAttr("vec") && copy->intAttr("vec") > 1;
    }
    return columns;
  };
  // A shared_load is read in place when every use is an a or b of a dot on
  // tensor cores: on mma.sync (lowerDotMma reads the row-major slot with
  // ldmatrix), or on wgmma, all as the same operand of dots of one plan (the
  // slot then takes that operand's layout, which the copies write) where
  // every copy into it reaches its chunks by constant offsets from one
  // address per thread. Otherwise (a copy layout of one element per thread
  // along rows the swizzle tells apart: run-time strides) each element would
  // need its own swizzled address held across the loop, which costs more
  // than loading the slot and staging it (the 128 x 128 x 32 matmul with
  // run-time strides on sm_90a: 332 bytes of spill stores, against 68).
  // An fp8 tile reaches its dots through emulate-fp8's casts to f16, which
  // read nothing where wgmma multiplies the codes (wgmmaOperand): the slot is
  // read in place by those dots, on wgmma only.
  // Rings the tensor memory accelerator fills with B^T (tma_copy k_major).
  std::set<int64_t> kMajorTma;
  for (ir::Op *op : fn_.walk())
    if (op->is(ir::OpKind::TmaCopy) && op->hasAttr("k_major") && op->intAttr("k_major")) kMajorTma.insert(op->intAttr("buffer"));
  auto uses = ir::computeUses(fn_);
  std::map<int64_t, bool> mmaOnly;  // every shared_load of the ring is read in place by mma.sync
  for (ir::Op *op : fn_.walk()) {
    if (!op->is(ir::OpKind::SharedLoad)) continue;
    std::vector<std::pair<ir::Op *, size_t>> users;
    bool throughCasts = false;
    for (const auto &[user, index] : uses[op->result()]) {
      if (!user->is(ir::OpKind::Cast) || fp8Source(user->result()) != op->result()) {
        users.push_back({user, index});
        continue;
      }
      throughCasts = true;
      const auto &castUses = uses[user->result()];
      if (castUses.empty()) users.push_back({user, index});  // not a dot: not in place
      for (const auto &[dot, i] : castUses)
        users.push_back({dot, dot->is(ir::OpKind::Dot) && wgmmaOperand(*dot, i) == op->result() ? i : 2});
    }
    bool mma = !users.empty() && !throughCasts, wgmma = !users.empty();
    int operand = -1;
    WgmmaPlan plan;
    for (const auto &[user, index] : users) {
      ir::LayoutRef layout = tensorCoreLayout(*user, fn_);
      const bool tensorCores = index < 2 && layout && ir::sameLayout(user->result()->type().layout, layout);
      const bool onWgmma = tensorCores && dotOnWgmma(*user);
      mma = mma && tensorCores && !onWgmma;
      if (!onWgmma || (operand >= 0 && (operand != int(index) || !(plan == wgmmaPlan(*user, fn_.numWarps())))))
        wgmma = false;
      if (wgmma) {
        operand = static_cast<int>(index);
        plan = wgmmaPlan(*user, fn_.numWarps());
      }
    }
    auto copiesFit = [&](const WgmmaPlan &p) {
      IntArith ia;
      return copiesKeepOneAddress(copies[op->intAttr("buffer")], [&](int64_t row, int64_t col) {
        return operand == 0 ? lower::wgmmaOffsetA(ia, p, row, col) : lower::wgmmaOffsetB(ia, p, row, col);
      });
    };
    // B copied along k is held K-major, so each 16-byte run along k stays
    // one cp.async (N-major would put its 8 elements in 8 rows: scalar
    // copies through registers).
    if (wgmma && operand == 1 && (alongColumns(op->intAttr("buffer")) || kMajorTma.count(op->intAttr("buffer")))) {
      WgmmaPlan k = plan;
      k.kMajorB = true;
      k.swizzleB = wgmmaSwizzleFor(plan.K, plan.elemBytes);
      if (copiesFit(k)) plan = k;
    }
    wgmma = wgmma && copiesFit(plan);
    const int64_t id = op->intAttr("buffer");
    mmaOnly[id] = (!mmaOnly.count(id) || mmaOnly[id]) && mma && !wgmma;
    if (!mma && !wgmma) continue;
    inPlace_.insert(op->result());
    if (wgmma) {
      Ring &r = rings_.at(op->intAttr("buffer"));
      r.wgmmaOperand = operand + 1;
      r.plan = plan;
      // The swizzle patterns repeat every 1024 bytes of address.
      r.slot.bytes = alignedUp(operand == 0 ? plan.bytesA : plan.bytesB, 1024);
      // Its copies run along dim 0 (lowerAsyncCopy), each at wgmmaOffsetB.
      r.transposed = operand == 1 && plan.kMajorB;
      wgmmaRings_ = true;
    }
  }
  // A ring whose copies all run along dim 0 is stored transposed (a wgmma
  // ring above already is, K-major), unless a dot reads it in place as its
  // a (mma.sync's A fragment would then need ldmatrix.trans from [K, M];
  // such copies stay row-major and synchronous). Every shared_load of the
  // ring must agree.
  std::set<int64_t> transpose, keep;
  std::map<int64_t, int64_t> elts;
  for (ir::Op *op : fn_.walk()) {
    if (!op->is(ir::OpKind::SharedLoad)) continue;
    const Ring &r = rings_.at(op->intAttr("buffer"));
    bool columns = r.wgmmaOperand == 0 && alongColumns(op->intAttr("buffer"));
    if (inPlace_.count(op->result()))
      for (const auto &[user, index] : uses[op->result()]) columns = columns && index == 1;
    (columns ? transpose : keep).insert(op->intAttr("buffer"));
    elts[op->intAttr("buffer")] = std::max(1, ir::bitWidth(op->result()->type().elem.scalar) / 8);
  }
  for (int64_t id : transpose) {
    if (keep.count(id)) continue;
    Ring &r = rings_.at(id);
    r.transposed = true;
    r.slot = sharedSlotLayout(r.slot.cols, r.slot.rows, elts.at(id));
  }
  placeRings(order, mmaOnly, elts, copies);
}

// Rings only ldmatrix reads, of 16-bit elements in whole 128-byte rows, are
// swizzled rather than padded (sharedSlotLayout), as Triton's sm_80 slots
// are; lowerDotMma's addresses XOR the chunk bits of 128-byte aligned rows.
// Then each ring is placed after the last, aligned as its layout needs.
void FunctionLowering::placeRings(const std::vector<int64_t> &order, const std::map<int64_t, bool> &mmaOnly,
                                  const std::map<int64_t, int64_t> &elts,
                                  const std::map<int64_t, std::vector<const ir::Op *>> &copies) {
  for (const auto &[id, onlyMma] : mmaOnly) {
    Ring &r = rings_.at(id);
    if (!onlyMma || elts.at(id) != 2) continue;
    const std::optional<SharedSlotLayout> s = swizzledSlotLayout(r.slot.rows, r.slot.cols, 2);
    // Only where every copy into it still reaches its elements by constant
    // distances from one address per thread: a copy of one element per
    // thread along rows the swizzle tells apart (run-time strides) would
    // hold an address per element across the loop (the 128 x 256 x 64
    // matmul without facts on sm_80: 332 bytes of spill stores).
    auto ringCopies = copies.find(id);
    if (s && (ringCopies == copies.end() ||
              copiesKeepOneAddress(ringCopies->second, [&](int64_t row, int64_t col) {
                if (r.transposed) std::swap(row, col);
                return slotByteOffset(*s, row, col, 2);
              })))
      r.slot = *s;
  }
  for (int64_t id : order) {
    Ring &r = rings_.at(id);
    if (r.slot.swizzled) ringBytes_ = static_cast<int>(alignedUp(ringBytes_, 128));
    if (r.wgmmaOperand) ringBytes_ = static_cast<int>(alignedUp(ringBytes_, 1024));
    r.offset = ringBytes_;
    ringBytes_ += static_cast<int>(r.slot.bytes * r.stages);
  }
}

// wgmma groups in flight across iterations. A pipelined loop whose copies
// run `ahead` iterations ahead (PipelineDotOperands.cpp) has iteration i
// refill slot (i + ahead) % S, the one iteration i + ahead - S read. So when
// iteration i's dot waits with `wgmma.wait_group N`, N = S - 1 - ahead,
// the groups of iterations up to i - N are complete -- in every warpgroup
// by the next iteration's async_wait barrier, after which that iteration's
// copy overwrites the slot iteration i + 1 + ahead - S = i - N read. With
// ahead = S - 1 (the default) N is 0; the pass runs the copies S - 2 ahead
// where a loop's only dot can keep its group in flight, and then N is 1, as
// Triton keeps it. The dot must read both operands in place (a staged
// operand's scratch is rewritten by the next iteration) and carry its
// accumulator from one iteration into the next and nowhere else: an
// accumulator in flight is a valid input of the next wgmma but must not be
// read; a wait_group 0 after the loop completes it before anything reads it
// and before the rings' bytes are reused.
void FunctionLowering::planWgmmaInFlight() {
  if (!wgmmaRings_) return;
  auto uses = ir::computeUses(fn_);
  auto onlyUse = [&](const ir::Value *v, const ir::Op *user, size_t index) {
    auto it = uses.find(v);
    return it != uses.end() && it->second.size() == 1 && it->second[0].first == user && it->second[0].second == index;
  };
  for (ir::Op *loop : fn_.walk()) {
    if (!loop->is(ir::OpKind::For)) continue;
    ir::Block &body = *loop->regions()[0];
    std::vector<ir::Op *> dots;
    std::function<void(ir::Block &)> collect = [&](ir::Block &block) {
      for (const auto &op : block.ops()) {
        if (op->is(ir::OpKind::Dot) && dotOnWgmma(*op)) dots.push_back(op.get());
        for (const auto &region : op->regions()) collect(*region);
      }
    };
    collect(body);
    if (dots.size() != 1 || dots[0]->parentBlock() != &body) continue;
    ir::Op *dot = dots[0];
    // The groups each ring lets stay in flight: S - 1 - ahead.
    int pending = 7;
    for (size_t k = 0; k < 2; ++k) {
      const ir::Op *slot = inPlaceOperand(wgmmaOperand(*dot, k));
      if (!slot || slot->parentBlock() != &body) {
        pending = 0;
        break;
      }
      const int64_t stages = slot->intAttr("stages");
      const int64_t ahead = slot->hasAttr("ahead") ? slot->intAttr("ahead") : stages - 1;
      pending = std::min<int>(pending, static_cast<int>(stages - 1 - ahead));
    }
    if (pending <= 0) continue;
    // The accumulator is carried argument j + 1 and yielded value j, used by
    // nothing else in the body.
    size_t j = 0;
    while (j + 1 < body.arguments().size() && body.argument(j + 1) != dot->operand(2)) ++j;
    const ir::Op *yield = body.ops().back().get();
    if (j + 1 >= body.arguments().size() || !onlyUse(dot->operand(2), dot, 2) || !onlyUse(dot->result(), yield, j))
      continue;
    wgmmaPending_[dot] = pending;
    drainAfter_[loop].push_back(j);
  }
}

const ir::Op *FunctionLowering::inPlaceOperand(const ir::Value *v) const {
  return inPlace_.count(v) ? v->definingOp() : nullptr;
}

llvm::Value *FunctionLowering::scratchBase(int64_t align) {
  llvm::Value *base = target_.sharedBase(b_);
  if (!ringsLive_) return base;
  return b_.CreateGEP(b_.getInt8Ty(), base, b_.getInt32(static_cast<uint32_t>(alignedUp(ringBytes_, align))));
}

void FunctionLowering::useScratch(int64_t bytes, int64_t align) {
  int &most = ringsLive_ ? scratchWhileRings_ : sharedBytes_;
  const int64_t pad = ringsLive_ ? alignedUp(ringBytes_, align) - ringBytes_ : 0;
  most = std::max(most, static_cast<int>(pad + bytes));
}

llvm::Value *FunctionLowering::slotBase(int64_t buffer, llvm::Value *slot) {
  const Ring &r = rings_.at(buffer);
  llvm::Value *offset = b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(r.offset)),
                                     b_.CreateMul(slot, b_.getInt32(static_cast<uint32_t>(r.slot.bytes))));
  return b_.CreateGEP(b_.getInt8Ty(), target_.sharedBase(b_), offset);
}

llvm::Value *FunctionLowering::slotOffset(const SharedSlotLayout &s, llvm::Value *row, llvm::Value *col, int64_t elt) {
  auto i32 = [&](int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); };
  if (!s.swizzled) return b_.CreateMul(b_.CreateAdd(b_.CreateMul(row, i32(s.rowStride)), col), i32(elt));
  llvm::Value *rowBytes = b_.CreateMul(row, i32(s.rowStride * elt)), *inRow = b_.CreateMul(col, i32(elt));
  llvm::Value *phase = b_.CreateShl(b_.CreateAnd(row, i32(7)), i32(4));
  return b_.CreateAdd(rowBytes, b_.CreateXor(inRow, phase));
}

llvm::Value *FunctionLowering::xorAddress(llvm::Value *ptr, llvm::Value *mask) {
  if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(mask); c && c->isZero()) return ptr;
  llvm::Type *intTy = module_.getDataLayout().getIntPtrType(ptr->getType());
  llvm::Value *bits = b_.CreateXor(b_.CreatePtrToInt(ptr, intTy), b_.CreateZExt(mask, intTy));
  return b_.CreateIntToPtr(bits, ptr->getType());
}

bool FunctionLowering::copiesKeepOneAddress(const std::vector<const ir::Op *> &copies,
                                            const std::function<int64_t(int64_t, int64_t)> &offsetAt) {
  for (const ir::Op *copy : copies) {
    const ir::Type &pt = copy->operand(0)->type();
    RegisterMap rm(pt.layout, pt.shape);
    if (rm.replicated() || uniformDeltas(pt, rm, offsetAt).empty()) return false;
  }
  return true;
}

// For a 2-D tile in a blocked layout without replication, each register's
// offset from register 0's under `offsetAt` when it is the same in every
// thread (register r's element is the thread's first plus a constant, no
// index wrapping around the tile; offsetAt's swizzle may still make the
// distance depend on the thread): checked over every thread. Else empty.
std::vector<int64_t> FunctionLowering::uniformDeltas(const ir::Type &t, const RegisterMap &rm,
                                                     const std::function<int64_t(int64_t, int64_t)> &offsetAt) {
  const ir::Layout &l = *rm.root().blocked;
  if (t.rank() != 2 || rm.root().shape.size() != 2) return {};
  const int64_t parts0 = int64_t(l.threadsPerWarp[0]) * l.warpsPerCTA[0];
  const int64_t parts1 = int64_t(l.threadsPerWarp[1]) * l.warpsPerCTA[1];
  std::vector<int64_t> deltas(static_cast<size_t>(rm.numRegisters()));
  for (int64_t p0 = 0; p0 < parts0; ++p0)
    for (int64_t p1 = 0; p1 < parts1; ++p1) {
      const int64_t row = p0 * l.sizePerThread[0], col = p1 * l.sizePerThread[1];
      const int64_t at0 = offsetAt(row, col);
      for (int r = 0; r < rm.numRegisters(); ++r) {
        std::vector<int> k = rm.coords(r);
        const int64_t delta = offsetAt(row + rm.staticOffset(0, k[0]), col + rm.staticOffset(1, k[1])) - at0;
        if (p0 == 0 && p1 == 0)
          deltas[static_cast<size_t>(r)] = delta;
        else if (deltas[static_cast<size_t>(r)] != delta)
          return {};
      }
    }
  return deltas;
}

// The bytes of a run whose mask is a prefix of it (mask_prefix): the sum of
// its elements' sizes where their mask holds. When what varies along the run
// was computed before this block (b's `n < N` along n, ahead of the loop),
// the factors of an `and` that every element shares (the k mask along a
// run of n, the stage's `iv < ub`) are taken out of the sum, so the sum is
// loop-invariant and hoisted as one count per run instead of one predicate
// per element held across the loop (the 128 x 128 x 32 matmul on sm_90a
// without the M and N facts: 176 registers against 181). Where it varies
// in the body too (a's `k < K` along k), that costs registers (236 against
// 220 with unit strides alone), so the sum stays per element.
static llvm::Value *prefixBytes(llvm::IRBuilderBase &b, const std::vector<llvm::Value *> &mask, int64_t elt) {
  std::function<void(llvm::Value *, std::vector<llvm::Value *> &)> factors = [&](llvm::Value *v, auto &out) {
    auto *i = llvm::dyn_cast<llvm::BinaryOperator>(v);
    if (i && i->getOpcode() == llvm::Instruction::And && v->getType()->isIntegerTy(1)) {
      factors(i->getOperand(0), out);
      factors(i->getOperand(1), out);
    } else {
      out.push_back(v);
    }
  };
  std::vector<std::vector<llvm::Value *>> each(mask.size());
  for (size_t e = 0; e < mask.size(); ++e) factors(mask[e], each[e]);
  std::vector<llvm::Value *> common;
  for (llvm::Value *f : each[0])
    if (std::all_of(each.begin(), each.end(),
                    [&](const auto &fs) { return std::find(fs.begin(), fs.end(), f) != fs.end(); }) &&
        std::find(common.begin(), common.end(), f) == common.end())
      common.push_back(f);
  auto conj = [&](const std::vector<llvm::Value *> &fs) -> llvm::Value * {
    llvm::Value *all = nullptr;
    for (llvm::Value *f : fs) all = all ? b.CreateAnd(all, f) : f;
    return all;
  };
  std::vector<std::vector<llvm::Value *>> own(mask.size());
  bool hoistable = true;
  for (size_t e = 0; e < mask.size(); ++e)
    for (llvm::Value *f : each[e])
      if (std::find(common.begin(), common.end(), f) == common.end()) {
        auto *i = llvm::dyn_cast<llvm::Instruction>(f);
        hoistable = hoistable && !(i && i->getParent() == b.GetInsertBlock());
        own[e].push_back(f);
      }
  if (!hoistable) {
    own.assign(mask.size(), {});
    for (size_t e = 0; e < mask.size(); ++e) own[e] = {mask[e]};
    common.clear();
  }
  llvm::Value *bytes = b.getInt32(0);
  for (const auto &fs : own) {
    llvm::Value *keep = conj(fs);
    llvm::Value *size = b.getInt32(static_cast<uint32_t>(elt));
    bytes = b.CreateAdd(bytes, keep ? b.CreateSelect(keep, size, b.getInt32(0)) : size);
  }
  llvm::Value *shared = conj(common);
  return shared ? b.CreateSelect(shared, bytes, b.getInt32(0)) : bytes;
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
  const ir::ElemType elem = pt.elem.pointee();
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

  // Runs go along the slot's rows: dim 1, or dim 0 in a transposed slot.
  const int along = ring.transposed ? 0 : 1;
  const int vec = op.hasAttr("vec") && l.order[0] == along ? static_cast<int>(op.intAttr("vec")) : 1;
  const int64_t bytes = vec * elt;
  const bool wholeRuns = !mask || (op.hasAttr("mask_run") && op.intAttr("mask_run") >= vec);
  const bool async = (bytes == 4 || bytes == 8 || bytes == 16) && rm.contiguousPerThread(along) % vec == 0 &&
                     (wholeRuns || op.hasAttr("mask_prefix"));
  const int run = async ? vec : 1;
  // Replicated elements are copied by their owner only.
  llvm::Value *owner = rm.replicated() ? ownerPredicate(pt, rm) : nullptr;

  // The byte offset of element (row, col) in the slot, as IR and on integers.
  IntArith ia;
  auto offsetAt = [&](int64_t row, int64_t col) -> int64_t {
    if (ring.wgmmaOperand == 1) return lower::wgmmaOffsetA(ia, ring.plan, row, col);
    if (ring.wgmmaOperand == 2) return lower::wgmmaOffsetB(ia, ring.plan, row, col);
    if (ring.transposed) std::swap(row, col);
    return slotByteOffset(ring.slot, row, col, elt);
  };
  auto offsetOf = [&](const std::vector<llvm::Value *> &idx) -> llvm::Value * {
    if (ring.wgmmaOperand == 1) return wgmmaOffsetA(ring.plan, idx[0], idx[1]);
    if (ring.wgmmaOperand == 2) return wgmmaOffsetB(ring.plan, idx[0], idx[1]);
    return slotOffset(ring.slot, idx[ring.transposed ? 1 : 0], idx[ring.transposed ? 0 : 1], elt);
  };
  // One address per thread and an immediate offset per register, instead
  // of an address per register held across the loop, where every thread's
  // register r lies the same distance from its register 0.
  std::vector<int64_t> deltas = owner ? std::vector<int64_t>{} : uniformDeltas(pt, rm, offsetAt);
  llvm::Value *first = deltas.empty() ? nullptr : b_.CreateGEP(b_.getInt8Ty(), base, offsetOf(elementIndex(pt, rm, 0)));
  for (int r = 0; r < rm.numRegisters(); r += run) {
    llvm::Value *dst = first ? b_.CreateGEP(b_.getInt8Ty(), first, b_.getInt32(static_cast<uint32_t>(deltas[r])))
                             : b_.CreateGEP(b_.getInt8Ty(), base, offsetOf(elementIndex(pt, rm, r)));
    if (!async) {
      llvm::Value *v =
          guardedLoad(mask ? (*mask)[r] : nullptr, ty, ptrs[r], llvm::Constant::getNullValue(ty), op.loc());
      ifThen(
          owner, [&] { tagShared(b_.CreateAlignedStore(v, dst, llvm::Align(static_cast<uint64_t>(elt))), op.loc()); },
          "copy.owner");
      continue;
    }
    llvm::Value *srcBytes = b_.getInt32(static_cast<uint32_t>(bytes));
    if (mask && wholeRuns) {
      srcBytes = b_.CreateSelect((*mask)[r], srcBytes, b_.getInt32(0));
    } else if (mask) {
      srcBytes = prefixBytes(b_, std::vector<llvm::Value *>(mask->begin() + r, mask->begin() + r + vec), elt);
    }
    ifThen(
        owner, [&] { target_.cpAsync(b_, dst, ptrs[r], static_cast<int>(bytes), srcBytes, tagAs(op.loc())); },
        "copy.owner");
  }
}

// A wait for every group outside a loop ends a pipeline: the rings are dead
// after its barrier and scratch starts at the base again.
void FunctionLowering::lowerAsyncWait(ir::Op &op) {
  target_.cpAsyncWaitGroup(b_, static_cast<int>(op.intAttr("pending")));
  // cp.async writes through the generic proxy and wgmma reads through the
  // async proxy: each thread fences the copies it completed before the
  // barrier that orders them before every warpgroup's wgmma (PTX ISA,
  // "Async Proxy").
  if (wgmmaRings_) target_.fenceProxyAsync(b_);
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
  const int64_t elt = static_cast<int64_t>(module_.getDataLayout().getTypeAllocSize(ty));
  std::vector<llvm::Value *> addresses;
  for (int r = 0; r < rm.numRegisters(); ++r) {
    std::vector<llvm::Value *> idx = elementIndex(t, rm, r);
    if (ring.transposed) std::swap(idx[0], idx[1]);
    // A padded slot keeps its element-indexed address: the same offset in
    // bytes (slotOffset) cost the 128 x 256 x 64 matmul without facts on
    // sm_90a 8 bytes of spill (ptxas 13.0).
    addresses.push_back(
        ring.slot.swizzled
            ? b_.CreateGEP(b_.getInt8Ty(), base, slotOffset(ring.slot, idx[0], idx[1], elt))
            : b_.CreateGEP(ty, base, b_.CreateAdd(b_.CreateMul(idx[0], b_.getInt32(static_cast<uint32_t>(ring.slot.rowStride))), idx[1])));
  }
  return loadShared(ty, addresses, op.loc());
}

}  // namespace tk::lower
