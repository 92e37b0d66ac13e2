// Tile IR -> per-thread LLVM IR: the function shell, thread coordinates and
// the elementwise ops. Memory ops and layout conversions are in
// LowerMemory.cpp.
#include "lower/LowerToLLVM.h"
#include "tk/error.h"
#include "tk/fp8.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <stdexcept>

#include "lower/Fp8.h"
#include "lower/FunctionLowering.h"
#include "lower/LocMetadata.h"

namespace tk::lower {

using ir::OpKind;
using ir::ScalarKind;

FunctionLowering::FunctionLowering(ir::Function &fn, const Target &target, llvm::Module &module)
    : fn_(fn), target_(target), module_(module), ctx_(module.getContext()), b_(module.getContext()) {}

llvm::Type *FunctionLowering::scalarType(ScalarKind k) {
  switch (k) {
    case ScalarKind::I1: return b_.getInt1Ty();
    case ScalarKind::I8: return b_.getInt8Ty();
    case ScalarKind::I16: return b_.getInt16Ty();
    case ScalarKind::I32: return b_.getInt32Ty();
    case ScalarKind::I64: return b_.getInt64Ty();
    case ScalarKind::F16: return b_.getHalfTy();
    case ScalarKind::BF16: return b_.getBFloatTy();
    case ScalarKind::F32: return b_.getFloatTy();
    case ScalarKind::F64: return b_.getDoubleTy();
    case ScalarKind::F8E4M3: case ScalarKind::F8E5M2: return b_.getInt8Ty();  // the code's bits (lower/Fp8.h)
  }
  return nullptr;
}

llvm::Type *FunctionLowering::elemType(const ir::ElemType &e) {
  if (e.isPtr()) return llvm::PointerType::get(ctx_, target_.globalAddressSpace());
  return scalarType(e.scalar);
}

const Regs &FunctionLowering::regs(const ir::Value *v) const {
  auto it = values_.find(v);
  if (it == values_.end()) throw tk::InternalError("lowering: value used before it was lowered");
  return it->second;
}

// The thread's coordinate along root dim `dim` of a blocked layout, counted
// in threads: warpCoord * threadsPerWarp + laneCoord.
llvm::Value *FunctionLowering::threadPart(const ir::Layout &l, int dim) {
  auto key = std::make_pair(&l, dim);
  if (auto it = threadParts_.find(key); it != threadParts_.end()) return it->second;
  llvm::IRBuilderBase::InsertPointGuard keep(b_);
  b_.SetInsertPoint(entry_->getTerminator());
  auto coord = [&](llvm::Value *id, const std::vector<int> &sizes) {
    int below = 1;
    for (int d : l.order) {
      if (d == dim) break;
      below *= sizes[d];
    }
    llvm::Value *c = b_.CreateUDiv(id, b_.getInt32(below));
    return b_.CreateURem(c, b_.getInt32(sizes[dim]));
  };
  llvm::Value *laneC = coord(lane_, l.threadsPerWarp);
  llvm::Value *warpC = coord(warp_, l.warpsPerCTA);
  llvm::Value *part = b_.CreateAdd(b_.CreateMul(warpC, b_.getInt32(l.threadsPerWarp[dim])), laneC);
  threadParts_[key] = part;
  return part;
}

std::vector<llvm::Value *> FunctionLowering::elementIndex(const ir::Type &t, const RegisterMap &rm, int r) {
  const RootView &root = rm.root();
  std::vector<int> k = rm.coords(r);
  std::vector<llvm::Value *> idx;
  for (int rd : root.kept) {
    llvm::Value *base = b_.CreateMul(threadPart(*root.blocked, rd), b_.getInt32(root.blocked->sizePerThread[rd]));
    llvm::Value *i = b_.CreateAdd(base, b_.getInt32(static_cast<uint32_t>(rm.staticOffset(rd, k[rd]))));
    idx.push_back(b_.CreateAnd(i, b_.getInt32(static_cast<uint32_t>(root.shape[rd] - 1))));
  }
  return idx;
}

llvm::Value *FunctionLowering::ownerPredicate(const ir::Type &t, const RegisterMap &rm) {
  return ownsAlong(b_.getTrue(), rm.root(), -1);
}

llvm::Value *FunctionLowering::ownsAlong(llvm::Value *pred, const RootView &root, int exceptDim) {
  const ir::Layout &l = *root.blocked;
  for (int d = 0; d < static_cast<int>(root.shape.size()); ++d) {
    int64_t footprint = int64_t(l.sizePerThread[d]) * l.threadsPerWarp[d] * l.warpsPerCTA[d];
    if (d == exceptDim || footprint <= root.shape[d]) continue;
    llvm::Value *start = b_.CreateMul(threadPart(l, d), b_.getInt32(l.sizePerThread[d]));
    pred = b_.CreateAnd(pred, b_.CreateICmpULT(start, b_.getInt32(static_cast<uint32_t>(root.shape[d]))));
  }
  return pred;
}

llvm::Function *FunctionLowering::run() {
  std::vector<llvm::Type *> params;
  for (size_t i = 0; i < fn_.params.size(); ++i) params.push_back(elemType(fn_.body.argument(i)->type().elem));
  planTensorMaps();
  for (size_t i = 0; i < tensorMaps_.size(); ++i) params.push_back(b_.getPtrTy());
  auto *fty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  llfn_ = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, fn_.name, module_);
  for (size_t i = 0; i < fn_.params.size(); ++i) {
    llvm::Argument *a = llfn_->getArg(static_cast<unsigned>(i));
    a->setName(fn_.params[i].name);
    if (fn_.body.argument(i)->type().isPtr() && fn_.params[i].align > 1)
      a->addAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(fn_.params[i].align)));
    values_[fn_.body.argument(i)] = {a};
  }
  for (size_t i = 0; i < tensorMaps_.size(); ++i) {
    const unsigned argNo = static_cast<unsigned>(fn_.params.size() + i);
    llfn_->getArg(argNo)->setName(tensorMaps_[i].param + ".map" + std::to_string(i));
    target_.markTensorMapParam(*llfn_, argNo);
  }
  const int numThreads = (fn_.numWarps() + producerWarps()) * kWarpSize;
  target_.markKernel(*llfn_, numThreads);

  entry_ = llvm::BasicBlock::Create(ctx_, "entry", llfn_);
  auto *start = llvm::BasicBlock::Create(ctx_, "start", llfn_);
  b_.SetInsertPoint(entry_);
  tid_ = target_.threadId(b_);
  lane_ = b_.CreateAnd(tid_, b_.getInt32(kWarpSize - 1), "lane");
  warp_ = b_.CreateLShr(tid_, b_.getInt32(5), "warp");
  b_.CreateBr(start);
  b_.SetInsertPoint(start);

  for (ir::Op *op : fn_.walk())
    for (ir::Value *v : op->operands()) used_.insert(v);
  planRings();
  planBarriers();
  planWgmmaInFlight();
  lowerRegion(fn_.body);
  return llfn_;
}

