// Lowering of `dot` on sm_90a's warpgroup tensor cores: f16/bf16 operands
// staged in shared memory in wgmma's swizzled layouts, then per warpgroup,
// m64 block and k16 step one wgmma.mma_async reading them through matrix
// descriptors, accumulating in f32 registers that stay in mmaLayout.
//
// The accumulator layout is mmaLayout with warps [W, 1] (tensorCoreLayout
// picks it for every shape wgmmaShape accepts, on every arch): warp v holds
// rows 8v + g + 8W r (g = lane / 4, r its repetition) and columns 2(lane % 4)
// + {0, 1} + 8j. wgmma fixes warp w4 of warpgroup gi (v = 4 gi + w4) to rows
// 16 w4 + 8h + g of each m64 block, columns as above. Staging A's logical row
// L = 8v + g + 8W(2b + h) at physical row 16 w4 + 8h + g of block b of
// warpgroup gi's region puts every D element in the register mmaLayout
// already gives it, so the epilogue is unchanged and the same tile IR runs
// on mma.sync elsewhere.
//
// Shared memory (from the dynamic base, 1024-byte aligned):
//   A, per warpgroup gi: K in slabs of SA / 2 elements (SA = 128, 64 or 32
//     bytes, the widest dividing a row), each slab [Mg rows][SA bytes],
//     K-major with the SA-byte swizzle; SBO = 8 SA (the next 8 rows).
//   B, after all of A: N in slabs of SB / 2 elements, each [K rows][SB
//     bytes], N-major with the SB-byte swizzle; LBO = K SB (the next slab),
//     SBO = 8 SB (the next 8 k). A ring whose copies run along k holds B
//     K-major instead (WgmmaPlan::kMajorB: B^T laid out as A, K in slabs,
//     SBO = 8 SB the next 8 n), read with imm-trans-b 0.
// The swizzle moves a 16-byte chunk c of row r to chunk c ^ (r' % (S / 16))
// (r' the address bits 7 and up), so the staging stores (16-byte vectors
// along a row) and wgmma's reads of 8 rows of one chunk are both free of
// bank conflicts.
#include "lower/FunctionLowering.h"
#include "lower/Wgmma.h"

namespace tk::lower {

bool FunctionLowering::dotOnWgmma(const ir::Op &op) const {
  // wgmma here takes f16/bf16 only: tf32 and s8 dots keep mma.sync.
  const std::optional<MmaKind> kind = mmaKind(op);
  if (!kind || (*kind != MmaKind::F16 && *kind != MmaKind::BF16) || !target_.hasWgmma()) return false;
  const ir::Type &at = op.operand(0)->type(), &bt = op.operand(1)->type();
  return tensorCoreLayout(op, fn_) && ir::sameLayout(op.result()->type().layout, wgmmaLayout(fn_.numWarps())) &&
         wgmmaShape(at.shape[0], bt.shape[1], at.shape[1], fn_.numWarps());
}

WgmmaPlan wgmmaPlan(const ir::Op &op, int numWarps) {
  const ir::Type &at = op.operand(0)->type(), &bt = op.operand(1)->type();
  WgmmaPlan p;
  p.M = at.shape[0];
  p.K = at.shape[1];
  p.N = bt.shape[1];
  p.atype = p.btype = at.elem.scalar;
  p.warpgroups = numWarps / 4;
  // A dot of fp8 tiles multiplies the codes where K is whole k32 steps: the
  // same products (f16 holds every fp8 value), half the bytes staged and
  // half the instructions. The ISA reads them K-major only, B included.
  if (multipliesFp8Codes(op)) {
    p.atype = fp8Source(op.operand(0))->type().elem.scalar;
    p.btype = fp8Source(op.operand(1))->type().elem.scalar;
    p.elemBytes = 1;
    p.kMajorB = true;
  }
  p.swizzleA = wgmmaSwizzleFor(p.K, p.elemBytes);
  p.swizzleB = p.kMajorB ? wgmmaSwizzleFor(p.K, p.elemBytes) : wgmmaSwizzleFor(p.N);
  p.bytesA = p.M * p.K * p.elemBytes;
  p.bytesB = p.K * p.N * p.elemBytes;
  return p;
}

// wgmmaOffsetA/B (Wgmma.h) as i32 LLVM IR.
namespace {
struct IrArith {
  using V = llvm::Value *;
  llvm::IRBuilderBase &b;
  llvm::Value *c(int64_t v) const { return b.getInt32(static_cast<uint32_t>(v)); }
  V add(V x, V y) const { return b.CreateAdd(x, y); }
  V mul(V x, int64_t k) const { return b.CreateMul(x, c(k)); }
  V div(V x, int64_t k) const { return b.CreateUDiv(x, c(k)); }
  V rem(V x, int64_t k) const { return b.CreateURem(x, c(k)); }
  V swizzle(V off, int bytes) const {
    V bits = b.CreateAnd(b.CreateLShr(off, c(7)), c(bytes / 16 - 1));
    return b.CreateXor(off, b.CreateShl(bits, c(4)));
  }
};
}  // namespace

llvm::Value *FunctionLowering::wgmmaOffsetA(const WgmmaPlan &p, llvm::Value *row, llvm::Value *col) {
  IrArith ar{b_};
  return lower::wgmmaOffsetA(ar, p, row, col);
}

llvm::Value *FunctionLowering::wgmmaOffsetB(const WgmmaPlan &p, llvm::Value *row, llvm::Value *col) {
  IrArith ar{b_};
  return lower::wgmmaOffsetB(ar, p, row, col);
}

// Writes 2-D tile `v` (f16/bf16, or fp8 codes) at base + offsetOf(row, col):
// a vector per run of up to 16 bytes contiguous along dim `contiguous` in
// the thread and in shared memory, which the layouts above keep inside one
// 16-byte chunk.
void FunctionLowering::stageForWgmma(const ir::Value *v, llvm::Value *base,
                                     const std::function<llvm::Value *(llvm::Value *, llvm::Value *)> &offsetOf,
                                     const ir::Location &loc, int contiguous) {
  const ir::Type &t = v->type();
  llvm::Type *ty = elemType(t.elem);
  RegisterMap rm(t.layout, t.shape);
  const ir::Layout &l = *rm.root().blocked;
  const int width = static_cast<int>(module_.getDataLayout().getTypeAllocSize(ty));
  const int sv = l.order[0] == contiguous ? std::min(rm.contiguousPerThread(contiguous), 16 / width) : 1;
  std::vector<llvm::Value *> addresses;
  Regs vals;
  const Regs &src = regs(v);
  for (int r = 0; r < rm.numRegisters(); r += sv) {
    std::vector<llvm::Value *> idx = elementIndex(t, rm, r);
    addresses.push_back(b_.CreateGEP(b_.getInt8Ty(), base, offsetOf(idx[0], idx[1])));
    if (sv == 1) {
      vals.push_back(src[r]);
      continue;
    }
    llvm::Value *vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(ty, sv));
    for (int e = 0; e < sv; ++e) vec = b_.CreateInsertElement(vec, src[r + e], uint64_t(e));
    vals.push_back(vec);
  }
  storeShared(vals, addresses, rm.replicated() ? ownerPredicate(t, rm) : nullptr, loc);
}

