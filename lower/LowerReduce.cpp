// Lowering of `reduce`: each thread combines the elements it holds along the
// axis, then butterfly shuffles combine the lanes of a warp, then shared
// memory combines the warps. The result is in the slice layout, so every
// thread ends up holding the reduced values of the rows it held.
#include <llvm/IR/Intrinsics.h>

#include <stdexcept>

#include "lower/FunctionLowering.h"
#include "tk/error.h"

namespace tk::lower {

// Lanes exchange 32-bit values: narrower ones widen, 64-bit ones go in halves.
llvm::Value *FunctionLowering::shuffleXor(llvm::Value *v, int laneMask) {
  llvm::Type *t = v->getType();
  if (t->isFloatTy() || t->isIntegerTy(32)) {
    llvm::Value *r = target_.shuffleXor(b_, v, laneMask);
    // The sim names the line of a shuffle that misses a lane.
    if (auto *call = llvm::dyn_cast<llvm::CallInst>(r)) tagGlobal(call, loc_);
    return r;
  }
  const unsigned bits = static_cast<unsigned>(t->getPrimitiveSizeInBits());
  llvm::Type *asInt = b_.getIntNTy(bits);
  llvm::Value *i = t->isIntegerTy() ? v : b_.CreateBitCast(v, asInt);
  if (bits < 32) {
    llvm::Value *r = target_.shuffleXor(b_, b_.CreateZExt(i, b_.getInt32Ty()), laneMask);
    r = b_.CreateTrunc(r, asInt);
    return t->isIntegerTy() ? r : b_.CreateBitCast(r, t);
  }
  if (bits != 64) throw tk::InternalError("lowering: cannot shuffle a " + std::to_string(bits) + "-bit value");
  llvm::Value *lo = target_.shuffleXor(b_, b_.CreateTrunc(i, b_.getInt32Ty()), laneMask);
  llvm::Value *hi = target_.shuffleXor(b_, b_.CreateTrunc(b_.CreateLShr(i, 32), b_.getInt32Ty()), laneMask);
  llvm::Value *r = b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()), b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32));
  return t->isIntegerTy() ? r : b_.CreateBitCast(r, t);
}

namespace {

// A partial result: the value and, for arg-reductions, its index.
struct Partial {
  llvm::Value *value = nullptr;
  llvm::Value *index = nullptr;
};

class Combiner {
 public:
  Combiner(llvm::IRBuilder<> &b, const std::string &kind, bool isFloat, bool isBool)
      : b_(b), kind_(kind), isFloat_(isFloat), isBool_(isBool) {}

  bool isArg() const { return kind_ == "argmax" || kind_ == "argmin"; }

  Partial operator()(const Partial &a, const Partial &c) const {
    if (kind_ == "sum") return {isFloat_ ? b_.CreateFAdd(a.value, c.value) : b_.CreateAdd(a.value, c.value)};
    if (kind_ == "xor_sum") return {b_.CreateXor(a.value, c.value)};
    if (kind_ == "max" || kind_ == "min") {
      bool mx = kind_ == "max";
      llvm::Intrinsic::ID id = isFloat_ ? (mx ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum)
                               : isBool_ ? (mx ? llvm::Intrinsic::umax : llvm::Intrinsic::umin)
                                         : (mx ? llvm::Intrinsic::smax : llvm::Intrinsic::smin);
      return {b_.CreateBinaryIntrinsic(id, a.value, c.value)};
    }
    // argmax/argmin: the better value wins, the smaller index on ties. A
    // NaN loses to every number, as max and min ignore it (maxnum/minnum),
    // and NaNs tie with each other: an order on (value, index) whatever the
    // reduction's tree, so the index is the first of the largest number's
    // (of a NaN-only row, 0).
    bool mx = kind_ == "argmax";
    llvm::Value *better, *same;
    if (isFloat_) {
      llvm::Value *aNaN = b_.CreateFCmpUNO(a.value, a.value), *cNaN = b_.CreateFCmpUNO(c.value, c.value);
      better = b_.CreateOr(mx ? b_.CreateFCmpOGT(c.value, a.value) : b_.CreateFCmpOLT(c.value, a.value),
                           b_.CreateAnd(aNaN, b_.CreateNot(cNaN)));
      same = b_.CreateOr(b_.CreateFCmpOEQ(c.value, a.value), b_.CreateAnd(aNaN, cNaN));
    } else {
      better = mx ? (isBool_ ? b_.CreateICmpUGT(c.value, a.value) : b_.CreateICmpSGT(c.value, a.value))
                  : (isBool_ ? b_.CreateICmpULT(c.value, a.value) : b_.CreateICmpSLT(c.value, a.value));
      same = b_.CreateICmpEQ(c.value, a.value);
    }
    llvm::Value *takeC = b_.CreateOr(better, b_.CreateAnd(same, b_.CreateICmpSLT(c.index, a.index)));
    return {b_.CreateSelect(takeC, c.value, a.value), b_.CreateSelect(takeC, c.index, a.index)};
  }

 private:
  llvm::IRBuilder<> &b_;
  std::string kind_;
  bool isFloat_, isBool_;
};

}  // namespace