Regs FunctionLowering::lowerOp(ir::Op &op) {
  loc_ = op.loc();
  const ir::Type *rt = op.result() ? &op.result()->type() : nullptr;
  auto numRegs = [&]() { return rt->isTile() ? RegisterMap(rt->layout, rt->shape).numRegisters() : 1; };
  switch (op.kind()) {
    case OpKind::Constant: {
      llvm::Type *ty = elemType(rt->elem);
      if (ir::isFp8(rt->elem.scalar)) {
        const Fp8Format &f = rt->elem.scalar == ScalarKind::F8E4M3 ? kE4M3 : kE5M2;
        return Regs(numRegs(), b_.getInt8(doubleToFp8Bits(op.floatAttr("value"), f)));
      }
      llvm::Value *c = rt->isFloat() ? llvm::ConstantFP::get(ty, op.floatAttr("value"))
                                     : llvm::ConstantInt::get(ty, static_cast<uint64_t>(op.intAttr("value")), true);
      return Regs(numRegs(), c);
    }
    case OpKind::ProgramId: return {target_.blockId(b_, static_cast<int>(op.intAttr("axis")))};
    case OpKind::NumPrograms: return {target_.gridDim(b_, static_cast<int>(op.intAttr("axis")))};
    case OpKind::Arange: {
      RegisterMap rm(rt->layout, rt->shape);
      Regs out;
      for (int r = 0; r < rm.numRegisters(); ++r)
        out.push_back(b_.CreateAdd(elementIndex(*rt, rm, r)[0], b_.getInt32(static_cast<uint32_t>(op.intAttr("start")))));
      return out;
    }
    case OpKind::Splat: return Regs(numRegs(), regs(op.operand(0))[0]);
    case OpKind::ExpandDims: return regs(op.operand(0));  // a slice and its parent hold the same registers
    case OpKind::Trans:
      if (!ir::sameLayout(op.operand(0)->type().layout, permutedLayout(op.result()->type().layout, ir::transOrder(op))))
        throw tk::InternalError("trans: the operand's layout is not the result's permuted");
      return regs(op.operand(0));  // the same registers, dims relabelled
    case OpKind::Reshape: return lowerConvertLayout(op);  // row-major through shared memory, either way
    case OpKind::Broadcast: {
      const ir::Type &st = op.operand(0)->type();
      RegisterMap out(rt->layout, rt->shape), in(st.layout, st.shape);
      const RootView &root = out.root();
      const Regs &src = regs(op.operand(0));
      Regs result;
      for (int r = 0; r < out.numRegisters(); ++r) {
        std::vector<int> k = out.coords(r);
        for (size_t i = 0; i < root.kept.size(); ++i)
          if (st.shape[i] == 1) k[root.kept[i]] = 0;
        result.push_back(src[in.index(k)]);
      }
      return result;
    }
    case OpKind::ConvertLayout: return lowerConvertLayout(op);
    case OpKind::Reduce: return lowerReduce(op);
    case OpKind::Scan: return lowerScan(op);
    case OpKind::Gather: return lowerGather(op);
    case OpKind::Histogram: return lowerHistogram(op);
    case OpKind::Dot: return lowerDot(op);
    case OpKind::Load: return lowerLoad(op);
    case OpKind::Store: lowerStore(op); return {};
    case OpKind::AsyncCopy: lowerAsyncCopy(op); return {};
    case OpKind::AsyncCommit: target_.cpAsyncCommitGroup(b_); return {};
    case OpKind::AsyncWait: lowerAsyncWait(op); return {};
    case OpKind::SharedLoad: return lowerSharedLoad(op);
    case OpKind::TmaInit:
    case OpKind::TmaExpect:
    case OpKind::TmaCopy:
    case OpKind::TmaWait:
    case OpKind::TmaRelease:
    case OpKind::TmaAcquire:
    case OpKind::TmaConsumed: lowerTma(op); return {};
    case OpKind::TmaStore: lowerTmaStore(op); return {};
    case OpKind::WarpSpecialize: lowerWarpSpecialize(op); return {};
    case OpKind::Print: lowerPrint(op); return {};
    case OpKind::Assert: lowerAssert(op); return {};
    case OpKind::Barrier: barrier(op.loc()); return {};
    case OpKind::AtomicRmw:
    case OpKind::AtomicCas: return lowerAtomic(op);
    default:
      if (op.hasTrait(ir::OpTrait::Elementwise)) return lowerElementwise(op);
      throw tk::InternalError(std::string("lowering: no rule for op '") + op.info().mnemonic + "'");
  }
}

