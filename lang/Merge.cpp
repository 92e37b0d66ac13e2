// AST -> tile IR where the paths of a runtime `if` meet (or those of a guard
// after a possible jump): each var a branch assigned, and each name bound at
// the top of every branch that goes on, becomes a result of the `if` in one
// type that every path's value has or broadcasts to, as Python and Triton
// scope names. A name bound on some paths only is remembered, so that a use
// after the `if` says where it was bound instead of "unknown name".
#include <algorithm>

#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

namespace {

bool taken(const TV &f) { return f.ok(); }
bool surely(const TV &f) { return f.ok() && f.cst && f.cst->i; }

// The type `vals` meet in: one element type (an untyped literal takes the
// other values', an int literal any number's, a float literal a float's),
// shapes broadcast by NumPy's rules. nullopt where they do not meet.
std::optional<Type> meet(const std::vector<const TV *> &vals) {
  std::optional<ir::ElemType> elem;
  bool elemWeak = true;
  std::vector<int64_t> shape;
  for (const TV *v : vals) {
    if (!elem) {
      elem = v->type.elem;
      elemWeak = v->weak;
    } else if (*elem != v->type.elem) {
      const bool vFloat = !v->type.isPtr() && ir::isFloat(v->type.elem.scalar);
      const bool eFloat = !elem->isPtr() && ir::isFloat(elem->scalar);
      if (v->weak && !elemWeak && !elem->isPtr() && (!vFloat || eFloat)) {
        // the literal takes the value's type
      } else if (elemWeak && !v->weak && !v->type.isPtr() && (!eFloat || vFloat)) {
        elem = v->type.elem;
        elemWeak = false;
      } else if (elemWeak && v->weak) {
        if (vFloat) elem = v->type.elem;  // 1 and 2.5 meet in a float
      } else {
        return std::nullopt;
      }
    }
    auto s = broadcastShapes(shape, v->type.shape);
    if (!s) return std::nullopt;
    shape = *s;
  }
  return Type{*elem, shape, nullptr};
}

std::string atLine(const ast::Loc &l) { return std::to_string(l.line) + ":" + std::to_string(l.col); }

}  // namespace

// One value the `if` yields: a carried var or a name bound in its branches,
// with its value at the end of each branch (invalid: none there).
struct IRGen::MergeSlot {
  std::string name;
  std::vector<TV> vals;
  const Carried *var = nullptr;
  bool isVar = false;
  // An element of a tuple the branches bound: the name's binding after the
  // `if` is a tuple of their shape, this slot's result at `path` in it.
  std::string tuple;
  std::vector<size_t> path;
  std::optional<Type> type;
  std::vector<ir::Value *> out;
};

// Ends the regions of `branch` with yields of the carried vars, of the names
// bound on every path that goes on, and of the flags either may have set, and
// binds them to its results. A path that surely returned yields placeholders:
// nothing after the `if` reads its values but a fn's result.
void IRGen::mergeBranches(ir::Op *branch, std::vector<Carried> &carried, std::vector<BranchEnd> &ends,
                          const ast::Loc &loc) {
  auto outer = std::move(builder_);
  bool allDead = true;
  for (const BranchEnd &e : ends) allDead = allDead && surely(e.jumps.ret);
  auto dead = [&](size_t r, const std::string &name) {
    return !allDead && !isResultVar(name) && surely(ends[r].jumps.ret);
  };

  std::vector<MergeSlot> slots;
  for (const Carried &c : carried) {
    MergeSlot s;
    s.name = c.label();
    s.var = &c;
    for (const BranchEnd &e : ends) s.vals.push_back(e.vals[slots.size()] ? value(e.vals[slots.size()]) : TV{});
    slots.push_back(std::move(s));
  }
  if (!allDead) mergeNames(ends, slots, dead);

  for (MergeSlot &s : slots) {
    std::vector<const TV *> live;
    for (size_t r = 0; r < ends.size(); ++r)
      if (!dead(r, s.name) && s.vals[r].ok()) live.push_back(&s.vals[r]);
    if (live.empty()) continue;  // a fn's result no path has set yet
    s.type = meet(live);
    if (!s.type) {
      std::string what = isResultVar(s.name) ? std::string("the fn's result") : quoted(s.name), detail;
      for (size_t r = 0; r < ends.size(); ++r)
        if (!dead(r, s.name) && s.vals[r].ok())
          detail += (detail.empty() ? "" : " but ") + (s.vals[r].weak ? s.vals[r].type.str() : typeName(s.vals[r])) +
                  " at the end of " + ends[r].what;
      error(loc, "the paths of this 'if' give " + what + " types that do not meet: " + detail +
                     " (the branches must agree on its type, or broadcast to one)");
      continue;
    }
    for (size_t r = 0; r < ends.size() && s.type; ++r) {
      builder_ = std::move(ends[r].builder);
      const TV &v = s.vals[r];
      TV target;
      target.k = TV::K::Value;
      target.type = *s.type;
      std::optional<Type> fits = v.ok() ? meet({&target, &v}) : std::nullopt;
      if (fits && *fits == *s.type && (!v.weak || checkWeakFits(v, s.type->elem.scalar, loc))) {
        s.out.push_back(coerce(v, *s.type, loc));
      } else if (!s.type->isPtr()) {
        s.out.push_back(emitConst(ConstValue::ofInt(0), *s.type, loc));
      } else {
        error(loc, isResultVar(s.name) ? "an early 'return' from a fn whose result is a pointer is not supported"
                                        : "pointer " + quoted(s.name) + " has no value at the end of " + ends[r].label +
                                              " (bind it before the 'if' to give every path one)");
        s.type.reset();
      }
      ends[r].builder = std::move(builder_);
    }
  }

  TV Jumps::*flags[] = {&Jumps::ret, &Jumps::brk, &Jumps::cont};
  std::vector<TV Jumps::*> live;
  for (TV Jumps::*f : flags)
    if (taken(ends[0].jumps.*f) || taken(ends[1].jumps.*f)) live.push_back(f);
  for (size_t r = 0; r < ends.size(); ++r) {
    builder_ = std::move(ends[r].builder);
    std::vector<ir::Value *> yielded;
    for (const MergeSlot &s : slots)
      if (s.type) yielded.push_back(s.out[r]);
    for (TV Jumps::*f : live) yielded.push_back(flagValue(ends[r].jumps.*f, loc));
    builder_->setLoc(irLoc(loc));
    builder_->create(OpKind::Yield, yielded, std::nullopt);
    ends[r].builder = std::move(builder_);
  }
  builder_ = std::move(outer);
  for (const MergeSlot &s : slots) {
    TV merged;
    if (s.type) {
      ir::Value *result = branch->addResult(*s.type);
      if (!isResultVar(s.name)) result->setNameHint(s.name);
      merged = value(result);
    }
    if (s.var) {
      setCarried(*s.var, merged);
    } else if (!s.tuple.empty()) {
      if (TV *element = elementAt(scopes_.back()[s.tuple].value, s.path)) *element = merged;
    } else {
      Binding &b = scopes_.back()[s.name];
      b = Binding{};
      b.value = merged;
      b.isVar = s.isVar;
    }
  }
  jumps_ = {};
  for (TV Jumps::*f : live) {
    ir::Value *result = branch->addResult(Type::scalar(ScalarKind::I1));
    jumps_.*f = surely(ends[0].jumps.*f) && surely(ends[1].jumps.*f) ? jumped() : value(result);
  }
}

