// Alignment and contiguity analysis of integer and pointer tiles, after
// Triton's AxisInfo: it tells lowering which accesses can be vectorised.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ir/IR.h"

namespace tk::lower {

// Per dim of a value (one entry for scalars):
//  contiguity[d]   the dim splits into runs of this many elements that step by 1
//                  (by one element for pointers), each run starting at a
//                  multiple of the run length;
//  divisibility[d] the first element of each run is a multiple of this
//                  (bytes for pointers, units for integers);
//  constancy[d]    the dim splits into runs of this many equal elements.
// All three are powers of two.
struct AxisInfo {
  std::vector<int64_t> contiguity, divisibility, constancy;

  // Divisibility of every element along d, not just of run starts.
  int64_t elementDivisibility(size_t d) const { return contiguity[d] > 1 ? 1 : divisibility[d]; }
};

// Largest power of two dividing `v` (a large cap for 0).
int64_t largestPowerOfTwoDivisor(int64_t v);

class AxisInfoAnalysis {
 public:
  explicit AxisInfoAnalysis(ir::Function &fn);
  const AxisInfo &get(const ir::Value *v) const;

  // The widest vector (in elements) an access through pointer tile `ptrs`
  // may use along `dim`: bounded by 16 bytes, contiguity and alignment.
  int vectorWidth(const ir::Value *ptrs, int dim) const;
  // The dim with the longest contiguous runs (the last dim on ties).
  int contiguousDim(const ir::Value *ptrs) const;

 private:
  void visitBlock(const ir::Block &block);
  void visitFor(const ir::Op &op);
  void visitIf(const ir::Op &op);
  void visitWhile(const ir::Op &op);
  AxisInfo visit(const ir::Op &op) const;
  std::unordered_map<const ir::Value *, AxisInfo> info_;
};

}  // namespace tk::lower
