// Recomputes a predicated access's mask inside its inline asm, from the
// values the mask was computed from (after LLVM's optimisation), where holding
// the mask's i1s would cost registers: a store whose mask a masked load shares
// (wholly or a compare of it), and a load in a loop whose mask is computed
// outside it.
//
// Why: a masked tile is loaded, computed on and stored under the same mask, so
// LLVM keeps one i1 (a PTX predicate) per element live from the load to the
// store. ptxas has 7 predicate registers; the rest live in general registers
// across the computation (softmax's chunk loop: 8 registers across its exps and
// divisions). The mask's leaves (a column base, the loop counter, the bound)
// are live there anyway, so re-deriving each element's predicate from them at
// the access costs a few instructions and no registers. LLVM would fold a
// recomputation in IR back into the first one (CSE, LICM), and ptxas does not
// look through the inline asm's scope, hence the text.
#include "backend/nvptx/AccessPredicates.h"

#include "backend/nvptx/MaskedAccess.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Local.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace tk::nvptx {

using namespace llvm;

namespace {

// One store's predicate as PTX text over the asm's operands.
class PredicateText {
 public:
  explicit PredicateText(unsigned firstOperand) : next_(firstOperand) {}

  // The PTX operand that holds `v`: an expression's temporary, an immediate,
  // or an asm operand (a leaf) appended to `leaves`.
  std::string operand(Value *v, int depth) {
    if (auto it = names_.find(v); it != names_.end()) return it->second;
    std::string name = expand(v, depth);
    if (name.empty()) name = leaf(v);
    names_[v] = name;
    return name;
  }

  std::vector<Value *> leaves;
  std::string constraints;  // ",r,l,..." for the leaves
  std::string code;
  std::map<char, unsigned> temps;  // register class ('p', 'r', 'l', 'h') -> count

 private:
  static const char *regClass(Type *t) {
    if (t->isIntegerTy(1)) return "b";
    if (t->isIntegerTy(16)) return "h";
    if (t->isIntegerTy(32)) return "r";
    if (t->isIntegerTy(64)) return "l";
    return nullptr;
  }

  std::string leaf(Value *v) {
    leaves.push_back(v);
    constraints += std::string(",") + regClass(v->getType());
    return "$" + std::to_string(next_++);
  }

  std::string temp(char cls) {
    const unsigned i = temps[cls]++;
    return std::string("%tk") + cls + std::to_string(i);
  }

  static std::string bits(Type *t) { return std::to_string(t->getIntegerBitWidth()); }

