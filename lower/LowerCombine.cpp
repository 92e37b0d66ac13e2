// Lowering of reduce_combine and scan_combine: the shared reduction and scan
// structure (LowerReduce.cpp, LowerScan.cpp) with the op's region as the
// combining step, its scalar ops lowered afresh at every step with the
// region's arguments bound to the step's operands. Reductions keep index
// order (a combine need not commute).
#include "lower/FunctionLowering.h"
#include "tk/error.h"

namespace tk::lower {

std::vector<Regs> FunctionLowering::lowerCombineOp(ir::Op &op) {
  loc_ = op.loc();
  const ir::Type &st = op.operand(0)->type();
  const int axis = static_cast<int>(op.intAttr("axis"));
  std::vector<Regs> src;
  for (ir::Value *v : op.operands()) src.push_back(regs(v));
  Combine combine = [&](const Vals &left, const Vals &right) { return combineRegion(op, left, right); };
  if (op.is(ir::OpKind::ScanCombine)) {
    const bool reverse = op.hasAttr("reverse") && op.intAttr("reverse") != 0;
    return scanAlong(st, src, axis, reverse, combine);
  }
  // All results share one shape and layout: the first's.
  return reduceAlong(st, src, axis, op.result(0)->type(), combine, /*ordered=*/true);
}

FunctionLowering::Vals FunctionLowering::combineRegion(ir::Op &op, const Vals &left, const Vals &right) {
  ir::Block &body = *op.regions()[0];
  const size_t n = left.size();
  if (right.size() != n || body.arguments().size() != 2 * n)
    throw tk::InternalError("lowering: a combine region's arguments do not match its operands");
  for (size_t i = 0; i < n; ++i) {
    values_[body.argument(i)] = {left[i]};
    values_[body.argument(n + i)] = {right[i]};
  }
  const ir::Location loc = loc_;
  std::vector<Regs> yielded = lowerRegion(body);
  loc_ = loc;
  Vals out;
  for (const Regs &r : yielded) out.push_back(r.at(0));
  return out;
}

}  // namespace tk::lower