// The descriptor of a matrix at shared pointer `at`: the constant fields
// with the start address (its bits 4-17) or-ed in.
llvm::Value *FunctionLowering::wgmmaDescriptor(llvm::Value *at, uint32_t leadingBytes, uint32_t strideBytes,
                                               int swizzleBytes) {
  llvm::Value *addr = target_.sharedWindowAddress(b_, at);
  llvm::Value *start =
      b_.CreateZExt(b_.CreateAnd(b_.CreateLShr(addr, b_.getInt32(4)), b_.getInt32(0x3fff)), b_.getInt64Ty());
  return b_.CreateOr(start, b_.getInt64(wgmmaDescriptorBits(leadingBytes, strideBytes, swizzleBytes)));
}

Regs FunctionLowering::issueWgmma(const WgmmaPlan &p, const ir::Type &resultType, llvm::Value *baseA,
                                  llvm::Value *baseB, Regs acc, const ir::Location &loc, int pending,
                                  const ir::Value *a) {
  auto i32 = [&](int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); };
  const int64_t Mg = p.M / p.warpgroups, blocks = Mg / 64, steps = p.K * p.elemBytes / 32;
  RegisterMap rm(resultType.layout, resultType.shape);
  // This thread's warpgroup region of A: wgmmaOperandA's offset for
  // warpgroup 0, from there.
  llvm::Value *gi = b_.CreateUDiv(warp_, i32(4));
  llvm::Value *regionA = a ? nullptr : b_.CreateGEP(b_.getInt8Ty(), baseA, b_.CreateMul(gi, i32(Mg * p.K * p.elemBytes)));
  // The sim names a failing wgmma by its call's !tk.loc: the last call the
  // Target emitted.
  auto locate = [&] {
    llvm::BasicBlock *bb = b_.GetInsertBlock();
    for (auto it = bb->rbegin(); it != bb->rend(); ++it)
      if (llvm::isa<llvm::CallInst>(*it)) {
        tagGlobal(&*it, loc);
        return;
      }
  };
  auto descriptor = [&](llvm::Value *base, const WgmmaOperand &o) {
    return wgmmaDescriptor(b_.CreateGEP(b_.getInt8Ty(), base, i32(o.offset)), o.leadingBytes, o.strideBytes,
                           o.swizzleBytes);
  };
  target_.wgmmaFence(b_);
  for (int64_t ks = 0; ks < steps; ++ks) {
    llvm::Value *descB = descriptor(baseB, wgmmaOperandB(p, ks));
    for (int64_t blk = 0; blk < blocks; ++blk) {
      // D register i: n8 tile i / 4, row half (i % 4) / 2, column (i % 2).
      std::vector<int> reg;
      for (int64_t i = 0; i < p.N / 2; ++i)
        reg.push_back(rm.index({static_cast<int>(2 * blk + (i % 4) / 2), static_cast<int>(2 * (i / 4) + i % 2)}));
      std::vector<llvm::Value *> d;
      for (int r : reg) d.push_back(acc[r]);
      // A's m64 block blk of this warpgroup: the accumulator's rows, so the
      // thread's m16 tiles 2 blk and 2 blk + 1 of its rows (warp w4 supplies
      // rows 16 w4 .. of the block as wgmma places them, as the staging does).
      if (a)
        d = target_.wgmmaMmaAsyncRegA(b_, static_cast<int>(p.N), p.atype == ir::ScalarKind::BF16,
                                      /*transB=*/!p.kMajorB,
                                      fragmentA(a, blk, ks), descB, d);
      else
        d = target_.wgmmaMmaAsync(b_, static_cast<int>(p.N), p.atype, p.btype, /*transA=*/false,
                                  /*transB=*/!p.kMajorB,
                                  descriptor(regionA, wgmmaOperandA(p, 0, blk, ks)), descB, d);
      locate();
      for (size_t i = 0; i < reg.size(); ++i) acc[reg[i]] = d[i];
    }
  }
  target_.wgmmaCommitGroup(b_);
  return target_.wgmmaWaitGroup(b_, pending, acc);
}

