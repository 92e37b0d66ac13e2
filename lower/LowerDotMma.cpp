// Lowering of `dot` on tensor cores: operands staged in shared memory,
// fragments loaded with ldmatrix, mma.sync m16n8k16 (f16/bf16 into f32),
// m16n8k8 (tf32 into f32) or m16n8k32 (s8 into s32). The accumulator never leaves registers: its layout (mmaLayout, in
// lower/Layouts.h) is a blocked layout whose registers are exactly the mma's
// C/D fragments, so the epilogue, stores and loop-carried accumulators use it
// like any other.
#include "lower/FunctionLowering.h"

namespace tk::lower {

// Shared memory holds a row-major [M, K + 8] and b row-major [K, N + 8]
// (sharedSlotLayout): the 16 bytes of padding per row shift consecutive rows
// by 4 banks, so the 8 rows of 16 bytes an ldmatrix phase reads fall on 32
// distinct banks, and every row stays 16-byte aligned as ldmatrix needs. A
// ring slot may instead be unpadded and swizzled (chunk c of row r at
// c ^ (r % 8)), with the same effect on the banks; see the lane addresses
// below.
//
// In mmaLayout a warp at (warpM, warpN) holds, for its m16 tile i and n8
// tile j, rows warpM*8 + g + (2i + h)*8*wm (g = lane / 4; h = 0, 1: the
// fragment's two row groups) and columns warpN*8 + 2*(lane % 4) + {0, 1}
// + j*8*wn. ldmatrix lets each lane name the row it supplies, so the A
// fragment is read from exactly those rows: lane l supplies row l % 8 of
// matrix l / 8, whose low bit picks the row group and high bit the k half.
// B's k16 x n8 fragment is two 8x8 matrices of b's rows (k) read transposed.
//
// tf32 and s8: every register of A and B holds 4 bytes of k (one tf32, four
// s8), the same 8 x 16-byte matrices as f16's, so A is read as above with
// its k step of 32 bytes (8 tf32, 32 s8). ldmatrix transposes only 16-bit
// elements, so B is staged transposed, [N, K + pad] (b^T row-major), and
// its fragment is two plain 8x8 matrices of b^T's rows: lanes 0-7 supply the
// warp's 8 n rows at k byte 0, lanes 8-15 the same rows at byte 16. tf32
// operands are rounded (cvt.rna) as they are staged, once per element. An
// f16/bf16 B that a pipelined loop copied column by column (attention's k,
// loaded as [D, BLOCK_N]) sits in its ring slot transposed too, and is
// read the same way, with no ldmatrix.trans.
bool FunctionLowering::aFromRegisters(const ir::Op &op) const {
  const ir::Type &at = op.operand(0)->type(), &rt = op.result()->type();
  const std::optional<MmaKind> kind = mmaKind(op);
  return kind && (*kind == MmaKind::F16 || *kind == MmaKind::BF16) && at.layout && rt.layout &&
         ir::sameLayout(at.layout, rt.layout) && rt.layout->warpsPerCTA.size() == 2 && rt.layout->warpsPerCTA[1] == 1;
}

// In the result's layout a thread holds, per m16 tile i, row groups h = 0, 1
// (register rows 2i + h) and, per n8 tile j, columns 2t, 2t + 1 (register
// columns 2j, 2j + 1). A's k16 step ks is its n8 tiles 2 ks and 2 ks + 1,
// so fragment register q (row group q % 2, k half q / 2) packs registers
// (2i + q % 2, 2 (2 ks + q / 2) + {0, 1}).
// An A cast from f32 in the same layout (attention's `p as f16`) is packed
// from the f32 registers, two per cvt.rn.f16x2.f32, rather than converted
// one element at a time (the cast's own conversions are then dead).
std::vector<llvm::Value *> FunctionLowering::fragmentA(const ir::Value *a, int64_t tile, int64_t ks) {
  const ir::Type &t = a->type();
  RegisterMap rm(t.layout, t.shape);
  const ir::Op *def = a->definingOp();
  const bool fromF32 = def && def->is(ir::OpKind::Cast) && def->operand(0)->type().elem.scalar == ir::ScalarKind::F32 &&
                       ir::sameLayout(def->operand(0)->type().layout, t.layout);
  const Regs &src = regs(fromF32 ? def->operand(0) : a);
  llvm::Type *pair = llvm::FixedVectorType::get(elemType(t.elem), 2);
  std::vector<llvm::Value *> out;
  for (int q = 0; q < 4; ++q) {
    int r[2];
    for (int e = 0; e < 2; ++e)
      r[e] = rm.index({static_cast<int>(2 * tile + q % 2), static_cast<int>(2 * (2 * ks + q / 2) + e)});
    if (fromF32) {
      out.push_back(target_.packHalves(b_, src[r[0]], src[r[1]], t.elem.scalar == ir::ScalarKind::BF16));
      continue;
    }
    llvm::Value *v = llvm::PoisonValue::get(pair);
    for (int e = 0; e < 2; ++e) v = b_.CreateInsertElement(v, src[r[e]], uint64_t(e));
    out.push_back(b_.CreateBitCast(v, b_.getInt32Ty()));
  }
  return out;
}

std::vector<llvm::Value *> FunctionLowering::mmaSync(MmaKind kind, const std::vector<llvm::Value *> &a,
                                                  const std::vector<llvm::Value *> &b, const std::vector<llvm::Value *> &c) {
  switch (kind) {
    case MmaKind::TF32:
      return target_.mmaM16N8K8Tf32(b_, a, b, c);
    case MmaKind::S8:
      return target_.mmaM16N8K32S8(b_, a, b, c);
    default:
      return target_.mmaM16N8K16(b_, kind == MmaKind::BF16, a, b, c);
  }
}

// The sim names a failing ldmatrix or mma by its call's !tk.loc: the last
// call the Target emitted.
std::vector<llvm::Value *> FunctionLowering::lastCallAt(std::vector<llvm::Value *> out, const ir::Location &loc) {
  llvm::BasicBlock *bb = b_.GetInsertBlock();
  for (auto it = bb->rbegin(); it != bb->rend(); ++it)
    if (llvm::isa<llvm::CallInst>(*it)) {
      tagGlobal(&*it, loc);
      break;
    }
  return out;
}

llvm::Value *FunctionLowering::swizzledAddress(llvm::Value *lane, llvm::Value *chunks, llvm::Value *bytes) {
  auto i32 = [&](int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); };
  llvm::Value *at = xorAddress(lane, b_.CreateShl(b_.CreateAnd(chunks, i32(7)), i32(4)));
  llvm::Value *rest = b_.CreateAdd(b_.CreateShl(b_.CreateAnd(chunks, i32(~int64_t(7))), i32(4)), bytes);
  return b_.CreateGEP(b_.getInt8Ty(), at, rest);
}

