// Layout arithmetic: default blocked layouts and per-thread register maps.
#include "lower/Layouts.h"

#include <algorithm>
#include <stdexcept>

namespace tk::lower {

ir::LayoutRef defaultBlockedLayout(const std::vector<int64_t> &shape, int numWarps, int vec,
                                   std::vector<int> order) {
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

RootView rootView(const ir::LayoutRef &layout, const std::vector<int64_t> &shape) {
  if (!layout) throw std::logic_error("tile without a layout reached lowering");
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
