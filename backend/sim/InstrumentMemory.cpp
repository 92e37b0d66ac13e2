// instrumentMemoryAccesses: each marked access `load T, ptr %p` becomes
//   %q = call ptr @__tk_sim_global_access(ptr %p, i32 SITE)
//   load T, ptr %q
// so the runtime sees every access (address, width, site) before it happens
// and can redirect a bad one to scratch memory instead of faulting.
#include "backend/sim/InstrumentMemory.h"

#include <map>
#include <memory>

#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>

#include "backend/sim/PointerProvenance.h"
#include "backend/sim/SimTarget.h"
#include "backend/sim/Simulator.h"
#include "lower/LocMetadata.h"

namespace tk::sim {

using namespace llvm;

namespace {

struct Hooks {
  FunctionCallee global, shared, globalMasked, sharedMasked, barrierAt;
  FunctionCallee globalRooted, globalMaskedRooted;  // with the root pointer as a last argument
};

// The hooks touch only the runtime's own state: declaring that lets the
// optimizer keep its freedom around them, while the calls themselves are never
// removed or merged (each one is an access to count).
Function *declareHook(Module &m, const char *name, Type *ret, ArrayRef<Type *> params) {
  auto *f = cast<Function>(m.getOrInsertFunction(name, FunctionType::get(ret, params, false)).getCallee());
  f->setDoesNotThrow();
  f->setWillReturn();
  f->setOnlyAccessesInaccessibleMemory();
  return f;
}

std::string locOf(const Instruction &i) { return lower::sourceLoc(i); }

// The sim runs everything in address space 0; another one means the module
// was lowered for a GPU target (and x86 gives 256-258 a segment-register meaning).
void checkAddressSpace(const Instruction &i, const Value *ptr) {
  unsigned as = ptr->getType()->getPointerAddressSpace();
  if (as == 0) return;
  std::string loc = locOf(i);
  throw SimError("sim: a memory access" + (loc.empty() ? std::string() : " at " + loc) + " in function " +
                 i.getFunction()->getName().str() + " uses address space " + std::to_string(as) +
                 "; sim modules use address space 0 only (lower with SimTarget)");
}

// The located form of a runtime warp collective (its site appended as a
// last i32 argument), or null for other calls. The mbarrier operations and
// the bulk tensor copies take the same route: their errors name the line,
// and a copy's global read (a load) or write (a store) is checked and
// counted by its site.
struct Located {
  const char *name;
  SiteKind kind;
  uint32_t bytes;
  SiteRoot root = SiteRoot::None;
};
const Located *locatedCollective(StringRef name) {
  static const std::pair<const char *, Located> table[] = {
      {kFnShflI32, {kFnShflI32At, SiteKind::Shuffle, 0}},     {kFnShflF32, {kFnShflF32At, SiteKind::Shuffle, 0}},
      {kFnLdmatrix, {kFnLdmatrixAt, SiteKind::Ldmatrix, 16}}, {kFnMma, {kFnMmaAt, SiteKind::Mma, 0}},
      {kFnWgmma, {kFnWgmmaAt, SiteKind::Wgmma, 16}},
      {kFnMbarrierInit, {kFnMbarrierInitAt, SiteKind::Mbarrier, 0}},
      {kFnMbarrierInval, {kFnMbarrierInvalAt, SiteKind::Mbarrier, 0}},
      {kFnMbarrierArriveExpectTx, {kFnMbarrierArriveExpectTxAt, SiteKind::Mbarrier, 0}},
      {kFnMbarrierWait, {kFnMbarrierWaitAt, SiteKind::Mbarrier, 0}},
      {kFnMbarrierArrive, {kFnMbarrierArriveAt, SiteKind::Mbarrier, 0}},
      {kFnNamedBarrier, {kFnNamedBarrierAt, SiteKind::Barrier, 0}},
      {kFnTmaLoad, {kFnTmaLoadAt, SiteKind::GlobalLoad, 0, SiteRoot::TensorMap}},
      {kFnTmaStore, {kFnTmaStoreAt, SiteKind::GlobalStore, 0, SiteRoot::TensorMap}}};
  for (const auto &[plain, at] : table)
    if (name == plain) return &at;
  return nullptr;
}

// ldmatrix, mma, wgmma, cp.async, tma_load and tma_store are rewritten even
// without !tk.loc (see the header).
bool alwaysLocated(const Instruction &i) {
  auto *call = dyn_cast<CallInst>(&i);
  const Function *callee = call ? call->getCalledFunction() : nullptr;
  if (!callee) return false;
  const StringRef name = callee->getName();
  return name == kFnLdmatrix || name == kFnMma || name == kFnWgmma || name == kFnCpAsync || name == kFnTmaLoad ||
         name == kFnTmaStore;
}

// Records which kernel parameter a global access's address comes from
// (PointerProvenance.h), so the runtime checks it against that buffer; or,
// failing that, the root pointer it comes from, which the hook is then
// given. Returns the root, or null. A root that does not dominate the
// access (a phi's incoming value from one path only) cannot be passed: the
// site stays untraced.
Value *traceSource(Site &s, Instruction &i, const Value *address, DominatorTree &dom) {
  const Function *f = i.getFunction();
  const Provenance p = pointerProvenance(address, f);
  s.param = p.param;
  if (p.param >= 0) {
    s.paramName = f->getArg(unsigned(s.param))->getName().str();
    s.kernel = f->getName().str();
    return nullptr;
  }
  auto *root = const_cast<Instruction *>(dyn_cast_or_null<Instruction>(p.root));
  if (!root || !dom.dominates(root, &i)) return nullptr;
  s.root = p.rootLoaded ? SiteRoot::Loaded : SiteRoot::Integer;
  return root;
}

// Packs an <N x i1> lane mask (N <= 64) into an i64 bit set.
Value *maskBits(IRBuilder<> &b, Value *mask) {
  auto *vt = cast<FixedVectorType>(mask->getType());
  Value *bits = b.CreateBitCast(mask, b.getIntNTy(vt->getNumElements()));
  return b.CreateZExtOrTrunc(bits, b.getInt64Ty());
}

}  // namespace

unsigned instrumentMemoryAccesses(Module &m, SiteTable &sites) {
  const DataLayout &dl = m.getDataLayout();
  LLVMContext &c = m.getContext();
  Type *ptr = PointerType::get(c, 0), *i32 = Type::getInt32Ty(c), *i64 = Type::getInt64Ty(c);
  Hooks h;
  bool declared = false;
  auto declare = [&] {
    if (declared) return;
    declared = true;
    h.global = declareHook(m, kFnGlobalAccess, ptr, {ptr, i32});
    h.shared = declareHook(m, kFnSharedAccess, ptr, {ptr, i32});
    h.globalMasked = declareHook(m, kFnGlobalAccessMasked, ptr, {ptr, i32, i64});
    h.sharedMasked = declareHook(m, kFnSharedAccessMasked, ptr, {ptr, i32, i64});
    h.globalRooted = declareHook(m, kFnGlobalAccessRooted, ptr, {ptr, i32, ptr});
    h.globalMaskedRooted = declareHook(m, kFnGlobalAccessMaskedRooted, ptr, {ptr, i32, i64, ptr});
  };
  // Dominator trees for placing root pointers, one per function, built once
  // (the rewrites below add calls, never blocks).
  std::map<Function *, std::unique_ptr<DominatorTree>> doms;
  auto domOf = [&](Function *f) -> DominatorTree & {
    std::unique_ptr<DominatorTree> &d = doms[f];
    if (!d) d = std::make_unique<DominatorTree>(*f);
    return *d;
  };

  unsigned before = unsigned(sites.sites.size());
  std::vector<Instruction *> work;
  for (Function &f : m)
    for (BasicBlock &bb : f)
      for (Instruction &i : bb)
        if (lower::hasSourceLoc(i) || lower::isSharedAccess(i) || alwaysLocated(i)) work.push_back(&i);

  for (Instruction *i : work) {
    // !tk.shared wins: a shared access may also carry !tk.loc for its errors.
    bool shared = lower::isSharedAccess(*i);
    IRBuilder<> b(i);
    auto kindOf = [&](bool store, bool atomic) {
      if (atomic) return shared ? SiteKind::SharedAtomic : SiteKind::GlobalAtomic;
      if (store) return shared ? SiteKind::SharedStore : SiteKind::GlobalStore;
      return shared ? SiteKind::SharedLoad : SiteKind::GlobalLoad;
    };
    // Replaces operand `op` (the address) with the hook's answer.
    auto route = [&](unsigned op, Type *accessed, bool store, bool atomic) {
      checkAddressSpace(*i, i->getOperand(op));
      declare();
      Site s{kindOf(store, atomic), uint32_t(dl.getTypeStoreSize(accessed)), locOf(*i)};
      Value *root = shared ? nullptr : traceSource(s, *i, i->getOperand(op), domOf(i->getFunction()));
      uint32_t id = sites.add(std::move(s));
      Value *q = root ? b.CreateCall(h.globalRooted, {i->getOperand(op), b.getInt32(id), root})
                      : b.CreateCall(shared ? h.shared : h.global, {i->getOperand(op), b.getInt32(id)});
      i->setOperand(op, q);
    };

    if (auto *ld = dyn_cast<LoadInst>(i)) {
      route(ld->getPointerOperandIndex(), ld->getType(), false, false);
    } else if (auto *st = dyn_cast<StoreInst>(i)) {
      route(st->getPointerOperandIndex(), st->getValueOperand()->getType(), true, false);
    } else if (auto *rmw = dyn_cast<AtomicRMWInst>(i)) {
      route(rmw->getPointerOperandIndex(), rmw->getValOperand()->getType(), true, true);
    } else if (auto *cx = dyn_cast<AtomicCmpXchgInst>(i)) {
      route(cx->getPointerOperandIndex(), cx->getNewValOperand()->getType(), true, true);
    } else if (auto *call = dyn_cast<CallInst>(i)) {
      Function *callee = call->getCalledFunction();
      Intrinsic::ID iid = callee ? callee->getIntrinsicID() : Intrinsic::not_intrinsic;
      if (iid == Intrinsic::masked_load || iid == Intrinsic::masked_store) {
        // masked.load(ptr, align, mask, passthru); masked.store(value, ptr, align, mask)
        bool store = iid == Intrinsic::masked_store;
        unsigned ptrOp = store ? 1 : 0, maskOp = store ? 3 : 2;
        auto *vt = cast<FixedVectorType>(store ? call->getArgOperand(0)->getType() : call->getType());
        if (vt->getNumElements() > 64) continue;  // left unchecked; documented in docs/sim.md
        checkAddressSpace(*i, call->getArgOperand(ptrOp));
        declare();
        Site s{kindOf(store, false), uint32_t(dl.getTypeStoreSize(vt)), locOf(*i)};
        s.masked = true;
        s.elemBytes = uint32_t(dl.getTypeStoreSize(vt->getElementType()));
        Value *root = shared ? nullptr : traceSource(s, *i, call->getArgOperand(ptrOp), domOf(i->getFunction()));
        uint32_t id = sites.add(std::move(s));
        Value *mask = maskBits(b, call->getArgOperand(maskOp));
        Value *q = root ? b.CreateCall(h.globalMaskedRooted, {call->getArgOperand(ptrOp), b.getInt32(id), mask, root})
                        : b.CreateCall(shared ? h.sharedMasked : h.globalMasked,
                                       {call->getArgOperand(ptrOp), b.getInt32(id), mask});
        call->setArgOperand(ptrOp, q);
      } else if (callee && callee->getName() == kFnBarrier) {
        // A located barrier: the runtime can name its line when threads diverge.
        if (!h.barrierAt)
          h.barrierAt = m.getOrInsertFunction(kFnBarrierAt, FunctionType::get(Type::getVoidTy(c), {i32}, false));
        cast<Function>(h.barrierAt.getCallee())->setDoesNotThrow();
        cast<Function>(h.barrierAt.getCallee())->setConvergent();
        uint32_t id = sites.add(Site{SiteKind::Barrier, 0, locOf(*i)});
        CallInst *nc = b.CreateCall(h.barrierAt, {b.getInt32(id)});
        nc->copyMetadata(*call);
        call->eraseFromParent();
      } else if (callee && callee->getName() == kFnCpAsync) {
        // cp.async(dst, src, bytes, srcBytes): a masked global load of its
        // bytes (only the first srcBytes are read) and a shared store.
        checkAddressSpace(*i, call->getArgOperand(0));
        checkAddressSpace(*i, call->getArgOperand(1));
        auto *width = dyn_cast<ConstantInt>(call->getArgOperand(2));
        if (!width) throw SimError("sim: a cp.async with a non-constant size in " + i->getFunction()->getName().str());
        const uint32_t bytes = uint32_t(width->getZExtValue());
        Site global{SiteKind::GlobalLoad, bytes, locOf(*i)};
        global.masked = true;
        global.elemBytes = 1;
        // A cp.async from a root pointer keeps the fallback check: its hook
        // has no root argument (docs/sim.md, "Provenance").
        if (traceSource(global, *i, call->getArgOperand(1), domOf(i->getFunction()))) global.root = SiteRoot::None;
        uint32_t g = sites.add(std::move(global));
        uint32_t sh = sites.add(Site{SiteKind::SharedStore, bytes, locOf(*i)});
        FunctionCallee atCallee = m.getOrInsertFunction(
            kFnCpAsyncAt, FunctionType::get(Type::getVoidTy(c), {ptr, ptr, i32, i32, i32, i32}, false));
        cast<Function>(atCallee.getCallee())->setDoesNotThrow();
        std::vector<Value *> args(call->arg_begin(), call->arg_end());
        args.push_back(b.getInt32(g));
        args.push_back(b.getInt32(sh));
        CallInst *nc = b.CreateCall(atCallee, args);
        nc->copyMetadata(*call);
        call->eraseFromParent();
      } else if (const Located *at = callee ? locatedCollective(callee->getName()) : nullptr) {
        // A located collective: a lane that never arrives is reported with its line.
        std::vector<Type *> params(callee->getFunctionType()->params());
        params.push_back(i32);
        FunctionCallee atCallee =
            m.getOrInsertFunction(at->name, FunctionType::get(callee->getReturnType(), params, false));
        auto *atFn = cast<Function>(atCallee.getCallee());
        atFn->copyAttributesFrom(callee);  // convergent, nounwind: a collective like the original
        Site s{at->kind, at->bytes, locOf(*i)};
        s.root = at->root;
        uint32_t id = sites.add(std::move(s));
        std::vector<Value *> args(call->arg_begin(), call->arg_end());
        args.push_back(b.getInt32(id));
        CallInst *nc = b.CreateCall(atCallee, args);
        nc->copyMetadata(*call);
        nc->takeName(call);
        call->replaceAllUsesWith(nc);
        call->eraseFromParent();
      }
    }
  }
  return unsigned(sites.sites.size()) - before;
}

}  // namespace tk::sim
