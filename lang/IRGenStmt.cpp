// AST -> tile IR, statements: `let` and `var` bindings in nested scopes,
// assignment, `for` over `static_range` (unrolled at compile time) and `if`
// on a compile-time condition. Runtime loops and branches are in
// ControlFlow.cpp.
#include "lang/IRGen.h"

namespace tk::lang {

using ir::ScalarKind;

namespace {
// More iterations than this in one kernel is almost surely a mistake (and
// would make the kernel huge): a located error instead.
constexpr int kMaxUnrolledIterations = 4096;
}  // namespace

// ---------------------------------------------------------------- scopes

IRGen::Binding *IRGen::lookup(const std::string &name) {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto found = it->find(name); found != it->end()) return &found->second;
  return nullptr;
}

std::optional<size_t> IRGen::scopeOf(const std::string &name) const {
  for (size_t d = scopes_.size(); d-- > 0;)
    if (scopes_[d].count(name)) return d;
  return std::nullopt;
}

void IRGen::bind(const std::string &name, TV v, bool isVar) {
  Binding &b = scopes_.back()[name];
  b = Binding{};
  b.value = std::move(v);
  b.isVar = isVar;
}

std::vector<std::string> IRGen::namesInScope() const {
  std::vector<std::string> names;
  for (const auto &scope : scopes_)
    for (const auto &[n, b] : scope)
      if (!isResultVar(n)) names.push_back(n);
  return names;
}

// ---------------------------------------------------------------- statements

// After a statement that surely jumped the rest of the list is unreachable
// (and not generated); after one that may have, it runs under a guard.
void IRGen::genStmts(const std::vector<ast::StmtPtr> &body, size_t from) {
  for (size_t i = from; i < body.size() && !diags_.tooManyErrors(); ++i) {
    genStmt(*body[i]);
    if (surelyJumped()) return;
    if (mayHaveJumped() && i + 1 < body.size()) {
      guardRest(body, i + 1);
      return;
    }
  }
}

void IRGen::genStmt(const ast::Stmt &s) {
  switch (s.kind) {
    case ast::StmtKind::Let:
    case ast::StmtKind::Var: {
      if (!s.names.empty()) {
        genDestructure(s);
        return;
      }
      TV v = genExpr(*s.value);
      // A tensor descriptor is bound once: a `var` could be merged at a loop
      // or branch, which a compile-time aggregate cannot be.
      if (v.k == TV::K::Desc && s.kind == ast::StmtKind::Var) {
        error(s.value->loc, "a tensor descriptor is bound with 'let', not 'var'");
        v = invalid();
      }
      if (v.k != TV::K::Tuple && v.k != TV::K::Desc) v = asValue(v, *s.value);
      // A `var` holds its type until reassigned: a literal takes its default
      // type here rather than adapting at each use.
      if (s.kind == ast::StmtKind::Var && v.ok() && v.weak) v.weak = false;
      if (s.kind == ast::StmtKind::Var)
        for (TV &x : v.elems) x.weak = false;
      if (v.v && v.v->definingOp() && v.v->nameHint().empty()) v.v->setNameHint(s.name);
      bind(s.name, v, s.kind == ast::StmtKind::Var);  // an invalid value too: later uses stay quiet
      return;
    }
    case ast::StmtKind::Assign:
      genAssign(s);
      return;
    case ast::StmtKind::Expr:
      genExpr(*s.value);
      return;
    case ast::StmtKind::For:
      genFor(s);
      return;
    case ast::StmtKind::If:
      genIf(s);
      return;
    case ast::StmtKind::Return:
      genReturn(s);
      return;
    case ast::StmtKind::Block:
      scopes_.emplace_back();
      genStmts(s.body);
      scopes_.pop_back();
      return;
    case ast::StmtKind::While:
      genWhile(s);
      return;
    case ast::StmtKind::Break:
    case ast::StmtKind::Continue:
      genLoopJump(s);
      return;
    case ast::StmtKind::Error:
      // A `let` the parser dropped: its names are bound to nothing, so a
      // use stays quiet (the syntax error was the one error).
      for (const std::string &n : s.names) bind(n, invalid());
      return;
  }
}

