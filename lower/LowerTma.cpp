// Lowering of the tensor-memory-accelerator ops (ir/Ops.def: tma_*) that
// pipeline-dot-operands makes of host-descriptor loads on sm_90a, and the
// Target's defaults for a machine without TMA.
//
// One thread (thread 0) initialises a loop's mbarriers, arrives on a
// stage's barrier expecting its bytes and issues its box copies; every
// thread waits for the barrier's phase, then a block barrier: the slot is
// complete, and every thread is past the iteration that read the slot the
// next copies overwrite (as after a cp.async wait). Copies write through the
// async proxy, which wgmma reads: they need no proxy fence (PTX ISA, "Async
// Proxy"); the wait fences the thread's own generic writes all the same.
#include <llvm/IR/IRBuilder.h>

#include <algorithm>

#include "lower/FunctionLowering.h"
#include "lower/Wgmma.h"
#include "tk/error.h"

namespace tk::lower {

// The descriptor parameter (by name: its base argument's), box and swizzle.
tk::TensorMapParam FunctionLowering::tensorMapOf(const ir::Op &copy) const {
  for (size_t i = 0; i < fn_.params.size(); ++i)
    if (fn_.body.argument(i) == copy.operand(0))
      return {fn_.params[i].name, copy.intListAttr("box"), static_cast<int>(copy.intAttr("swizzle"))};
  throw tk::InternalError("tma_copy: the base is not a descriptor parameter");
}

llvm::Value *FunctionLowering::tensorMapArg(const ir::Op &op) const {
  const auto planned = std::find(tensorMaps_.begin(), tensorMaps_.end(), tensorMapOf(op));
  if (planned == tensorMaps_.end()) throw tk::InternalError(std::string(op.info().mnemonic) + ": no tensor map planned for it");
  return llfn_->getArg(static_cast<unsigned>(fn_.params.size() + (planned - tensorMaps_.begin())));
}

void FunctionLowering::planTensorMaps() {
  for (ir::Op *op : fn_.walk()) {
    if (!op->is(ir::OpKind::TmaCopy) && !op->is(ir::OpKind::TmaStore)) continue;
    tk::TensorMapParam m = tensorMapOf(*op);
    if (std::find(tensorMaps_.begin(), tensorMaps_.end(), m) == tensorMaps_.end()) tensorMaps_.push_back(std::move(m));
  }
}

// Each group's mbarriers, 8 bytes apiece, after the rings: live while they are.
void FunctionLowering::planBarriers() {
  for (ir::Op *op : fn_.walk()) {
    if (!op->is(ir::OpKind::TmaInit)) continue;
    ringBytes_ = (ringBytes_ + 7) / 8 * 8;
    barrierOffsets_[op->intAttr("barrier")] = ringBytes_;
    // Warp-specialised: an empty barrier per slot after the full ones.
    ringBytes_ += static_cast<int>(8 * op->intAttr("stages") * (op->hasAttr("consumers") ? 2 : 1));
  }
  // Every ring a tma_copy fills must be read in place by wgmma in the
  // layout its boxes write (the pipeliner chose them from the same plan).
  for (ir::Op *op : fn_.walk()) {
    if (!op->is(ir::OpKind::TmaCopy)) continue;
    const Ring &r = rings_.at(op->intAttr("buffer"));
    const int swizzle = r.wgmmaOperand == 1 ? r.plan.swizzleA : r.plan.swizzleB;
    const bool kMajor = op->hasAttr("k_major") && op->intAttr("k_major");
    if (r.wgmmaOperand != op->intAttr("operand") || swizzle != op->intAttr("swizzle") || r.transposed != kMajor ||
        (r.wgmmaOperand == 2 && r.plan.kMajorB != kMajor))
      throw tk::InternalError("tma_copy into ring " + std::to_string(op->intAttr("buffer")) +
                              ": the ring is not the wgmma operand layout its boxes write");
  }
}

llvm::Value *FunctionLowering::mbarrierAddress(int64_t group, llvm::Value *slot) {
  llvm::Value *offset = b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(barrierOffsets_.at(group))),
                                     b_.CreateMul(slot, b_.getInt32(8)));
  return b_.CreateGEP(b_.getInt8Ty(), target_.sharedBase(b_), offset);
}

