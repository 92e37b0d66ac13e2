// Reductions and scans with a combine function, as Triton spells them:
// `reduce(input, axis, combine_fn, keep_dims: false)` and
// `associative_scan(input, axis, combine_fn, reverse: false)`. `input` is a
// tile or a tuple of tiles of one shape, reduced or scanned together;
// `combine_fn` names a fn taking the left elements then the right ones
// (`fn op(al: f32, bl: f32, ar: f32, br: f32) -> (f32, f32)`, or two tuple
// params) and returning the combined elements. Each becomes a
// reduce_combine / scan_combine op whose region is the fn inlined on
// scalars; lowering inlines that region at every combining step.
#include <algorithm>

#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;

namespace {

// The flattened tiles of `input`: one, or a tuple's (not nested).
bool inputTiles(const TV &input, std::vector<TV> &out) {
  if (input.k != TV::K::Tuple) {
    out.push_back(input);
    return true;
  }
  for (const TV &x : input.elems) {
    if (x.k == TV::K::Tuple) return false;
    out.push_back(x);
  }
  return true;
}

}  // namespace

bool IRGen::namedArgs(const ast::Expr &e, const std::vector<std::string> &names, const std::string &usage,
                      std::vector<const ast::Expr *> &slot) {
  slot.assign(names.size(), nullptr);
  size_t next = 0;
  bool named = false;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const std::string &n = e.argNames[i];
    size_t j = next;
    if (n.empty() && named) {
      error(e.args[i]->loc, "a positional argument cannot follow a named one");
      return false;
    }
    named = named || !n.empty();
    if (n.empty()) {
      if (next == names.size()) {
        error(e.args[i]->loc, "too many arguments to " + quoted(e.text) + ": " + usage);
        return false;
      }
      ++next;
    } else {
      j = std::find(names.begin(), names.end(), n) - names.begin();
      if (j == names.size()) {
        error(e.args[i]->loc, quoted(e.text) + " has no argument named " + quoted(n) + ": " + usage);
        return false;
      }
    }
    if (slot[j]) {
      error(e.args[i]->loc, "argument " + quoted(names[j]) + " of " + quoted(e.text) + " given twice");
      return false;
    }
    slot[j] = e.args[i].get();
  }
  return true;
}

// grammar (a call): ('reduce' | 'associative_scan') '(' input ',' axis ',' combine_fn [',' flag] ')'
//                   (each argument positional or by name)
TV IRGen::combineCall(const ast::Expr &e) {
  const bool scan = e.text == "associative_scan";
  const std::string flag = scan ? "reverse" : "keep_dims";
  const std::string usage = e.text + "(input, axis, combine_fn, " + flag + ": false)";
  std::vector<const ast::Expr *> slot;
  if (!namedArgs(e, {"input", "axis", "combine_fn", flag}, usage, slot)) return invalid();
  if (!slot[0] || !slot[2] || (scan && !slot[1])) {
    error(e.loc, quoted(e.text) + " needs " + (slot[0] ? "" : "a tile to combine, ") + (scan && !slot[1] ? "an axis, " : "") +
                     (slot[2] ? "" : "a combine_fn, ") + "as in " + usage);
    return invalid();
  }

  // combine_fn: the name of a fn the call sees.
  const ast::Expr &fe = *slot[2];
  const ast::Decl *fn = nullptr;
  if (fe.kind == ast::ExprKind::Name && fnTable_)
    if (auto it = fnTable_->fns.find(fe.text);
        it != fnTable_->fns.end() && fnTable_->visible(e.loc.file, it->second->loc.file))
      fn = it->second;
  if (!fn) {
    error(fe.loc, "combine_fn of " + quoted(e.text) + " must name a fn combining two elements" +
                      (fe.kind == ast::ExprKind::Name ? ", and no fn is named " + quoted(fe.text) : std::string()));
    return invalid();
  }

  TV input = genExpr(*slot[0]);
  if (input.k != TV::K::Tuple) input = asValue(input, *slot[0]);
  if (!input.ok()) return invalid();
  std::vector<TV> xs;
  if (!inputTiles(input, xs)) {
    error(slot[0]->loc, quoted(e.text) + " combines a tile or a tuple of tiles, not a nested tuple");
    return invalid();
  }
  std::vector<ir::Value *> operands;
  for (const TV &x : xs) {
    if (!x.type.isTile() || x.type.isPtr()) {
      error(slot[0]->loc, quoted(e.text) + " combines tiles of numbers, not " + typeName(x));
      return invalid();
    }
    if (ir::isFp8(x.type.elem.scalar)) {
      error(slot[0]->loc, quoted(e.text) + " with a combine_fn does not take " + typeName(x) +
                              " yet: convert the tile with 'as f32' (fp8 arithmetic computes in f32 anyway)");
      return invalid();
    }
    if (x.type.shape != xs[0].type.shape) {
      error(slot[0]->loc, "the tiles " + quoted(e.text) + " combines must have one shape, not " + typeName(xs[0]) +
                              " and " + typeName(x));
      return invalid();
    }
    operands.push_back(coerce(x, x.type, e.loc));
  }
  const int rank = xs[0].type.rank();
  std::vector<int> axes;
  if (slot[1]) {
    auto a = constInt(*slot[1], genValue(*slot[1]), "the axis of " + quoted(e.text));
    if (!a) return invalid();
    if (*a < -rank || *a >= rank) {
      error(slot[1]->loc, "axis " + std::to_string(*a) + " is out of range for a tile of rank " + std::to_string(rank));
      return invalid();
    }
    axes.push_back(static_cast<int>(*a < 0 ? *a + rank : *a));
  } else {
    for (int d = rank - 1; d >= 0; --d) axes.push_back(d);  // innermost first: row-major order
  }
  const std::optional<bool> flagValue = constBool(slot[3], flag);
  if (!flagValue) return invalid();

  for (int axis : axes) {
    std::map<std::string, ir::Attr> attrs = {{"axis", int64_t(axis)}};
    if (scan) attrs["reverse"] = int64_t(*flagValue);
    builder_->setLoc(irLoc(e.loc));
    ir::Op *op = builder_->create(scan ? OpKind::ScanCombine : OpKind::ReduceCombine, operands, std::nullopt, attrs);
    for (ir::Value *v : operands) {
      std::vector<int64_t> shape = v->type().shape;
      if (!scan) shape.erase(shape.begin() + axis);
      op->addResult(ir::Type{v->type().elem, shape, nullptr});
    }
    if (!combineRegion(fe, *fn, op)) return invalid();
    operands = op->results();
  }
  if (!scan && *flagValue)
    for (ir::Value *&v : operands) v = keepDims(v, axes, e.loc);
  if (operands.size() == 1) return value(operands[0]);
  TV t;
  t.k = TV::K::Tuple;
  for (ir::Value *v : operands) t.elems.push_back(value(v));
  return t;
}