// grammar: expr assign_op expr ';'   where assign_op is = += -= *= /=
// The target must name a `var` (or a non-const parameter). In straight-line
// code the new value replaces the binding, whatever its type, as in Python;
// a var a runtime loop carries keeps its type around the back edge, and the
// paths of a runtime `if` must meet in one (Merge.cpp). An untyped literal
// takes the var's type.
void IRGen::genAssign(const ast::Stmt &s) {
  if (s.target->kind == ast::ExprKind::Tuple) {
    assignTuple(s);
    return;
  }
  assignName(*s.target, s, TV{});
}

// `target op= value` for one target; `given` (when valid) is the value, an
// element of a tuple assigned to several targets.
void IRGen::assignName(const ast::Expr &target, const ast::Stmt &s, TV given) {
  auto rest = [&] {
    if (!given.ok()) genExpr(*s.value);
  };
  if (target.kind != ast::ExprKind::Name) {
    error(target.loc, "only a 'var' can be assigned to");
    rest();
    return;
  }
  const std::string &name = target.text;
  Binding *b = lookup(name);
  if (!b || !b->useError.empty()) {
    genName(target);  // the unknown-name (or "bound only in ...") error
    rest();
    return;
  }
  if (!b->isVar) {
    error(target.loc, "cannot assign to " + quoted(name) +
                          (b->isConstParam ? ": it is a const parameter (a compile-time value)"
                                           : ": it is a 'let' (declare it with 'var')"));
    rest();
    return;
  }
  TV old = b->value;
  TV rhs = given;
  if (!rhs.ok()) {
    rhs = genExpr(*s.value);
    if (rhs.k != TV::K::Tuple) rhs = asValue(rhs, *s.value);
  }
  if (!old.ok() || !rhs.ok()) return;
  if (old.k == TV::K::Tuple || rhs.k == TV::K::Tuple) {
    if (s.name != "=") {
      error(s.loc, "'" + s.name + "' does not apply to a tuple");
      return;
    }
    if (carriesTuple(name, old, rhs, s.loc) || !keepCarriedType(name, scopeOf(name).value_or(0), old, rhs, s.loc))
      return;
    for (TV &x : rhs.elems) x.weak = false;
    lookup(name)->value = rhs;
    return;
  }
  TV next = s.name == "=" ? rhs : binaryOp(s.name.substr(0, 1), old, rhs, s.loc);
  if (!next.ok() || !keepCarriedType(name, scopeOf(name).value_or(0), old, next, s.loc)) return;
  next.weak = false;
  if (next.v && next.v->definingOp() && next.v->nameHint().empty()) next.v->setNameHint(name);
  lookup(name)->value = next;  // the binding may have moved: `binaryOp` can add unknown names
}

// `next`, about to replace `old` in a var (`what`, bound at scope `depth`;
// an element of a tuple var, "t[1]"): a weak literal takes the old type; a
// new type inside a loop that carries the var is an error. False after one.
bool IRGen::keepCarriedType(const std::string &what, size_t depth, const TV &old, TV &next, const ast::Loc &loc) {
  if (old.k == TV::K::Tuple && next.k == TV::K::Tuple && old.elems.size() == next.elems.size()) {
    for (size_t i = 0; i < old.elems.size(); ++i)
      if (!keepCarriedType(what + "[" + std::to_string(i) + "]", depth, old.elems[i], next.elems[i], loc))
        return false;
    return true;
  }
  if (old.k == TV::K::Tuple || next.k == TV::K::Tuple) return true;  // outside a region (carriesTuple)
  if (next.type.shape == old.type.shape && next.type.elem == old.type.elem) return true;
  if (next.weak && next.type.shape == old.type.shape && !old.type.isPtr() &&
      ir::isFloat(old.type.elem.scalar) >= ir::isFloat(next.type.elem.scalar) &&
      checkWeakFits(next, old.type.elem.scalar, loc)) {
    next = convert(next, old.type.elem.scalar, loc);
    return true;
  }
  for (const Region &r : regions_) {
    if (!r.loop || r.scopeStart <= depth) continue;
    error(loc, "assignment changes the type of " + quoted(what) + " from " + typeName(old) + " to " + typeName(next) +
                   " inside " + r.what + " at " + std::to_string(r.loc.line) + ":" + std::to_string(r.loc.col) +
                   ", which carries it from one iteration to the next (give it its final type before the loop)");
    return false;
  }
  return true;
}