// The names the branches bound at their top level. One bound on every path
// that goes on (or bound before the `if`, for the paths that did not rebind
// it) becomes a slot; one bound on some paths only is bound here to nothing,
// with where it was bound for the error at a use.
void IRGen::mergeNames(std::vector<BranchEnd> &ends, std::vector<MergeSlot> &slots,
                       const std::function<bool(size_t, const std::string &)> &dead) {
  std::vector<std::string> names;
  for (const BranchEnd &e : ends)
    for (const auto &[n, b] : e.names)
      if (!isResultVar(n) && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::sort(names.begin(), names.end());  // results in a deterministic order
  for (const std::string &n : names) {
    const Binding *before = lookup(n);
    if (before && !before->useError.empty()) before = nullptr;
    MergeSlot s;
    s.name = n;
    s.isVar = true;
    std::string where;
    bool partial = false;
    for (size_t r = 0; r < ends.size(); ++r) {
      auto it = ends[r].names.find(n);
      if (it != ends[r].names.end() && it->second.useError.empty()) {
        s.vals.push_back(it->second.value);
        s.isVar = s.isVar && it->second.isVar;
        if (where.empty()) where = ends[r].label;
      } else if (before) {
        s.vals.push_back(before->value);
        s.isVar = s.isVar && before->isVar;
      } else {
        s.vals.push_back(TV{});
        partial = partial || !dead(r, n);
      }
    }
    if (partial) {
      Binding b;
      b.useError = quoted(n) + " is bound only in " + (where.empty() ? "some paths of the 'if'" : where) +
                   " (bind it on every path of the 'if' to use it after)";
      scopes_.back()[n] = b;
      continue;
    }
    bool quiet = false;  // a branch's binding failed with an error already reported
    for (size_t r = 0; r < ends.size(); ++r) quiet = quiet || (!dead(r, n) && !s.vals[r].ok());
    if (quiet) {
      scopes_.back()[n] = Binding{};
      continue;
    }
    const TV *shape = nullptr;  // a tuple: merged element by element, if every path nests alike
    bool alike = true;
    for (size_t r = 0; r < ends.size(); ++r) {
      if (dead(r, n)) continue;
      if (!shape) shape = &s.vals[r];
      alike = alike && sameNesting(*shape, s.vals[r]);
    }
    if (!alike) {
      Binding b;
      b.useError = quoted(n) + " is bound to values of different tuple shapes on the paths of the 'if'" +
                   (where.empty() ? std::string() : " (one in " + where + ")") +
                   ": give it one shape on every path to use it after";
      scopes_.back()[n] = b;
      continue;
    }
    if (shape && shape->k == TV::K::Tuple) {
      Binding &b = scopes_.back()[n];
      b = Binding{};
      b.value = *shape;  // each element replaced by its merge below
      b.isVar = s.isVar;
      for (const std::vector<size_t> &path : tupleLeaves(*shape)) {
        MergeSlot leaf;
        leaf.name = elementLabel(n, path);
        leaf.isVar = s.isVar;
        leaf.tuple = n;
        leaf.path = path;
        for (TV &v : s.vals) leaf.vals.push_back(v.ok() ? *elementAt(v, path) : TV{});
        slots.push_back(std::move(leaf));
      }
      continue;
    }
    slots.push_back(std::move(s));
  }
}

// The labels of each region of a runtime `if`, for diagnostics.
void IRGen::labelBranch(BranchEnd &end, const ast::Stmt &s, int region) {
  end.what = region == 0 ? "the 'if' branch" : s.hasElse ? "the 'else' branch" : "the path that skips the 'if'";
  end.label = end.what + (region == 0 ? " at " : " of the 'if' at ") + atLine(s.loc);
  if (region == 1 && !s.hasElse) end.label = "the path that skips the 'if' at " + atLine(s.loc);
}

}  // namespace tk::lang
