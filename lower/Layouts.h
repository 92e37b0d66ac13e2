// Layout arithmetic shared by layout assignment and lowering: the default
// blocked layout for a tile, and which elements each thread holds.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/IR.h"
#include "tk/gpu.h"

namespace tk::lower {


// A blocked layout for `shape` over `numWarps` warps: `vec` consecutive
// elements per thread along `order[0]` (the contiguous dim), lanes and warps
// spread fastest-dim first, so a warp covers a contiguous run of memory.
ir::LayoutRef defaultBlockedLayout(const std::vector<int64_t> &shape, int numWarps, int vec, std::vector<int> order);

// The layout of a dot's f32 result on tensor cores (mma.sync m16n8k16) as a
// blocked layout: per warp 8 rows of 4 lanes, each lane 2 consecutive
// columns -- exactly an m16n8 accumulator fragment, whose row groups g and
// g + 8 are two repetitions along the rows; warps tile [wm, wn], rows first.
// Null when [M, N] x K does not split into m16n8k16 tiles; warps past one
// m16n8 tile each repeat tiles along N (replicated, as Triton's).
// `kStep` is the instruction's k (mmaK): K must be a multiple of it.
ir::LayoutRef mmaLayout(int64_t M, int64_t N, int64_t K, int numWarps, int64_t kStep = 16);

// The mma.sync a dot runs on, by its operands: m16n8k16 for f16 and bf16
// into f32, m16n8k8 tf32 for f32 with input_precision "tf32" (operands
// rounded to tf32), m16n8k32 s8 for i8 into i32. Each reads 32 bytes of k
// per row of A and column of B, and all four leave the same C/D fragment,
// so they share mmaLayout. Null for a dot of any other kind (FMA).
enum class MmaKind { F16, BF16, TF32, S8 };
std::optional<MmaKind> mmaKind(const ir::Op &op);
int64_t mmaK(MmaKind k);  // 16, 16, 8, 32

// The fp8 tile an f16 dot operand was cast from (emulate-fp8 widens an fp8
// dot so), else null.
const ir::Value *fp8Source(const ir::Value *v);
// Whether tensor cores multiply dot `op`'s fp8 codes rather than their f16
// casts, where the target has an fp8 form: both operands are such casts and
// K is whole k32 steps.
bool multipliesFp8Codes(const ir::Op &op);

// Whether a dot of f16/bf16 [M, K] x [K, N] into f32 can run on wgmma
// (sm_90a, lower/LowerDotWgmma.cpp): 4 or 8 warps (one or two warpgroups,
// which split M), M a multiple of 64 per warpgroup, N a multiple of 16 up to
// 256 (so B's rows take a 32-byte swizzle at least), K a multiple of 16.
bool wgmmaShape(int64_t M, int64_t N, int64_t K, int numWarps);

// mmaLayout's register layout with warps [numWarps, 1]: on sm_90a exactly
// wgmma's D fragments once A's rows are permuted as they are staged
// (LowerDotWgmma.cpp).
ir::LayoutRef wgmmaLayout(int numWarps);

// The result layout of a dot that runs on tensor cores -- f16 x f16 or bf16
// x bf16 into f32, a shape of whole m16n8k16 tiles -- else null: in a
// function with row_warps (ir::Function::rowWarps, which assign-layouts
// decides: an arch runs wgmma, or a dot's rows are reduced, so a warp holding
// whole rows needs no exchange), wgmmaLayout for a shape wgmma can take, else
// mmaLayout. mma.sync runs either (with warps [numWarps, 1] each warp loads
// more B fragments: 240 registers against 223 for the 128 x 128 x 32 matmul
// on sm_80, docs/perf.md), so one tile IR serves every arch of a bundle; a
// dot reaches wgmma only in wgmmaLayout.
ir::LayoutRef tensorCoreLayout(const ir::Op &op, const ir::Function &fn);
// Whether the pipeline pass may feed `op`'s operands from a cp.async ring:
// an f16/bf16 tensor-core dot (its B is read with ldmatrix.trans from a
// row-major [K, N] slot; tf32 and s8 have no transposing ldmatrix, so their
// dots stage B column-major from registers, LowerDotMma.cpp).
bool pipelinedDot(const ir::Op &op, const ir::Function &fn);

// The operand layout of a `trans` with permutation `order` (result dim i is
// operand dim order[i]) whose result has layout `l`: a thread holds the
// operand's element in the same register as the result's (registers count
// along the layout's order, which is permuted too), so trans moves no data.
// A slice permutes its parent with the sliced dim kept in place. Null when
// `l` is null.
ir::LayoutRef permutedLayout(const ir::LayoutRef &l, const std::vector<int> &order);
// The inverse permutation: inverse(order)[order[i]] = i.
std::vector<int> inversePermutation(const std::vector<int> &order);

// Where a 2-D tile lives in shared memory for tensor cores: a pipelined
// operand's ring slot, and a dot operand staged from registers. Row-major,
// each row padded by 16 bytes, so that the 8 rows of 16 bytes an ldmatrix
// phase reads (consecutive rows, same columns) start 4 banks apart and fall
// on 32 distinct banks, as do the 16-byte chunks a warp's cp.async writes
// (docs/internals.md, "Pipelined dot operands"); every row stays 16-byte
// aligned as ldmatrix and cp.async need. The one place that layout is chosen.
//
// A ring slot that only mma.sync reads in place (LowerPipeline.cpp,
// placeRings) and whose rows are whole 128-byte blocks is swizzled instead,
// as Triton's sm_80 slots are: no padding, and 16-byte chunk c of row r
// lies at chunk c ^ (r % 8) of its 128-byte block, so the same 8 rows of a
// chunk fall on 32 distinct banks (attention at 128 x 64, D = 64: 11%
// less shared memory; docs/perf.md).
struct SharedSlotLayout {
  int64_t rows = 0, cols = 0;
  int64_t rowStride = 0;  // elements from one row to the next
  int64_t bytes = 0;      // of the whole tile, a multiple of 16
  bool swizzled = false;  // chunks XOR-swizzled by row, unpadded
};
SharedSlotLayout sharedSlotLayout(int64_t rows, int64_t cols, int64_t eltBytes);
// The swizzled layout of a [rows, cols] slot, where rows of cols elements
// are whole 128-byte blocks; std::nullopt where they are not.
std::optional<SharedSlotLayout> swizzledSlotLayout(int64_t rows, int64_t cols, int64_t eltBytes);
// The byte offset of element (row, col) in a slot of layout `s`.
int64_t slotByteOffset(const SharedSlotLayout &s, int64_t row, int64_t col, int64_t eltBytes);

// A layout seen as its root blocked layout over an expanded shape: slices
// re-insert their removed dims with size 1. `kept[i]` is the root dim that
// dim i of the original shape maps to.
struct RootView {
  const ir::Layout *blocked;
  std::vector<int64_t> shape;  // root rank
  std::vector<int> kept;       // original rank
};
RootView rootView(const ir::LayoutRef &layout, const std::vector<int64_t> &shape);

// How a reduction or a scan along root dim `ra` (of `n` elements) of blocked
// layout `l` spreads over the block, declared once for LowerReduce.cpp and
// LowerScan.cpp: the lanes of a warp and the warps that hold distinct
// elements along the dim (any others hold copies), and the lane distance
// between neighbours along it. Lanes combine by shuffles `laneStride * m`
// apart (m = 1, 2, ... < lanes), warps through one shared slot each.
struct AxisSpread {
  int lanes = 1, warps = 1, laneStride = 1;
};
AxisSpread axisSpread(const ir::Layout &l, int ra, int64_t n);

// The registers one thread holds for a tile of `shape` in `layout`. Register
// r has a local coordinate k[d] per root dim; its element index along root
// dim d is
//   idx[d] = (threadPart[d] * sizePerThread[d] + offset(d, k[d])) mod shape[d]
// where threadPart[d] = warpCoord[d] * threadsPerWarp[d] + laneCoord[d].
// Registers are numbered with order[0] fastest, so the `perThread(order[0])`
// registers of one repetition are consecutive in memory for contiguous tiles.
class RegisterMap {
 public:
  RegisterMap(const ir::LayoutRef &layout, const std::vector<int64_t> &shape);

  int numRegisters() const { return numRegs_; }
  int rootRank() const { return static_cast<int>(count_.size()); }
  // Registers along root dim d, and the elements of one repetition.
  int count(int d) const { return count_[d]; }
  int contiguousPerThread(int d) const { return elemsPerRep_[d]; }
  // The local coordinates of register r, and back.
  std::vector<int> coords(int r) const;
  int index(const std::vector<int> &k) const;
  // The static part of the element index: repetition * footprint + element.
  int64_t staticOffset(int d, int k) const;
  // True when several threads hold copies of the same element (the tile is
  // smaller than the block's footprint along some dim).
  bool replicated() const;

  const RootView &root() const { return root_; }

 private:
  RootView root_;
  std::vector<int> count_, elemsPerRep_;
  std::vector<int> stride_;  // mixed-radix strides, order[0] fastest
  int numRegs_ = 1;
};

}  // namespace tk::lower
