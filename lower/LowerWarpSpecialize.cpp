// Lowering of warp_specialize (specialize-warps, SpecializeWarps.cpp): the
// kernel's own warps run the consumers' region, the producer warpgroup
// after them runs the producer's region on its first thread, the others
// of it go straight to the end. Both sides meet again only at the
// tma_release after the op (a block barrier of every thread).
#include <llvm/IR/IRBuilder.h>

#include <algorithm>

#include "lower/FunctionLowering.h"
#include "lower/LowerToLLVM.h"

namespace tk::lower {

int producerWarpsOf(const ir::Function &fn) {
  for (const auto &op : fn.body.ops())
    if (op->is(ir::OpKind::WarpSpecialize)) return static_cast<int>(op->intAttr("producer_warps"));
  return 0;
}

int FunctionLowering::producerWarps() const { return producerWarpsOf(fn_); }

namespace {

// Registers per thread (setmaxnreg): the kernel launches with R, the block's
// 64K registers over its threads (a multiple of 8); the producer drops to
// 56 and the consumers take what it gives up, up to 256: 168 / 56 / 224 for
// two consumer warpgroups, 96 / 56 / 104 for four. CUTLASS's producer
// keeps 40, but it issues one copy per operand where tk's issues one per
// 8-row box of A (32 for a 256-row tile), and at 40 the 256 x 64 tile's
// producer spilled 56 bytes (ptxas 13.0). With one consumer warpgroup each
// thread may have 255 already (256 threads): no split (all zero).
struct RegisterSplit {
  int launch = 0, producer = 0, consumer = 0;
};

RegisterSplit registerSplit(int consumerWarps, int producerWarps) {
  if (consumerWarps < 8) return {};
  const int threads = (consumerWarps + producerWarps) * kWarpSize;
  RegisterSplit s;
  s.launch = 65536 / threads / 8 * 8;
  s.producer = std::min(56, s.launch);
  const int pool = s.launch * threads - s.producer * producerWarps * kWarpSize;
  s.consumer = std::min(256, pool / (consumerWarps * kWarpSize) / 8 * 8);
  return s;
}

}  // namespace

void FunctionLowering::lowerWarpSpecialize(ir::Op &op) {
  const int consumers = fn_.numWarps() * kWarpSize;
  const RegisterSplit split = registerSplit(fn_.numWarps(), static_cast<int>(op.intAttr("producer_warps")));
  if (split.launch) target_.markMaxNReg(*llfn_, split.launch);
  auto *consumer = llvm::BasicBlock::Create(ctx_, "ws.consumer", llfn_);
  auto *producer = llvm::BasicBlock::Create(ctx_, "ws.producer", llfn_);
  auto *join = llvm::BasicBlock::Create(ctx_, "ws.join", llfn_);
  b_.CreateCondBr(b_.CreateICmpULT(tid_, b_.getInt32(static_cast<uint32_t>(consumers))), consumer, producer);

  b_.SetInsertPoint(consumer);
  if (split.launch) target_.setMaxNReg(b_, true, split.consumer);
  consumerThreads_ = consumers;
  lowerRegion(*op.regions()[1]);
  consumerThreads_ = 0;
  b_.CreateBr(join);

  b_.SetInsertPoint(producer);
  if (split.launch) target_.setMaxNReg(b_, false, split.producer);
  ifThen(b_.CreateICmpEQ(tid_, b_.getInt32(static_cast<uint32_t>(consumers))), [&] {
    tmaIssuer_ = b_.getTrue();
    lowerRegion(*op.regions()[0]);
    tmaIssuer_ = nullptr;
  }, "ws.issuer");
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
}

}  // namespace tk::lower
