// NvptxTarget's tensor memory accelerator, mbarriers and warp specialisation
// (sm_90a): inline PTX, as LLVM 19 has no intrinsics for most of them
// (../shared/FACTS.md); a named barrier is llvm.nvvm.barrier.sync.cnt.
// TMA stores (cp.async.bulk.tensor to global, its bulk groups) are here too.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

#include "backend/nvptx/NvptxTarget.h"
#include "tk/error.h"

namespace tk::nvptx {

using namespace llvm;

namespace {

// A void PTX statement with side effects, its operands 32-bit registers but
// where `constraints` says otherwise.
void statement(IRBuilderBase &b, const std::string &text, const std::string &constraints,
               const std::vector<Value *> &args) {
  std::vector<Type *> tys;
  for (Value *a : args) tys.push_back(a->getType());
  auto *fn = InlineAsm::get(FunctionType::get(b.getVoidTy(), tys, false), text,
                            constraints.empty() ? "~{memory}" : constraints + ",~{memory}",
                            /*hasSideEffects=*/true);
  b.CreateCall(fn, args)->addFnAttr(Attribute::Convergent);
}

// `s` n times (a constraint per coordinate).
std::string repeat(const std::string &s, size_t n) {
  std::string r;
  for (size_t i = 0; i < n; ++i) r += s;
  return r;
}

// The coordinates of a bulk tensor copy as operands `{$first, ..}`: 1..5
// of them, i32 each ("r"), checked before anything is emitted.
std::string coordinateList(const char *who, const std::vector<Value *> &coords, size_t first) {
  const size_t n = coords.size();
  if (n < 1 || n > 5) throw tk::InternalError(std::string(who) + ": " + std::to_string(n) + " coordinates; want 1..5");
  std::string list;
  for (size_t i = 0; i < n; ++i) {
    if (!coords[i]->getType()->isIntegerTy(32)) throw tk::InternalError(std::string(who) + ": coordinates must be i32");
    list += (i ? ", $" : "$") + std::to_string(first + i);
  }
  return "{" + list + "}";
}

}  // namespace

void NvptxTarget::markTensorMapParam(Function &fn, unsigned argNo) const {
  LLVMContext &c = fn.getContext();
  fn.addParamAttr(argNo, Attribute::getWithByValType(c, ArrayType::get(Type::getInt8Ty(c), 128)));
  fn.addParamAttr(argNo, Attribute::getWithAlignment(c, Align(64)));
  // Read in place from the parameter space (cvta.param), not copied to the
  // stack first: what a CUtensorMap argument must be for the TMA unit.
  // One grid_constant entry per kernel listing every such parameter (from
  // 1): NVPTX reads only the first entry of a key.
  NamedMDNode *md = fn.getParent()->getOrInsertNamedMetadata("nvvm.annotations");
  std::vector<Metadata *> indices{ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(c), argNo + 1))};
  auto entry = [&] {
    return MDNode::get(c, {ValueAsMetadata::get(&fn), MDString::get(c, "grid_constant"), MDNode::get(c, indices)});
  };
  for (unsigned i = 0; i < md->getNumOperands(); ++i) {
    MDNode *n = md->getOperand(i);
    auto *f = n->getNumOperands() == 3 ? dyn_cast<ValueAsMetadata>(n->getOperand(0)) : nullptr;
    auto *key = n->getNumOperands() == 3 ? dyn_cast<MDString>(n->getOperand(1)) : nullptr;
    if (!f || f->getValue() != &fn || !key || key->getString() != "grid_constant") continue;
    auto *old = cast<MDNode>(n->getOperand(2));
    indices.insert(indices.begin(), old->op_begin(), old->op_end());
    md->setOperand(i, entry());
    return;
  }
  md->addOperand(entry());
}

void NvptxTarget::mbarrierInit(IRBuilderBase &b, Value *bar, int arrivals) const {
  statement(b, "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r", {sharedWindowAddress(b, bar), b.getInt32(arrivals)});
}

void NvptxTarget::mbarrierInval(IRBuilderBase &b, Value *bar) const {
  statement(b, "mbarrier.inval.shared::cta.b64 [$0];", "r", {sharedWindowAddress(b, bar)});
}

void NvptxTarget::mbarrierArriveExpectTx(IRBuilderBase &b, Value *bar, int bytes) const {
  statement(b, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r",
            {sharedWindowAddress(b, bar), b.getInt32(bytes)});
}

void NvptxTarget::mbarrierArrive(IRBuilderBase &b, Value *bar) const {
  statement(b, "mbarrier.arrive.shared::cta.b64 _, [$0];", "r", {sharedWindowAddress(b, bar)});
}

