// Lowering of `sort` and `gather`. Sort is a bitonic network along the axis:
// for each stage k = 2, 4, ..., n and distance j = k/2, ..., 1, element i
// meets element i ^ j and the pair is ordered (ascending in blocks of k with
// i & k == 0, descending in the others, so the last stage sorts all n). The
// partner comes from the thread's own registers (j within a repetition, or
// across repetitions), from another lane by an xor shuffle (j within the
// lanes along the axis), or through shared memory (across warps, or when the
// layout replicates the tile). Gather reads its source through shared memory.
#include "lower/FunctionLowering.h"
#include "tk/error.h"

namespace tk::lower {

// exchangeSlots with one slot per element, row-major, its owner writing.
std::vector<Regs> FunctionLowering::readShared(const ir::Type &t, const std::vector<Regs> &vals, int numRead,
                                               const std::function<std::vector<llvm::Value *>(int r)> &at,
                                               const ir::Location &loc) {
  RegisterMap rm(t.layout, t.shape);
  auto linear = [&](const std::vector<llvm::Value *> &idx) { return linearIndex(t.shape, idx); };
  std::vector<Vals> written(rm.numRegisters(), Vals(vals.size()));
  std::vector<llvm::Value *> slots, reads;
  for (int r = 0; r < rm.numRegisters(); ++r) {
    for (size_t c = 0; c < vals.size(); ++c) written[r][c] = vals[c][r];
    slots.push_back(linear(elementIndex(t, rm, r)));
  }
  for (int r = 0; r < numRead; ++r) reads.push_back(linear(at(r)));
  std::vector<Vals> got = exchangeSlots(written, slots, ownerPredicate(t, rm), t.numElements(), reads, loc);
  std::vector<Regs> out(vals.size());
  for (const Vals &v : got)
    for (size_t c = 0; c < v.size(); ++c) out[c].push_back(v[c]);
  return out;
}

Regs FunctionLowering::lowerGather(ir::Op &op) {
  const ir::Type &st = op.operand(0)->type(), &it = op.operand(1)->type(), &rt = op.result()->type();
  const int axis = static_cast<int>(op.intAttr("axis"));
  const int64_t n = st.shape[axis];
  RegisterMap out(rt.layout, rt.shape);
  const Regs &index = regs(op.operand(1));
  if (!ir::sameLayout(it.layout, rt.layout)) throw tk::InternalError("gather: the index's layout is not the result's");
  auto at = [&](int r) {
    std::vector<llvm::Value *> idx = elementIndex(rt, out, r);
    // Modulo the axis' length (a power of two, as every tile dim: the
    // verifier's rule), so no index reads outside the tile.
    llvm::Value *i = b_.CreateSExtOrTrunc(index[r], b_.getInt32Ty());
    idx[axis] = b_.CreateAnd(i, b_.getInt32(static_cast<uint32_t>(n - 1)));
    return idx;
  };
  return readShared(st, {regs(op.operand(0))}, out.numRegisters(), at, op.loc())[0];
}

namespace {

// The strict order of one component: floats with NaN after every number
// (two NaNs, and -0.0 and +0.0, are unordered), signed ints, bools.
llvm::Value *less(llvm::IRBuilder<> &b, llvm::Value *x, llvm::Value *y) {
  llvm::Type *t = x->getType();
  if (t->isFloatingPointTy())
    return b.CreateOr(b.CreateFCmpOLT(x, y), b.CreateAnd(b.CreateFCmpORD(x, x), b.CreateFCmpUNO(y, y)));
  return t->isIntegerTy(1) ? b.CreateICmpULT(x, y) : b.CreateICmpSLT(x, y);
}

}  // namespace

std::vector<Regs> FunctionLowering::lowerSort(ir::Op &op) {
  loc_ = op.loc();
  const ir::Type &st = op.operand(0)->type();
  const int axis = static_cast<int>(op.intAttr("axis"));
  const bool descending = op.hasAttr("descending") && op.intAttr("descending") != 0;
  const size_t nc = op.numOperands();
  std::vector<Regs> vals;
  for (ir::Value *v : op.operands()) vals.push_back(regs(v));
  RegisterMap rm(st.layout, st.shape);
  const RootView &root = rm.root();
  const ir::Layout &l = *root.blocked;
  const int ra = root.kept[axis];
  const int64_t n = st.shape[axis];
  if ((n & (n - 1)) != 0) throw tk::InternalError("sort: the axis' length is not a power of two");
  const int per = rm.contiguousPerThread(ra);
  const int64_t spt = l.sizePerThread[ra], tpw = l.threadsPerWarp[ra];
  const int64_t footprint = spt * tpw * l.warpsPerCTA[ra];
  const AxisSpread spread = axisSpread(l, ra, n);
  const bool whole = footprint <= n;  // no thread holds a copy of another's element
  std::vector<std::vector<llvm::Value *>> idx;
  for (int r = 0; r < rm.numRegisters(); ++r) idx.push_back(elementIndex(st, rm, r));

  // a goes before b: the keys in the sort's direction, then the rest ascending.
  auto before = [&](const Vals &a, const Vals &b) {
    llvm::Value *result = descending ? less(b_, b[0], a[0]) : less(b_, a[0], b[0]);
    llvm::Value *tied = b_.CreateNot(b_.CreateOr(less(b_, a[0], b[0]), less(b_, b[0], a[0])));
    for (size_t c = 1; c < nc; ++c) {
      result = b_.CreateOr(result, b_.CreateAnd(tied, less(b_, a[c], b[c])));
      tied = b_.CreateAnd(tied, b_.CreateNot(b_.CreateOr(less(b_, a[c], b[c]), less(b_, b[c], a[c]))));
    }
    return result;
  };
  auto regWith = [&](int r, int flip) {
    std::vector<int> k = rm.coords(r);
    k[ra] ^= flip;
    return rm.index(k);
  };

  for (int64_t k = 2; k <= n; k <<= 1)
    for (int64_t j = k / 2; j >= 1; j >>= 1) {
      std::vector<Regs> other(nc, Regs(rm.numRegisters()));
      if (whole && j < per) {
        for (size_t c = 0; c < nc; ++c)
          for (int r = 0; r < rm.numRegisters(); ++r) other[c][r] = vals[c][regWith(r, static_cast<int>(j))];
      } else if (whole && j >= footprint) {
        for (size_t c = 0; c < nc; ++c)
          for (int r = 0; r < rm.numRegisters(); ++r)
            other[c][r] = vals[c][regWith(r, static_cast<int>(j / footprint) * per)];
      } else if (whole && j < spt * tpw && spread.lanes == tpw) {
        for (size_t c = 0; c < nc; ++c)
          for (int r = 0; r < rm.numRegisters(); ++r)
            other[c][r] = shuffleXor(vals[c][r], static_cast<int>(spread.laneStride * (j / spt)));
      } else {
        other = readShared(st, vals, rm.numRegisters(), [&](int r) {
          std::vector<llvm::Value *> at = idx[r];
          at[axis] = b_.CreateXor(at[axis], b_.getInt32(static_cast<uint32_t>(j)));
          return at;
        }, op.loc());
      }
      for (int r = 0; r < rm.numRegisters(); ++r) {
        Vals mine(nc), theirs(nc);
        for (size_t c = 0; c < nc; ++c) mine[c] = vals[c][r], theirs[c] = other[c][r];
        llvm::Value *i = idx[r][axis];
        llvm::Value *lower = b_.CreateICmpEQ(b_.CreateAnd(i, b_.getInt32(static_cast<uint32_t>(j))), b_.getInt32(0));
        llvm::Value *up = k == n ? b_.getTrue()
                                 : b_.CreateICmpEQ(b_.CreateAnd(i, b_.getInt32(static_cast<uint32_t>(k))), b_.getInt32(0));
        // The first of an ascending block's pair keeps what goes first.
        llvm::Value *keepsFirst = b_.CreateICmpEQ(lower, up);
        llvm::Value *take = b_.CreateSelect(keepsFirst, before(theirs, mine), before(mine, theirs));
        for (size_t c = 0; c < nc; ++c) vals[c][r] = b_.CreateSelect(take, theirs[c], mine[c]);
      }
    }
  return vals;
}

}  // namespace tk::lower
