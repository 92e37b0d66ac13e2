// Lowering of `histogram`: each input element's owner writes its value (or -1
// where masked off) to shared memory, row-major; then every thread counts,
// for each bin it holds, the elements equal to it, in a loop over them (one
// shared load an element: the same address for the whole warp, a broadcast
// on a GPU). No atomics, so the counts are exact and the same on every run;
// the work is n loads and (bins per thread) compares a thread.
#include "lower/FunctionLowering.h"

namespace tk::lower {

Regs FunctionLowering::lowerHistogram(ir::Op &op) {
  const ir::Location loc = op.loc();
  const ir::Type &st = op.operand(0)->type(), &rt = op.result()->type();
  const int64_t n = st.numElements();
  RegisterMap in(st.layout, st.shape), out(rt.layout, rt.shape);
  const Regs &x = regs(op.operand(0));
  const Regs *mask = op.numOperands() > 1 ? &regs(op.operand(1)) : nullptr;
  Regs vals;
  for (int r = 0; r < in.numRegisters(); ++r) {
    llvm::Value *v = b_.CreateSExtOrTrunc(x[r], b_.getInt32Ty());
    // Values outside 0..bins-1 count nowhere; only the low 32 bits of an
    // i64 are compared, so a wider value is tested first.
    llvm::Value *inside = b_.getTrue();
    if (x[r]->getType()->getIntegerBitWidth() > 32)
      inside = b_.CreateICmpEQ(b_.CreateSExt(v, x[r]->getType()), x[r]);
    if (mask) inside = b_.CreateAnd(inside, (*mask)[r]);
    vals.push_back(b_.CreateSelect(inside, v, b_.getInt32(-1)));
  }
  useScratch(static_cast<int>(n * 4));
  storeShared(vals, sharedAddresses(st, b_.getInt32Ty(), vals.size()), ownerPredicate(st, in), loc);
  barrier(loc);

  std::vector<llvm::Value *> bin;
  for (int o = 0; o < out.numRegisters(); ++o) bin.push_back(elementIndex(rt, out, o)[0]);
  llvm::Value *base = scratchBase();
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *body = llvm::BasicBlock::Create(ctx_, "histogram.body", llfn_);
  auto *done = llvm::BasicBlock::Create(ctx_, "histogram.done", llfn_);
  b_.CreateBr(body);
  b_.SetInsertPoint(body);
  llvm::PHINode *i = b_.CreatePHI(b_.getInt32Ty(), 2, "histogram.i");
  i->addIncoming(b_.getInt32(0), pre);
  Regs counts;
  for (size_t o = 0; o < bin.size(); ++o) {
    llvm::PHINode *c = b_.CreatePHI(b_.getInt32Ty(), 2, "histogram.count");
    c->addIncoming(b_.getInt32(0), pre);
    counts.push_back(c);
  }
  llvm::Value *v = loadShared(b_.getInt32Ty(), {b_.CreateGEP(b_.getInt32Ty(), base, i)}, loc)[0];
  Regs next;
  for (size_t o = 0; o < bin.size(); ++o)
    next.push_back(b_.CreateAdd(counts[o], b_.CreateZExt(b_.CreateICmpEQ(v, bin[o]), b_.getInt32Ty())));
  llvm::Value *iNext = b_.CreateAdd(i, b_.getInt32(1));
  llvm::BasicBlock *latch = b_.GetInsertBlock();
  i->addIncoming(iNext, latch);
  for (size_t o = 0; o < bin.size(); ++o) llvm::cast<llvm::PHINode>(counts[o])->addIncoming(next[o], latch);
  b_.CreateCondBr(b_.CreateICmpULT(iNext, b_.getInt32(static_cast<uint32_t>(n))), body, done);
  b_.SetInsertPoint(done);
  barrier(loc);  // the buffer is reused by the next exchange
  return next;
}

}  // namespace tk::lower