Regs FunctionLowering::lowerElementwise(ir::Op &op) {
  std::vector<const Regs *> ins;
  for (ir::Value *v : op.operands()) ins.push_back(&regs(v));
  size_t n = ins.empty() ? 1 : ins[0]->size();
  Regs out;
  for (size_t r = 0; r < n; ++r) {
    std::vector<llvm::Value *> args;
    for (const Regs *in : ins) args.push_back((*in)[in->size() == 1 ? 0 : r]);
    out.push_back(scalarOp(op, args));
    if (target_.locatesIntegerArithmetic()) locateArithmetic(out.back(), args, op.loc());
  }
  return out;
}

// Tags the integer instruction an elementwise op made with the op's line
// (Target::locatesIntegerArithmetic). An operand passed through unchanged
// (an axis hint, a cast to the same type) keeps the location it has.
void FunctionLowering::locateArithmetic(llvm::Value *result, const std::vector<llvm::Value *> &args,
                                        const ir::Location &loc) {
  auto *inst = llvm::dyn_cast<llvm::Instruction>(result);
  if (!inst || !inst->getType()->isIntOrIntVectorTy() || hasSourceLoc(*inst)) return;
  if (std::find(args.begin(), args.end(), result) != args.end()) return;
  setSourceLoc(*inst, loc.str());
}