Regs FunctionLowering::lowerReduce(ir::Op &op) {
  const ir::Type &st = op.operand(0)->type();
  const ir::Type &rt = op.result()->type();
  const std::string &kind = op.strAttr("kind");
  const int axis = static_cast<int>(op.intAttr("axis"));
  const ir::ElemType accElem{kind == "sum" ? *ir::reduceResultElem(kind, st.elem.scalar) : st.elem.scalar, false};
  const Combiner combine(b_, kind, ir::isFloat(accElem.scalar), accElem.scalar == ir::ScalarKind::I1);

  RegisterMap in(st.layout, st.shape);
  const RootView &root = in.root();
  const ir::Layout &l = *root.blocked;
  const int ra = root.kept[axis];
  std::unique_ptr<RegisterMap> out;
  if (rt.isTile()) out = std::make_unique<RegisterMap>(rt.layout, rt.shape);
  const int numOut = out ? out->numRegisters() : 1;

  // 1. Within the thread.
  const Regs &src = regs(op.operand(0));
  std::vector<Partial> acc(numOut);
  for (int r = 0; r < in.numRegisters(); ++r) {
    std::vector<int> k = in.coords(r);
    k[ra] = 0;
    const int o = out ? out->index(k) : 0;
    Partial p{castScalar(src[r], st.elem, accElem)};
    if (combine.isArg()) p.index = elementIndex(st, in, r)[axis];
    acc[o] = acc[o].value ? combine(acc[o], p) : p;
  }

  // 2. Across the lanes of a warp that hold distinct elements along the axis.
  const AxisSpread spread = axisSpread(l, ra, root.shape[ra]);
  const int64_t lanes = spread.lanes, warps = spread.warps;
  const int laneStride = spread.laneStride;
  for (int64_t m = 1; m < lanes; m <<= 1)
    for (Partial &p : acc) {
      Partial other{shuffleXor(p.value, static_cast<int>(laneStride * m))};
      if (combine.isArg()) other.index = shuffleXor(p.index, static_cast<int>(laneStride * m));
      p = combine(p, other);
    }

  // 3. Across the warps along the axis, through shared memory.
  if (warps > 1) {
    llvm::Type *valTy = elemType(accElem);
    const int valBytes = static_cast<int>(module_.getDataLayout().getTypeAllocSize(valTy));
    const int64_t numOutElems = rt.isTile() ? rt.numElements() : 1;
    const int64_t slots = numOutElems * warps;
    const int64_t indexOffset = slots * valBytes;  // arg-reductions keep i32 indices after the values
    useScratch(static_cast<int>(indexOffset + (combine.isArg() ? slots * 4 : 0)));

    llvm::Value *base = scratchBase();
    llvm::Value *part = threadPart(l, ra);
    llvm::Value *laneC = b_.CreateURem(part, b_.getInt32(l.threadsPerWarp[ra]));
    llvm::Value *warpC = b_.CreateUDiv(part, b_.getInt32(l.threadsPerWarp[ra]));
    // One writer per partial: lane 0 along the axis, the owner along the rest.
    llvm::Value *writer = ownsAlong(b_.CreateAnd(b_.CreateICmpEQ(laneC, b_.getInt32(0)),
                                                 b_.CreateICmpULT(warpC, b_.getInt32(static_cast<uint32_t>(warps)))),
                                    root, ra);
    auto slotOf = [&](int o) -> llvm::Value * {
      llvm::Value *lin = b_.getInt32(0);
      if (out) {
        std::vector<llvm::Value *> idx = elementIndex(rt, *out, o);
        for (size_t d = 0; d < idx.size(); ++d)
          lin = b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(static_cast<uint32_t>(rt.shape[d]))), idx[d]);
      }
      return b_.CreateMul(lin, b_.getInt32(static_cast<uint32_t>(warps)));
    };
    auto valPtr = [&](llvm::Value *slot) { return b_.CreateGEP(valTy, base, slot); };
    auto idxPtr = [&](llvm::Value *slot) {
      return b_.CreateGEP(b_.getInt32Ty(), b_.CreateGEP(b_.getInt8Ty(), base, b_.getInt32(static_cast<uint32_t>(indexOffset))), slot);
    };
    std::vector<llvm::Value *> slots0(numOut);
    for (int o = 0; o < numOut; ++o) slots0[o] = slotOf(o);

    auto *write = llvm::BasicBlock::Create(ctx_, "reduce.write", llfn_);
    auto *written = llvm::BasicBlock::Create(ctx_, "reduce.written", llfn_);
    b_.CreateCondBr(writer, write, written);
    b_.SetInsertPoint(write);
    for (int o = 0; o < numOut; ++o) {
      llvm::Value *slot = b_.CreateAdd(slots0[o], warpC);
      tagShared(b_.CreateAlignedStore(acc[o].value, valPtr(slot), llvm::Align(valBytes)), op.loc());
      if (combine.isArg())
        tagShared(b_.CreateAlignedStore(acc[o].index, idxPtr(slot), llvm::Align(4)), op.loc());
    }
    b_.CreateBr(written);
    b_.SetInsertPoint(written);
    barrier(op.loc());
    for (int o = 0; o < numOut; ++o) {
      Partial total;
      for (int64_t w = 0; w < warps; ++w) {
        llvm::Value *slot = b_.CreateAdd(slots0[o], b_.getInt32(static_cast<uint32_t>(w)));
        auto *v = b_.CreateAlignedLoad(valTy, valPtr(slot), llvm::Align(valBytes));
        tagShared(v, op.loc());
        Partial p{v};
        if (combine.isArg()) {
          auto *i = b_.CreateAlignedLoad(b_.getInt32Ty(), idxPtr(slot), llvm::Align(4));
          tagShared(i, op.loc());
          p.index = i;
        }
        total = total.value ? combine(total, p) : p;
      }
      acc[o] = total;
    }
    // The buffer is reused by the next reduction or conversion.
    barrier(op.loc());
  }

  Regs result;
  for (const Partial &p : acc) result.push_back(combine.isArg() ? p.index : p.value);
  return result;
}

}  // namespace tk::lower
