// Scans: `cumsum(x, axis)`, the inclusive prefix sum of a tile along one
// axis. It becomes a `scan` op of the tile IR with the shape of `x` and the
// element a `sum` of `x` would have (ir::reduceResultElem).
#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;

// grammar (a call): 'cumsum' '(' x [',' axis] ')' | 'cumsum' '(' x ',' axis: A ')'
TV IRGen::scanCall(const ast::Expr &e) {
  const std::string &name = e.text;
  const std::string usage = name + "(x, axis: k)";
  const ast::Expr *xe = nullptr, *axisE = nullptr;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const std::string &n = e.argNames[i];
    const ast::Expr *a = e.args[i].get();
    const ast::Expr **slot = n.empty() ? (!xe ? &xe : !axisE ? &axisE : nullptr) : n == "axis" ? &axisE : nullptr;
    if (!slot) {
      error(a->loc, n.empty() ? "too many arguments to " + quoted(name) + ": " + usage
                              : quoted(name) + " has no argument named " + quoted(n) + ": " + usage);
      return invalid();
    }
    if (*slot) {
      error(a->loc, "argument " + quoted(n.empty() ? "axis" : n) + " of " + quoted(name) + " given twice");
      return invalid();
    }
    *slot = a;
  }
  if (!xe) {
    error(e.loc, quoted(name) + " needs a tile to scan: " + usage);
    return invalid();
  }
  TV x = genValue(*xe);
  if (!x.ok()) return invalid();
  if (!x.type.isTile() || x.type.isPtr()) {
    error(xe->loc, quoted(name) + " scans a tile of numbers, not " + typeName(x));
    return invalid();
  }
  const int rank = x.type.rank();
  int64_t axis = 0;
  if (axisE) {
    auto a = constInt(*axisE, genValue(*axisE), "the axis of " + quoted(name));
    if (!a) return invalid();
    if (*a < -rank || *a >= rank) {
      error(axisE->loc, "axis " + std::to_string(*a) + " is out of range for a tile of rank " + std::to_string(rank) +
                            " (" + typeName(x) + ")");
      return invalid();
    }
    axis = *a < 0 ? *a + rank : *a;
  }
  ir::Value *v = coerce(x, x.type, e.loc);
  if (!v) return invalid();
  ir::Type rt = v->type().withScalar(*ir::reduceResultElem("sum", v->type().elem.scalar));
  return value(emit(OpKind::Scan, {v}, rt, e.loc, {{"axis", axis}, {"kind", std::string("sum")}}));
}

}  // namespace tk::lang