// f16/bf16 operands are computed in f32 and rounded back.
llvm::Value *FunctionLowering::mathScalar(MathFn f, const std::vector<llvm::Value *> &args) {
  llvm::Value *x = args[0], *y = mathFnArity(f) == 2 ? args[1] : nullptr;
  llvm::Type *ty = x->getType();
  if (ty->isHalfTy() || ty->isBFloatTy()) {
    llvm::Value *wx = b_.CreateFPExt(x, b_.getFloatTy());
    llvm::Value *wy = y ? b_.CreateFPExt(y, b_.getFloatTy()) : nullptr;
    return b_.CreateFPTrunc(target_.math(b_, f, wx, wy), ty);
  }
  return target_.math(b_, f, x, y);
}

llvm::Value *FunctionLowering::castScalar(llvm::Value *v, const ir::ElemType &from, const ir::ElemType &to) {
  llvm::Type *dst = elemType(to);
  const bool fromFloat = ir::isFloat(from.scalar), toFloat = ir::isFloat(to.scalar);
  const bool fromBool = from.scalar == ScalarKind::I1, toBool = to.scalar == ScalarKind::I1;
  if (from == to) return v;
  if (ir::isFp8(from.scalar) || ir::isFp8(to.scalar)) {  // through f32 (lower/Fp8.h)
    const ir::ElemType f32{ScalarKind::F32, false};
    llvm::Value *f = ir::isFp8(from.scalar) ? target_.fp8ToFloat(b_, v, from.scalar) : castScalar(v, from, f32);
    return ir::isFp8(to.scalar) ? target_.floatToFp8(b_, f, to.scalar) : castScalar(f, f32, to);
  }
  if (!fromFloat && !toFloat) {
    if (toBool) return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
    return fromBool ? b_.CreateZExt(v, dst) : b_.CreateSExtOrTrunc(v, dst);
  }
  if (!fromFloat) return fromBool ? b_.CreateUIToFP(v, dst) : b_.CreateSIToFP(v, dst);
  if (!toFloat) {
    if (toBool) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    // Saturating, as cvt.rzi does on the GPU; NaN gives 0.
    return b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {dst, v->getType()}, {v});
  }
  // float -> float; half <-> bfloat goes through f32.
  if (v->getType()->getPrimitiveSizeInBits() == dst->getPrimitiveSizeInBits()) {
    v = b_.CreateFPExt(v, b_.getFloatTy());
    return b_.CreateFPTrunc(v, dst);
  }
  return v->getType()->getPrimitiveSizeInBits() < dst->getPrimitiveSizeInBits() ? b_.CreateFPExt(v, dst)
                                                                                   : b_.CreateFPTrunc(v, dst);
}

