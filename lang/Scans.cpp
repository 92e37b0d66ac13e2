// Scans: `cumsum(x, axis)` and `cumprod(x, axis)`, the inclusive prefix sum
// and product of a tile along one axis. Each becomes a `scan` op of the tile
// IR (kind "sum", "prod") with the shape of `x` and the element a `sum` of
// `x` would have (ir::reduceResultElem): products of narrow types are taken
// wide too.
#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;

// grammar (a call): ('cumsum' | 'cumprod') '(' x [',' axis] ')' | ... '(' x ',' axis: A ')'
TV IRGen::scanCall(const ast::Expr &e) {
  TileAxisArgs args;
  if (!tileAxisArgs(e, "scan", e.text + "(x, axis: k)", {}, args)) return invalid();
  const TV &x = args.x;
  const int64_t axis = args.axis.value_or(0);
  ir::Value *v = coerce(x, x.type, e.loc);
  if (!v) return invalid();
  ir::Type rt = v->type().withScalar(*ir::reduceResultElem("sum", v->type().elem.scalar));
  const std::string kind = e.text == "cumprod" ? "prod" : "sum";
  return value(emit(OpKind::Scan, {v}, rt, e.loc, {{"axis", axis}, {"kind", kind}}));
}

}  // namespace tk::lang