// The 1 to 3 positional arguments of `range` or `static_range`, evaluated.
// `range` also takes Triton's per-loop options by name (tl.range's), each a
// compile-time constant that tk checks and then leaves to its own choices
// (docs/language.md, "Loops"): num_stages and loop_unroll_factor are
// integers >= 0, flatten, warp_specialize and disallow_acc_multi_buffer bools.
// `warp_specialize: true` is the one tk acts on (*warpSpecialize): the loop
// asks for a producer warpgroup (lower/SpecializeWarps.cpp).
bool IRGen::rangeArgs(const ast::Expr &r, std::vector<TV> &out, bool *warpSpecialize) {
  const std::string usage = r.text + "([start,] end[, step])";
  static const std::map<std::string, bool> hints = {{"num_stages", false},
                                                    {"loop_unroll_factor", false},
                                                    {"flatten", true},
                                                    {"warp_specialize", true},
                                                    {"disallow_acc_multi_buffer", true}};  // name -> a bool
  size_t positional = 0;
  for (size_t i = 0; i < r.args.size(); ++i) {
    const std::string &n = r.argNames[i];
    if (n.empty()) {
      if (positional != i) {
        error(r.args[i]->loc, "positional arguments of " + r.text + " come before its named ones");
        return false;
      }
      ++positional;
      continue;
    }
    auto hint = hints.find(n);
    if (r.text != "range" || hint == hints.end()) {
      error(r.args[i]->loc, r.text == "range" ? quoted(n) + " is not an option of range (its options: num_stages, "
                                                            "loop_unroll_factor, flatten, warp_specialize, "
                                                            "disallow_acc_multi_buffer)"
                                              : r.text + " takes positional arguments: " + usage);
      return false;
    }
    TV v = genValue(*r.args[i]);
    if (!v.ok()) return false;
    const bool isBool = v.cst && !v.type.isTile() && v.type.isBool();
    if (hint->second ? !isBool : !(v.cst && !v.type.isTile() && !v.type.isBool() && !v.cst->isFloat && v.cst->i >= 0)) {
      error(r.args[i]->loc, "range's " + n + " must be a compile-time " +
                                (hint->second ? "bool (true or false)" : "integer >= 0"));
      return false;
    }
    if (n == "warp_specialize" && warpSpecialize) *warpSpecialize = v.cst->i != 0;
  }
  if (positional == 0 || positional > 3) {
    error(r.loc, r.text + " takes 1 to 3 arguments: " + usage);
    return false;
  }
  for (size_t i = 0; i < positional; ++i) {
    out.push_back(genValue(*r.args[i]));
    if (!out.back().ok()) return false;
  }
  return true;
}