namespace {
// `steps` k steps on the accumulator `acc`: unrolled (`step` given the step
// as a constant) or as a loop of one step per iteration (given the phi).
Regs repeatSteps(llvm::IRBuilder<> &b, llvm::Function *fn, int64_t steps, bool unroll, Regs acc,
                 const std::function<Regs(llvm::Value *, Regs)> &step) {
  auto i32 = [&](int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); };
  if (unroll) {
    for (int64_t ks = 0; ks < steps; ++ks) acc = step(i32(ks), acc);
    return acc;
  }
  llvm::BasicBlock *pre = b.GetInsertBlock();
  auto *loop = llvm::BasicBlock::Create(b.getContext(), "mma.k", fn);
  auto *done = llvm::BasicBlock::Create(b.getContext(), "mma.done", fn);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode *ks = b.CreatePHI(b.getInt32Ty(), 2, "ks");
  ks->addIncoming(i32(0), pre);
  Regs phis;
  for (llvm::Value *v : acc) {
    llvm::PHINode *p = b.CreatePHI(v->getType(), 2);
    p->addIncoming(v, pre);
    phis.push_back(p);
  }
  acc = step(ks, phis);
  llvm::Value *next = b.CreateAdd(ks, i32(1));
  llvm::BasicBlock *latch = b.GetInsertBlock();
  ks->addIncoming(next, latch);
  for (size_t r = 0; r < acc.size(); ++r) llvm::cast<llvm::PHINode>(phis[r])->addIncoming(acc[r], latch);
  b.CreateCondBr(b.CreateICmpULT(next, i32(steps)), loop, done);
  b.SetInsertPoint(done);
  return acc;
}
}  // namespace

