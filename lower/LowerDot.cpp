// Lowering of `dot` on FMA units (no tensor cores yet): a and b go to shared
// memory, then each thread computes its own elements of the result as
// acc + sum_k a[m,k] * b[k,n], reading a and b back as vectors.
#include <llvm/IR/Intrinsics.h>

#include <algorithm>

#include "lower/FunctionLowering.h"

namespace tk::lower {

// Writes 2-D tile `v` to shared memory at `base`, row-major with `rowStride`
// elements per row, converted to `as`: each element's owner writes, a vector
// (up to 16 bytes) per run of elements contiguous along dim 1 (the default
// layouts' order).
void FunctionLowering::stageTile(const ir::Value *v, llvm::Value *base, int64_t rowStride, const ir::ElemType &as,
                                 const ir::Location &loc, const std::function<llvm::Value *(llvm::Value *)> &convert,
                                 bool transposed) {
  const ir::Type &t = v->type();
  llvm::Type *ty = elemType(as);
  const int64_t elt = static_cast<int64_t>(module_.getDataLayout().getTypeAllocSize(ty));
  RegisterMap rm(t.layout, t.shape);
  const ir::Layout &l = *rm.root().blocked;
  const int sv =
      l.order[0] == 1 && !transposed ? static_cast<int>(std::min<int64_t>(rm.contiguousPerThread(1), 16 / elt)) : 1;
  std::vector<llvm::Value *> addresses;
  for (int r = 0; r < rm.numRegisters(); r += sv) {
    std::vector<llvm::Value *> idx = elementIndex(t, rm, r);
    if (transposed) std::swap(idx[0], idx[1]);
    llvm::Value *lin = b_.CreateAdd(b_.CreateMul(idx[0], b_.getInt32(static_cast<uint32_t>(rowStride))), idx[1]);
    addresses.push_back(b_.CreateGEP(ty, base, lin));
  }
  Regs vals;
  const Regs &src = regs(v);
  auto element = [&](int r) {
    llvm::Value *x = castScalar(src[r], t.elem, as);
    return convert ? b_.CreateBitCast(convert(x), ty) : x;
  };
  for (int r = 0; r < rm.numRegisters(); r += sv) {
    if (sv == 1) {
      vals.push_back(element(r));
      continue;
    }
    llvm::Value *vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(ty, sv));
    for (int e = 0; e < sv; ++e) vec = b_.CreateInsertElement(vec, element(r + e), uint64_t(e));
    vals.push_back(vec);
  }
  storeShared(vals, addresses, rm.replicated() ? ownerPredicate(t, rm) : nullptr, loc);
}