// grammar: FOR IDENT IN expr block
// `for i in static_range(a, b[, step])` with compile-time bounds repeats the
// body once per value of i, each with i a constant; `range` loops at run time.
void IRGen::genFor(const ast::Stmt &s) {
  const ast::Expr &r = *s.value;
  bool isCall = r.kind == ast::ExprKind::Call;
  if (isCall && r.text == "range") {
    genRuntimeFor(s);
    return;
  }
  if (!isCall || r.text != "static_range") {
    error(r.loc, "a 'for' loop iterates over 'range(start, end[, step])' or 'static_range(start, end[, step])'");
    return;
  }
  std::vector<TV> values;
  if (!rangeArgs(r, values)) return;
  std::vector<int64_t> bounds;
  for (size_t i = 0; i < values.size(); ++i) {
    const TV &v = values[i];
    const ast::ExprPtr &a = r.args[i];
    if (!v.cst || v.type.isTile() || v.cst->isFloat || v.type.isBool()) {
      error(a->loc, "static_range bounds must be compile-time integers (literals, consts, static_range indices)");
      return;
    }
    bounds.push_back(v.cst->i);
  }
  int64_t start = bounds.size() == 1 ? 0 : bounds[0];
  int64_t end = bounds.size() == 1 ? bounds[0] : bounds[1];
  int64_t step = bounds.size() == 3 ? bounds[2] : 1;
  if (step == 0) {
    error(r.args[2]->loc, "static_range step must not be 0");
    return;
  }
  // In 128 bits: bounds may be any i64.
  using Wide = __int128;
  const Wide trips = step > 0 ? (end > start ? (Wide(end) - start + step - 1) / step : 0)
                              : (start > end ? (Wide(start) - end - step - 1) / -Wide(step) : 0);
  if (trips > kMaxUnrolledIterations - unrolledIterations_) {
    error(s.loc, "static_range loops in this kernel would unroll to more than " +
                     std::to_string(kMaxUnrolledIterations) + " iterations");
    return;
  }
  unrolledIterations_ += static_cast<int>(trips);
  unroll(s, start, step, 0, trips, diags_.errorCount());
  jumps_.brk = TV{};  // a `break` leaves only this loop
}

// Iterations `from` to `trips` of a static_range loop. A `continue` ends its
// iteration; after an iteration that may have left the loop (`break`,
// `return`), the rest run under a guard.
void IRGen::unroll(const ast::Stmt &s, int64_t start, int64_t step, __int128 from, __int128 trips, int errorsBefore) {
  for (__int128 k = from; k < trips; ++k) {
    const int64_t i = static_cast<int64_t>(start + k * step);
    if (diags_.tooManyErrors()) return;
    scopes_.emplace_back();
    // A var, as in Python: reassigning it changes the rest of this iteration only.
    bind(s.name, constant(ConstValue::ofInt(i), weakIntKind(i), false), /*isVar=*/true);
    ++loopDepth_;
    genStmts(s.body);
    --loopDepth_;
    scopes_.pop_back();
    jumps_.cont = TV{};
    // One report of a body's errors is enough, not one per iteration.
    if (diags_.errorCount() > errorsBefore || surelyJumped()) return;
    if (mayHaveJumped() && k + 1 < trips) {
      std::vector<Carried> carried = carriedVars({&s.body});
      guard(carried, s.loc, [&] {
        unroll(s, start, step, k + 1, trips, errorsBefore);
        jumps_.brk = TV{};
      });
      return;
    }
  }
}

// The condition of an `if` or `while`: a scalar bool, or a scalar integer
// taken as `!= 0` as Python and Triton do (`if STAGE & 1:`); invalid after
// an error (a tile, a float, a pointer).
TV IRGen::condition(const ast::Expr &e, const std::string &what) {
  TV c = genValue(e);
  if (!c.ok()) return c;
  if (c.type.isInt() && !c.type.isBool() && !c.type.isTile())
    return binaryOp("!=", c, constant(ConstValue::ofInt(0), c.type.elem.scalar, c.weak), e.loc);
  if (!c.type.isBool() || c.type.isTile()) {
    error(e.loc, what + " condition must be a scalar bool (or an integer, true when nonzero), not " + typeName(c));
    return invalid();
  }
  return c;
}

// grammar: IF expr block [ELSE (block | if_stmt)]
// A compile-time condition selects its branch; a runtime one branches.
void IRGen::genIf(const ast::Stmt &s) {
  TV c = condition(*s.value, "an 'if'");
  if (!c.ok()) return;
  if (!c.cst) {
    genRuntimeIf(s, c.v);
    return;
  }
  // Only the branch taken exists, in the enclosing scope: the names it
  // binds stay visible after the `if`, as in Triton's `if CONSTEXPR:`.
  genStmts(c.cst->i ? s.body : s.elseBody);
}

}  // namespace tk::lang