Regs FunctionLowering::lowerDotMma(ir::Op &op) {
  // A dot of fp8 tiles arrives as a dot of their f16 casts. Where the target
  // multiplies fp8 (archUsesFp8Mma: sm_89) and K is whole k32 steps, the codes
  // themselves are staged, half the bytes, and multiplied by the fp8 mma:
  // the same products (f16 holds every fp8 value), half the instructions.
  // (The tile IR stays one for every arch of a bundle, so the choice is the
  // lowering's, as fragmentA reads an A through its cast from f32.)
  const MmaKind kind = *mmaKind(op);
  const bool fp8 = target_.usesFp8Mma() && kind == MmaKind::F16 && multipliesFp8Codes(op);
  const ir::Value *opA = fp8 ? fp8Source(op.operand(0)) : op.operand(0),
                  *opB = fp8 ? fp8Source(op.operand(1)) : op.operand(1);
  const ir::Type &at = opA->type(), &bt = opB->type(), &rt = op.result()->type();
  const int64_t M = at.shape[0], K = at.shape[1], N = bt.shape[1];
  const bool bf16 = kind == MmaKind::BF16, halves = !fp8 && (kind == MmaKind::F16 || bf16);
  llvm::Type *half = elemType(at.elem);  // the staged element (f16, bf16, f32 holding tf32, i8, fp8)
  const int64_t elt = static_cast<int64_t>(module_.getDataLayout().getTypeAllocSize(half));
  const ir::Layout &l = *rt.layout;
  const int wm = l.warpsPerCTA[0], wn = l.warpsPerCTA[1];
  const int64_t kStep = fp8 ? 32 : mmaK(kind), kHalf = 16 / elt;  // k per step, and per 16 bytes
  // Warps past N's n8 tiles repeat them (mmaLayout): wnReal distinct columns of warps.
  const int64_t wnReal = std::min<int64_t>(wn, N / 8);
  const int64_t tilesM = M / (16 * wm), tilesN = std::max<int64_t>(1, N / (8 * wn)), steps = K / kStep;
  // An operand a pipelined loop left in a ring slot is read there (the
  // async_wait before it was the barrier); the others are staged from
  // registers into scratch, in the same layout. B is held transposed ([N,
  // K]) for tf32 and s8, and where its ring stores it so (LowerPipeline.cpp).
  const ir::Op *ringA = fp8 ? nullptr : inPlaceOperand(opA), *ringB = fp8 ? nullptr : inPlaceOperand(opB);
  const bool regA = !fp8 && !ringA && aFromRegisters(op);
  const bool bT = !halves || (ringB && rings_.at(ringB->intAttr("buffer")).transposed);
  // A ring's slot may be swizzled (planRings); scratch is always padded.
  const SharedSlotLayout slotA = ringA ? rings_.at(ringA->intAttr("buffer")).slot : sharedSlotLayout(M, K, elt),
                         slotB = ringB ? rings_.at(ringB->intAttr("buffer")).slot
                                 : bT  ? sharedSlotLayout(N, K, elt)
                                       : sharedSlotLayout(K, N, elt);
  const int64_t strideA = slotA.rowStride, strideB = slotB.rowStride;

  llvm::Value *scratch = scratchBase();
  int64_t scratchBytes = 0;
  auto place = [&](const ir::Op *ring, const SharedSlotLayout &slot) {
    if (ring) return slotBase(ring->intAttr("buffer"), regs(ring->operand(0))[0]);
    llvm::Value *staged = b_.CreateGEP(b_.getInt8Ty(), scratch, b_.getInt32(static_cast<uint32_t>(scratchBytes)));
    scratchBytes += slot.bytes;
    return staged;
  };
  llvm::Value *base = regA ? nullptr : place(ringA, slotA);
  llvm::Value *baseB = place(ringB, slotB);
  useScratch(static_cast<int>(scratchBytes));
  std::function<llvm::Value *(llvm::Value *)> convert;
  if (kind == MmaKind::TF32) convert = [&](llvm::Value *x) { return target_.roundToTf32(b_, x); };
  if (!ringA && !regA) stageTile(opA, base, strideA, at.elem, op.loc(), convert);
  if (!ringB) stageTile(opB, baseB, strideB, bt.elem, op.loc(), convert, /*transposed=*/bT);
  if (scratchBytes) barrier(op.loc());

  auto i32 = [&](int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); };
  // Warp coordinates as threadPart derives them for order [1, 0].
  llvm::Value *warpM = b_.CreateURem(b_.CreateUDiv(warp_, i32(wn)), i32(wm));
  llvm::Value *warpN = b_.CreateURem(b_.CreateURem(warp_, i32(wn)), i32(wnReal));
  llvm::Value *mat = b_.CreateUDiv(lane_, i32(8)), *row8 = b_.CreateURem(lane_, i32(8));
  // A: this lane's row (of m tile 0) and k offset within a k16 step.
  llvm::Value *aRow = b_.CreateAdd(b_.CreateAdd(b_.CreateMul(warpM, i32(8)), row8),
                                   b_.CreateMul(b_.CreateAnd(mat, i32(1)), i32(8 * wm)));
  llvm::Value *aCol = b_.CreateMul(b_.CreateLShr(mat, i32(1)), i32(kHalf));
  llvm::Value *aOffset = b_.CreateAdd(b_.CreateMul(aRow, i32(strideA)), aCol);
  // B: lanes 0-15 supply rows k = lane of the step (lanes 16-31 repeat them;
  // ldmatrix .x2 ignores their addresses), at this warp's first column.
  llvm::Value *bRow0 = !bT ? b_.CreateURem(lane_, i32(16)) : b_.CreateAdd(b_.CreateMul(warpN, i32(8)), row8);
  llvm::Value *bCol0 = !bT ? b_.CreateMul(warpN, i32(8)) : b_.CreateMul(b_.CreateAnd(mat, i32(1)), i32(kHalf));
  llvm::Value *bOffset = b_.CreateAdd(b_.CreateMul(bRow0, i32(strideB)), bCol0);
  // In a swizzled slot (16-bit elements: a 16-byte chunk is 8 of them) a
  // lane's rows keep their phase r % 8 = lane % 8 at every step and tile
  // (those move by multiples of 8 rows), and its chunks are its first, c0,
  // plus multiples of 2 (of wn for b's n tiles), bits c0 lacks: chunk
  // (c0 + d) ^ phase = (c0 ^ phase) ^ d. So a lane holds one address per
  // operand, its first element's, and each ldmatrix XORs d's low three bits
  // into it and adds the rest as an immediate. (Reading b's n tiles in pairs
  // with ldmatrix.x4.trans, half the addresses, took more registers on
  // sm_80: D = 64 attention 223 -> 243; docs/perf.md.)
  const int64_t rowBytesA = strideA * elt, rowBytesB = strideB * elt, kChunks = kStep * elt / 16;
  llvm::Value *laneA = slotA.swizzled ? b_.CreateGEP(b_.getInt8Ty(), base, slotOffset(slotA, aRow, aCol, elt)) : nullptr;
  llvm::Value *laneB = slotB.swizzled ? b_.CreateGEP(b_.getInt8Ty(), baseB, slotOffset(slotB, bRow0, bCol0, elt)) : nullptr;
  auto located = [&](std::vector<llvm::Value *> out) { return lastCallAt(std::move(out), op.loc()); };

  RegisterMap rm(rt.layout, rt.shape);
  auto reg = [&](int64_t k0, int64_t k1) { return rm.index({static_cast<int>(k0), static_cast<int>(k1)}); };

  auto mma = [&](const std::vector<llvm::Value *> &a, const std::vector<llvm::Value *> &bf,
                 const std::vector<llvm::Value *> &c) {
    if (fp8) return target_.mmaM16N8K32Fp8(b_, opA->type().elem.scalar, opB->type().elem.scalar, a, bf, c);
    return mmaSync(kind, a, bf, c);
  };

  // One k step at `ks` (i32): 1 ldmatrix per m tile, 1 per n tile, tilesM
  // x tilesN mma.
  auto step = [&](llvm::Value *ks, Regs acc) {
    llvm::Value *k0 = b_.CreateMul(ks, i32(kStep));
    std::vector<std::vector<llvm::Value *>> a(tilesM);
    for (int64_t i = 0; i < tilesM; ++i) {
      if (regA) {
        a[i] = fragmentA(op.operand(0), i, llvm::cast<llvm::ConstantInt>(ks)->getSExtValue());
        continue;
      }
      llvm::Value *at;
      if (laneA) {
        at = swizzledAddress(laneA, b_.CreateMul(ks, i32(kChunks)), i32(2 * i * 8 * wm * rowBytesA));
      } else {
        llvm::Value *off = b_.CreateAdd(aOffset, b_.CreateAdd(k0, i32(2 * i * 8 * wm * strideA)));
        at = b_.CreateGEP(half, base, off);
      }
      a[i] = located(target_.ldmatrix(b_, at, 4, false));
    }
    // B^T steps along its rows' k; b down its k rows.
    llvm::Value *bRow = b_.CreateAdd(bOffset, bT ? k0 : b_.CreateMul(k0, i32(strideB)));
    for (int64_t j = 0; j < tilesN; ++j) {
      llvm::Value *at;
      if (laneB && bT)
        at = swizzledAddress(laneB, b_.CreateMul(ks, i32(kChunks)), i32(j * 8 * wn * rowBytesB));
      else if (laneB)
        at = swizzledAddress(laneB, i32(j * wn), b_.CreateMul(k0, i32(rowBytesB)));
      else
        at = b_.CreateGEP(half, baseB, b_.CreateAdd(bRow, i32(j * 8 * wn * (bT ? strideB : 1))));
      std::vector<llvm::Value *> bf = located(target_.ldmatrix(b_, at, 2, !bT));
      for (int64_t i = 0; i < tilesM; ++i) {
        const int r[4] = {reg(2 * i, 2 * j), reg(2 * i, 2 * j + 1), reg(2 * i + 1, 2 * j), reg(2 * i + 1, 2 * j + 1)};
        std::vector<llvm::Value *> d = located(mma(a[i], bf, {acc[r[0]], acc[r[1]], acc[r[2]], acc[r[3]]}));
        for (int e = 0; e < 4; ++e) acc[r[e]] = d[e];
      }
    }
    return acc;
  };

  // A few steps unrolled; a long K as a loop of one step per iteration (A
  // from registers is indexed by the step: always unrolled).
  Regs acc = repeatSteps(b_, llfn_, steps, steps <= 4 || regA, regs(op.operand(2)), step);
  if (scratchBytes) barrier(op.loc());  // the scratch is reused by the next exchange
  return acc;
}

}  // namespace tk::lower