// Thread 0 copies the block box by box, each at its place in wgmma's
// layout: its first element's offset (a box starts a swizzle pattern, so
// the offset is unswizzled; the hardware swizzles within it as wgmma reads).
void FunctionLowering::lowerTmaCopy(ir::Op &op, llvm::Value *first) {
  const Ring &ring = rings_.at(op.intAttr("buffer"));
  const std::vector<int64_t> &block = op.intListAttr("block"), &box = op.intListAttr("box");
  llvm::Value *map = tensorMapArg(op);
  llvm::Value *slot = regs(op.operand(1))[0];
  llvm::Value *row0 = regs(op.operand(3))[0], *col0 = regs(op.operand(4))[0];
  ifThen(b_.CreateAnd(first, regs(op.operand(2))[0]), [&] {
    llvm::Value *base = slotBase(op.intAttr("buffer"), slot);
    llvm::Value *bar = mbarrierAddress(op.intAttr("barrier"), slot);
    IntArith ia;
    for (int64_t r = 0; r < block[0]; r += box[0])
      for (int64_t c = 0; c < block[1]; c += box[1]) {
        // A K-major ring's block is B^T: its (r, c) is B's (c, r).
        const int64_t offset = ring.wgmmaOperand == 1 ? lower::wgmmaOffsetA(ia, ring.plan, r, c)
                               : ring.transposed      ? lower::wgmmaOffsetB(ia, ring.plan, c, r)
                                                      : lower::wgmmaOffsetB(ia, ring.plan, r, c);
        llvm::Value *dst = b_.CreateGEP(b_.getInt8Ty(), base, b_.getInt32(static_cast<uint32_t>(offset)));
        // PTX orders coordinates innermost first.
        target_.tmaLoad(b_, dst, map,
                        {b_.CreateAdd(col0, b_.getInt32(static_cast<uint32_t>(c))),
                         b_.CreateAdd(row0, b_.getInt32(static_cast<uint32_t>(r)))},
                        bar);
      }
  }, "tma.copy");
}

// The block goes to scratch in the boxes' layout -- slab j of box[1]
// columns at j * rows * swizzle bytes, a row `swizzle` bytes, swizzled by
// address as the hardware reads it -- fenced for the async proxy; after a
// barrier thread 0 stores it box by box and waits until the copies have
// read it, and a second barrier frees the scratch. The stores' global
// writes may still be in flight when the kernel exits; they are visible to
// the next kernel on the stream.
void FunctionLowering::lowerTmaStore(ir::Op &op) {
  const ir::Type &t = op.operand(3)->type();
  const std::vector<int64_t> &box = op.intListAttr("box");
  const int64_t swizzle = op.intAttr("swizzle"), rows = t.shape[0], cols = t.shape[1], span = box[1];
  const int64_t bytes = t.elem.bytes();
  llvm::Value *map = tensorMapArg(op);
  useScratch(rows * cols * bytes, 1024);
  llvm::Value *base = scratchBase(1024);
  auto i32 = [&](int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); };
  // The swizzle XORs address bits [7, ..) into the 16-byte chunk bits. A
  // slab spans a multiple of 8 rows (1024, 512 or 256 bytes: whole swizzle
  // patterns), so those bits are row r's alone, r / (128 / swizzle): computed
  // from r, not from the whole offset, the XOR touches only the in-row bytes,
  // and the rows and slabs a thread writes stay constant distances apart
  // (otherwise LLVM hoists an address per register out of a persistent loop:
  // 32 more registers in matmul_desc_ws on one warpgroup).
  stageForWgmma(op.operand(3), base, [&](llvm::Value *r, llvm::Value *c) {
    llvm::Value *bits = b_.CreateAnd(b_.CreateUDiv(r, i32(128 / swizzle)), i32(swizzle / 16 - 1));
    llvm::Value *inRow = b_.CreateXor(b_.CreateMul(b_.CreateURem(c, i32(span)), i32(bytes)), b_.CreateShl(bits, i32(4)));
    return b_.CreateAdd(b_.CreateAdd(b_.CreateMul(b_.CreateUDiv(c, i32(span)), i32(rows * swizzle)),
                                     b_.CreateMul(r, i32(swizzle))),
                        inRow);
  }, op.loc());
  target_.fenceProxyAsync(b_);
  barrier(op.loc());
  llvm::Value *row0 = regs(op.operand(1))[0], *col0 = regs(op.operand(2))[0];
  ifThen(b_.CreateICmpEQ(tid_, i32(0)), [&] {
    for (int64_t j = 0; j < cols / span; ++j) {
      llvm::Value *src = b_.CreateGEP(b_.getInt8Ty(), base, i32(j * rows * swizzle));
      // PTX orders coordinates innermost first.
      target_.tmaStore(b_, src, map, {b_.CreateAdd(col0, i32(j * span)), row0});
      tagEmitted(op.loc());
    }
    target_.bulkCommitGroup(b_);
    target_.bulkWaitGroupRead(b_, 0);
  }, "tma.store");
  barrier(op.loc());
}