// The region of `op`: `fn` inlined on scalar arguments (the left elements,
// then the right ones), yielding what it returns, which must be the
// elements' types.
bool IRGen::combineRegion(const ast::Expr &at, const ast::Decl &fn, ir::Op *op) {
  const size_t n = op->numOperands();
  std::vector<ir::Type> argTypes;
  for (int side = 0; side < 2; ++side)
    for (ir::Value *v : op->operands()) argTypes.push_back(ir::Type{v->type().elem, {}, nullptr});
  const std::string sig = std::to_string(2 * n) + " parameters (the left elements, then the right ones)" +
                          (n > 1 ? " or two " + std::to_string(n) + "-tuples" : "");
  const bool tuples = n > 1 && fn.params.size() == 2;
  if (fn.params.size() != 2 * n && !tuples) {
    error(at.loc, "combine_fn " + quoted(fn.name) + " takes " + std::to_string(fn.params.size()) + " parameters; combining " +
                      std::to_string(n) + (n > 1 ? " tiles" : " tile") + " needs " + sig);
    diags_.note(fn.loc, quoted(fn.name) + " is defined here");
    return false;
  }
  if (!canInline(at, fn)) return false;
  ir::Block *body = addRegion(op, argTypes);
  auto outer = std::move(builder_);
  builder_ = std::make_unique<ir::Builder>(body);
  builder_->setLoc(irLoc(at.loc));

  std::vector<TV> args;
  for (size_t side = 0; side < 2; ++side) {
    TV group;
    group.k = TV::K::Tuple;
    for (size_t i = 0; i < n; ++i) group.elems.push_back(value(body->argument(side * n + i)));
    if (tuples) args.push_back(group);
    else args.insert(args.end(), group.elems.begin(), group.elems.end());
  }
  std::map<std::string, ir::ScalarKind> typeVars;
  bool ok = true;
  for (size_t i = 0; i < args.size() && ok; ++i) {
    args[i] = fnArg(at, args[i], fn, fn.params[i], typeVars);
    ok = args[i].ok();
  }
  TV result = ok ? inlineFn(at.loc, fn, args, typeVars) : invalid();
  std::vector<TV> results;
  ok = result.ok() && inputTiles(result, results);
  if (ok && results.size() != n) {
    error(at.loc, "combine_fn " + quoted(fn.name) + " returns " + std::to_string(results.size()) + " values for " +
                      std::to_string(n) + " combined " + (n > 1 ? "tiles" : "tile"));
    ok = false;
  }
  std::vector<ir::Value *> yielded;
  for (size_t i = 0; ok && i < n; ++i) {
    const ir::ElemType want = op->operand(i)->type().elem;
    TV r = results[i];
    if (r.weak && r.cst) r = convert(r, want.scalar, at.loc);
    if (!r.ok() || r.type.isTile() || r.type.elem != want) {
      error(at.loc, "combine_fn " + quoted(fn.name) + " returns " + typeName(results[i]) + " as value " + std::to_string(i) +
                        " where the tile combined has " + want.str() + " elements: it must return their type");
      ok = false;
      break;
    }
    yielded.push_back(coerce(r, ir::Type{want, {}, nullptr}, at.loc));
  }
  if (ok) builder_->create(OpKind::Yield, yielded, std::nullopt);
  builder_ = std::move(outer);
  return ok;
}

}  // namespace tk::lang
