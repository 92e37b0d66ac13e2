// AST -> tile IR for tuples, as Triton kernels use them: `(a, b)` and
// `return a, b;`, a fn's `-> (i32, i32)` result and tuple-typed params,
// `let (m, n) = f(...)` / `let m, n = ...` (`_` keeps nothing), `a, b = ...`
// and `t[0]`. A tuple exists only in the front end: its elements are values
// of their own, so no tuple reaches the tile IR; a fn's tuple result is one
// var per element, so a `return` in a runtime branch or loop works as for
// one value. A tuple var that a runtime loop carries or an `if` merges, and
// a tuple every path of an `if` binds, go element by element (ControlFlow.cpp,
// Merge.cpp), each in one shape.
#include <functional>

#include "lang/IRGen.h"

namespace tk::lang {

namespace {
std::string atLine(const ast::Loc &l) { return std::to_string(l.line) + ":" + std::to_string(l.col); }
}  // namespace

// grammar: '(' expr ',' [expr {',' expr}] ')'   and   expr ',' expr {',' expr}
// after `return`, `=` or a `let`'s `=`.
TV IRGen::genTuple(const ast::Expr &e) {
  TV t;
  t.k = TV::K::Tuple;
  bool ok = true;
  for (const ast::ExprPtr &a : e.args) {
    TV x = genExpr(*a);
    if (x.k != TV::K::Tuple) x = asValue(x, *a);
    ok = ok && x.ok();
    t.elems.push_back(std::move(x));
  }
  return ok ? t : invalid();
}

// grammar: postfix '[' INT ']' on a tuple: a constant index, negative from
// the end as in Python.
TV IRGen::tupleIndex(const ast::Expr &e, const TV &t) {
  const int64_t n = static_cast<int64_t>(t.elems.size());
  if (e.args.size() != 2) {
    error(e.loc, "a tuple takes one index, a constant from 0 to " + std::to_string(n - 1));
    return invalid();
  }
  const ast::Expr &ix = *e.args[1];
  TV i = ix.kind == ast::ExprKind::Slice || ix.kind == ast::ExprKind::None ? invalid() : genValue(ix);
  if (ix.kind == ast::ExprKind::Error || (!i.ok() && ix.kind != ast::ExprKind::Slice && ix.kind != ast::ExprKind::None))
    return invalid();
  if (!i.ok() || !i.cst || i.cst->isFloat || i.type.isTile() || i.type.isBool()) {
    error(ix.loc, "a tuple's index must be a compile-time integer (a tuple has no elements at run time)");
    return invalid();
  }
  int64_t k = i.cst->i < 0 ? i.cst->i + n : i.cst->i;
  if (k < 0 || k >= n) {
    error(ix.loc, "index " + std::to_string(i.cst->i) + " is out of range for a tuple of " + std::to_string(n) +
                      " elements");
    return invalid();
  }
  return t.elems[static_cast<size_t>(k)];
}

// `let (a, b) = t;`: each name bound to its element, `_` to none.
bool IRGen::destructureTuple(const ast::Stmt &s, const TV &t) {
  const bool isVar = s.kind == ast::StmtKind::Var;
  if (t.elems.size() != s.names.size()) {
    error(s.value->loc, "a tuple of " + std::to_string(t.elems.size()) + " values cannot bind " +
                            std::to_string(s.names.size()) + " names");
    return false;
  }
  for (size_t i = 0; i < s.names.size(); ++i) {
    if (s.names[i] == "_") continue;
    TV v = t.elems[i];
    if (isVar && v.weak) v.weak = false;
    if (v.v && v.v->definingOp() && v.v->nameHint().empty()) v.v->setNameHint(s.names[i]);
    bind(s.names[i], v, isVar);
  }
  return true;
}

// grammar: expr ',' expr {',' expr} '=' rhs ';'
// `pid_m, pid_n = f(...);`: each target a var (or `_`), assigned its element.
void IRGen::assignTuple(const ast::Stmt &s) {
  TV rhs = genExpr(*s.value);
  if (!rhs.ok()) return;
  const ast::Expr &targets = *s.target;
  if (rhs.k != TV::K::Tuple) {
    asValue(rhs, *s.value);
    if (rhs.k == TV::K::Value)
      error(s.value->loc, "assigning to " + std::to_string(targets.args.size()) + " names needs a tuple of " +
                              std::to_string(targets.args.size()) + " values, not " + typeName(rhs));
    return;
  }
  if (rhs.elems.size() != targets.args.size()) {
    error(s.value->loc, "a tuple of " + std::to_string(rhs.elems.size()) + " values cannot be assigned to " +
                            std::to_string(targets.args.size()) + " names");
    return;
  }
  for (size_t i = 0; i < targets.args.size(); ++i) {
    const ast::Expr &t = *targets.args[i];
    if (t.kind == ast::ExprKind::Name && t.text == "_") continue;
    assignName(t, s, rhs.elems[i]);
  }
}

// `v` as the written tuple type `t` (a fn's param or result): one element
// each, each converted by `element` (the scalar rules of its caller).
TV IRGen::tupleAs(const TV &v, const ast::TypeRef &t, const ast::Expr &at, const std::string &what,
                  const std::function<TV(const TV &, const ast::TypeRef &)> &element) {
  if (v.k != TV::K::Tuple || v.elems.size() != t.elems.size()) {
    error(at.loc, what + " must be a tuple " + t.str() + ", not " +
                      (v.k == TV::K::Tuple ? "a tuple of " + std::to_string(v.elems.size()) + " values" : typeName(v)));
    return invalid();
  }
  TV out;
  out.k = TV::K::Tuple;
  for (size_t i = 0; i < t.elems.size(); ++i) {
    const ast::TypeRef &et = t.elems[i];
    TV x = et.isTuple() ? tupleAs(v.elems[i], et, at, what + "'s element " + std::to_string(i), element)
                        : v.elems[i].k == TV::K::Tuple ? invalid() : element(v.elems[i], et);
    if (!x.ok()) {
      if (v.elems[i].k == TV::K::Tuple && !et.isTuple())
        error(at.loc, what + "'s element " + std::to_string(i) + " must be " + et.str() + ", not a tuple");
      return invalid();
    }
    out.elems.push_back(std::move(x));
  }
  return out;
}

// A fn's tuple result: one var per element, "return.0", "return.1.0", ...
void IRGen::bindResultVars(const ast::TypeRef &result, const std::string &prefix) {
  for (size_t i = 0; i < result.elems.size(); ++i) {
    const std::string name = prefix + "." + std::to_string(i);
    if (result.elems[i].isTuple()) bindResultVars(result.elems[i], name);
    else bind(name, TV{}, /*isVar=*/true);  // the fn's outermost scope: where its body starts
  }
}

// The tuple the result vars hold; invalid while one has no value.
TV IRGen::resultValue(const ast::TypeRef &result, const std::string &prefix) {
  TV out;
  out.k = TV::K::Tuple;
  for (size_t i = 0; i < result.elems.size(); ++i) {
    const std::string name = prefix + "." + std::to_string(i);
    TV x = result.elems[i].isTuple() ? resultValue(result.elems[i], name) : scopes_.front()[name].value;
    if (!x.ok()) return invalid();
    out.elems.push_back(std::move(x));
  }
  return out;
}

// `return a, b;` in a fn with a tuple result (`v` already of its type):
// each element assigns its var; a tile here and a scalar at another
// `return` is an error, as for a one-value result.
void IRGen::returnTuple(const ast::Stmt &s, const TV &v, const std::string &prefix) {
  for (size_t i = 0; i < v.elems.size(); ++i) {
    const std::string name = prefix + "." + std::to_string(i);
    const TV &x = v.elems[i];
    if (x.k == TV::K::Tuple) {
      returnTuple(s, x, name);
      continue;
    }
    Binding &r = scopes_.front()[name];
    if (r.value.ok() && (r.value.type.shape != x.type.shape || r.value.type.elem != x.type.elem)) {
      error(s.value->loc, "fn " + quoted(inlineStack_.back()->name) + " returns " + typeName(x) + " as element " +
                              std::to_string(i) + " here but " + typeName(r.value) + " at an earlier 'return'");
      continue;
    }
    TV strong = x;
    strong.weak = false;
    r.value = strong;
  }
}

namespace {

// "2 elements" or "one value": what a message says of a var's shape.
std::string shapeOf(const TV &v) {
  if (v.k != TV::K::Tuple) return "one value";
  return std::to_string(v.elems.size()) + " elements";
}

}  // namespace

// Single values match any single value: their types are the loop's or the
// merge's to check, as for any var.
bool sameNesting(const TV &a, const TV &b) {
  if ((a.k == TV::K::Tuple) != (b.k == TV::K::Tuple)) return false;
  if (a.k != TV::K::Tuple) return true;
  if (a.elems.size() != b.elems.size()) return false;
  for (size_t i = 0; i < a.elems.size(); ++i)
    if (!sameNesting(a.elems[i], b.elems[i])) return false;
  return true;
}

std::vector<std::vector<size_t>> tupleLeaves(const TV &v) {
  std::vector<std::vector<size_t>> out;
  std::vector<size_t> path;
  std::function<void(const TV &)> walk = [&](const TV &x) {
    if (x.k != TV::K::Tuple) {
      out.push_back(path);
      return;
    }
    for (size_t i = 0; i < x.elems.size(); ++i) {
      path.push_back(i);
      walk(x.elems[i]);
      path.pop_back();
    }
  };
  walk(v);
  return out;
}

std::string elementLabel(const std::string &name, const std::vector<size_t> &path) {
  std::string out = name;
  for (size_t i : path) out += "[" + std::to_string(i) + "]";
  return out;
}

TV *elementAt(TV &v, const std::vector<size_t> &path) {
  TV *at = &v;
  for (size_t i : path) {
    if (at->k != TV::K::Tuple || i >= at->elems.size()) return nullptr;
    at = &at->elems[i];
  }
  return at;
}

// A tuple var reassigned where a runtime loop carries it or an `if` merges
// it is carried element by element (ControlFlow.cpp, carriedNamed), so it
// must keep its shape there: a located error when it does not.
bool IRGen::carriesTuple(const std::string &name, const TV &old, const TV &v, const ast::Loc &loc) {
  const size_t depth = scopeOf(name).value_or(0);
  for (const Region &r : regions_) {
    if (r.scopeStart <= depth || sameNesting(old, v)) continue;
    error(loc, "tuple var " + quoted(name) + " is " + shapeOf(old) + " before " + r.what + " at " + atLine(r.loc) +
                   " but " + shapeOf(v) + " here: a var that " + (r.loop ? "a loop carries" : "a branch assigns") +
                   " keeps its shape");
    return true;
  }
  return false;
}

}  // namespace tk::lang
