// The shape built-ins: trans and permute (one op, a relabelling of the
// layout's dims), expand_dims, broadcast_to, reshape (through shared memory
// when lowered), join (a select between two operands with a new last axis of
// 2) and split, its inverse (`let a, b = split(t)`, which gives its halves
// to a `let` of two names; a tuple's elements are bound in Tuples.cpp), and
// indexing with ':' and None (`t[:, None]`).
#include <algorithm>

#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

namespace {
// The usage lang/BuiltinTable.def gives a shape built-in.
std::string usageOf(const std::string &name) {
  static const std::map<std::string, std::string> usages = {
#define TK_BUILTIN(NAME, GROUP, USAGE) {NAME, USAGE},
#include "lang/BuiltinTable.def"
  };
  return usages.at(name);
}
}  // namespace

// grammar (a call): trans(t [, [dims]]) | permute(t, [dims]) | expand_dims(t, axis)
//                 | broadcast_to(t, [shape]) | reshape(t, [shape]) | join(a, b) | split(t)
TV IRGen::shapeCall(const ast::Expr &e) {
  const std::string &name = e.text;
  const std::string usage = usageOf(name);
  for (size_t i = 0; i < e.args.size(); ++i)
    if (!e.argNames[i].empty()) {
      error(e.args[i]->loc, quoted(name) + " takes no named arguments (usage: " + usage + ")");
      return invalid();
    }
  const size_t minArgs = name == "trans" || name == "split" ? 1 : 2;
  const size_t maxArgs = name == "split" ? 1 : 2;
  if (e.args.size() < minArgs || e.args.size() > maxArgs) {
    error(e.loc, quoted(name) + " takes " + std::to_string(minArgs) + (minArgs == maxArgs ? "" : " or 2") +
                     " argument" + (maxArgs == 1 ? "" : "s") + ", not " + std::to_string(e.args.size()) +
                     " (usage: " + usage + ")");
    return invalid();
  }
  TV x = genValue(*e.args[0]);
  if (!x.ok()) return invalid();
  if (name == "join") {
    TV y = genValue(*e.args[1]);
    if (!y.ok()) return invalid();
    return joinCall(e, x, y);
  }
  if (!x.type.isTile() && name != "broadcast_to") {
    error(e.args[0]->loc, quoted(name) + " takes a tile, not " + typeName(x) + " (usage: " + usage + ")");
    return invalid();
  }
  const int rank = x.type.rank();
  if (name == "split") {
    error(e.loc, "'split' gives two tiles: bind them with 'let a, b = split(t);'");
    return invalid();
  }
  if (name == "expand_dims") {
    auto axis = constInt(*e.args[1], genValue(*e.args[1]), "the axis of 'expand_dims'");
    if (!axis) return invalid();
    if (*axis < -(rank + 1) || *axis > rank) {
      error(e.args[1]->loc, "axis " + std::to_string(*axis) + " is out of range for 'expand_dims' of a tile of rank " +
                                std::to_string(rank) + " (" + typeName(x) + "): it must be in [" +
                                std::to_string(-(rank + 1)) + ", " + std::to_string(rank) + "]");
      return invalid();
    }
    const int64_t a = *axis < 0 ? *axis + rank + 1 : *axis;
    std::vector<int64_t> shape = x.type.shape;
    shape.insert(shape.begin() + a, 1);
    if (!checkTileShape(shape, e.loc)) return invalid();
    ir::Value *v = coerce(x, x.type, e.loc);
    return value(emit(OpKind::ExpandDims, {v}, v->type().withShape(shape), e.loc, {{"axis", a}}));
  }
  if (name == "broadcast_to" || name == "reshape") {
    auto shape = shapeArg(*e.args[1], "the shape");
    if (!shape) return invalid();
    if (name == "reshape") {
      int64_t n = 1;
      for (int64_t d : *shape) n *= d;
      if (n != x.type.numElements()) {
        error(e.args[1]->loc, "'reshape' must keep the number of elements: " + shapeStr(x.type.shape) + " has " +
                                  std::to_string(x.type.numElements()) + ", " + shapeStr(*shape) + " has " +
                                  std::to_string(n));
        return invalid();
      }
      ir::Value *v = coerce(x, x.type, e.loc);
      if (*shape == x.type.shape) return value(v);
      return value(emit(OpKind::Reshape, {v}, v->type().withShape(*shape), e.loc));
    }
    // NumPy's rules: missing leading dims are 1, and a dim of 1 stretches.
    const std::vector<int64_t> &from = x.type.shape;
    bool ok = from.size() <= shape->size();
    for (size_t i = 0; ok && i < from.size(); ++i) {
      const int64_t f = from[from.size() - 1 - i], t = (*shape)[shape->size() - 1 - i];
      ok = f == t || f == 1;
    }
    if (!ok) {
      error(e.loc, "cannot broadcast " + typeName(x) + " to shape " + shapeStr(*shape));
      return invalid();
    }
    Type t = x.weak ? Type::scalar(x.type.isFloat() ? ScalarKind::F32 : ScalarKind::I32) : x.type;
    return value(coerce(x, t.withShape(*shape), e.loc));
  }
  // trans and permute.
  std::vector<int64_t> order;
  if (e.args.size() == 1) {
    if (rank != 2) {
      error(e.args[0]->loc, "'trans' without dims transposes a 2-D tile, not " + typeName(x) +
                                "; give the order of the dims: trans(t, [dims]) or permute(t, [dims])");
      return invalid();
    }
    order = {1, 0};
  } else {
    const ast::Expr &list = *e.args[1];
    if (list.kind != ast::ExprKind::List) {
      error(list.loc, "the dims of " + quoted(name) + " must be a list such as [2, 0, 1]");
      return invalid();
    }
    for (const ast::ExprPtr &d : list.args) {
      auto v = constInt(*d, genValue(*d), "a dim of " + quoted(name));
      if (!v) return invalid();
      order.push_back(*v);
    }
    std::vector<int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    bool perm = static_cast<int>(order.size()) == rank;
    for (size_t i = 0; perm && i < sorted.size(); ++i) perm = sorted[i] == static_cast<int64_t>(i);
    if (!perm) {
      error(list.loc,
            shapeStr(order) + " is not a permutation of the " + std::to_string(rank) + " dims of " + typeName(x));
      return invalid();
    }
  }
  std::vector<int64_t> shape;
  for (int64_t d : order) shape.push_back(x.type.shape[d]);
  ir::Value *v = coerce(x, x.type, e.loc);
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) identity = identity && order[i] == static_cast<int64_t>(i);
  if (identity) return value(v);
  std::map<std::string, ir::Attr> attrs;
  // A 2-D transpose prints as before, without its order.
  if (rank != 2) attrs["order"] = order;
  return value(emit(OpKind::Trans, {v}, v->type().withShape(shape), e.loc, attrs));
}

