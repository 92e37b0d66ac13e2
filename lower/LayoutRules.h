// The layout rules AssignLayouts applies, one function each (LayoutRules.cpp).
#pragma once

#include <vector>

#include "ir/IR.h"
#include "ir/Layout.h"

namespace tk::lower {

// The layout a tile gets when nothing asks for one: row-major, as many
// elements per thread as 16 bytes hold but no more than it takes to give
// every thread an element.
ir::LayoutRef defaultLayout(const ir::Type &t, int numWarps);
// The layout operand `i` of `op` must have for the op to produce `result`.
ir::LayoutRef operandLayout(const ir::Op &op, size_t i, const ir::LayoutRef &result);
// `l` with each thread's elements along `axis` of a tile of `shape` in one
// contiguous run (for scans and sorts); `l` itself when they already are.
ir::LayoutRef alongOneRun(const ir::LayoutRef &l, const std::vector<int64_t> &shape, int axis);
// Sets `fn`'s row_warps, the one place it is decided: dots take warps
// [num_warps, 1] when an arch runs wgmma (the kernel's `wgmma`), or when a
// dot's result rows are best held whole by each warp: some reduction along
// dim 1 of a 2-D tile reads a dot's result (softmax over a row of scores),
// or a dot's a is computed from another dot's result (attention's P, the
// backward's P^T and dS^T), which then converts to the a fragment inside
// each warp instead of through shared memory (sm_80: attention 128 registers
// against 155, backward 132 against 168).
void decideRowWarps(ir::Function &fn);

// The tensor-core layout of the dot whose result `v` is, directly, through
// elementwise ops or as what a `for` carries out of its body; else null.
ir::LayoutRef accumulatorLayout(const ir::Value *v, const ir::Function &fn, int depth = 0);

// The layout a store of a dot's result (`store`'s value, accumulatorLayout)
// stores from when that is the accumulator's own registers, with `vec` set
// to the elements per store; else null (the value is exchanged through
// shared memory to the store's coalesced layout). `vectorWidth` and
// `contiguity` are the store's pointers' AxisInfo figures along `dim`, the
// dim a coalesced layout would run along.
ir::LayoutRef accumulatorStoreLayout(const ir::Op &store, int dim, int64_t vectorWidth, int64_t contiguity,
                                     const ir::Function &fn, int &vec);

// Throws tk::InternalError when a tile of `fn` has a dim that is not a power
// of two: layouts hold powers of two, and pad-tiles runs before them.
void requirePaddedTiles(ir::Function &fn);

}  // namespace tk::lower