void FunctionLowering::lowerTma(ir::Op &op) {
  const int64_t group = op.intAttr("barrier"), stages = op.intAttr("stages");
  llvm::Value *first = tmaIssuer_ ? tmaIssuer_ : b_.CreateICmpEQ(tid_, b_.getInt32(0));
  // Warp-specialised (SpecializeWarps.cpp): each slot also has an empty
  // barrier, stages after its full one, which the consumer warps release.
  const int64_t consumers = op.hasAttr("consumers") ? op.intAttr("consumers") : 0;
  auto eachBarrier = [&](const std::function<void(llvm::Value *, int64_t)> &f) {
    for (int64_t s = 0; s < stages * (consumers ? 2 : 1); ++s)
      f(mbarrierAddress(group, b_.getInt32(static_cast<uint32_t>(s))), s < stages ? 1 : consumers);
  };
  auto empty = [&](llvm::Value *slot) {
    return mbarrierAddress(group, b_.CreateAdd(slot, b_.getInt32(static_cast<uint32_t>(stages))));
  };
  switch (op.kind()) {
    case ir::OpKind::TmaInit:
      // Scratch users before the loop may still read what the rings overwrite.
      barrier(op.loc());
      ringsLive_ = true;
      ifThen(first, [&] {
        eachBarrier([&](llvm::Value *bar, int64_t arrivals) { target_.mbarrierInit(b_, bar, static_cast<int>(arrivals)); });
      }, "tma.init");
      barrier(op.loc());
      return;
    case ir::OpKind::TmaExpect: {
      llvm::Value *bar = mbarrierAddress(group, regs(op.operand(0))[0]);
      ifThen(b_.CreateAnd(first, regs(op.operand(1))[0]),
             [&] { target_.mbarrierArriveExpectTx(b_, bar, static_cast<int>(op.intAttr("bytes"))); }, "tma.expect");
      return;
    }
    case ir::OpKind::TmaCopy: return lowerTmaCopy(op, first);
    case ir::OpKind::TmaWait:
      target_.mbarrierWait(b_, mbarrierAddress(group, regs(op.operand(0))[0]), regs(op.operand(1))[0]);
      tagEmitted(op.loc());  // the sim's report of a phase that never completes names it
      // The copies need no fence, but this thread's own generic writes to
      // shared memory (a persistent loop's epilogue, a conversion in the
      // body) must be ordered before wgmma's async-proxy reads, as after a
      // cp.async wait.
      if (wgmmaRings_) target_.fenceProxyAsync(b_);
      // The consumers of a producer need no barrier: the slot is theirs
      // until each warp releases it (tma_consumed).
      if (!consumerThreads_) barrier(op.loc());
      return;
    case ir::OpKind::TmaAcquire: {
      // The phase before the fill of parity p is the consumers' release of
      // the previous fill, of parity !p; a fresh barrier counts its phase
      // of parity 1 as complete (PTX ISA, mbarrier.try_wait.parity), so the
      // first fill of each slot does not wait.
      llvm::Value *parity = b_.CreateXor(regs(op.operand(1))[0], b_.getInt32(1));
      target_.mbarrierWait(b_, empty(regs(op.operand(0))[0]), parity);
      tagEmitted(op.loc());
      return;
    }
    case ir::OpKind::TmaConsumed: {
      // After the dots that read the slot completed (wgmma.wait_group), one
      // lane per warp: the barrier counts warps.
      llvm::Value *slot = regs(op.operand(0))[0];
      llvm::Value *some = b_.CreateICmpSGE(slot, b_.getInt32(0));
      ifThen(b_.CreateAnd(some, b_.CreateICmpEQ(lane_, b_.getInt32(0))),
             [&] { target_.mbarrierArrive(b_, empty(slot)); }, "tma.consumed");
      return;
    }
    case ir::OpKind::TmaRelease:
      // Every thread is past its last wait before the barriers go.
      barrier(op.loc());
      ifThen(first, [&] { eachBarrier([&](llvm::Value *bar, int64_t) { target_.mbarrierInval(b_, bar); }); },
             "tma.release");
      if (!op.parentBlock()->parentOp()) ringsLive_ = false;
      return;
    default:
      throw tk::InternalError(std::string("lowerTma: not a TMA op: ") + op.info().mnemonic);
  }
}