// Shared memory holds a row-major [M, K + pad] (each row padded by one
// vector, 16 bytes, so the rows a warp reads at one k land on different
// banks) and b row-major [K, N] after it (all lanes read one row of b at a
// time, so it needs no padding). A thread's registers of the result form a
// grid of rows (m) by columns (n); per step of `kv` k's it loads each row's
// a[m, k..k+kv) as one vector, each run of contiguous columns of b[k, n..)
// as one vector, and does rows x columns x kv multiply-adds in the
// accumulator's type (f16/bf16 widened to f32, i8 to i32). K > 16 runs as
// an LLVM loop of one step per iteration; smaller K is unrolled.
Regs FunctionLowering::lowerDot(ir::Op &op) {
  if (ir::LayoutRef mma = tensorCoreLayout(op, fn_); mma && ir::sameLayout(op.result()->type().layout, mma))
    return dotOnWgmma(op) ? lowerDotWgmma(op) : lowerDotMma(op);
  const ir::Type &at = op.operand(0)->type(), &bt = op.operand(1)->type(), &rt = op.result()->type();
  const int64_t K = at.shape[1], N = bt.shape[1];
  // Shared memory holds a and b already widened to the accumulator's type:
  // each element converts once, not once per use, and every element owns
  // whole 4-byte words (so no two threads write one word).
  llvm::Type *accTy = elemType(rt.elem);
  const bool isFloat = rt.isFloat();
  const int64_t elt = static_cast<int64_t>(module_.getDataLayout().getTypeAllocSize(accTy));
  const int64_t kv = std::min<int64_t>(K, 16 / elt);  // k's per vector load of a
  const int64_t strideA = K + kv;
  const int64_t offsetB = (at.shape[0] * strideA * elt + 15) / 16 * 16;
  useScratch(static_cast<int>(offsetB + K * N * elt));

  // 1. Every element's owner writes a and b to shared memory.
  llvm::Value *base = scratchBase();
  llvm::Value *baseB = b_.CreateGEP(b_.getInt8Ty(), base, b_.getInt32(static_cast<uint32_t>(offsetB)));
  stageTile(op.operand(0), base, strideA, rt.elem, op.loc());
  stageTile(op.operand(1), baseB, N, rt.elem, op.loc());
  barrier(op.loc());

  // 2. The thread's result registers as rows x columns, with their indices.
  RegisterMap rm(rt.layout, rt.shape);
  const RootView &root = rm.root();
  const int dm = root.kept[0], dn = root.kept[1];
  const int numRows = rm.count(dm), numCols = rm.count(dn);
  auto indexAt = [&](int d, int c, int which) {
    std::vector<int> k(root.shape.size(), 0);
    k[d] = c;
    return elementIndex(rt, rm, rm.index(k))[which];
  };
  std::vector<llvm::Value *> rowStart(numRows), colStart(numCols);
  for (int i = 0; i < numRows; ++i)
    rowStart[i] = b_.CreateMul(indexAt(dm, i, 0), b_.getInt32(static_cast<uint32_t>(strideA)));
  // Columns come in runs of `nv` contiguous elements (one vector of b).
  const int nv = static_cast<int>(std::min<int64_t>(rm.contiguousPerThread(dn), 16 / elt));
  for (int j = 0; j < numCols; j += nv) colStart[j] = indexAt(dn, j, 1);
  std::vector<std::pair<int, int>> cell(rm.numRegisters());  // register -> (row, column)
  for (int r = 0; r < rm.numRegisters(); ++r) {
    std::vector<int> k = rm.coords(r);
    cell[r] = {k[dm], k[dn]};
  }

  auto loadVector = [&](llvm::Value *ptr, int64_t n) {
    auto *vty = llvm::FixedVectorType::get(accTy, static_cast<unsigned>(n));
    auto *ld = b_.CreateAlignedLoad(vty, ptr, llvm::Align(static_cast<uint64_t>(n * elt)));
    tagShared(ld, op.loc());
    std::vector<llvm::Value *> out;
    for (int64_t e = 0; e < n; ++e) out.push_back(b_.CreateExtractElement(ld, uint64_t(e)));
    return out;
  };
  // One step: k0 .. k0 + kv - 1 (k0 an i32, a multiple of kv).
  auto step = [&](llvm::Value *k0, Regs acc) {
    std::vector<std::vector<llvm::Value *>> a(numRows);
    for (int i = 0; i < numRows; ++i) a[i] = loadVector(b_.CreateGEP(accTy, base, b_.CreateAdd(rowStart[i], k0)), kv);
    for (int64_t kk = 0; kk < kv; ++kk) {
      llvm::Value *row =
          b_.CreateMul(b_.CreateAdd(k0, b_.getInt32(static_cast<uint32_t>(kk))), b_.getInt32(static_cast<uint32_t>(N)));
      std::vector<llvm::Value *> bk(numCols);
      for (int j = 0; j < numCols; j += nv) {
        std::vector<llvm::Value *> run = loadVector(b_.CreateGEP(accTy, baseB, b_.CreateAdd(row, colStart[j])), nv);
        std::copy(run.begin(), run.end(), bk.begin() + j);
      }
      for (size_t r = 0; r < acc.size(); ++r) {
        llvm::Value *x = a[cell[r].first][kk], *y = bk[cell[r].second];
        acc[r] = isFloat ? b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {accTy}, {x, y, acc[r]})
                         : b_.CreateAdd(acc[r], b_.CreateMul(x, y));
      }
    }
    return acc;
  };

  // 3. Small K unrolled; otherwise a loop of one step per iteration.
  Regs acc = regs(op.operand(2));
  if (K <= 16) {
    for (int64_t k0 = 0; k0 < K; k0 += kv) acc = step(b_.getInt32(static_cast<uint32_t>(k0)), acc);
  } else {
    llvm::BasicBlock *pre = b_.GetInsertBlock();
    auto *loop = llvm::BasicBlock::Create(ctx_, "dot.k", llfn_);
    auto *done = llvm::BasicBlock::Create(ctx_, "dot.done", llfn_);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode *k0 = b_.CreatePHI(b_.getInt32Ty(), 2, "k");
    k0->addIncoming(b_.getInt32(0), pre);
    Regs phis;
    for (llvm::Value *v : acc) {
      llvm::PHINode *p = b_.CreatePHI(accTy, 2);
      p->addIncoming(v, pre);
      phis.push_back(p);
    }
    acc = step(k0, phis);
    llvm::Value *next = b_.CreateAdd(k0, b_.getInt32(static_cast<uint32_t>(kv)));
    llvm::BasicBlock *latch = b_.GetInsertBlock();
    k0->addIncoming(next, latch);
    for (size_t r = 0; r < acc.size(); ++r) llvm::cast<llvm::PHINode>(phis[r])->addIncoming(acc[r], latch);
    b_.CreateCondBr(b_.CreateICmpULT(next, b_.getInt32(static_cast<uint32_t>(K))), loop, done);
    b_.SetInsertPoint(done);
  }
  barrier(op.loc());  // the buffer is reused by the next exchange
  return acc;
}

}  // namespace tk::lower