// A loop on try_wait (which itself waits a while before it gives up).
void NvptxTarget::mbarrierWait(IRBuilderBase &b, Value *bar, Value *parity) const {
  Value *addr = sharedWindowAddress(b, bar);
  Function *f = b.GetInsertBlock()->getParent();
  BasicBlock *loop = BasicBlock::Create(b.getContext(), "mbarrier.wait", f);
  BasicBlock *done = BasicBlock::Create(b.getContext(), "mbarrier.done", f);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  auto *fn = InlineAsm::get(FunctionType::get(b.getInt32Ty(), {b.getInt32Ty(), b.getInt32Ty()}, false),
                            "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2;\n\t"
                            "selp.u32 $0, 1, 0, p;\n\t}",
                            "=r,r,r,~{memory}", /*hasSideEffects=*/true);
  CallInst *ready = b.CreateCall(fn, {addr, parity});
  ready->addFnAttr(Attribute::Convergent);
  b.CreateCondBr(b.CreateICmpNE(ready, b.getInt32(0)), done, loop);
  b.SetInsertPoint(done);
}

void NvptxTarget::tmaLoad(IRBuilderBase &b, Value *dst, Value *map, const std::vector<Value *> &coords,
                          Value *bar) const {
  const size_t n = coords.size();
  const std::string list = coordinateList("NvptxTarget::tmaLoad", coords, 2);
  const std::string text = "cp.async.bulk.tensor." + std::to_string(n) +
                           "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, " + list + "], [$" +
                           std::to_string(2 + n) + "];";
  std::vector<Value *> args{sharedWindowAddress(b, dst), b.CreatePtrToInt(map, b.getInt64Ty())};
  args.insert(args.end(), coords.begin(), coords.end());
  args.push_back(sharedWindowAddress(b, bar));
  statement(b, text, "r,l" + repeat(",r", n) + ",r", args);
}

// The store reads shared memory through the async proxy: the memory clobber
// keeps the generic writes (and the fence.proxy.async after them) above it.
void NvptxTarget::tmaStore(IRBuilderBase &b, Value *src, Value *map, const std::vector<Value *> &coords) const {
  const size_t n = coords.size();
  const std::string list = coordinateList("NvptxTarget::tmaStore", coords, 1);
  const std::string text = "cp.async.bulk.tensor." + std::to_string(n) + "d.global.shared::cta.tile.bulk_group [$0, " +
                           list + "], [$" + std::to_string(1 + n) + "];";
  std::vector<Value *> args{b.CreatePtrToInt(map, b.getInt64Ty())};
  args.insert(args.end(), coords.begin(), coords.end());
  args.push_back(sharedWindowAddress(b, src));
  statement(b, text, "l" + repeat(",r", n) + ",r", args);
}

void NvptxTarget::bulkCommitGroup(IRBuilderBase &b) const { statement(b, "cp.async.bulk.commit_group;", "", {}); }

void NvptxTarget::bulkWaitGroupRead(IRBuilderBase &b, int pending) const {
  checkBulkWaitGroup("NvptxTarget::bulkWaitGroupRead", pending);
  statement(b, "cp.async.bulk.wait_group.read " + std::to_string(pending) + ";", "", {});
}

void NvptxTarget::namedBarrier(IRBuilderBase &b, int id, int threads) const {
  checkNamedBarrier("NvptxTarget::namedBarrier", id, threads);
  // barrier.sync id, cnt; NVVM declares it convergent and touching memory,
  // so no shared access moves across it.
  Function *fn = Intrinsic::getDeclaration(b.GetInsertBlock()->getModule(), Intrinsic::nvvm_barrier_sync_cnt);
  b.CreateCall(fn, {b.getInt32(uint32_t(id)), b.getInt32(uint32_t(threads))});
}

// Inline PTX, not llvm.nvvm.setmaxnreg.*: LLVM 19 selects those only for an
// sm_90a subtarget and aborts otherwise, where ptxas gives an error.
void NvptxTarget::setMaxNReg(IRBuilderBase &b, bool increase, int regs) const {
  checkSetMaxNReg("NvptxTarget::setMaxNReg", regs);
  const std::string text =
      std::string("setmaxnreg.") + (increase ? "inc" : "dec") + ".sync.aligned.u32 " + std::to_string(regs) + ";";
  statement(b, text, "", {});
}

// ptxas ignores setmaxnreg (info C7508, "unable to determine register count
// at entry") in a kernel without .maxnreg (or .maxntid with .minnctapersm),
// and ignores a .maxnreg above 255 with a warning.
void NvptxTarget::markMaxNReg(Function &f, int regs) const {
  checkMarkMaxNReg("NvptxTarget::markMaxNReg", regs);
  LLVMContext &c = f.getContext();
  NamedMDNode *md = f.getParent()->getOrInsertNamedMetadata("nvvm.annotations");
  md->addOperand(MDNode::get(c, {ValueAsMetadata::get(&f), MDString::get(c, "maxnreg"),
                                 ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(c), regs))}));
}

}  // namespace tk::nvptx
