// pointerProvenance: a backwards walk over the def-use chain of an address.
// The lowering makes every global address as `base + offsets`: scalar and
// vector GEPs on a kernel argument, splats of it (insertelement and
// shufflevector), loop-carried pointer bumps (phis) and selects; a base that
// is not an argument is a pointer loaded from memory (`**f16`) or made from
// an i64 (`addr as *f16`, a table of addresses). Following exactly those
// keeps the answer sound: anything else stops the walk with "unknown", and
// the runtime then checks against all allocations, as before.
#include "backend/sim/PointerProvenance.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Operator.h>

namespace tk::sim {

using namespace llvm;

namespace {

// One source of an address: nothing yet (poison, a cycle's back edge), a
// parameter, a root pointer, or more than one of those (unknown).
struct Source {
  enum Kind { None, Param, Root, Unknown } kind = None;
  int param = -1;
  const Value *root = nullptr;

  static Source unknown() { return {Unknown}; }
  bool operator==(const Source &o) const { return kind == o.kind && param == o.param && root == o.root; }
};

Source meet(const Source &a, const Source &b) {
  if (a.kind == Source::None) return b;
  if (b.kind == Source::None || a == b) return a;
  return Source::unknown();
}

// inttoptr of an integer made from a ptrtoint goes back to that pointer, and
// that one may be integer-made in turn: deep enough for any real chain.
constexpr int kMaxDepth = 8;

Source pointerSource(const Value *address, const Value *kernel, int depth);

// The pointers an integer address is computed from: the ptrtoint leaves of
// its add/sub (the minuend only)/phi/select tree. Other leaves are offsets
// and add nothing; None means the integer holds no traceable pointer.
Source integerSource(const Value *v, const Value *kernel, int depth) {
  SmallVector<const Value *, 16> work{v};
  SmallPtrSet<const Value *, 32> seen;
  Source result;
  while (!work.empty() && result.kind != Source::Unknown) {
    const Value *i = work.pop_back_val();
    if (!seen.insert(i).second) continue;
    if (auto *p2i = dyn_cast<PtrToIntInst>(i)) {
      result = meet(result, pointerSource(p2i->getPointerOperand(), kernel, depth + 1));
    } else if (auto *bin = dyn_cast<BinaryOperator>(i); bin && bin->getOpcode() == Instruction::Add) {
      work.push_back(bin->getOperand(0));
      work.push_back(bin->getOperand(1));
    } else if (bin && bin->getOpcode() == Instruction::Sub) {
      work.push_back(bin->getOperand(0));
    } else if (auto *phi = dyn_cast<PHINode>(i)) {
      for (const Value *in : phi->incoming_values()) work.push_back(in);
    } else if (auto *sel = dyn_cast<SelectInst>(i)) {
      work.push_back(sel->getTrueValue());
      work.push_back(sel->getFalseValue());
    }
  }
  return result;
}

// The source of a pointer that ends the walk: a parameter, or a root.
Source leafSource(const Value *v, const Value *kernel, int depth) {
  if (auto *a = dyn_cast<Argument>(v)) return a->getParent() == kernel ? Source{Source::Param, int(a->getArgNo())} : Source::unknown();
  // A vector of loaded or integer-made pointers has a root per lane: no one root to pass.
  if (v->getType()->isVectorTy()) return Source::unknown();
  if (isa<LoadInst>(v)) return Source{Source::Root, -1, v};
  if (auto *i2p = dyn_cast<IntToPtrInst>(v)) {
    if (depth >= kMaxDepth) return Source::unknown();
    Source s = integerSource(i2p->getOperand(0), kernel, depth);
    return s.kind == Source::None ? Source{Source::Root, -1, v} : s;
  }
  return Source::unknown();  // a call's result, a global, null: not a buffer the walk can name
}

Source pointerSource(const Value *address, const Value *kernel, int depth) {
  // Iterative, with a visited set: a value seen before adds nothing new (its
  // sources are already on the work list), which is also what makes loop
  // phis terminate. The result is the meet over every source reached.
  SmallVector<const Value *, 16> work{address};
  SmallPtrSet<const Value *, 32> seen;
  Source result;
  while (!work.empty() && result.kind != Source::Unknown) {
    const Value *v = work.pop_back_val();
    if (!seen.insert(v).second) continue;
    if (isa<PoisonValue>(v) || isa<UndefValue>(v)) {
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
    } else {
      result = meet(result, leafSource(v, kernel, depth));
    }
  }
  return result;
}

}  // namespace

Provenance pointerProvenance(const Value *address, const Value *kernel) {
  const Source s = pointerSource(address, kernel, 0);
  Provenance p;
  if (s.kind == Source::Param) p.param = s.param;
  if (s.kind == Source::Root) {
    p.root = s.root;
    p.rootLoaded = isa<LoadInst>(s.root);
  }
  return p;
}

}  // namespace tk::sim
