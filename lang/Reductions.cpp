// Reductions: `sum max min argmax argmin xor_sum` of a tile along an axis
// (or all of it), with `keep_dims`. Each becomes `reduce` ops of the tile IR.
#include <algorithm>

#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;

// The arguments shared by reductions and scans: a tile of numbers `x`, then
// an optional compile-time axis (positional or `axis:`, negative counting
// from the end), then the named arguments in `extra`. `verb` words the
// errors ("reduce", "scan").
bool IRGen::tileAxisArgs(const ast::Expr &e, const std::string &verb, const std::string &usage,
                         const std::vector<std::string> &extra, TileAxisArgs &out) {
  const std::string &name = e.text;
  const ast::Expr *xe = nullptr, *axisE = nullptr;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const std::string &n = e.argNames[i];
    const ast::Expr *a = e.args[i].get();
    const ast::Expr **slot = n.empty() ? (!xe ? &xe : !axisE ? &axisE : nullptr) : n == "axis" ? &axisE : nullptr;
    for (const std::string &x : extra)
      if (n == x) slot = &out.named[x];
    if (!slot) {
      error(a->loc, n.empty() ? "too many arguments to " + quoted(name) + ": " + usage
                              : quoted(name) + " has no argument named " + quoted(n) + ": " + usage);
      return false;
    }
    if (*slot) {
      error(a->loc, "argument " + quoted(n.empty() ? "axis" : n) + " of " + quoted(name) + " given twice");
      return false;
    }
    *slot = a;
  }
  if (!xe) {
    error(e.loc, quoted(name) + " needs a tile to " + verb + ": " + usage);
    return false;
  }
  out.x = genValue(*xe);
  if (!out.x.ok()) return false;
  if (!out.x.type.isTile() || out.x.type.isPtr()) {
    error(xe->loc, quoted(name) + " " + verb + "s a tile of numbers, not " + typeName(out.x));
    return false;
  }
  if (!axisE) return true;
  const int rank = out.x.type.rank();
  auto a = constInt(*axisE, genValue(*axisE), "the axis of " + quoted(name));
  if (!a) return false;
  if (*a < -rank || *a >= rank) {
    error(axisE->loc, "axis " + std::to_string(*a) + " is out of range for a tile of rank " + std::to_string(rank) +
                          " (" + typeName(out.x) + ")");
    return false;
  }
  out.axis = static_cast<int>(*a < 0 ? *a + rank : *a);
  return true;
}

// grammar (a call): NAME '(' x [',' axis] [',' axis: A] [',' keep_dims: B] ')'
TV IRGen::reduceCall(const ast::Expr &e) {
  const std::string &name = e.text;
  const ir::ReduceKind kind = *ir::parseEnum<ir::ReduceKind>(name);  // the builtin is the kind (Builtins.cpp)
  TileAxisArgs args;
  if (!tileAxisArgs(e, "reduce", name + "(x, axis: k, keep_dims: false)", {"keep_dims"}, args)) return invalid();
  const TV &x = args.x;
  const int rank = x.type.rank();
  // Triton's xor_sum: integers only, in their own type.
  if (kind == ir::ReduceKind::XorSum && (!x.type.isInt() || x.type.isBool())) {
    error(e.loc, "'xor_sum' needs a tile of integers, not " + typeName(x));
    return invalid();
  }
  const std::optional<bool> keep = constBool(args.named["keep_dims"], "keep_dims");
  if (!keep) return invalid();
  std::vector<int> axes;
  if (args.axis) {
    axes.push_back(*args.axis);
  } else {
    if ((kind == ir::ReduceKind::Argmax || kind == ir::ReduceKind::Argmin) && rank > 1) {
      error(e.loc, quoted(name) + " of a " + std::to_string(rank) + "-D tile needs an axis");
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
    ir::Type rt = ir::Type::tile(ir::ElemType{ir::reduceResultElem(kind, t.elem.scalar), false}, shape);
    v = emit(OpKind::Reduce, {v}, rt, e.loc, {{"axis", int64_t(axis)}, {"kind", ir::attrOf(kind)}});
  }
  if (*keep) v = keepDims(v, axes, e.loc);
  return value(v);
}

// A compile-time bool argument (`keep_dims:`, `reverse:`); false when absent.
std::optional<bool> IRGen::constBool(const ast::Expr *e, const std::string &what) {
  if (!e) return false;
  TV k = genValue(*e);
  if (!k.ok()) return std::nullopt;
  if (!k.cst || !k.type.isBool() || k.type.isTile()) {
    error(e->loc, what + " must be a compile-time bool");
    return std::nullopt;
  }
  return k.cst->i != 0;
}

// `v` reduced along `axes` with each axis put back as a dim of size 1.
ir::Value *IRGen::keepDims(ir::Value *v, std::vector<int> axes, const ast::Loc &loc) {
  std::sort(axes.begin(), axes.end());  // ascending: each insertion lands at its final place
  for (int axis : axes) {
    ir::Type t = v->type();
    std::vector<int64_t> shape = t.shape;
    shape.insert(shape.begin() + axis, 1);
    if (t.isScalar()) {
      v = emit(OpKind::Splat, {v}, ir::Type::tile(t.elem, {1}), loc);
      continue;
    }
    v = emit(OpKind::ExpandDims, {v}, ir::Type::tile(t.elem, shape), loc, {{"axis", int64_t(axis)}});
  }
  return v;
}

}  // namespace tk::lang
