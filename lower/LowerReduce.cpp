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

// The built-in kinds' combining step on (value) or (value, index).
class Combiner {
 public:
  Combiner(llvm::IRBuilder<> &b, ir::ReduceKind kind, bool isFloat, bool isBool)
      : b_(b), kind_(kind), isFloat_(isFloat), isBool_(isBool) {}

  bool isArg() const { return kind_ == ir::ReduceKind::Argmax || kind_ == ir::ReduceKind::Argmin; }

  FunctionLowering::Vals operator()(const FunctionLowering::Vals &a, const FunctionLowering::Vals &c) const {
    if (kind_ == ir::ReduceKind::Sum) return {isFloat_ ? b_.CreateFAdd(a[0], c[0]) : b_.CreateAdd(a[0], c[0])};
    if (kind_ == ir::ReduceKind::XorSum) return {b_.CreateXor(a[0], c[0])};
    if (kind_ == ir::ReduceKind::Max || kind_ == ir::ReduceKind::Min) {
      bool mx = kind_ == ir::ReduceKind::Max;
      llvm::Intrinsic::ID id = isFloat_ ? (mx ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum)
                               : isBool_ ? (mx ? llvm::Intrinsic::umax : llvm::Intrinsic::umin)
                                         : (mx ? llvm::Intrinsic::smax : llvm::Intrinsic::smin);
      return {b_.CreateBinaryIntrinsic(id, a[0], c[0])};
    }
    // argmax/argmin: the better value wins, the smaller index on ties. A
    // NaN loses to every number, as max and min ignore it (maxnum/minnum),
    // and NaNs tie with each other: an order on (value, index) whatever the
    // reduction's tree, so the index is the first of the largest number's
    // (of a NaN-only row, 0).
    bool mx = kind_ == ir::ReduceKind::Argmax;
    llvm::Value *better, *same;
    if (isFloat_) {
      llvm::Value *aNaN = b_.CreateFCmpUNO(a[0], a[0]), *cNaN = b_.CreateFCmpUNO(c[0], c[0]);
      better = b_.CreateOr(mx ? b_.CreateFCmpOGT(c[0], a[0]) : b_.CreateFCmpOLT(c[0], a[0]),
                           b_.CreateAnd(aNaN, b_.CreateNot(cNaN)));
      same = b_.CreateOr(b_.CreateFCmpOEQ(c[0], a[0]), b_.CreateAnd(aNaN, cNaN));
    } else {
      better = mx ? (isBool_ ? b_.CreateICmpUGT(c[0], a[0]) : b_.CreateICmpSGT(c[0], a[0]))
                  : (isBool_ ? b_.CreateICmpULT(c[0], a[0]) : b_.CreateICmpSLT(c[0], a[0]));
      same = b_.CreateICmpEQ(c[0], a[0]);
    }
    llvm::Value *takeC = b_.CreateOr(better, b_.CreateAnd(same, b_.CreateICmpSLT(c[1], a[1])));
    return {b_.CreateSelect(takeC, c[0], a[0]), b_.CreateSelect(takeC, c[1], a[1])};
  }

 private:
  llvm::IRBuilder<> &b_;
  ir::ReduceKind kind_;
  bool isFloat_, isBool_;
};

}  // namespace

Regs FunctionLowering::lowerReduce(ir::Op &op) {
  const ir::Type &st = op.operand(0)->type();
  const ir::ReduceKind kind = op.enumAttr<ir::ReduceKind>("kind");
  const int axis = static_cast<int>(op.intAttr("axis"));
  const ir::ElemType accElem{kind == ir::ReduceKind::Sum ? ir::reduceResultElem(kind, st.elem.scalar) : st.elem.scalar,
                             false};
  const Combiner combine(b_, kind, ir::isFloat(accElem.scalar), accElem.scalar == ir::ScalarKind::I1);
  RegisterMap in(st.layout, st.shape);
  std::vector<Regs> src(combine.isArg() ? 2 : 1);
  for (int r = 0; r < in.numRegisters(); ++r) {
    src[0].push_back(castScalar(regs(op.operand(0))[r], st.elem, accElem));
    if (combine.isArg()) src[1].push_back(elementIndex(st, in, r)[axis]);
  }
  // Every built-in kind commutes (argmax's ties go to the smaller index).
  std::vector<Regs> out = reduceAlong(st, src, axis, op.result()->type(), combine, /*ordered=*/false);
  return out.back();  // the value, or an arg-reduction's index
}

