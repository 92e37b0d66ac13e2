// Layout arithmetic: default blocked layouts and per-thread register maps.
#include "lower/Layouts.h"
#include "tk/error.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <variant>

namespace tk::lower {

ir::LayoutRef defaultBlockedLayout(const std::vector<int64_t> &shape, int numWarps, int vec, std::vector<int> order) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int> spt(rank, 1), tpw(rank, 1), wpc(rank, 1);
  spt[order[0]] = static_cast<int>(std::min<int64_t>(vec, shape[order[0]]));

  // Lanes: fill the fastest dim first; what does not fit replicates along the
  // slowest dim.
  int lanes = kWarpSize;
  for (int d : order) {
    int64_t room = std::max<int64_t>(1, shape[d] / spt[d]);
    int t = static_cast<int>(std::min<int64_t>(lanes, room));
    tpw[d] = t;
    lanes /= t;
  }
  tpw[order.back()] *= lanes;

  // Warps: slowest dim first, so each warp keeps whole contiguous rows.
  int warps = numWarps;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int d = *it;
    int64_t room = std::max<int64_t>(1, shape[d] / (int64_t(spt[d]) * tpw[d]));
    int w = static_cast<int>(std::min<int64_t>(warps, room));
    wpc[d] = w;
    warps /= w;
  }
  wpc[order[0]] *= warps;
  return ir::Layout::blocked(spt, tpw, wpc, std::move(order));
}

ir::LayoutRef mmaLayout(int64_t M, int64_t N, int64_t K, int numWarps, int64_t kStep) {
  if (M % 16 || N % 8 || K % kStep || M < 16 || N < 8) return nullptr;
  // Split warps over the dim with more m16 / n8 tiles left per warp, so each
  // warp's tile stays as square as the shape allows. Warps left over when
  // every warp has one m16n8 tile (a 16x16 dot over 4 warps) go along N and
  // repeat its tiles: each computes a tile another warp computes too, as
  // Triton's replicated mma layouts do, rather than the dot leaving the
  // tensor cores. (Along M they would split a fragment's two row groups.)
  int wm = 1, wn = 1;
  for (int w = numWarps; w > 1; w /= 2) {
    const int64_t tilesM = M / (16 * wm), tilesN = N / (8 * wn);
    if (tilesM >= 2 && tilesM >= tilesN)
      wm *= 2;
    else
      wn *= 2;
  }
  return ir::Layout::blocked({1, 2}, {8, 4}, {wm, wn}, {1, 0});
}


ir::LayoutRef wgmmaLayout(int numWarps) { return ir::Layout::blocked({1, 2}, {8, 4}, {numWarps, 1}, {1, 0}); }

const ir::Value *fp8Source(const ir::Value *v) {
  const ir::Op *def = v->definingOp();
  if (!def || !def->is(ir::OpKind::Cast) || v->type().elem.scalar != ir::ScalarKind::F16) return nullptr;
  const ir::Value *src = def->operand(0);
  return !src->type().isPtr() && ir::isFp8(src->type().elem.scalar) ? src : nullptr;
}

bool multipliesFp8Codes(const ir::Op &op) {
  return fp8Source(op.operand(0)) && fp8Source(op.operand(1)) && op.operand(0)->type().shape[1] % 32 == 0;
}

std::optional<MmaKind> mmaKind(const ir::Op &op) {
  if (!op.is(ir::OpKind::Dot)) return std::nullopt;
  const ir::ScalarKind in = op.operand(0)->type().elem.scalar, out = op.result()->type().elem.scalar;
  if (op.operand(1)->type().elem.scalar != in) return std::nullopt;
  if (in == ir::ScalarKind::F16 && out == ir::ScalarKind::F32) return MmaKind::F16;
  if (in == ir::ScalarKind::BF16 && out == ir::ScalarKind::F32) return MmaKind::BF16;
  if (in == ir::ScalarKind::I8 && out == ir::ScalarKind::I32) return MmaKind::S8;
  if (in == ir::ScalarKind::F32 && op.optionalEnumAttr<ir::InputPrecision>("input_precision") == ir::InputPrecision::Tf32)
    return MmaKind::TF32;
  return std::nullopt;
}

