// instrumentIndexOverflow: each i32 operation whose result reaches a global
// address is followed by a check of its operands,
//   %14 = mul i32 %13, %stride, !tk.loc !7
//   call void @__tk_sim_index_i32(i32 %13, i32 %stride, i32 SITE)
// and the runtime reports the first that wraps as a signed i32 (tk's i32 is
// signed: an index past 2^31 - 1 is the bug, whatever the bits look like).
#include "backend/sim/InstrumentOverflow.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>

#include "backend/sim/SimTarget.h"
#include "lower/LocMetadata.h"

namespace tk::sim {

using namespace llvm;

namespace {

// The address of a global access the lowering marked (before
// instrumentMemoryAccesses rewrites it) and what the access does; null for
// other instructions. Shared-memory offsets are the lowering's own, and a
// wrapped one already fails the shared bounds check.
Value *globalAddress(Instruction &i, const char *&verb) {
  auto *call = dyn_cast<CallInst>(&i);
  const Function *callee = call ? call->getCalledFunction() : nullptr;
  if (callee && callee->getName() == kFnCpAsync) {
    verb = "cp.async";
    return call->getArgOperand(1);
  }
  if (!lower::hasSourceLoc(i) || lower::isSharedAccess(i)) return nullptr;
  verb = "load";
  if (auto *ld = dyn_cast<LoadInst>(&i)) return ld->getPointerOperand();
  verb = isa<StoreInst>(i) ? "store" : "atomic";
  if (auto *st = dyn_cast<StoreInst>(&i)) return st->getPointerOperand();
  if (auto *rmw = dyn_cast<AtomicRMWInst>(&i)) return rmw->getPointerOperand();
  if (auto *cx = dyn_cast<AtomicCmpXchgInst>(&i)) return cx->getPointerOperand();
  const Intrinsic::ID id = callee ? callee->getIntrinsicID() : Intrinsic::not_intrinsic;
  verb = id == Intrinsic::masked_store ? "store" : "load";
  if (id == Intrinsic::masked_load) return call->getArgOperand(0);
  if (id == Intrinsic::masked_store) return call->getArgOperand(1);
  return nullptr;
}

bool isI32(const Type *t) { return t->getScalarType()->isIntegerTy(32); }

// The check an instruction needs, if any: i32 add, sub, mul, shl, or a
// truncation of i64 to i32.
bool watched(const Instruction &i, IndexOp &op) {
  if (auto *t = dyn_cast<TruncInst>(&i)) {
    op = IndexOp::Trunc;
    return isI32(t->getType()) && t->getSrcTy()->getScalarType()->isIntegerTy(64);
  }
  if (!isI32(i.getType())) return false;
  switch (i.getOpcode()) {
    case Instruction::Add: op = IndexOp::Add; return true;
    case Instruction::Sub: op = IndexOp::Sub; return true;
    case Instruction::Mul: op = IndexOp::Mul; return true;
    case Instruction::Shl: op = IndexOp::Shl; return true;
    default: return false;
  }
}

// The operands a value's bits flow from, for the backwards walk: pointer
// arithmetic, integer add/sub/mul/shl (of a shift, only the shifted value),
// extensions and truncations, casts between integers and pointers, and the
// moves of values (phi, select, vector elements). Everything else (loads,
// calls, and/or/xor, right shifts, division, remainder, compares) ends the
// walk: a wrap before them is what hashing does on purpose.
void flowsFrom(Instruction &i, SmallVectorImpl<Value *> &work) {
  switch (i.getOpcode()) {
    case Instruction::GetElementPtr:
    case Instruction::Add:
    case Instruction::Sub:
    case Instruction::Mul:
    case Instruction::PHI:
    case Instruction::InsertElement:
    case Instruction::ShuffleVector:
      for (Value *op : i.operands()) work.push_back(op);
      return;
    case Instruction::Select:
      work.push_back(i.getOperand(1));
      work.push_back(i.getOperand(2));
      return;
    case Instruction::Shl:
    case Instruction::SExt:
    case Instruction::ZExt:
    case Instruction::Trunc:
    case Instruction::BitCast:
    case Instruction::AddrSpaceCast:
    case Instruction::IntToPtr:
    case Instruction::PtrToInt:
    case Instruction::Freeze:
    case Instruction::ExtractElement:
      work.push_back(i.getOperand(0));
      return;
    default: return;
  }
}

// What one function's global addresses are computed from: each watched
// instruction reached, with the first access it reaches ("load at f.tk:7:13").
DenseMap<Instruction *, std::string> watchedIndexMath(Function &f) {
  DenseMap<Instruction *, std::string> found;
  // Shared by all the function's accesses: a value seen from one access has
  // had its sources walked already (and a loop's phis end the walk).
  SmallPtrSet<Value *, 32> seen;
  for (BasicBlock &bb : f)
    for (Instruction &access : bb) {
      const char *verb = nullptr;
      Value *address = globalAddress(access, verb);
      if (!address) continue;
      const std::string loc = lower::sourceLoc(access);
      const std::string reaches = std::string(verb) + (loc.empty() ? "" : " at " + loc);
      SmallVector<Value *, 16> work{address};
      while (!work.empty()) {
        auto *i = dyn_cast<Instruction>(work.pop_back_val());
        if (!i || !seen.insert(i).second) continue;  // arguments and constants are where index math starts
        IndexOp op;
        if (watched(*i, op)) found.try_emplace(i, reaches);
        flowsFrom(*i, work);
      }
    }
  return found;
}

FunctionCallee declareHook(Module &m, const char *name, ArrayRef<Type *> params) {
  FunctionCallee f = m.getOrInsertFunction(name, FunctionType::get(Type::getVoidTy(m.getContext()), params, false));
  auto *fn = cast<Function>(f.getCallee());
  fn->setDoesNotThrow();
  fn->setWillReturn();
  fn->setOnlyAccessesInaccessibleMemory();
  return f;
}

// The check after `i`: one call per vector lane.
void addCheck(Instruction &i, IndexOp op, uint32_t site, FunctionCallee binary, FunctionCallee trunc) {
  IRBuilder<> b(i.getNextNode());
  const unsigned lanes = i.getType()->isVectorTy() ? cast<FixedVectorType>(i.getType())->getNumElements() : 0;
  auto lane = [&](Value *v, unsigned k) { return lanes ? b.CreateExtractElement(v, uint64_t(k)) : v; };
  for (unsigned k = 0; k < std::max(lanes, 1u); ++k) {
    if (op == IndexOp::Trunc)
      b.CreateCall(trunc, {lane(i.getOperand(0), k), b.getInt32(site)});
    else
      b.CreateCall(binary, {lane(i.getOperand(0), k), lane(i.getOperand(1), k), b.getInt32(site)});
  }
}

}  // namespace

unsigned instrumentIndexOverflow(Module &m, SiteTable &sites) {
  LLVMContext &c = m.getContext();
  Type *i32 = Type::getInt32Ty(c), *i64 = Type::getInt64Ty(c);
  FunctionCallee binary, trunc;
  unsigned added = 0;
  for (Function &f : m) {
    if (f.isDeclaration()) continue;
    DenseMap<Instruction *, std::string> found = watchedIndexMath(f);
    if (found.empty()) continue;
    if (!binary) {
      binary = declareHook(m, kFnIndexI32, {i32, i32, i32});
      trunc = declareHook(m, kFnIndexTrunc, {i64, i32});
    }
    // In program order, so site ids do not depend on the walk.
    for (BasicBlock &bb : f)
      for (auto it = bb.begin(); it != bb.end();) {
        Instruction &i = *it++;
        auto hit = found.find(&i);
        IndexOp op;
        if (hit == found.end() || !watched(i, op)) continue;
        Site s{SiteKind::IndexOverflow, 0, lower::sourceLoc(i)};
        s.indexOp = op;
        s.reaches = hit->second;
        s.kernel = f.getName().str();
        addCheck(i, op, sites.add(std::move(s)), binary, trunc);
        ++added;
      }
  }
  return added;
}

}  // namespace tk::sim