llvm::Value *FunctionLowering::scalarOp(ir::Op &op, const std::vector<llvm::Value *> &a) {
  const ir::Type &t0 = op.operand(0)->type();
  const bool isFloat = t0.isFloat();
  llvm::Type *ty = a[0]->getType();
  auto isMinusOne = [&](llvm::Value *d) { return b_.CreateICmpEQ(d, llvm::ConstantInt::getSigned(ty, -1)); };
  auto safeDivisor = [&](llvm::Value *d) {
    // Division by zero (and INT_MIN / -1) traps on the host and is undefined
    // on the GPU: such lanes divide by 1 instead, so masked-off lanes cannot
    // fault; x / -1 and x % -1 are then selected exactly.
    llvm::Value *bad = b_.CreateOr(b_.CreateICmpEQ(d, llvm::ConstantInt::get(ty, 0)), isMinusOne(d));
    return b_.CreateSelect(bad, llvm::ConstantInt::get(ty, 1), d);
  };
  switch (op.kind()) {
    case OpKind::AxisHint: return a[0];  // facts for AxisInfo; the value is unchanged
    case OpKind::Add: return isFloat ? b_.CreateFAdd(a[0], a[1]) : b_.CreateAdd(a[0], a[1]);
    case OpKind::Sub: return isFloat ? b_.CreateFSub(a[0], a[1]) : b_.CreateSub(a[0], a[1]);
    case OpKind::Mul: return isFloat ? b_.CreateFMul(a[0], a[1]) : b_.CreateMul(a[0], a[1]);
    case OpKind::Div:
      if (isFloat) return b_.CreateFDiv(a[0], a[1]);
      // x / -1 is -x (INT_MIN / -1 would trap on the host).
      return b_.CreateSelect(isMinusOne(a[1]), b_.CreateNeg(a[0]), b_.CreateSDiv(a[0], safeDivisor(a[1])));
    case OpKind::Rem:
      if (isFloat) return b_.CreateFRem(a[0], a[1]);
      return b_.CreateSelect(isMinusOne(a[1]), llvm::ConstantInt::get(ty, 0), b_.CreateSRem(a[0], safeDivisor(a[1])));
    case OpKind::And: return b_.CreateAnd(a[0], a[1]);
    case OpKind::Or: return b_.CreateOr(a[0], a[1]);
    case OpKind::Xor: return b_.CreateXor(a[0], a[1]);
    case OpKind::Shl:
    case OpKind::Shr: {
      // Shift amounts are taken modulo the bit width, as on x86 and in PTX's
      // .wrap shifts, so no lane computes poison.
      unsigned bits = ty->getIntegerBitWidth();
      llvm::Value *amount = b_.CreateAnd(a[1], llvm::ConstantInt::get(ty, bits - 1));
      return op.is(OpKind::Shl) ? b_.CreateShl(a[0], amount) : b_.CreateAShr(a[0], amount);
    }
    case OpKind::Max:
      return isFloat ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, a[0], a[1])
                     : b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a[0], a[1]);
    case OpKind::Min:
      return isFloat ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, a[0], a[1])
                     : b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a[0], a[1]);
    case OpKind::Cmp: {
      using P = llvm::CmpInst::Predicate;
      using ir::CmpPredicate;
      // Floats compare ordered, but for ne (true for NaN, as C's !=);
      // bools and pointers unsigned.
      const bool u = t0.isBool() || t0.isPtr();
      P pr = P::BAD_ICMP_PREDICATE;
      switch (op.enumAttr<CmpPredicate>("predicate")) {
        case CmpPredicate::Eq: pr = isFloat ? P::FCMP_OEQ : P::ICMP_EQ; break;
        case CmpPredicate::Ne: pr = isFloat ? P::FCMP_UNE : P::ICMP_NE; break;
        case CmpPredicate::Lt: pr = isFloat ? P::FCMP_OLT : u ? P::ICMP_ULT : P::ICMP_SLT; break;
        case CmpPredicate::Le: pr = isFloat ? P::FCMP_OLE : u ? P::ICMP_ULE : P::ICMP_SLE; break;
        case CmpPredicate::Gt: pr = isFloat ? P::FCMP_OGT : u ? P::ICMP_UGT : P::ICMP_SGT; break;
        case CmpPredicate::Ge: pr = isFloat ? P::FCMP_OGE : u ? P::ICMP_UGE : P::ICMP_SGE; break;
      }
      return isFloat ? b_.CreateFCmp(pr, a[0], a[1]) : b_.CreateICmp(pr, a[0], a[1]);
    }
    case OpKind::Select: return b_.CreateSelect(a[0], a[1], a[2]);
    case OpKind::Cast: {
      llvm::Value *r = castScalar(a[0], t0.elem, op.result()->type().elem);
      const bool rtz = op.hasAttr("rounding") && op.enumAttr<ir::Rounding>("rounding") == ir::Rounding::Rtz;
      return rtz ? towardZero(a[0], r) : r;
    }
    case OpKind::Neg: return isFloat ? b_.CreateFNeg(a[0]) : b_.CreateNeg(a[0]);
    case OpKind::Not: return b_.CreateNot(a[0]);
    case OpKind::Fma: return b_.CreateIntrinsic(llvm::Intrinsic::fma, {ty}, {a[0], a[1], a[2]});
    case OpKind::UMulHi: {
      // The product in twice the width, its high half: NVPTX selects
      // mul.hi.u32 / mul.hi.u64 for this pattern, the host a widening mul.
      const unsigned bits = ty->getIntegerBitWidth();
      llvm::Type *wide = b_.getIntNTy(2 * bits);
      llvm::Value *p = b_.CreateMul(b_.CreateZExt(a[0], wide), b_.CreateZExt(a[1], wide));
      return b_.CreateTrunc(b_.CreateLShr(p, bits), ty);
    }
    case OpKind::Abs:
      if (isFloat) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a[0]);
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a[0], b_.getFalse());
#define TK_MATH_OP(E, NAME, ARITY, DOC) \
  case OpKind::E: return mathScalar(MathFn::E, a);
