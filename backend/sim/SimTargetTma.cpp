// SimTarget's mbarrier, tensor-memory-accelerator (loads and stores) and
// warp-specialisation hooks: calls into the runtime (Mbarrier.cpp, TensorCopy.cpp,
// NamedBarrier.cpp), and the by-value tensor-map parameter the trampoline
// hands its blob to (Program.cpp).
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "backend/sim/SimTarget.h"
#include "backend/sim/TensorMap.h"
#include "tk/error.h"

namespace tk::sim {

using namespace llvm;

namespace {

// The calls keep LLVM's default of touching any memory: no shared access
// may move across an arrive or a wait, which order the copies' bytes. A
// barrier is convergent too: no control flow may be added or removed
// around it.
void runtimeCall(IRBuilderBase &b, const char *name, ArrayRef<Value *> args, bool convergent = false) {
  std::vector<Type *> params;
  for (Value *a : args) params.push_back(a->getType());
  Module &m = *b.GetInsertBlock()->getModule();
  FunctionCallee fn = m.getOrInsertFunction(name, FunctionType::get(b.getVoidTy(), params, false));
  cast<Function>(fn.getCallee())->setDoesNotThrow();
  if (convergent) cast<Function>(fn.getCallee())->setConvergent();
  b.CreateCall(fn, args);
}

void checkPointer(Value *p, const char *what, const char *operand) {
  if (!p->getType()->isPointerTy() || p->getType()->getPointerAddressSpace() != 0)
    throw tk::InternalError(std::string("SimTarget::") + what + ": " + operand +
                            " must be a pointer in address space 0");
}

}  // namespace

void SimTarget::markTensorMapParam(Function &fn, unsigned argNo) const {
  if (argNo >= fn.arg_size() || !fn.getArg(argNo)->getType()->isPointerTy())
    throw tk::InternalError("SimTarget::markTensorMapParam: parameter " + std::to_string(argNo) + " of " +
                            fn.getName().str() + " is not a pointer");
  // Not byval on the host: x86-64 passes a 64-byte aligned byval argument
  // where the callee does not look for it once the kernel is too large to
  // inline (the maps of a 128 x 128 matmul read as zeros). The kernel takes
  // the blob's address instead; the trampoline passes it (kTensorMapParamAttr).
  fn.addParamAttr(argNo, Attribute::get(fn.getContext(), kTensorMapParamAttr));
  fn.addParamAttr(argNo, Attribute::ReadOnly);
  fn.addParamAttr(argNo, Attribute::NoCapture);
}

void SimTarget::mbarrierInit(IRBuilderBase &b, Value *bar, int arrivals) const {
  checkPointer(bar, "mbarrierInit", "the barrier");
  if (arrivals < 1 || arrivals >= (1 << 20))
    throw tk::InternalError("SimTarget::mbarrierInit: " + std::to_string(arrivals) +
                            " arrivals; an mbarrier counts 1 .. 2^20 - 1");
  runtimeCall(b, kFnMbarrierInit, {bar, b.getInt32(uint32_t(arrivals))});
}

void SimTarget::mbarrierInval(IRBuilderBase &b, Value *bar) const {
  checkPointer(bar, "mbarrierInval", "the barrier");
  runtimeCall(b, kFnMbarrierInval, {bar});
}

void SimTarget::mbarrierArriveExpectTx(IRBuilderBase &b, Value *bar, int bytes) const {
  checkPointer(bar, "mbarrierArriveExpectTx", "the barrier");
  if (bytes < 0 || bytes >= (1 << 20))
    throw tk::InternalError("SimTarget::mbarrierArriveExpectTx: " + std::to_string(bytes) +
                            " bytes; a transaction count is 0 .. 2^20 - 1");
  runtimeCall(b, kFnMbarrierArriveExpectTx, {bar, b.getInt32(uint32_t(bytes))});
}

void SimTarget::mbarrierArrive(IRBuilderBase &b, Value *bar) const {
  checkPointer(bar, "mbarrierArrive", "the barrier");
  runtimeCall(b, kFnMbarrierArrive, {bar});
}

void SimTarget::mbarrierWait(IRBuilderBase &b, Value *bar, Value *parity) const {
  checkPointer(bar, "mbarrierWait", "the barrier");
  if (!parity->getType()->isIntegerTy(32)) throw tk::InternalError("SimTarget::mbarrierWait: the parity must be i32");
  runtimeCall(b, kFnMbarrierWait, {bar, parity});
}

void SimTarget::tmaLoad(IRBuilderBase &b, Value *dst, Value *map, const std::vector<Value *> &coords,
                        Value *bar) const {
  checkPointer(dst, "tmaLoad", "the destination");
  checkPointer(map, "tmaLoad", "the tensor map");
  checkPointer(bar, "tmaLoad", "the barrier");
  if (coords.empty() || coords.size() > kTensorMapMaxRank)
    throw tk::InternalError("SimTarget::tmaLoad: " + std::to_string(coords.size()) +
                            " coordinates; a tensor map has rank 1..5");
  std::vector<Value *> args = {dst, map, bar, b.getInt32(uint32_t(coords.size()))};
  for (Value *c : coords) {
    if (!c->getType()->isIntegerTy(32)) throw tk::InternalError("SimTarget::tmaLoad: coordinates must be i32");
    args.push_back(c);
  }
  while (args.size() < 4 + kTensorMapMaxRank) args.push_back(b.getInt32(0));
  runtimeCall(b, kFnTmaLoad, args);
}

void SimTarget::tmaStore(IRBuilderBase &b, Value *src, Value *map, const std::vector<Value *> &coords) const {
  checkPointer(src, "tmaStore", "the source");
  checkPointer(map, "tmaStore", "the tensor map");
  if (coords.empty() || coords.size() > kTensorMapMaxRank)
    throw tk::InternalError("SimTarget::tmaStore: " + std::to_string(coords.size()) +
                            " coordinates; a tensor map has rank 1..5");
  std::vector<Value *> args = {src, map, b.getInt32(uint32_t(coords.size()))};
  for (Value *c : coords) {
    if (!c->getType()->isIntegerTy(32)) throw tk::InternalError("SimTarget::tmaStore: coordinates must be i32");
    args.push_back(c);
  }
  while (args.size() < 3 + kTensorMapMaxRank) args.push_back(b.getInt32(0));
  runtimeCall(b, kFnTmaStore, args);
}

void SimTarget::bulkCommitGroup(IRBuilderBase &b) const { runtimeCall(b, kFnBulkCommitGroup, {}); }

void SimTarget::bulkWaitGroupRead(IRBuilderBase &b, int pending) const {
  checkBulkWaitGroup("SimTarget::bulkWaitGroupRead", pending);
  runtimeCall(b, kFnBulkWaitGroupRead, {b.getInt32(uint32_t(pending))});
}

void SimTarget::namedBarrier(IRBuilderBase &b, int id, int threads) const {
  checkNamedBarrier("SimTarget::namedBarrier", id, threads);
  runtimeCall(b, kFnNamedBarrier, {b.getInt32(uint32_t(id)), b.getInt32(uint32_t(threads))}, /*convergent=*/true);
}

// The sim runs every thread with what registers it needs: the count is
// checked as NvptxTarget checks it, so the sim rejects what ptxas would.
void SimTarget::setMaxNReg(IRBuilderBase &, bool, int regs) const {
  checkSetMaxNReg("SimTarget::setMaxNReg", regs);
}

void SimTarget::markMaxNReg(Function &, int regs) const {
  checkMarkMaxNReg("SimTarget::markMaxNReg", regs);
}

}  // namespace tk::sim