// join(a, b): [..., 2] with a at index 0 and b at 1 of the new last axis,
// both broadcast to one shape first: a select on arange(2) == 0, which
// lowering keeps in registers (no data moves between threads).
// grammar: ('let' | 'var') NAME ',' NAME '=' 'split' '(' t ')' ';'
// (and a tuple's names, Tuples.cpp: `let (a, b) = t;`, `let a, b = f(...);`)
void IRGen::genDestructure(const ast::Stmt &s) {
  const bool isVar = s.kind == ast::StmtKind::Var;
  const ast::Expr &e = *s.value;
  bool tupleBound = false;  // a tuple's elements, bound by destructureTuple
  auto halves = [&]() -> std::optional<std::array<TV, 2>> {
    for (size_t i = 1; i < s.names.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (s.names[i] == s.names[j] && s.names[i] != "_") {
          error(s.nameLocs[i], quoted(s.names[i]) + " is bound twice in one 'let'");
          return std::nullopt;
        }
    if (e.kind != ast::ExprKind::Call || e.text != "split") {
      TV t = genExpr(e);
      if (t.k == TV::K::Tuple) {
        if (!destructureTuple(s, t))
          for (const std::string &n : s.names) bind(n, invalid(), isVar);
        tupleBound = true;
      } else if (t.ok() && asValue(t, e).ok()) {
        error(e.loc, "only a tuple or 'split(t)' gives several values, not " + typeName(t) + ": bind one value with '" +
                         std::string(isVar ? "var" : "let") + " NAME = ...'");
      }
      return std::nullopt;
    }
    if (s.names.size() != 2) {
      error(s.nameLocs[std::min<size_t>(2, s.names.size() - 1)],
            "'split' gives two tiles, not " + std::to_string(s.names.size()));
      return std::nullopt;
    }
    if (e.args.size() != 1 || !e.argNames[0].empty()) {
      error(e.loc, "'split' takes one tile (usage: let a, b = split(t))");
      return std::nullopt;
    }
    return splitHalves(e, genValue(*e.args[0]));
  }();
  if (tupleBound) return;
  for (size_t i = 0; i < s.names.size(); ++i) {
    TV v = halves && i < 2 ? (*halves)[i] : invalid();
    if (v.v && v.v->definingOp() && v.v->nameHint().empty()) v.v->setNameHint(s.names[i]);
    bind(s.names[i], v, isVar);  // an invalid value too: later uses stay quiet
  }
}

// t[..., 0] and t[..., 1] of a tile whose last axis is 2, each the sum along
// that axis of t with the other element replaced by the additive identity
// (-0.0 for floats, so x + -0.0 is x bit for bit, -0.0 and NaN included; 0
// for integers). In the layout a join gives, both elements sit in one
// thread: a select and an add, nothing moves between threads.
std::optional<std::array<TV, 2>> IRGen::splitHalves(const ast::Expr &e, TV x) {
  if (!x.ok()) return std::nullopt;
  if (!x.type.isTile() || x.type.isPtr() || x.type.shape.back() != 2) {
    error(e.args[0]->loc, "'split' takes a tile of numbers or bools whose last dim is 2, not " + typeName(x));
    return std::nullopt;
  }
  ir::Value *t = coerce(x, x.type, e.loc);
  const ScalarKind elem = t->type().elem.scalar;
  // bools add as i32, and come back as `!= 0`.
  if (elem == ScalarKind::I1) t = emit(OpKind::Cast, {t}, t->type().withScalar(ScalarKind::I32), e.loc);
  const ScalarKind k = t->type().elem.scalar;
  const int axis = t->type().rank() - 1;
  ir::Value *index = emit(OpKind::Arange, {}, Type::tile({ScalarKind::I32, false}, {2}), e.loc,
                          {{"start", int64_t{0}}, {"end", int64_t{2}}});
  ir::Value *identity = ir::isFloat(k) ? emit(OpKind::Constant, {}, Type::scalar(k), e.loc, {{"value", -0.0}})
                                       : emit(OpKind::Constant, {}, Type::scalar(k), e.loc, {{"value", int64_t{0}}});
  std::array<TV, 2> out;
  for (int64_t half = 0; half < 2; ++half) {
    ir::Value *which = emit(OpKind::Constant, {}, index->type(), e.loc, {{"value", half}});
    ir::Value *mine = emit(OpKind::Cmp, {index, which}, index->type().withScalar(ScalarKind::I1), e.loc,
                           {{"predicate", ir::attrOf(ir::CmpPredicate::Eq)}});
    ir::Value *kept = emit(OpKind::Select,
                           {coerce(value(mine), t->type().withScalar(ScalarKind::I1), e.loc), t,
                            coerce(value(identity), t->type(), e.loc)},
                           t->type(), e.loc);
    std::vector<int64_t> shape = t->type().shape;
    shape.pop_back();
    const ScalarKind sumKind = ir::reduceResultElem(ir::ReduceKind::Sum, k);
    ir::Value *v = emit(OpKind::Reduce, {kept}, Type::tile({sumKind, false}, shape), e.loc,
                        {{"axis", int64_t(axis)}, {"kind", ir::attrOf(ir::ReduceKind::Sum)}});
    if (elem == ScalarKind::I1) {
      ir::Value *zero = emit(OpKind::Constant, {}, v->type(), e.loc, {{"value", int64_t{0}}});
      v = emit(OpKind::Cmp, {v, zero}, v->type().withScalar(ScalarKind::I1), e.loc, {{"predicate", ir::attrOf(ir::CmpPredicate::Ne)}});
    } else if (sumKind != elem) {
      v = emit(OpKind::Cast, {v}, v->type().withScalar(elem), e.loc);
    }
    out[half] = value(v);
  }
  return out;
}

TV IRGen::joinCall(const ast::Expr &e, TV a, TV b) {
  for (const TV *v : {&a, &b})
    if (v->type.isPtr()) {
      error(e.loc, "'join' takes numbers, not " + typeName(*v));
      return invalid();
    }
  auto common = broadcast({&a, &b}, e.loc);
  if (!common) return invalid();
  std::vector<int64_t> shape = *common;
  shape.push_back(2);
  if (!checkTileShape(shape, e.loc)) return invalid();
  auto lastAxis = [&](TV x) -> TV {
    if (!x.type.isTile()) return x;  // a scalar broadcasts
    ir::Value *v = coerce(x, x.type, e.loc);
    std::vector<int64_t> s = v->type().shape;
    s.push_back(1);
    TV r = value(emit(OpKind::ExpandDims, {v}, v->type().withShape(s), e.loc, {{"axis", int64_t(s.size() - 1)}}));
    return r;
  };
  ir::Value *k = emit(OpKind::Arange, {}, Type::tile({ScalarKind::I32, false}, {2}), e.loc,
                      {{"start", int64_t{0}}, {"end", int64_t{2}}});
  ir::Value *zero = emit(OpKind::Constant, {}, k->type(), e.loc, {{"value", int64_t{0}}});
  TV first = value(
      emit(OpKind::Cmp, {k, zero}, k->type().withScalar(ScalarKind::I1), e.loc, {{"predicate", ir::attrOf(ir::CmpPredicate::Eq)}}));
  return whereCall(e, first, lastAxis(a), lastAxis(b));
}

// t[:, None], t[None, :]: ':' keeps a dim, None inserts a size-1 dim.
TV IRGen::genIndex(const ast::Expr &e) {
  TV base = genExpr(*e.args[0]);
  if (base.k == TV::K::Tuple) return tupleIndex(e, base);
  base = asValue(base, *e.args[0]);
  if (!base.ok()) return base;
  int kept = 0, added = 0;
  for (size_t i = 1; i < e.args.size(); ++i) {
    const ast::Expr &ix = *e.args[i];
    if (ix.kind == ast::ExprKind::Slice) ++kept;
    else if (ix.kind == ast::ExprKind::None) ++added;
    else if (ix.kind != ast::ExprKind::Error) {
      error(ix.loc, "only ':' and None can index a tile for now");
      return invalid();
    } else {
      return invalid();
    }
  }
  if (kept > 0 && base.type.isScalar()) {
    error(e.loc, "a scalar (" + typeName(base) + ") has no dimension for ':'; only None can index it");
    return invalid();
  }
  if (kept > base.type.rank()) {
    error(e.loc, "too many ':' for a value of type " + typeName(base) + " (rank " +
                     std::to_string(base.type.rank()) + ")");
    return invalid();
  }
  int rank = base.type.rank() + added;
  if (rank > kMaxTileRank) {
    error(e.loc, "tiles of rank " + std::to_string(rank) + " are not supported (the limit is " +
                     std::to_string(kMaxTileRank) + ")");
    return invalid();
  }
  ir::Value *v = base.v ? base.v : emitConst(*base.cst, base.type, e.loc);
  if (v->type().isScalar()) {
    // A scalar becomes a tile of ones: s[None] has shape [1].
    return value(emit(OpKind::Splat, {v}, v->type().withShape(std::vector<int64_t>(added, 1)), e.loc));
  }
  int64_t pos = 0;
  for (size_t i = 1; i < e.args.size(); ++i) {
    if (e.args[i]->kind == ast::ExprKind::None) {
      std::vector<int64_t> s = v->type().shape;
      s.insert(s.begin() + pos, 1);
      v = emit(OpKind::ExpandDims, {v}, v->type().withShape(s), e.loc, {{"axis", pos}});
    }
    ++pos;
  }
  return value(v);
}

}  // namespace tk::lang