  // PTX for `v` into a new temporary, or "" where `v` stays a leaf: an
  // instruction with two variable operands (one register either way), an
  // unsupported type, or past the depth bound.
  std::string expand(Value *v, int depth) {
    if (!regClass(v->getType())) return "";
    if (auto *c = dyn_cast<ConstantInt>(v); c && !v->getType()->isIntegerTy(1))
      return std::to_string(c->getSExtValue());
    auto *inst = dyn_cast<Instruction>(v);
    if (!inst || depth <= 0) return "";
    if (auto *call = dyn_cast<CallInst>(inst)) {
      // The thread's and block's indices: re-read, not held.
      static const std::map<Intrinsic::ID, const char *> regs = {
          {Intrinsic::nvvm_read_ptx_sreg_tid_x, "%tid.x"},     {Intrinsic::nvvm_read_ptx_sreg_tid_y, "%tid.y"},
          {Intrinsic::nvvm_read_ptx_sreg_tid_z, "%tid.z"},     {Intrinsic::nvvm_read_ptx_sreg_ctaid_x, "%ctaid.x"},
          {Intrinsic::nvvm_read_ptx_sreg_ctaid_y, "%ctaid.y"}, {Intrinsic::nvvm_read_ptx_sreg_ctaid_z, "%ctaid.z"}};
      auto it = regs.find(call->getIntrinsicID());
      if (it == regs.end()) return "";
      const std::string d = temp('r');
      code += "mov.u32 " + d + ", " + it->second + ";\n\t";
      return d;
    }
    if (auto *cmp = dyn_cast<ICmpInst>(inst)) {
      Type *t = cmp->getOperand(0)->getType();
      if (!t->isIntegerTy(16) && !t->isIntegerTy(32) && !t->isIntegerTy(64)) return "";
      if (isa<Constant>(cmp->getOperand(0))) return "";
      static const std::map<CmpInst::Predicate, const char *> ops = {
          {CmpInst::ICMP_EQ, "eq.s"},  {CmpInst::ICMP_NE, "ne.s"},  {CmpInst::ICMP_SLT, "lt.s"},
          {CmpInst::ICMP_SLE, "le.s"}, {CmpInst::ICMP_SGT, "gt.s"}, {CmpInst::ICMP_SGE, "ge.s"},
          {CmpInst::ICMP_ULT, "lo.u"}, {CmpInst::ICMP_ULE, "ls.u"}, {CmpInst::ICMP_UGT, "hi.u"},
          {CmpInst::ICMP_UGE, "hs.u"}};
      const std::string a = operand(cmp->getOperand(0), depth - 1), b = operand(cmp->getOperand(1), depth - 1);
      const std::string d = temp('p');
      code += "setp." + std::string(ops.at(cmp->getPredicate())) + bits(t) + " " + d + ", " + a + ", " + b + ";\n\t";
      return d;
    }
    if (v->getType()->isIntegerTy(1)) {
      const char *op = nullptr;
      Value *a = nullptr, *b = nullptr;
      if (auto *bin = dyn_cast<BinaryOperator>(inst)) {
        a = bin->getOperand(0), b = bin->getOperand(1);
        op = bin->getOpcode() == Instruction::And   ? "and"
             : bin->getOpcode() == Instruction::Or  ? "or"
             : bin->getOpcode() == Instruction::Xor ? "xor"
                                                    : nullptr;
      } else if (auto *sel = dyn_cast<SelectInst>(inst)) {
        // LLVM's logical and/or: select a, b, false and select a, true, b.
        auto *t = dyn_cast<ConstantInt>(sel->getTrueValue());
        auto *f = dyn_cast<ConstantInt>(sel->getFalseValue());
        if (f && f->isZero())
          op = "and", a = sel->getCondition(), b = sel->getTrueValue();
        else if (t && t->isOne())
          op = "or", a = sel->getCondition(), b = sel->getFalseValue();
      }
      if (!op || isa<Constant>(a) || isa<Constant>(b)) return "";
      const std::string x = operand(a, depth - 1), y = operand(b, depth - 1);
      const std::string d = temp('p');
      code += std::string(op) + ".pred " + d + ", " + x + ", " + y + ";\n\t";
      return d;
    }
    // Integer arithmetic, down to values every element shares (the loop
    // counter, the thread's index, arguments): each element's column is a
    // shared base plus a constant, and ptxas merges the bases the stores
    // recompute, so one register serves every element's mask.
    auto *bin = dyn_cast<BinaryOperator>(inst);
    if (!bin || isa<Constant>(bin->getOperand(0)) || ops_ >= kMaxOps) return "";
    const char *op = nullptr;
    switch (bin->getOpcode()) {
      case Instruction::Add:
        op = "add.s";
        break;
      case Instruction::Sub:
        op = "sub.s";
        break;
      case Instruction::Mul:
        op = "mul.lo.s";
        break;
      case Instruction::Or:
        op = "or.b";
        break;
      case Instruction::And:
        op = "and.b";
        break;
      case Instruction::Xor:
        op = "xor.b";
        break;
      case Instruction::Shl:  // PTX takes the amount as a u32: only an immediate fits every width
        if (!isa<ConstantInt>(bin->getOperand(1))) return "";
        op = "shl.b";
        break;
      default:
        return "";
    }
    const std::string a = operand(bin->getOperand(0), depth - 1), b = operand(bin->getOperand(1), depth - 1);
    ++ops_;
    const std::string d = temp(*regClass(v->getType()));
    code += std::string(op) + bits(v->getType()) + " " + d + ", " + a + ", " + b + ";\n\t";
    return d;
  }

