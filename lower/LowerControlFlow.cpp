// Lowering of structured control flow. A `for` becomes a loop whose header
// tests the bound and holds phis for the induction variable and for every
// register of the carried values; a `while` the same with its `before`
// region as the test; an `if` becomes a branch and a join with phis. Scalars are the same in every thread of a block (they derive from
// arguments, program ids and block-wide reductions), so these branches never
// diverge inside a block, and barriers in a loop body or a branch are reached
// by all of its threads.
#include <stdexcept>

#include "lower/FunctionLowering.h"
#include "tk/error.h"

namespace tk::lower {

std::vector<Regs> FunctionLowering::lowerRegion(ir::Block &block) {
  for (auto &owned : block.ops()) {
    ir::Op &op = *owned;
    switch (op.kind()) {
      case ir::OpKind::Return:
        b_.CreateRetVoid();
        return {};
      case ir::OpKind::Yield: {
        std::vector<Regs> out;
        for (ir::Value *v : op.operands()) out.push_back(regs(v));
        return out;
      }
      case ir::OpKind::For: lowerFor(op); break;
      case ir::OpKind::If: lowerIf(op); break;
      case ir::OpKind::While: lowerWhile(op); break;
      case ir::OpKind::ReduceCombine:
      case ir::OpKind::ScanCombine:
      case ir::OpKind::Sort: {
        std::vector<Regs> results = op.is(ir::OpKind::Sort) ? lowerSort(op) : lowerCombineOp(op);
        for (size_t i = 0; i < results.size(); ++i) values_[op.result(i)] = std::move(results[i]);
        break;
      }
      default: {
        Regs r = lowerOp(op);
        if (op.result()) values_[op.result()] = std::move(r);
      }
    }
  }
  throw tk::InternalError("lowering: a block without a terminator");
}

// One phi per register of each value in `vals`, in the current block.
static std::vector<Regs> phisFor(llvm::IRBuilder<> &b, const std::vector<Regs> &vals) {
  std::vector<Regs> phis;
  for (const Regs &v : vals) {
    Regs p;
    for (llvm::Value *r : v) p.push_back(b.CreatePHI(r->getType(), 2));
    phis.push_back(std::move(p));
  }
  return phis;
}

static void addIncoming(std::vector<Regs> &phis, const std::vector<Regs> &vals, llvm::BasicBlock *from) {
  if (phis.size() != vals.size()) throw tk::InternalError("lowering: a region yields the wrong number of values");
  for (size_t i = 0; i < phis.size(); ++i) {
    if (phis[i].size() != vals[i].size()) throw tk::InternalError("lowering: a yielded value has the wrong layout");
    for (size_t r = 0; r < phis[i].size(); ++r) llvm::cast<llvm::PHINode>(phis[i][r])->addIncoming(vals[i][r], from);
  }
}

// iv = lb, lb + step, ... while iv < ub (step > 0) or iv > ub (step < 0); a
// zero step runs no iteration (a GPU cannot raise Python's ValueError).
void FunctionLowering::lowerFor(ir::Op &op) {
  loc_ = op.loc();
  llvm::Value *lb = regs(op.operand(0))[0], *ub = regs(op.operand(1))[0], *step = regs(op.operand(2))[0];
  std::vector<Regs> inits;
  for (size_t i = 3; i < op.numOperands(); ++i) inits.push_back(regs(op.operand(i)));

  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(ctx_, "for.header", llfn_);
  auto *bodyBB = llvm::BasicBlock::Create(ctx_, "for.body", llfn_);
  auto *exit = llvm::BasicBlock::Create(ctx_, "for.exit", llfn_);
  b_.CreateBr(header);

  b_.SetInsertPoint(header);
  llvm::PHINode *iv = b_.CreatePHI(lb->getType(), 2, "iv");
  std::vector<Regs> carried = phisFor(b_, inits);
  llvm::Value *zero = llvm::ConstantInt::get(step->getType(), 0);
  llvm::Value *up = b_.CreateAnd(b_.CreateICmpSGT(step, zero), b_.CreateICmpSLT(iv, ub));
  llvm::Value *down = b_.CreateAnd(b_.CreateICmpSLT(step, zero), b_.CreateICmpSGT(iv, ub));
  b_.CreateCondBr(b_.CreateOr(up, down), bodyBB, exit);

  b_.SetInsertPoint(bodyBB);
  ir::Block &body = *op.regions()[0];
  values_[body.argument(0)] = {iv};
  for (size_t i = 0; i < carried.size(); ++i) values_[body.argument(i + 1)] = carried[i];
  std::vector<Regs> next = lowerRegion(body);
  llvm::Value *ivNext = b_.CreateAdd(iv, step, "iv.next");
  llvm::BasicBlock *latch = b_.GetInsertBlock();
  b_.CreateBr(header);

  iv->addIncoming(lb, pre);
  iv->addIncoming(ivNext, latch);
  addIncoming(carried, inits, pre);
  addIncoming(carried, next, latch);
  b_.SetInsertPoint(exit);
  for (size_t i = 0; i < op.numResults(); ++i) values_[op.result(i)] = carried[i];
  // Accumulators the body's last wgmma group may still write
  // (planWgmmaInFlight): complete them before any use.
  auto drain = drainAfter_.find(&op);
  if (drain != drainAfter_.end()) {
    Regs acc;
    for (size_t i : drain->second) acc.insert(acc.end(), carried[i].begin(), carried[i].end());
    acc = target_.wgmmaWaitGroup(b_, 0, acc);
    size_t at = 0;
    for (size_t i : drain->second) {
      Regs &r = values_[op.result(i)];
      for (llvm::Value *&v : r) v = acc[at++];
    }
  }
}

void FunctionLowering::lowerWhile(ir::Op &op) {
  loc_ = op.loc();
  std::vector<Regs> inits;
  for (ir::Value *v : op.operands()) inits.push_back(regs(v));

  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(ctx_, "while.header", llfn_);
  auto *bodyBB = llvm::BasicBlock::Create(ctx_, "while.body", llfn_);
  auto *exit = llvm::BasicBlock::Create(ctx_, "while.exit", llfn_);
  b_.CreateBr(header);

  b_.SetInsertPoint(header);
  std::vector<Regs> carried = phisFor(b_, inits);
  ir::Block &before = *op.regions()[0], &body = *op.regions()[1];
  for (size_t i = 0; i < carried.size(); ++i) values_[before.argument(i)] = carried[i];
  std::vector<Regs> cond = lowerRegion(before);
  if (cond.size() != 1 || cond[0].size() != 1) throw tk::InternalError("lowering: a while condition is not one i1");
  b_.CreateCondBr(cond[0][0], bodyBB, exit);

  b_.SetInsertPoint(bodyBB);
  for (size_t i = 0; i < carried.size(); ++i) values_[body.argument(i)] = carried[i];
  std::vector<Regs> next = lowerRegion(body);
  llvm::BasicBlock *latch = b_.GetInsertBlock();
  b_.CreateBr(header);

  addIncoming(carried, inits, pre);
  addIncoming(carried, next, latch);
  b_.SetInsertPoint(exit);
  for (size_t i = 0; i < op.numResults(); ++i) values_[op.result(i)] = carried[i];
}

void FunctionLowering::lowerIf(ir::Op &op) {
  loc_ = op.loc();
  auto *thenBB = llvm::BasicBlock::Create(ctx_, "if.then", llfn_);
  auto *elseBB = llvm::BasicBlock::Create(ctx_, "if.else", llfn_);
  auto *join = llvm::BasicBlock::Create(ctx_, "if.join", llfn_);
  b_.CreateCondBr(regs(op.operand(0))[0], thenBB, elseBB);

  b_.SetInsertPoint(thenBB);
  std::vector<Regs> fromThen = lowerRegion(*op.regions()[0]);
  llvm::BasicBlock *thenEnd = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(elseBB);
  std::vector<Regs> fromElse = lowerRegion(*op.regions()[1]);
  llvm::BasicBlock *elseEnd = b_.GetInsertBlock();
  b_.CreateBr(join);

  b_.SetInsertPoint(join);
  std::vector<Regs> merged = phisFor(b_, fromThen);
  addIncoming(merged, fromThen, thenEnd);
  addIncoming(merged, fromElse, elseEnd);
  for (size_t i = 0; i < op.numResults(); ++i) values_[op.result(i)] = merged[i];
}

}  // namespace tk::lower