int64_t mmaK(MmaKind k) { return k == MmaKind::TF32 ? 8 : k == MmaKind::S8 ? 32 : 16; }

// The result layout of a dot that runs on tensor cores, else null. Like a
// load's, it is fixed by the op, not by its uses: they get conversions.
ir::LayoutRef tensorCoreLayout(const ir::Op &op, const ir::Function &fn) {
  const std::optional<MmaKind> kind = mmaKind(op);
  if (!kind) return nullptr;
  const ir::Type &a = op.operand(0)->type(), &b = op.operand(1)->type();
  const int numWarps = fn.numWarps();
  const bool halves = *kind == MmaKind::F16 || *kind == MmaKind::BF16;
  if (halves && fn.rowWarps() && wgmmaShape(a.shape[0], b.shape[1], a.shape[1], numWarps)) return wgmmaLayout(numWarps);
  return mmaLayout(a.shape[0], b.shape[1], a.shape[1], numWarps, mmaK(*kind));
}

bool pipelinedDot(const ir::Op &op, const ir::Function &fn) {
  const std::optional<MmaKind> kind = mmaKind(op);
  return kind && (*kind == MmaKind::F16 || *kind == MmaKind::BF16) && tensorCoreLayout(op, fn);
}

bool wgmmaShape(int64_t M, int64_t N, int64_t K, int numWarps) {
  if (numWarps != 4 && numWarps != 8 && numWarps != 16) return false;
  return M % (64 * (numWarps / 4)) == 0 && N % 16 == 0 && N >= 16 && N <= 256 && K % 16 == 0 && K >= 16;
}

SharedSlotLayout sharedSlotLayout(int64_t rows, int64_t cols, int64_t eltBytes) {
  SharedSlotLayout s;
  s.rows = rows;
  s.cols = cols;
  s.rowStride = cols + 16 / eltBytes;
  s.bytes = (rows * s.rowStride * eltBytes + 15) / 16 * 16;
  return s;
}

std::optional<SharedSlotLayout> swizzledSlotLayout(int64_t rows, int64_t cols, int64_t eltBytes) {
  if ((cols * eltBytes) % 128 != 0) return std::nullopt;
  SharedSlotLayout s;
  s.rows = rows;
  s.cols = cols;
  s.rowStride = cols;
  s.bytes = rows * cols * eltBytes;
  s.swizzled = true;
  return s;
}

int64_t slotByteOffset(const SharedSlotLayout &s, int64_t row, int64_t col, int64_t eltBytes) {
  const int64_t inRow = col * eltBytes;
  if (!s.swizzled) return row * s.rowStride * eltBytes + inRow;
  return row * s.rowStride * eltBytes + ((inRow / 16) ^ (row % 8)) * 16 + inRow % 16;
}

ir::LayoutRef permutedLayout(const ir::LayoutRef &l, const std::vector<int> &order) {
  if (!l) return nullptr;
  const int rank = static_cast<int>(order.size());
  if (l->kind == ir::Layout::Kind::Slice) {
    // The parent has one more dim, at `k`, in both the result and the
    // operand; the other dims map as `order` says, shifted past k.
    const int k = l->dim;
    std::vector<int> parentOrder(rank + 1);
    for (int j = 0; j <= rank; ++j) {
      if (j == k) {
        parentOrder[j] = k;
        continue;
      }
      const int od = order[j < k ? j : j - 1];
      parentOrder[j] = od < k ? od : od + 1;
    }
    return ir::Layout::slice(k, permutedLayout(l->parent, parentOrder));
  }
  std::vector<int> spt(rank), tpw(rank), wpc(rank), ord(rank);
  for (int i = 0; i < rank; ++i) {
    spt[order[i]] = l->sizePerThread[i];
    tpw[order[i]] = l->threadsPerWarp[i];
    wpc[order[i]] = l->warpsPerCTA[i];
    ord[i] = order[l->order[i]];
  }
  return ir::Layout::blocked(spt, tpw, wpc, ord);
}

