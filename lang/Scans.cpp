// Scans: `cumsum(x, axis)`, the inclusive prefix sum of a tile along one
// axis. It becomes a `scan` op of the tile IR with the shape of `x` and the
// element a `sum` of `x` would have (ir::reduceResultElem).
#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;

// grammar (a call): 'cumsum' '(' x [',' axis] ')' | 'cumsum' '(' x ',' axis: A ')'
TV IRGen::scanCall(const ast::Expr &e) {
  TileAxisArgs args;
  if (!tileAxisArgs(e, "scan", e.text + "(x, axis: k)", {}, args)) return invalid();
  const TV &x = args.x;
  const int64_t axis = args.axis.value_or(0);
  ir::Value *v = coerce(x, x.type, e.loc);
  if (!v) return invalid();
  ir::Type rt = v->type().withScalar(*ir::reduceResultElem("sum", v->type().elem.scalar));
  return value(emit(OpKind::Scan, {v}, rt, e.loc, {{"axis", axis}, {"kind", std::string("sum")}}));
}

}  // namespace tk::lang