namespace {
[[noreturn]] void noTma(const char *what) {
  throw tk::InternalError(std::string("Target::") + what + ": this target has no tensor memory accelerator");
}
}  // namespace

void Target::markTensorMapParam(llvm::Function &, unsigned) const { noTma("markTensorMapParam"); }
void Target::mbarrierInit(llvm::IRBuilderBase &, llvm::Value *, int) const { noTma("mbarrierInit"); }
void Target::mbarrierInval(llvm::IRBuilderBase &, llvm::Value *) const { noTma("mbarrierInval"); }
void Target::mbarrierArriveExpectTx(llvm::IRBuilderBase &, llvm::Value *, int) const {
  noTma("mbarrierArriveExpectTx");
}
void Target::mbarrierWait(llvm::IRBuilderBase &, llvm::Value *, llvm::Value *) const { noTma("mbarrierWait"); }
void Target::tmaLoad(llvm::IRBuilderBase &, llvm::Value *, llvm::Value *, const std::vector<llvm::Value *> &,
                     llvm::Value *) const {
  noTma("tmaLoad");
}
void Target::tmaStore(llvm::IRBuilderBase &, llvm::Value *, llvm::Value *, const std::vector<llvm::Value *> &) const {
  noTma("tmaStore");
}
void Target::bulkCommitGroup(llvm::IRBuilderBase &) const { noTma("bulkCommitGroup"); }
void Target::bulkWaitGroupRead(llvm::IRBuilderBase &, int) const { noTma("bulkWaitGroupRead"); }
void Target::mbarrierArrive(llvm::IRBuilderBase &, llvm::Value *) const { noTma("mbarrierArrive"); }

void Target::checkBulkWaitGroup(const char *who, int pending) {
  if (pending < 0 || pending > 63)
    throw tk::InternalError(std::string(who) + ": " + std::to_string(pending) +
                            " pending groups; cp.async.bulk.wait_group.read takes 0..63");
}

void Target::checkNamedBarrier(const char *who, int id, int threads) {
  if (id < 1 || id > 15)
    throw tk::InternalError(std::string(who) + ": barrier " + std::to_string(id) +
                            "; a named barrier is 1..15 (0 is the block barrier)");
  if (threads <= 0 || threads > 1024 || threads % 32)
    throw tk::InternalError(std::string(who) + ": " + std::to_string(threads) +
                            " threads; bar.sync counts a multiple of 32, 32..1024");
}

void Target::checkSetMaxNReg(const char *who, int regs) {
  if (regs < 24 || regs > 256 || regs % 8)
    throw tk::InternalError(std::string(who) + ": " + std::to_string(regs) +
                            " registers; setmaxnreg takes a multiple of 8 in 24..256");
}

// ptxas ignores a .maxnreg above 255 (with a warning).
void Target::checkMarkMaxNReg(const char *who, int regs) {
  if (regs < 24 || regs > 255)
    throw tk::InternalError(std::string(who) + ": " + std::to_string(regs) +
                            " registers per thread; ptxas takes a .maxnreg of 24..255");
}
void Target::namedBarrier(llvm::IRBuilderBase &, int, int) const { noTma("namedBarrier"); }
void Target::setMaxNReg(llvm::IRBuilderBase &, bool, int) const { noTma("setMaxNReg"); }
void Target::markMaxNReg(llvm::Function &, int) const { noTma("markMaxNReg"); }

}  // namespace tk::lower
