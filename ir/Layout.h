// Distributed layouts: how the elements of a tile are spread over the
// threads of a block. Layouts are data (printed in tile types as
// `#blocked<...>` / `#slice<...>`), assigned by lower/AssignLayouts.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace tk::ir {

struct Layout;
using LayoutRef = std::shared_ptr<const Layout>;

// blocked: per dim, each thread holds `sizePerThread` consecutive elements,
// a warp spans `threadsPerWarp` threads, the block `warpsPerCTA` warps.
// `order` lists dims fastest-varying first (order[0] is the contiguous dim).
// A tile larger than the block's footprint wraps around (each thread holds
// several repetitions); a smaller one is replicated across threads.
//
// slice: the layout of a tile that `expand_dims(axis = dim)` turns into a
// tile of the parent layout: the parent with dim `dim` removed.
struct Layout {
  enum class Kind { Blocked, Slice };
  Kind kind = Kind::Blocked;

  std::vector<int> sizePerThread, threadsPerWarp, warpsPerCTA, order;  // blocked
  int dim = 0;                                                         // slice
  LayoutRef parent;                                                    // slice

  static LayoutRef blocked(std::vector<int> spt, std::vector<int> tpw, std::vector<int> wpc,
                           std::vector<int> order);
  static LayoutRef slice(int dim, LayoutRef parent);

  int rank() const;
  int numWarps() const;  // product of warpsPerCTA (of the root parent for slices)
  bool operator==(const Layout &o) const;
  // "#blocked<[1,4],[8,4],[4,1],[1,0]>", "#slice<1, #blocked<...>>"
  std::string str() const;
};

bool sameLayout(const LayoutRef &a, const LayoutRef &b);

}  // namespace tk::ir