// 1. Within the thread: its elements along the axis, per output (and, when
//    ordered, per repetition: a thread's repetitions are not neighbours).
// 2. Across the lanes of a warp that hold distinct elements along the axis,
//    by butterfly shuffles; ordered, the lane whose bit m is set is the right
//    operand of its partner.
// 3. Across the warps along the axis, through one shared slot per (output,
//    repetition, warp), each thread combining the warps in order; then the
//    repetitions in order.
std::vector<Regs> FunctionLowering::reduceAlong(const ir::Type &st, const std::vector<Regs> &src, int axis,
                                                const ir::Type &rt, const Combine &combine, bool ordered) {
  const ir::Location loc = loc_;  // of the op (a combine region's ops set loc_ while they lower)
  RegisterMap in(st.layout, st.shape);
  const RootView &root = in.root();
  const ir::Layout &l = *root.blocked;
  const int ra = root.kept[axis];
  std::unique_ptr<RegisterMap> out;
  if (rt.isTile()) out = std::make_unique<RegisterMap>(rt.layout, rt.shape);
  const int numOut = out ? out->numRegisters() : 1;
  const int per = ordered ? in.contiguousPerThread(ra) : in.count(ra);
  const int chunks = in.count(ra) / per;
  const size_t nc = src.size();

  // 1. Within the thread, in order along the axis.
  std::vector<std::vector<int>> regsOf(numOut * chunks, std::vector<int>(per, -1));
  for (int r = 0; r < in.numRegisters(); ++r) {
    std::vector<int> k = in.coords(r);
    const int along = k[ra];
    k[ra] = 0;
    regsOf[(out ? out->index(k) : 0) * chunks + along / per][along % per] = r;
  }
  std::vector<Vals> acc(numOut * chunks);
  for (size_t p = 0; p < acc.size(); ++p)
    for (int r : regsOf[p]) {
      if (r < 0) continue;
      Vals v(nc);
      for (size_t c = 0; c < nc; ++c) v[c] = src[c][r];
      acc[p] = acc[p].empty() ? v : combine(acc[p], v);
    }

  // 2. Across lanes.
  const AxisSpread spread = axisSpread(l, ra, root.shape[ra]);
  const int64_t lanes = spread.lanes, warps = spread.warps;
  const int laneStride = spread.laneStride;
  llvm::Value *part = threadPart(l, ra);
  llvm::Value *laneC = b_.CreateURem(part, b_.getInt32(l.threadsPerWarp[ra]));
  llvm::Value *warpC = b_.CreateUDiv(part, b_.getInt32(l.threadsPerWarp[ra]));
  for (int64_t m = 1; m < lanes; m <<= 1) {
    llvm::Value *high = b_.CreateICmpNE(b_.CreateAnd(laneC, b_.getInt32(static_cast<uint32_t>(m))), b_.getInt32(0));
    for (Vals &p : acc) {
      Vals other(nc);
      for (size_t c = 0; c < nc; ++c) other[c] = shuffleXor(p[c], static_cast<int>(laneStride * m));
      if (!ordered) {
        p = combine(p, other);
        continue;
      }
      Vals lo(nc), hi(nc);
      for (size_t c = 0; c < nc; ++c) {
        lo[c] = b_.CreateSelect(high, other[c], p[c]);
        hi[c] = b_.CreateSelect(high, p[c], other[c]);
      }
      p = combine(lo, hi);
    }
  }

  // 3. Across warps, then repetitions.
  if (warps > 1) {
    // One writer per partial: lane 0 along the axis, the owner along the rest.
    llvm::Value *writer = ownsAlong(b_.CreateAnd(b_.CreateICmpEQ(laneC, b_.getInt32(0)),
                                                 b_.CreateICmpULT(warpC, b_.getInt32(static_cast<uint32_t>(warps)))),
                                    root, ra);
    std::vector<llvm::Value *> slots, reads;
    for (int o = 0; o < numOut; ++o) {
      llvm::Value *lin = out ? linearIndex(rt.shape, elementIndex(rt, *out, o)) : b_.getInt32(0);
      for (int c = 0; c < chunks; ++c) {
        llvm::Value *first = b_.CreateMul(b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(chunks)), b_.getInt32(c)),
                                          b_.getInt32(static_cast<uint32_t>(warps)));
        slots.push_back(b_.CreateAdd(first, warpC));
        for (int64_t w = 0; w < warps; ++w) reads.push_back(b_.CreateAdd(first, b_.getInt32(static_cast<uint32_t>(w))));
      }
    }
    const int64_t numOutElems = rt.isTile() ? rt.numElements() : 1;
    std::vector<Vals> got = exchangeSlots(acc, slots, writer, numOutElems * chunks * warps, reads, loc);
    for (size_t p = 0; p < acc.size(); ++p) {
      acc[p] = got[p * warps];
      for (int64_t w = 1; w < warps; ++w) acc[p] = combine(acc[p], got[p * warps + w]);
    }
  }
  std::vector<Regs> result(nc);
  for (int o = 0; o < numOut; ++o) {
    Vals total = acc[o * chunks];
    for (int c = 1; c < chunks; ++c) total = combine(total, acc[o * chunks + c]);
    for (size_t c = 0; c < nc; ++c) result[c].push_back(total[c]);
  }
  return result;
}

