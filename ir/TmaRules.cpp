// OpRules for host-descriptor loads and stores and the tensor-memory-
// accelerator ops made of them (ir/Ops.def: desc_load, desc_store, tma_*): what
// their operands' types and attributes must be beyond Ops.def's counts.
#include "ir/OpRules.h"

namespace tk::ir {

void OpRules::tmaOp(const Op &op) {
  auto operandType = [&](size_t i) -> const Type & { return op.operand(i)->type(); };
  auto isScalar = [&](size_t i, ScalarKind k) { return operandType(i) == Type::scalar(k); };
  if (op.hasAttr("stages") && op.intAttr("stages") < 1) return opError(op, "needs 'stages' >= 1");
  if (op.hasAttr("barrier") && op.intAttr("barrier") < 0) return opError(op, "needs 'barrier' >= 0");
  switch (op.kind()) {
    case OpKind::DescLoad:
    case OpKind::DescStore: {
      // A load's block is its result, a store's its last operand.
      const bool load = op.is(OpKind::DescLoad);
      const Type &bt = load ? op.result()->type() : operandType(op.numOperands() - 1);
      const size_t n = static_cast<size_t>(bt.rank());
      if (!bt.isTile() || n == 0 || op.numOperands() != 3 * n + (load ? 1 : 2))
        return opError(op, load ? "a block of rank N takes 3N + 1 operands (base, N sizes, N strides, N coordinates), not " +
                                      std::to_string(op.numOperands()) + " for " + bt.str()
                                : "stores a tile of rank N: 3N + 2 operands (base, N sizes, N strides, N coordinates, "
                                  "the value), not " + std::to_string(op.numOperands()) + " for " + bt.str());
      const Type &base = operandType(0);
      if (!base.isPtr() || base.isTile() || base.elem.pointee() != bt.elem)
        return opError(op, "the base must be a scalar pointer to " + Type::scalar(bt.elem.scalar).str() + ", not " +
                               base.str());
      for (size_t i = 0; i < n; ++i)
        if (!isScalar(1 + i, ScalarKind::I32) || !isScalar(1 + n + i, ScalarKind::I64) ||
            !isScalar(1 + 2 * n + i, ScalarKind::I32))
          return opError(op, "sizes and coordinates must be i32 scalars and strides i64 scalars");
      return;
    }
    case OpKind::TmaStore: {
      const Type &base = operandType(0), &vt = operandType(3);
      if (!base.isPtr() || base.isTile()) return opError(op, "operand 0 must be a descriptor's base pointer");
      if (!isScalar(1, ScalarKind::I32) || !isScalar(2, ScalarKind::I32))
        return opError(op, "takes two i32 coordinates after the base");
      if (!vt.isTile() || vt.rank() != 2 || base.elem.pointee() != vt.elem)
        return opError(op, "stores a 2-D tile of " + Type::scalar(base.elem.pointee().scalar).str() + ", not " + vt.str());
      const std::vector<int64_t> &box = op.intListAttr("box");
      const int64_t swizzle = op.intAttr("swizzle");
      if (swizzle != 32 && swizzle != 64 && swizzle != 128) return opError(op, "'swizzle' must be 32, 64 or 128");
      if (box.size() != 2 || box[0] != vt.shape[0] || box[0] < 8 || box[0] > 256 ||
          box[1] * (bitWidth(vt.elem.scalar) / 8) != swizzle || vt.shape[1] % box[1] != 0)
        return opError(op, "'box' must be [the block's rows (8..256), a swizzle span of columns] and tile the block");
      return;
    }
    case OpKind::TmaConsumed:
      if (!isScalar(0, ScalarKind::I32)) return opError(op, "takes an i32 slot (-1: none)");
      return;
    case OpKind::TmaInit:
    case OpKind::TmaRelease:
      if (op.hasAttr("consumers") && (op.intAttr("consumers") < 1 || op.intAttr("consumers") > 32))
        return opError(op, "needs 'consumers' in 1..32 (warps)");
      return;
    case OpKind::TmaAcquire:
    case OpKind::TmaExpect:
    case OpKind::TmaWait: {
      const ScalarKind second = op.is(OpKind::TmaExpect) ? ScalarKind::I1 : ScalarKind::I32;
      if (!isScalar(0, ScalarKind::I32) || !isScalar(1, second))
        return opError(op, std::string("takes an i32 slot and an ") + (op.is(OpKind::TmaExpect) ? "i1 predicate" : "i32 phase"));
      if (op.is(OpKind::TmaExpect) && op.intAttr("bytes") <= 0) return opError(op, "needs 'bytes' > 0");
      return;
    }
    case OpKind::TmaCopy: {
      const Type &base = operandType(0);
      if (!base.isPtr() || base.isTile()) return opError(op, "operand 0 must be a descriptor's base pointer");
      if (!isScalar(1, ScalarKind::I32) || !isScalar(2, ScalarKind::I1))
        return opError(op, "takes an i32 slot and an i1 predicate after the base");
      const std::vector<int64_t> &block = op.intListAttr("block"), &box = op.intListAttr("box");
      const size_t n = op.numOperands() - 3;
      if (block.size() != 2 || box.size() != 2 || n != 2)
        return opError(op, "copies a 2-D block: 'block' and 'box' of 2 dims and 2 i32 coordinates");
      for (size_t i = 0; i < n; ++i)
        if (!isScalar(3 + i, ScalarKind::I32)) return opError(op, "coordinates must be i32 scalars");
      for (size_t d = 0; d < 2; ++d)
        if (box[d] < 1 || box[d] > 256 || block[d] % box[d] != 0)
          return opError(op, "each box dim must be 1..256 and divide the block's");
      const int64_t swizzle = op.intAttr("swizzle");
      if (swizzle != 32 && swizzle != 64 && swizzle != 128) return opError(op, "'swizzle' must be 32, 64 or 128");
      const int64_t operand = op.intAttr("operand");
      if (operand != 1 && operand != 2) return opError(op, "'operand' must be 1 (a) or 2 (b)");
      return;
    }
    default:
      return;
  }
}

}  // namespace tk::ir
