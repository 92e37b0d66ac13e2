// Scans: `cumsum(x, axis, reverse)` and `cumprod(x, axis, reverse)`, the
// inclusive prefix sum and product of a tile along one axis (from the end
// when `reverse`). Each becomes a `scan` op of the tile
// IR (kind "sum", "prod") with the shape of `x` and the element a `sum` of
// `x` would have (ir::reduceResultElem): products of narrow types are taken
// wide too.
#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;

// grammar (a call): ('cumsum' | 'cumprod') '(' x [',' axis] [',' axis: A] [',' reverse: B] ')'
TV IRGen::scanCall(const ast::Expr &e) {
  TileAxisArgs args;
  if (!tileAxisArgs(e, "scan", e.text + "(x, axis: k, reverse: false)", {"reverse"}, args)) return invalid();
  const std::optional<bool> reverse = constBool(args.named["reverse"], "reverse");
  if (!reverse) return invalid();
  const TV &x = args.x;
  const int64_t axis = args.axis.value_or(0);
  ir::Value *v = coerce(x, x.type, e.loc);
  if (!v) return invalid();
  ir::Type rt = v->type().withScalar(ir::reduceResultElem(ir::ReduceKind::Sum, v->type().elem.scalar));
  const ir::ScanKind kind = e.text == "cumprod" ? ir::ScanKind::Prod : ir::ScanKind::Sum;
  std::map<std::string, ir::Attr> attrs = {{"axis", axis}, {"kind", ir::attrOf(kind)}};
  if (*reverse) attrs["reverse"] = int64_t{1};  // from the end (Triton's reverse=True)
  return value(emit(OpKind::Scan, {v}, rt, e.loc, attrs));
}

}  // namespace tk::lang
