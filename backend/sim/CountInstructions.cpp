// countInstructions: the basic blocks of the optimised sim module are grouped
// into classes that always run equally often; each class gets an id, a
// static cost (what one run of its blocks executes on a GPU) and, at the top
// of its first block,
//   %slot = getelementptr i64, ptr %runs, i64 ID
//   store (load %slot) + 1, %slot
// The launch multiplies runs by costs per thread and per warp at block end.
#include "backend/sim/CountInstructions.h"

#include <llvm/ADT/StringSet.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <map>

#include "backend/sim/InstrumentMemory.h"
#include "backend/sim/SimTarget.h"

namespace tk::sim {

using namespace llvm;

namespace {

// Math a GPU runs on its special-function units (sin, cos, ex2, lg2, rsqrt,
// tanh.approx) or as a libdevice sequence around them (exp, log, pow, erf,
// sqrt.rn): libm names without their `f`, and intrinsic base names.
bool isSpecialMath(StringRef name) {
  static const StringSet<> names = {"sqrt",  "rsqrt", "cbrt",  "sin",    "cos",   "tan",   "sincos", "sinh",
                                    "cosh",  "tanh",  "asin",  "acos",   "atan",  "atan2", "exp",    "exp2",
                                    "exp10", "expm1", "log",   "log2",   "log10", "log1p", "pow",    "powi",
                                    "erf",   "erfc",  "hypot", "lgamma", "tgamma", "asinh", "acosh",  "atanh",
                                    "fmod"};
  return names.contains(name);
}

// Floating-point math a GPU runs as one ordinary instruction.
bool isPlainFpMath(StringRef name) {
  static const StringSet<> names = {"fma",     "fmuladd",   "fabs",     "floor",        "ceil",   "trunc",
                                    "round",   "roundeven", "rint",     "nearbyint",    "minnum", "maxnum",
                                    "minimum", "maximum",   "copysign", "canonicalize", "ldexp",  "fmin",
                                    "fmax",    "fdim",      "lround",   "llround",      "lrint",  "llrint"};
  return names.contains(name);
}

// A libm name's f64 base: "sinf" -> "sin" (but "erf" stays "erf").
StringRef libmBase(StringRef name, bool (*known)(StringRef)) {
  if (known(name)) return name;
  if (name.ends_with("f") && known(name.drop_back())) return name.drop_back();
  return {};
}

// Runtime calls that are instructions on a GPU: the collectives (bar.sync,
// shfl.sync, ldmatrix, mma.sync, the wgmma family and its fences), the
// mbarrier operations (a wait: one try_wait), cp.async.bulk.tensor (loads
// and stores) and the bulk groups' commit and wait, one each. The others
// (ids, the shared base, the memory hooks, print and assert) are the sim's
// plumbing and cost nothing.
bool isCollective(StringRef name) {
  for (const char *c : {kFnBarrier, kFnBarrierAt, kFnShflI32, kFnShflF32, kFnShflI32At,
                        kFnShflF32At, kFnLdmatrix, kFnLdmatrixAt, kFnMma, kFnMmaAt, kFnWgmma, kFnWgmmaAt, kFnWgmmaWait, kFnWgmmaFence,
                        kFnWgmmaCommit, kFnFenceProxyAsync, kFnMbarrierInit, kFnMbarrierInitAt, kFnMbarrierInval,
                        kFnMbarrierInvalAt, kFnMbarrierArriveExpectTx, kFnMbarrierArriveExpectTxAt, kFnMbarrierWait,
                        kFnMbarrierWaitAt, kFnMbarrierArrive, kFnMbarrierArriveAt, kFnNamedBarrier,
                        kFnNamedBarrierAt, kFnTmaLoadAt, kFnTmaStoreAt, kFnBulkCommitGroup,
                        kFnBulkWaitGroupRead})
    if (name == c) return true;
  return false;
}

unsigned lanesOf(const Type *t) {
  if (auto *v = dyn_cast<FixedVectorType>(t)) return unsigned(v->getNumElements());
  return 1;
}

// A GPU has no wide arithmetic vectors: a vector operation the host's
// vectoriser formed is one instruction per lane (so counts do not depend on
// what the host vectorised).
unsigned lanes(const Instruction &i) {
  unsigned n = lanesOf(i.getType());
  for (const Use &u : i.operands()) n = std::max(n, lanesOf(u->getType()));
  return n;
}

// Memory instructions move up to 16 bytes each (ld.global.v4.f32).
uint32_t memoryCost(const DataLayout &dl, Type *accessed) {
  uint64_t bytes = dl.getTypeStoreSize(accessed);
  return uint32_t(std::max<uint64_t>(1, (bytes + 15) / 16));
}

BlockCost callCost(const CallBase &call) {
  const Function *callee = call.getCalledFunction();
  uint32_t n = lanes(call);
  if (!callee) return {1, 0, 0};
  const DataLayout &dl = call.getModule()->getDataLayout();
  if (Intrinsic::ID id = callee->getIntrinsicID(); id != Intrinsic::not_intrinsic) {
    if (auto *ii = dyn_cast<IntrinsicInst>(&call); ii && ii->isAssumeLikeIntrinsic()) return {};
    switch (id) {
      case Intrinsic::masked_load:
        return {memoryCost(dl, call.getType()), 0, 0};
      case Intrinsic::masked_store:
        return {memoryCost(dl, call.getArgOperand(0)->getType()), 0, 0};
      default:
        break;
    }
    StringRef base = Intrinsic::getBaseName(id);
    base.consume_front("llvm.");
    base = base.take_until([](char c) { return c == '.'; });
    if (isSpecialMath(base)) return {n, 0, n};
    if (isPlainFpMath(base)) return {n, n, 0};
    return {n, 0, 0};
  }
  StringRef name = callee->getName();
  if (name.starts_with("__tk_sim_")) return {isCollective(name) ? 1u : 0u, 0, 0};
  if (!libmBase(name, isSpecialMath).empty()) return {1, 0, 1};
  if (!libmBase(name, isPlainFpMath).empty()) return {1, 1, 0};
  return {1, 0, 0};
}

}  // namespace

BlockCost instructionCost(const Instruction &i) {
  if (i.getMetadata(kMdUncounted)) return {};
  const DataLayout &dl = i.getModule()->getDataLayout();
  uint32_t n = lanes(i);
  switch (i.getOpcode()) {
    // Register renaming on a GPU, or nothing at all.
    case Instruction::PHI:
    case Instruction::Alloca:
    case Instruction::BitCast:
    case Instruction::AddrSpaceCast:
    case Instruction::PtrToInt:
    case Instruction::IntToPtr:
    case Instruction::Freeze:
    case Instruction::ExtractElement:
    case Instruction::InsertElement:
    case Instruction::ShuffleVector:
    case Instruction::ExtractValue:
    case Instruction::InsertValue:
    case Instruction::Unreachable:
      return {};
    case Instruction::Br:
      return {cast<BranchInst>(i).isConditional() ? 1u : 0u, 0, 0};  // a jump to the next block is laid out away
    case Instruction::GetElementPtr:
      return {cast<GetElementPtrInst>(i).hasAllConstantIndices() ? 0u : n, 0, 0};  // folds into the address
    case Instruction::Load:
      return {memoryCost(dl, i.getType()), 0, 0};
    case Instruction::Store:
      return {memoryCost(dl, cast<StoreInst>(i).getValueOperand()->getType()), 0, 0};
    case Instruction::FAdd:
    case Instruction::FSub:
    case Instruction::FMul:
    case Instruction::FDiv:
    case Instruction::FRem:
    case Instruction::FNeg:
    case Instruction::FCmp:
    case Instruction::SIToFP:
    case Instruction::UIToFP:
    case Instruction::FPToSI:
    case Instruction::FPToUI:
    case Instruction::FPExt:
    case Instruction::FPTrunc:
      return {n, n, 0};
    case Instruction::Call:
    case Instruction::Invoke:
      return callCost(cast<CallBase>(i));
    default:
      return {n, 0, 0};
  }
}

namespace {

// The highest dominator of `bb` that runs exactly as often as it does: one
// that `bb` post-dominates, in the same loop (every run of the one is followed
// by one of the other before either runs again). Such blocks share a counter
// (the usual reduction of block profiling): a guarded store's join block
// shares its guard's, and only the blocks where lanes can part pay.
BasicBlock *equivalentDominator(BasicBlock *bb, const DominatorTree &dt, const PostDominatorTree &pdt,
                                const LoopInfo &li) {
  BasicBlock *top = bb;
  const DomTreeNode *node = dt.getNode(bb);
  if (!node) return bb;  // unreachable
  for (const DomTreeNode *up = node->getIDom(); up; up = up->getIDom())
    if (li.getLoopFor(up->getBlock()) == li.getLoopFor(bb) && pdt.dominates(bb, up->getBlock())) top = up->getBlock();
  return top;
}

}  // namespace

void countInstructions(Module &m, std::vector<BlockCost> &blocks) {
  LLVMContext &c = m.getContext();
  Type *i64 = Type::getInt64Ty(c);
  FunctionCallee runsFn;
  for (Function &f : m) {
    if (f.isDeclaration()) continue;
    bool runsArg = f.hasFnAttribute(kBlockRunsArgAttr) && f.arg_size() > 0;
    if (!runsArg && !runsFn) {
      runsFn = m.getOrInsertFunction(kFnBlockRuns, FunctionType::get(PointerType::get(c, 0), {}, false));
      auto *decl = cast<Function>(runsFn.getCallee());
      decl->setDoesNotThrow();
      decl->setWillReturn();
      decl->setDoesNotAccessMemory();
    }
    DominatorTree dt(f);
    PostDominatorTree pdt(f);
    LoopInfo li(dt);
    // Price every block before the increments go in, so they are not counted.
    std::map<BasicBlock *, uint64_t> ids;  // first block of a class -> its id
    for (BasicBlock &bb : f) {
      BasicBlock *top = equivalentDominator(&bb, dt, pdt, li);
      auto [it, added] = ids.emplace(top, blocks.size());
      if (added) blocks.emplace_back();
      for (const Instruction &i : bb) blocks[it->second] += instructionCost(i);
    }
    IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
    Value *runs;
    if (runsArg) {
      // O2 saw the parameter unused and may have called it readnone.
      unsigned last = unsigned(f.arg_size() - 1);
      f.setAttributes(f.getAttributes().removeParamAttributes(c, last));
      runs = f.getArg(last);
      runs->setName("tk.runs");
    } else {
      runs = b.CreateCall(runsFn, {}, "tk.runs");
    }
    // What O2 inferred of the function's memory effects no longer holds.
    f.setMemoryEffects(MemoryEffects::unknown());
    for (BasicBlock &bb : f) {
      auto it = ids.find(&bb);
      if (it == ids.end()) continue;
      if (&bb != &f.getEntryBlock()) b.SetInsertPoint(&*bb.getFirstInsertionPt());
      Value *slot = b.CreateConstInBoundsGEP1_64(i64, runs, it->second);
      b.CreateAlignedStore(b.CreateAdd(b.CreateAlignedLoad(i64, slot, Align(8)), b.getInt64(1)), slot, Align(8));
    }
  }
}

}  // namespace tk::sim