std::vector<FunctionLowering::Vals> FunctionLowering::exchangeSlots(const std::vector<Vals> &vals,
                                                                    const std::vector<llvm::Value *> &slot,
                                                                    llvm::Value *writer, int64_t numSlots,
                                                                    const std::vector<llvm::Value *> &read,
                                                                    const ir::Location &loc) {
  const size_t nc = vals.front().size();
  // Component c's array starts at offset[c], 8-byte aligned.
  std::vector<llvm::Type *> types, memTypes;
  std::vector<int64_t> offset;
  int64_t bytes = 0;
  for (size_t c = 0; c < nc; ++c) {
    llvm::Type *ty = vals.front()[c]->getType();
    types.push_back(ty);
    memTypes.push_back(ty->isIntegerTy(1) ? b_.getInt8Ty() : ty);
    bytes = (bytes + 7) / 8 * 8;
    offset.push_back(bytes);
    bytes += numSlots * static_cast<int64_t>(module_.getDataLayout().getTypeAllocSize(memTypes.back()));
  }
  useScratch(static_cast<int>(bytes));
  llvm::Value *base = scratchBase();
  auto address = [&](size_t c, llvm::Value *s) {
    llvm::Value *array = b_.CreateGEP(b_.getInt8Ty(), base, b_.getInt32(static_cast<uint32_t>(offset[c])));
    return b_.CreateGEP(memTypes[c], array, s);
  };
  Regs flat;
  std::vector<llvm::Value *> addresses;
  for (size_t s = 0; s < vals.size(); ++s)
    for (size_t c = 0; c < nc; ++c) {
      flat.push_back(vals[s][c]);
      addresses.push_back(address(c, slot[s]));
    }
  storeShared(flat, addresses, writer, loc);
  barrier(loc);
  std::vector<Vals> out(read.size(), Vals(nc));
  for (size_t r = 0; r < read.size(); ++r)
    for (size_t c = 0; c < nc; ++c) out[r][c] = loadShared(types[c], {address(c, read[r])}, loc)[0];
  // The buffer is reused by the next reduction or conversion.
  barrier(loc);
  return out;
}

}  // namespace tk::lower
