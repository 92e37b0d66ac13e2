// Lowering of `scan` (cumsum, cumprod): each thread scans the elements it
// holds along the axis, shuffle-up steps scan the lanes of a warp
// (Hillis-Steele), shared memory carries the totals of earlier warps and
// repetitions, and each thread combines its carry back. The result keeps the
// operand's layout. "Add" below is the kind's operation (+ or *), "zero" its
// identity (0 or 1).
#include <algorithm>
#include <map>
#include <stdexcept>

#include "lower/FunctionLowering.h"
#include "tk/error.h"

namespace tk::lower {

// Along the scan axis (root dim `ra`) element index i of register k of a
// thread is (threadPart * spt + rep * footprint + e) mod n, with
// k = rep * per + e. So the axis is ordered rep-major, then by thread, then e:
//   1. within a thread: a sequential scan over e, per repetition;
//   2. within a warp: an inclusive scan of the thread totals over the `lanes`
//      lanes that hold distinct elements (a lane group when threadsPerWarp <
//      32 or when the axis is shorter than the warp: the rest are copies);
//   3. across warps and repetitions: the warp totals go to shared memory, one
//      slot per (row, rep, warp); each thread sums the slots before its own.
// Replicated threads (the tile smaller than the block's footprint) compute
// the same values as their originals; only originals write shared memory.
Regs FunctionLowering::lowerScan(ir::Op &op) {
  const ir::Type &st = op.operand(0)->type();
  const ir::Type &rt = op.result()->type();
  const std::string &kind = op.strAttr("kind");
  if (kind != "sum" && kind != "prod") throw tk::InternalError("lowering: scan kind " + kind);
  const bool prod = kind == "prod";
  const int axis = static_cast<int>(op.intAttr("axis"));
  const ir::ElemType acc = rt.elem;  // sums of narrow types accumulate wide (ir::reduceResultElem)
  const bool isFloat = ir::isFloat(acc.scalar);
  llvm::Type *accTy = elemType(acc);
  auto add = [&](llvm::Value *a, llvm::Value *c) {
    if (prod) return isFloat ? b_.CreateFMul(a, c) : b_.CreateMul(a, c);
    return isFloat ? b_.CreateFAdd(a, c) : b_.CreateAdd(a, c);
  };
  llvm::Value *zero = prod ? (isFloat ? llvm::ConstantFP::get(accTy, 1.0) : llvm::ConstantInt::get(accTy, 1))
                           : llvm::Constant::getNullValue(accTy);

  RegisterMap rm(st.layout, st.shape);
  const RootView &root = rm.root();
  const ir::Layout &l = *root.blocked;
  const int ra = root.kept[axis];
  const int64_t n = root.shape[ra];
  const int tpw = l.threadsPerWarp[ra];
  const int per = rm.contiguousPerThread(ra);  // elements of one repetition
  const int reps = rm.count(ra) / per;
  // Lanes and warps that hold distinct elements along the axis (as in reduce).
  const AxisSpread spread = axisSpread(l, ra, n);
  const int lanes = spread.lanes, warps = spread.warps, laneStride = spread.laneStride;

  // Registers by row (the register with k[ra] = 0) and position along the axis.
  std::map<int, std::vector<int>> rows;  // row register -> registers along the axis
  for (int r = 0; r < rm.numRegisters(); ++r) {
    std::vector<int> k = rm.coords(r);
    const int along = k[ra];
    k[ra] = 0;
    auto &row = rows[rm.index(k)];
    row.resize(rm.count(ra));
    row[along] = r;
  }

  // 1. Within the thread: s[k] holds the inclusive scan of its repetition.
  const Regs &src = regs(op.operand(0));
  Regs s(src.size());
  for (auto &[row0, regsAlong] : rows)
    for (int k = 0; k < rm.count(ra); ++k) {
      llvm::Value *v = castScalar(src[regsAlong[k]], st.elem, acc);
      s[regsAlong[k]] = k % per == 0 ? v : add(s[regsAlong[k - 1]], v);
    }

  // What each (row, rep) adds to its in-thread scan, and its warp's total.
  std::map<int, std::vector<llvm::Value *>> prefix, warpTotal;
  for (auto &[row0, regsAlong] : rows) {
    prefix[row0].assign(reps, nullptr);
    warpTotal[row0].resize(reps);
    for (int rep = 0; rep < reps; ++rep) warpTotal[row0][rep] = s[regsAlong[rep * per + per - 1]];
  }

  llvm::Value *part = threadPart(l, ra);
  llvm::Value *laneC = b_.CreateURem(part, b_.getInt32(tpw));
  llvm::Value *warpC = b_.CreateUDiv(part, b_.getInt32(tpw));

  // 2. Across lanes: shuffle-up steps of 1, 2, 4, ... lanes along the axis; a
  // lane takes a value only from its own group (laneE >= delta).
  if (lanes > 1) {
    // Lanes exchange 32-bit words: 64-bit accumulators go in halves.
    auto shuffleUp = [&](llvm::Value *v, int delta) -> llvm::Value * {
      auto one = [&](llvm::Value *w) {
        llvm::Value *r = target_.shuffleUp(b_, w, delta);
        if (auto *call = llvm::dyn_cast<llvm::CallInst>(r)) tagGlobal(call, loc_);  // the sim names the line
        return r;
      };
      llvm::Type *t = v->getType();
      if (t->isFloatTy() || t->isIntegerTy(32)) return one(v);
      if (t->getPrimitiveSizeInBits() != 64) throw tk::InternalError("lowering: cannot shuffle this scan value");
      llvm::Value *i = t->isIntegerTy() ? v : b_.CreateBitCast(v, b_.getInt64Ty());
      llvm::Value *lo = one(b_.CreateTrunc(i, b_.getInt32Ty()));
      llvm::Value *hi = one(b_.CreateTrunc(b_.CreateLShr(i, 32), b_.getInt32Ty()));
      llvm::Value *r =
          b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()), b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32));
      return t->isIntegerTy() ? r : b_.CreateBitCast(r, t);
    };
    llvm::Value *laneE = b_.CreateAnd(laneC, b_.getInt32(lanes - 1));
    for (int delta = 1; delta < lanes; delta <<= 1) {
      llvm::Value *takes = b_.CreateICmpUGE(laneE, b_.getInt32(delta));
      for (auto &[row0, totals] : warpTotal)
        for (llvm::Value *&t : totals) t = b_.CreateSelect(takes, add(t, shuffleUp(t, delta * laneStride)), t);
    }
    // The exclusive lane prefix: the inclusive one of the lane before.
    llvm::Value *notFirst = b_.CreateICmpNE(laneE, b_.getInt32(0));
    for (auto &[row0, totals] : warpTotal)
      for (int rep = 0; rep < reps; ++rep)
        prefix[row0][rep] =
            b_.CreateSelect(notFirst, shuffleUp(totals[rep], laneStride), zero);
  }

  // 3. Across warps and repetitions, through shared memory.
  if (warps > 1 || reps > 1) {
    const int groups = reps * warps;
    const int64_t numRows = st.numElements() / st.shape[axis];
    const int accBytes = static_cast<int>(module_.getDataLayout().getTypeAllocSize(accTy));
    useScratch(static_cast<int>(numRows * groups * accBytes));
    llvm::Value *base = scratchBase();
    llvm::Value *warpE = b_.CreateAnd(warpC, b_.getInt32(warps - 1));
    // One writer per slot: the last lane of the group in the first copy of
    // the warp, and the owner along the other dims.
    llvm::Value *writer = ownsAlong(b_.CreateAnd(b_.CreateICmpEQ(laneC, b_.getInt32(lanes - 1)),
                                                 b_.CreateICmpULT(warpC, b_.getInt32(warps))),
                                    root, ra);
    // Slot (row, rep, warp) = (rowLinear * reps + rep) * warps + warp; the
    // row is the element's index over the dims other than the axis.
    Regs vals;
    std::vector<llvm::Value *> stores;
    std::map<int, std::vector<llvm::Value *>> slotAddrs;  // row -> every group's slot
    for (auto &[row0, totals] : warpTotal) {
      std::vector<llvm::Value *> idx = elementIndex(st, rm, row0);
      llvm::Value *lin = b_.getInt32(0);
      for (int d = 0; d < st.rank(); ++d)
        if (d != axis) lin = b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(static_cast<uint32_t>(st.shape[d]))), idx[d]);
      llvm::Value *first = b_.CreateMul(lin, b_.getInt32(groups));
      for (int g = 0; g < groups; ++g)
        slotAddrs[row0].push_back(b_.CreateGEP(accTy, base, b_.CreateAdd(first, b_.getInt32(g))));
      for (int rep = 0; rep < reps; ++rep) {
        vals.push_back(totals[rep]);
        stores.push_back(b_.CreateGEP(accTy, base, b_.CreateAdd(first, b_.CreateAdd(b_.getInt32(rep * warps), warpE))));
      }
    }
    storeShared(vals, stores, writer, op.loc());
    barrier(op.loc());
    for (auto &[row0, addrs] : slotAddrs) {
      Regs slot = loadShared(accTy, addrs, op.loc());
      llvm::Value *running = nullptr;  // the totals of the repetitions before
      for (int rep = 0; rep < reps; ++rep) {
        llvm::Value *carry = running;
        for (int w = 0; w < warps; ++w) {
          llvm::Value *v = slot[rep * warps + w];
          if (w + 1 < warps) {  // the warps before this thread's own
            llvm::Value *before = b_.CreateICmpULT(b_.getInt32(w), warpE);
            llvm::Value *take = b_.CreateSelect(before, v, zero);
            carry = carry ? add(carry, take) : take;
          }
          running = running ? add(running, v) : v;
        }
        llvm::Value *&p = prefix[row0][rep];
        if (carry) p = p ? add(carry, p) : carry;
      }
    }
    barrier(op.loc());  // the buffer is reused by the next exchange
  }

  // 4. Add the carries back.
  Regs result(s.size());
  for (auto &[row0, regsAlong] : rows)
    for (int k = 0; k < rm.count(ra); ++k) {
      llvm::Value *p = prefix[row0][k / per];
      result[regsAlong[k]] = p ? add(p, s[regsAlong[k]]) : s[regsAlong[k]];
    }
  return result;
}

}  // namespace tk::lower