  static constexpr unsigned kMaxOps = 12;  // integer instructions per store, past which values stay leaves
  unsigned next_;
  unsigned ops_ = 0;
  std::map<Value *, std::string> names_;
};

const char *kRegDecl[][2] = {{"p", ".pred"}, {"h", ".b16"}, {"r", ".b32"}, {"l", ".b64"}};

// `v` and the i1s it is built from through and/or/xor and LLVM's logical
// selects (the element's compares and their combinations).
void maskNodes(Value *v, std::set<Value *> &out, int depth = 8) {
  if (!v->getType()->isIntegerTy(1) || isa<Constant>(v) || !out.insert(v).second || depth == 0) return;
  if (auto *bin = dyn_cast<BinaryOperator>(v)) {
    for (Value *op : bin->operands()) maskNodes(op, out, depth - 1);
  } else if (auto *sel = dyn_cast<SelectInst>(v)) {
    for (Value *op : sel->operands()) maskNodes(op, out, depth - 1);
  }
}

// Whether a store's mask shares an i1 with a masked load's: then the compare
// lives from the load to the store, as softmax's per-element masks did, or
// similarity's row compares across its whole sample loop (recomputed: 72
// registers on sm_90 instead of 104, and the general matmul's epilogue 128
// instead of 157). A mask only the store uses is computed where LLVM
// scheduled it, and recomputing it costs registers instead: the pipelined
// 128x128 matmul's epilogue (no masked loads: cp.async) 254 on sm_80
// instead of 223, the fused kernel at --assume D=256 145 instead of 128.
bool sharedWithLoad(Value *mask, const std::set<Value *> &loadMasks) {
  if (!mask->hasOneUse()) return true;  // another access uses it too
  std::set<Value *> nodes;
  maskNodes(mask, nodes);
  for (Value *n : nodes)
    if (loadMasks.count(n)) return true;
  return false;
}

// Whether a masked load is in a loop and its mask is not (similarity's
// `i < n_dim` in its `for s`). LLVM hoists such a mask out of the loop, one
// i1 per element, and ptxas held similarity's 18 in general registers across
// the loop. A mask computed in the loop is where it is needed already.
bool loopInvariantMask(CallInst *call, const LoopInfo &loops) {
  auto *mask = dyn_cast<Instruction>(call->getArgOperand(1));
  const Loop *loop = loops.getLoopFor(call->getParent());
  return mask && loop && !loop->contains(mask);
}

// How far back a predicate is recomputed: a store's from the values every
// element shares (the thread's index, the loop counter, arguments), once; a
// load's in a loop runs every iteration, so only its compare and the
// element's offset from a shared base (similarity: `or` + `setp` per load;
// back to %tid.x and %ctaid.x it also took 79 registers on sm_80, not 76).
constexpr int kStoreDepth = 8, kLoadDepth = 2;

void rewrite(CallInst *call, const MaskedAccess &access) {
  auto *asmFn = cast<InlineAsm>(call->getCalledOperand());
  Type *ret = call->getType();
  const unsigned outputs = access.load ? access.words : 0;
  Value *pred = call->getArgOperand(1);
  if (auto *c = dyn_cast<ConstantInt>(pred)) {
    if (c->isZero() && !access.load) call->eraseFromParent();  // never stores: a lane known in bounds
    return;
  }
  std::vector<Value *> args;
  for (unsigned i = 0; i < call->arg_size(); ++i)
    if (i != 1) args.push_back(call->getArgOperand(i));
  PredicateText p(outputs + static_cast<unsigned>(args.size()));
  const std::string q = p.operand(pred, access.load ? kLoadDepth : kStoreDepth);
  if (p.leaves.size() == 1 && p.leaves[0] == pred) return;  // nothing to recompute
  std::string body = "{\n\t";
  for (const auto &[cls, type] : kRegDecl)
    if (unsigned n = p.temps[cls[0]])
      body += std::string(".reg ") + type + " %tk" + cls + "<" + std::to_string(n) + ">;\n\t";
  // The same access without its predicate operand, under the recomputed one.
  body += p.code + access.textGuardedBy(q) + "\n\t}";
  const std::string constraints = access.constraints(/*predicated=*/false, p.constraints);
  for (Value *leaf : p.leaves) args.push_back(leaf);
  std::vector<Type *> params;
  for (Value *a : args) params.push_back(a->getType());
  auto *fn = InlineAsm::get(FunctionType::get(ret, params, false), body, constraints, asmFn->hasSideEffects());
  CallInst *rendered = CallInst::Create(fn->getFunctionType(), fn, args, "", call->getIterator());
  rendered->setAttributes(call->getAttributes());
  rendered->copyMetadata(*call);
  MaskedAccess::detachFrom(*rendered);  // its predicate is no operand now: done
  call->replaceAllUsesWith(rendered);
  call->eraseFromParent();
  RecursivelyDeleteTriviallyDeadInstructions(pred);  // the mask where nothing else uses it
}

}  // namespace

void recomputeAccessPredicates(Module &m) {
  std::vector<CallInst *> calls;
  for (Function &f : m) {
    if (f.isDeclaration()) continue;
    std::vector<CallInst *> loads, stores;
    for (BasicBlock &bb : f)
      for (Instruction &i : bb)
        if (auto *call = dyn_cast<CallInst>(&i); call && call->isInlineAsm())
          if (std::optional<MaskedAccess> a = MaskedAccess::of(*call)) (a->load ? loads : stores).push_back(call);
    if (loads.empty() && stores.empty()) continue;
    // Decided before any rewrite, on the masks as LLVM left them.
    std::set<Value *> loadMasks;
    for (CallInst *load : loads) maskNodes(load->getArgOperand(1), loadMasks);
    DominatorTree dom(f);
    LoopInfo loops(dom);
    for (CallInst *load : loads)
      if (loopInvariantMask(load, loops)) calls.push_back(load);
    for (CallInst *store : stores) {
      Value *mask = store->getArgOperand(1);
      if (isa<Constant>(mask) || sharedWithLoad(mask, loadMasks)) calls.push_back(store);
    }
  }
  for (CallInst *call : calls) rewrite(call, *MaskedAccess::of(*call));
}

}  // namespace tk::nvptx
