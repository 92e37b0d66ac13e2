// Lowering of scans: `scan` (cumsum, cumprod) and `scan_combine`
// (associative_scan) share scanAlong. Each thread scans the elements it
// holds along the axis, butterfly shuffles give each lane the combination of
// the lanes before it, shared memory carries the totals of earlier warps and
// repetitions, and each thread combines its carry back. The result keeps the
// operand's layout. The combine need not commute: the left operand is always
// what comes first in the scan's order, and nothing needs an identity (a
// "nothing before" is a flag, not a zero).
#include <algorithm>
#include <map>
#include <stdexcept>

#include "lower/FunctionLowering.h"
#include "tk/error.h"

namespace tk::lower {

Regs FunctionLowering::lowerScan(ir::Op &op) {
  const ir::Type &st = op.operand(0)->type();
  const ir::Type &rt = op.result()->type();
  const bool prod = op.enumAttr<ir::ScanKind>("kind") == ir::ScanKind::Prod;
  const ir::ElemType acc = rt.elem;  // sums of narrow types accumulate wide (ir::reduceResultElem)
  const bool isFloat = ir::isFloat(acc.scalar);
  Combine add = [&](const Vals &a, const Vals &c) -> Vals {
    if (prod) return {isFloat ? b_.CreateFMul(a[0], c[0]) : b_.CreateMul(a[0], c[0])};
    return {isFloat ? b_.CreateFAdd(a[0], c[0]) : b_.CreateAdd(a[0], c[0])};
  };
  Regs src;
  for (llvm::Value *v : regs(op.operand(0))) src.push_back(castScalar(v, st.elem, acc));
  const bool reverse = op.hasAttr("reverse") && op.intAttr("reverse") != 0;
  return scanAlong(st, {src}, static_cast<int>(op.intAttr("axis")), reverse, add)[0];
}

namespace {

// A partial scan that may be empty ("nothing before"): `valid` is null when
// it is empty for every thread, else an i1. `v` always holds defined values
// (a combine may run on them speculatively; its result is then not taken).
struct Prefix {
  FunctionLowering::Vals v;
  llvm::Value *valid = nullptr;
};

}  // namespace

// Along the scan axis (root dim `ra`) element index i of register k of a
// thread is (threadPart * spt + rep * footprint + e) mod n, with
// k = rep * per + e. So the axis is ordered rep-major, then by thread, then e
// (reverse: every one of these backwards):
//   1. within a thread: a sequential scan over e, per repetition;
//   2. within a warp: a butterfly over the `lanes` lanes that hold distinct
//      elements along the axis gives each lane the combination of the lanes
//      before it and of the whole warp (xor shuffles only, so both
//      directions are the same code);
//   3. across warps and repetitions: the warp totals go to shared memory, one
//      slot per (row, rep, warp) in scan order; each thread combines the
//      slots before its own.
// Replicated threads (the tile smaller than the block's footprint) compute
// the same values as their originals; only originals write shared memory.
std::vector<Regs> FunctionLowering::scanAlong(const ir::Type &st, const std::vector<Regs> &src, int axis, bool reverse,
                                              const Combine &combine) {
  const ir::Location loc = loc_;
  const size_t nc = src.size();
  RegisterMap rm(st.layout, st.shape);
  const RootView &root = rm.root();
  const ir::Layout &l = *root.blocked;
  const int ra = root.kept[axis];
  const int tpw = l.threadsPerWarp[ra];
  const int per = rm.contiguousPerThread(ra);  // elements of one repetition
  const int count = rm.count(ra);
  const int reps = count / per;
  const AxisSpread spread = axisSpread(l, ra, root.shape[ra]);
  const int lanes = spread.lanes, warps = spread.warps, laneStride = spread.laneStride;
  auto select = [&](llvm::Value *c, const Vals &a, const Vals &b) {
    Vals out(nc);
    for (size_t i = 0; i < nc; ++i) out[i] = b_.CreateSelect(c, a[i], b[i]);
    return out;
  };
  // before ⊕ p, where `before` may be empty.
  auto after = [&](const Prefix &before, const Vals &p) {
    if (!before.valid) return p;
    return select(before.valid, combine(before.v, p), p);
  };
  auto valueOf = [&](int r) {
    Vals v(nc);
    for (size_t i = 0; i < nc; ++i) v[i] = src[i][r];
    return v;
  };

  // Registers by row (the register with k[ra] = 0) and position along the axis.
  std::map<int, std::vector<int>> rows;  // row register -> registers along the axis
  for (int r = 0; r < rm.numRegisters(); ++r) {
    std::vector<int> k = rm.coords(r);
    const int along = k[ra];
    k[ra] = 0;
    auto &row = rows[rm.index(k)];
    row.resize(count);
    row[along] = r;
  }
  // The j-th register of a repetition in scan order.
  auto inOrder = [&](int rep, int j) { return rep * per + (reverse ? per - 1 - j : j); };

  // 1. Within the thread: s[r] holds the inclusive scan of its repetition.
  std::vector<Vals> s(rm.numRegisters());
  std::map<int, std::vector<Vals>> total;  // row -> each repetition's total in this thread
  for (auto &[row0, along] : rows)
    for (int rep = 0; rep < reps; ++rep) {
      for (int j = 0; j < per; ++j) {
        const int r = along[inOrder(rep, j)];
        s[r] = j == 0 ? valueOf(r) : combine(s[along[inOrder(rep, j - 1)]], valueOf(r));
      }
      total[row0].push_back(s[along[inOrder(rep, per - 1)]]);
    }

  llvm::Value *part = threadPart(l, ra);
  llvm::Value *laneC = b_.CreateURem(part, b_.getInt32(tpw));
  llvm::Value *warpC = b_.CreateUDiv(part, b_.getInt32(tpw));
  // Positions in scan order among the lanes and warps holding distinct elements.
  llvm::Value *laneE = b_.CreateAnd(laneC, b_.getInt32(lanes - 1));
  llvm::Value *warpE = b_.CreateAnd(warpC, b_.getInt32(warps - 1));
  llvm::Value *lanePos = reverse ? b_.CreateSub(b_.getInt32(lanes - 1), laneE) : laneE;
  llvm::Value *warpPos = reverse ? b_.CreateSub(b_.getInt32(warps - 1), warpE) : warpE;

  // 2. Across lanes: after the step of bit m, `before` combines the lanes
  // of this lane's group of 2m that come before it, and `total` the group.
  std::map<int, std::vector<Prefix>> prefix;  // row -> per repetition
  for (auto &[row0, totals] : total) prefix[row0].assign(reps, Prefix{});
  for (int m = 1; m < lanes; m <<= 1) {
    llvm::Value *late = b_.CreateICmpNE(b_.CreateAnd(lanePos, b_.getInt32(m)), b_.getInt32(0));
    for (auto &[row0, totals] : total)
      for (int rep = 0; rep < reps; ++rep) {
        Vals &t = totals[rep];
        Vals other(nc);
        for (size_t i = 0; i < nc; ++i) other[i] = shuffleXor(t[i], m * laneStride);
        Prefix &p = prefix[row0][rep];
        // A late lane's group is the partner's, then its own.
        Vals before = p.valid ? select(p.valid, combine(other, p.v), other) : other;
        p.v = p.valid ? select(late, before, p.v) : select(late, before, t);
        p.valid = p.valid ? b_.CreateOr(p.valid, late) : late;
        t = combine(select(late, other, t), select(late, t, other));
      }
  }

  // 3. Across warps and repetitions, through shared memory.
  if (warps > 1 || reps > 1) {
    const int groups = reps * warps;
    // One writer per slot: lane 0 along the axis in the first copy of the
    // warp (every lane holds the warp's total), the owner along the other dims.
    llvm::Value *writer = ownsAlong(b_.CreateAnd(b_.CreateICmpEQ(laneC, b_.getInt32(0)),
                                                 b_.CreateICmpULT(warpC, b_.getInt32(warps))),
                                    root, ra);
    // Slot (row, g) = rowLinear * groups + g, g = repPos * warps + warpPos in
    // scan order; the row is the element's index over the dims but the axis.
    std::vector<Vals> vals;
    std::vector<llvm::Value *> stores, reads;
    for (auto &[row0, totals] : total) {
      llvm::Value *lin = linearIndex(st.shape, elementIndex(st, rm, row0), axis);
      llvm::Value *first = b_.CreateMul(lin, b_.getInt32(groups));
      for (int g = 0; g < groups; ++g) reads.push_back(b_.CreateAdd(first, b_.getInt32(g)));
      for (int rep = 0; rep < reps; ++rep) {
        const int repPos = reverse ? reps - 1 - rep : rep;
        vals.push_back(totals[rep]);
        stores.push_back(b_.CreateAdd(first, b_.CreateAdd(b_.getInt32(repPos * warps), warpPos)));
      }
    }
    const int64_t numRows = st.numElements() / st.shape[axis];
    std::vector<Vals> slot = exchangeSlots(vals, stores, writer, numRows * groups, reads, loc);
    size_t row = 0;
    for (auto &[row0, prefixes] : prefix) {
      // run[g]: the slots 0..g combined; the last group's total is no one's carry
      // (groups >= 2 here).
      std::vector<Vals> run(groups - 1);
      for (int g = 0; g < groups - 1; ++g) run[g] = g ? combine(run[g - 1], slot[row * groups + g]) : slot[row * groups];
      for (int rep = 0; rep < reps; ++rep) {
        const int repPos = reverse ? reps - 1 - rep : rep;
        // The slots before (repPos, warpPos): run[repPos * warps + warpPos - 1].
        Prefix carry;
        carry.v = run[std::max(repPos * warps - 1, 0)];
        for (int w = 1; w < warps; ++w)
          carry.v = select(b_.CreateICmpEQ(warpPos, b_.getInt32(w)), run[repPos * warps + w - 1], carry.v);
        if (repPos > 0) carry.valid = b_.getTrue();
        else if (warps > 1) carry.valid = b_.CreateICmpNE(warpPos, b_.getInt32(0));
        Prefix &p = prefixes[rep];
        if (!carry.valid) continue;
        if (!p.valid) {
          p = carry;
          continue;
        }
        Vals both = select(p.valid, combine(carry.v, p.v), carry.v);
        p.v = select(carry.valid, both, p.v);
        p.valid = b_.CreateOr(carry.valid, p.valid);
      }
      ++row;
    }
  }

  // 4. Combine the carries back.
  std::vector<Regs> result(nc, Regs(rm.numRegisters()));
  for (auto &[row0, along] : rows)
    for (int k = 0; k < count; ++k) {
      const int r = along[k];
      Vals v = after(prefix[row0][k / per], s[r]);
      for (size_t i = 0; i < nc; ++i) result[i][r] = v[i];
    }
  return result;
}

}  // namespace tk::lower
