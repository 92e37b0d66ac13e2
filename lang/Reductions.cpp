// Reductions: `sum max min argmax argmin` of a tile along an axis (or all of
// it), with `keep_dims`. Each becomes `reduce` ops of the tile IR.
#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;

// grammar (a call): NAME '(' x [',' axis] [',' axis: A] [',' keep_dims: B] ')'
TV IRGen::reduceCall(const ast::Expr &e) {
  const std::string &kind = e.text;
  const std::string usage = kind + "(x, axis: k, keep_dims: false)";
  const ast::Expr *xe = nullptr, *axisE = nullptr, *keepE = nullptr;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const std::string &n = e.argNames[i];
    const ast::Expr *a = e.args[i].get();
    const ast::Expr **slot = n.empty() ? (!xe ? &xe : !axisE ? &axisE : nullptr)
                             : n == "axis"      ? &axisE
                             : n == "keep_dims" ? &keepE
                                                : nullptr;
    if (!slot) {
      error(a->loc, n.empty() ? "too many arguments to " + quoted(kind) + ": " + usage
                              : quoted(kind) + " has no argument named " + quoted(n) + ": " + usage);
      return invalid();
    }
    if (*slot) {
      error(a->loc, "argument " + quoted(n.empty() ? "axis" : n) + " of " + quoted(kind) + " given twice");
      return invalid();
    }
    *slot = a;
  }
  if (!xe) {
    error(e.loc, quoted(kind) + " needs a tile to reduce: " + usage);
    return invalid();
  }
  TV x = genValue(*xe);
  if (!x.ok()) return invalid();
  if (!x.type.isTile() || x.type.isPtr()) {
    error(xe->loc, quoted(kind) + " reduces a tile of numbers, not " + typeName(x));
    return invalid();
  }
  const int rank = x.type.rank();
  bool keep = false;
  if (keepE) {
    TV k = genValue(*keepE);
    if (!k.ok()) return invalid();
    if (!k.cst || !k.type.isBool() || k.type.isTile()) {
      error(keepE->loc, "keep_dims must be a compile-time bool");
      return invalid();
    }
    keep = k.cst->i != 0;
  }
  std::vector<int> axes;
  if (axisE) {
    auto a = constInt(*axisE, genValue(*axisE), "the axis of " + quoted(kind));
    if (!a) return invalid();
    if (*a < -rank || *a >= rank) {
      error(axisE->loc, "axis " + std::to_string(*a) + " is out of range for a tile of rank " + std::to_string(rank) +
                            " (" + typeName(x) + ")");
      return invalid();
    }
    axes.push_back(static_cast<int>(*a < 0 ? *a + rank : *a));
  } else {
    if ((kind == "argmax" || kind == "argmin") && rank > 1) {
      error(e.loc, quoted(kind) + " of a " + std::to_string(rank) + "-D tile needs an axis");
      return invalid();
    }
    for (int d = rank - 1; d >= 0; --d) axes.push_back(d);  // innermost first keeps axis numbers valid
  }

  ir::Value *v = coerce(x, x.type, e.loc);
  if (!v) return invalid();
  for (int axis : axes) {
    ir::Type t = v->type();
    std::vector<int64_t> shape = t.shape;
    shape.erase(shape.begin() + axis);
    ir::Type rt = ir::Type::tile(ir::ElemType{*ir::reduceResultElem(kind, t.elem.scalar), false}, shape);
    v = emit(OpKind::Reduce, {v}, rt, e.loc, {{"axis", int64_t(axis)}, {"kind", kind}});
  }
  if (keep) {
    std::vector<int> reinsert(axes.rbegin(), axes.rend());  // ascending: each insertion lands at its final place
    for (int axis : reinsert) {
      ir::Type t = v->type();
      std::vector<int64_t> shape = t.shape;
      shape.insert(shape.begin() + axis, 1);
      if (t.isScalar()) {
        v = emit(OpKind::Splat, {v}, ir::Type::tile(t.elem, {1}), e.loc);
        continue;
      }
      v = emit(OpKind::ExpandDims, {v}, ir::Type::tile(t.elem, shape), e.loc, {{"axis", int64_t(axis)}});
    }
  }
  return value(v);
}

}  // namespace tk::lang