const ir::Value *FunctionLowering::wgmmaOperand(const ir::Op &op, size_t k) const {
  return multipliesFp8Codes(op) ? fp8Source(op.operand(k)) : op.operand(k);
}

// An operand a pipelined loop left in a ring slot is read there: the slot
// has the operand's layout of the header (planRings), and the loop's async_wait
// fenced the copies for the async proxy before its barrier. The others are
// staged from registers into scratch.
Regs FunctionLowering::lowerDotWgmma(ir::Op &op) {
  WgmmaPlan p = wgmmaPlan(op, fn_.numWarps());
  const bool fp8 = p.elemBytes == 1;
  const ir::Value *opA = wgmmaOperand(op, 0), *opB = wgmmaOperand(op, 1);
  const ir::Op *ringA = inPlaceOperand(opA), *ringB = inPlaceOperand(opB);
  const bool regA = !fp8 && !ringA && aFromRegisters(op);
  // A B ring may hold B K-major (planRings): read it the way it was written.
  if (ringB) {
    const WgmmaPlan &r = rings_.at(ringB->intAttr("buffer")).plan;
    p.kMajorB = r.kMajorB;
    p.swizzleB = r.swizzleB;
  }
  const int64_t staged = (ringA || regA ? 0 : p.bytesA) + (ringB ? 0 : p.bytesB);
  llvm::Value *base = nullptr;
  if (staged) {
    // The swizzle patterns repeat every 1024 bytes of address.
    useScratch(staged, 1024);
    base = scratchBase(1024);
  }
  llvm::Value *baseA = ringA ? slotBase(ringA->intAttr("buffer"), regs(ringA->operand(0))[0]) : base;
  llvm::Value *baseB =
      ringB ? slotBase(ringB->intAttr("buffer"), regs(ringB->operand(0))[0])
            : b_.CreateGEP(b_.getInt8Ty(), base, b_.getInt32(ringA || regA ? 0 : static_cast<uint32_t>(p.bytesA)));
  if (!ringA && !regA)
    stageForWgmma(
        opA, baseA, [&](llvm::Value *r, llvm::Value *c) { return wgmmaOffsetA(p, r, c); }, op.loc());
  if (!ringB)
    stageForWgmma(
        opB, baseB, [&](llvm::Value *r, llvm::Value *c) { return wgmmaOffsetB(p, r, c); }, op.loc(),
        p.kMajorB ? 0 : 1);
  if (staged) {
    // Every thread's generic-proxy stores, fenced for the async proxy, then
    // ordered before every warpgroup's reads by the barrier.
    target_.fenceProxyAsync(b_);
    barrier(op.loc());
  }
  // Both operands in rings refilled two iterations after they are read: the
  // loop keeps this group in flight (planWgmmaInFlight).
  auto pending = wgmmaPending_.find(&op);
  Regs acc = issueWgmma(p, op.result()->type(), baseA, baseB, regs(op.operand(2)), op.loc(),
                        pending == wgmmaPending_.end() ? 0 : pending->second, regA ? op.operand(0) : nullptr);
  // Scratch is reused by the next exchange. A ring slot needs no barrier:
  // the next copy into it comes after a later iteration's async_wait
  // barrier, by which every warpgroup's wait here has completed the groups
  // that read it.
  if (staged) barrier(op.loc());
  return acc;
}

}  // namespace tk::lower