std::vector<int> inversePermutation(const std::vector<int> &order) {
  std::vector<int> inv(order.size());
  for (size_t i = 0; i < order.size(); ++i) inv[order[i]] = static_cast<int>(i);
  return inv;
}

RootView rootView(const ir::LayoutRef &layout, const std::vector<int64_t> &shape) {
  if (!layout) throw tk::InternalError("tile without a layout reached lowering");
  if (layout->kind == ir::Layout::Kind::Blocked) {
    RootView v{layout.get(), shape, {}};
    for (size_t i = 0; i < shape.size(); ++i) v.kept.push_back(static_cast<int>(i));
    return v;
  }
  // A slice over `shape` is its parent over `shape` with a 1 at `dim`.
  std::vector<int64_t> parentShape = shape;
  parentShape.insert(parentShape.begin() + layout->dim, 1);
  RootView parent = rootView(layout->parent, parentShape);
  RootView v{parent.blocked, parent.shape, {}};
  for (size_t i = 0; i < parent.kept.size(); ++i)
    if (static_cast<int>(i) != layout->dim) v.kept.push_back(parent.kept[i]);
  return v;
}

AxisSpread axisSpread(const ir::Layout &l, int ra, int64_t n) {
  const int64_t spt = l.sizePerThread[ra], tpw = l.threadsPerWarp[ra];
  AxisSpread s;
  s.lanes = static_cast<int>(std::min<int64_t>(tpw, std::max<int64_t>(1, n / spt)));
  s.warps = static_cast<int>(std::min<int64_t>(l.warpsPerCTA[ra], std::max<int64_t>(1, n / (spt * tpw))));
  for (int d : l.order) {
    if (d == ra) break;
    s.laneStride *= l.threadsPerWarp[d];
  }
  return s;
}

RegisterMap::RegisterMap(const ir::LayoutRef &layout, const std::vector<int64_t> &shape)
    : root_(rootView(layout, shape)) {
  const ir::Layout &b = *root_.blocked;
  const int rank = static_cast<int>(root_.shape.size());
  count_.resize(rank);
  elemsPerRep_.resize(rank);
  stride_.resize(rank);
  for (int d = 0; d < rank; ++d) {
    int64_t footprint = int64_t(b.sizePerThread[d]) * b.threadsPerWarp[d] * b.warpsPerCTA[d];
    int64_t reps = std::max<int64_t>(1, root_.shape[d] / footprint);
    elemsPerRep_[d] = static_cast<int>(std::min<int64_t>(b.sizePerThread[d], root_.shape[d]));
    count_[d] = static_cast<int>(reps * elemsPerRep_[d]);
  }
  int s = 1;
  for (int d : b.order) {
    stride_[d] = s;
    s *= count_[d];
  }
  numRegs_ = s;
}

std::vector<int> RegisterMap::coords(int r) const {
  std::vector<int> k(count_.size());
  for (size_t d = 0; d < count_.size(); ++d) k[d] = (r / stride_[d]) % count_[d];
  return k;
}

int RegisterMap::index(const std::vector<int> &k) const {
  int r = 0;
  for (size_t d = 0; d < count_.size(); ++d) r += k[d] * stride_[d];
  return r;
}

int64_t RegisterMap::staticOffset(int d, int k) const {
  const ir::Layout &b = *root_.blocked;
  int64_t footprint = int64_t(b.sizePerThread[d]) * b.threadsPerWarp[d] * b.warpsPerCTA[d];
  int rep = k / elemsPerRep_[d], e = k % elemsPerRep_[d];
  return rep * footprint + e;
}

bool RegisterMap::replicated() const {
  const ir::Layout &b = *root_.blocked;
  for (size_t d = 0; d < count_.size(); ++d) {
    int64_t footprint = int64_t(b.sizePerThread[d]) * b.threadsPerWarp[d] * b.warpsPerCTA[d];
    if (footprint > root_.shape[d]) return true;
  }
  return false;
}

}  // namespace tk::lower