#include "ir/Ops.def"
    case OpKind::IsNan: return b_.CreateFCmpUNO(a[0], a[0]);
    case OpKind::IsInf:
      return b_.CreateFCmpOEQ(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a[0]),
                              llvm::ConstantFP::getInfinity(ty));
    case OpKind::Signbit: {
      // The sign bit itself: -0.0 and a NaN with its sign set count, as C's signbit.
      llvm::Type *bits = b_.getIntNTy(ty->getPrimitiveSizeInBits());
      return b_.CreateICmpSLT(b_.CreateBitCast(a[0], bits), llvm::ConstantInt::get(bits, 0));
    }
    case OpKind::AddPtr: {
      llvm::Value *off = b_.CreateSExtOrTrunc(a[1], b_.getInt64Ty());
      return b_.CreateGEP(elemType(t0.elem.pointee()), a[0], off);  // a loaded pointer steps by 8 bytes
    }
    // Addresses are 64-bit on every target (ir/PointerCasts.h): no Target
    // question here; an access through the pointer is checked where it happens.
    case OpKind::IntToPtr: return b_.CreateIntToPtr(a[0], elemType(op.result()->type().elem));
    case OpKind::PtrToInt: return b_.CreatePtrToInt(a[0], b_.getInt64Ty());
    case OpKind::Bitcast: return b_.CreateBitCast(a[0], scalarType(op.result()->type().elem.scalar));
    default: throw tk::InternalError(std::string("lowering: no elementwise rule for '") + op.info().mnemonic + "'");
  }
}

LoweredKernel lowerToLLVM(ir::Function &fn, const Target &target, llvm::LLVMContext &ctx) {
  LoweredKernel out;
  out.module = std::make_unique<llvm::Module>(fn.name, ctx);
  target.configureModule(*out.module);
  FunctionLowering lowering(fn, target, *out.module);
  lowering.run();
  out.producerWarps = producerWarpsOf(fn);
  out.numThreads = (fn.numWarps() + out.producerWarps) * kWarpSize;
  out.sharedBytes = lowering.sharedBytes();
  out.tensorMaps = lowering.tensorMaps();
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*out.module, &os))
    throw tk::InternalError("lowering produced invalid LLVM IR: " + os.str());
  return out;
}

// `rounded`, float `x` converted to a narrower float to nearest even, made
// the conversion toward zero: where its magnitude passed x's, the next float
// toward zero, one less in the bits (an overflow to infinity becomes the
// largest finite value, the smallest subnormal zero). NaN and exact values
// stay. Every target runs the same IR, so the sim checks what the GPU runs.
llvm::Value *FunctionLowering::towardZero(llvm::Value *x, llvm::Value *rounded) {
  llvm::Type *narrow = rounded->getType();
  llvm::Value *back = b_.CreateFPExt(rounded, x->getType());
  llvm::Value *past = b_.CreateFCmpOGT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                       b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x));
  llvm::Type *bits = b_.getIntNTy(narrow->getPrimitiveSizeInBits());
  llvm::Value *less = b_.CreateSub(b_.CreateBitCast(rounded, bits), llvm::ConstantInt::get(bits, 1));
  return b_.CreateSelect(past, b_.CreateBitCast(less, narrow), rounded);
}

}  // namespace tk::lower
