// pointerParam: a backwards walk over the def-use chain of an address.
// The lowering makes every global address as `param + offsets`: scalar and
// vector GEPs on a kernel argument, splats of it (insertelement and
// shufflevector), loop-carried pointer bumps (phis) and selects. Following
// exactly those keeps the answer sound: anything else stops the walk with
// "unknown", and the runtime then checks against all allocations, as before.
#include "backend/sim/PointerProvenance.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Operator.h>

namespace tk::sim {

using namespace llvm;

namespace {

constexpr int kNone = -2;     // no pointer flows in here (poison, undef, a cycle back edge)
constexpr int kUnknown = -1;  // not traceable to exactly one parameter

int meet(int a, int b) {
  if (a == kNone) return b;
  if (b == kNone || a == b) return a;
  return kUnknown;
}

}  // namespace

int pointerParam(const Value *address, const Value *kernel) {
  // Iterative, with a visited set: a value seen before adds nothing new (its
  // sources are already on the work list), which is also what makes loop
  // phis terminate. The result is the meet over every source reached.
  SmallVector<const Value *, 16> work{address};
  SmallPtrSet<const Value *, 32> seen;
  int result = kNone;
  while (!work.empty() && result != kUnknown) {
    const Value *v = work.pop_back_val();
    if (!seen.insert(v).second) continue;
    if (auto *a = dyn_cast<Argument>(v)) {
      result = meet(result, a->getParent() == kernel ? int(a->getArgNo()) : kUnknown);
    } else if (isa<PoisonValue>(v) || isa<UndefValue>(v)) {
      // An unset vector lane (the poison a splat starts from) carries no address.
    } else if (auto *gep = dyn_cast<GEPOperator>(v)) {
      work.push_back(gep->getPointerOperand());
    } else if (auto *c = dyn_cast<CastInst>(v); c && (isa<BitCastInst>(c) || isa<AddrSpaceCastInst>(c))) {
      work.push_back(c->getOperand(0));
    } else if (auto *sel = dyn_cast<SelectInst>(v)) {
      work.push_back(sel->getTrueValue());
      work.push_back(sel->getFalseValue());
    } else if (auto *phi = dyn_cast<PHINode>(v)) {
      for (const Value *in : phi->incoming_values()) work.push_back(in);
    } else if (auto *ins = dyn_cast<InsertElementInst>(v)) {
      work.push_back(ins->getOperand(0));
      work.push_back(ins->getOperand(1));
    } else if (auto *ext = dyn_cast<ExtractElementInst>(v)) {
      work.push_back(ext->getVectorOperand());
    } else if (auto *shuf = dyn_cast<ShuffleVectorInst>(v)) {
      work.push_back(shuf->getOperand(0));
      work.push_back(shuf->getOperand(1));
    } else if (auto *cv = dyn_cast<ConstantVector>(v)) {
      for (const Value *e : cv->operands()) work.push_back(e);
    } else if (isa<ConstantAggregateZero>(v) || isa<ConstantPointerNull>(v)) {
      result = kUnknown;  // null: the fallback reports it as a null pointer
    } else {
      result = kUnknown;  // loaded, inttoptr, a call's result, a global: not a parameter's buffer
    }
  }
  return result == kNone ? kUnknown : result;
}

}  // namespace tk::sim
