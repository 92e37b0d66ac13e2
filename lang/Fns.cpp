// `fn` helpers, inlined by IRGen at each call: arguments bound by position
// or name and checked against the params' element types (shapes are
// generic, so a fn works elementwise on tiles), the body lowered in a scope
// that sees only its params; also `static_assert` and `return`.
#include <algorithm>

#include "lang/IRGen.h"

namespace tk::lang {

using ir::ScalarKind;

namespace {
// Inlining has no recursion (it is an error), but fns calling fns twice per
// level grow exponentially: cap the depth and the total per kernel.
constexpr size_t kMaxInlineDepth = 64;
constexpr int kMaxInlinedCalls = 10000;

std::string typeText(const ast::TypeRef &t) { return t.str(); }

// "f(a: f32, p: *f32) -> f32", for usage hints.
std::string signatureText(const ast::Decl &fn) {
  std::string s = fn.name + "(";
  for (size_t i = 0; i < fn.params.size(); ++i)
    s += (i ? ", " : "") + fn.params[i].name + ": " + typeText(fn.params[i].type);
  s += ")";
  if (fn.hasResult) s += " -> " + typeText(fn.result);
  return s;
}
}  // namespace

// Whether `fn` may be inlined at `e` (no recursion, no earlier errors,
// within the depth and count caps); reports why not.
bool IRGen::canInline(const ast::Expr &e, const ast::Decl &fn) {
  if (std::find(inlineStack_.begin(), inlineStack_.end(), &fn) != inlineStack_.end()) {
    error(e.loc, "recursive call of " + quoted(fn.name) + ": fn helpers are inlined");
    diags_.note(fn.loc, quoted(fn.name) + " is defined here");
    return false;
  }
  // Its errors are reported already (at load, or at an earlier call).
  if (fnTable_->bad.count(&fn) || failedFns_.count(&fn)) {
    quietFailure_ = true;
    return false;
  }
  if (inlineStack_.size() >= kMaxInlineDepth) {
    error(e.loc, "fn calls nested more than " + std::to_string(kMaxInlineDepth) + " deep");
    return false;
  }
  if (++inlinedCalls_ > kMaxInlinedCalls) {
    if (inlinedCalls_ == kMaxInlinedCalls + 1)
      error(e.loc, "more than " + std::to_string(kMaxInlinedCalls) + " fn calls inlined into this kernel");
    quietFailure_ = true;
    return false;
  }
  return true;
}

// grammar (a call): NAME '(' [arg {',' arg}] ')'   arg: expr | IDENT ':' expr
TV IRGen::fnCall(const ast::Expr &e, const ast::Decl &fn) {
  if (!canInline(e, fn)) return invalid();
  std::vector<TV> args;
  std::map<std::string, ScalarKind> typeVars;  // T -> the element type this call gives it
  if (!bindFnArgs(e, fn, args, typeVars)) return invalid();
  return inlineFn(e.loc, fn, args, typeVars);
}

// `fn`'s body with its params bound to `args` (checked), generated where
// the builder is; its result, or invalid after an error.
TV IRGen::inlineFn(const ast::Loc &callLoc, const ast::Decl &fn, const std::vector<TV> &args,
                   const std::map<std::string, ScalarKind> &typeVars) {
  fnTable_->used.insert(&fn);

  // The body sees its params, its type variables and the global fns,
  // nothing of the caller. Its result is a var that `return VALUE` assigns;
  // a `break` in it cannot leave the caller's loop.
  auto callerScopes = std::move(scopes_);
  auto callerRegions = std::move(regions_);
  scopes_.assign(1, {});
  regions_.clear();
  for (const auto &[name, kind] : typeVars) {
    TV t;
    t.k = TV::K::TypeArg;
    t.typeArg = kind;
    bind(name, t);
  }
  // Parameters are variables, as in Triton: `x_ptr += offset` rebinds the
  // fn's own copy.
  for (size_t i = 0; i < args.size(); ++i) bind(fn.params[i].name, args[i], /*isVar=*/true);
  if (fn.hasResult && fn.result.isTuple()) bindResultVars(fn.result);
  else if (fn.hasResult) bind(kResultVar, TV{}, true);
  const Jumps callerJumps = jumps_;
  const int callerLoops = loopDepth_;
  jumps_ = {};
  loopDepth_ = 0;
  inlineStack_.push_back(&fn);
  const int errorsBefore = diags_.errorCount();
  genStmts(fn.body);
  TV result;
  result.k = TV::K::Void;
  if (fn.hasResult) {
    result = fn.result.isTuple() ? resultValue(fn.result) : scopes_.front()[kResultVar].value;
    const bool returned = jumps_.ret.ok() && jumps_.ret.cst && jumps_.ret.cst->i;
    if ((!returned || !result.ok()) && diags_.errorCount() == errorsBefore)
      error(fn.loc, "fn " + quoted(fn.name) + " must end with 'return VALUE;' (its result type is " +
                        typeText(fn.result) + ")");
  }
  inlineStack_.pop_back();
  jumps_ = callerJumps;
  loopDepth_ = callerLoops;
  scopes_ = std::move(callerScopes);
  regions_ = std::move(callerRegions);
  if (diags_.errorCount() != errorsBefore || !result.ok()) {
    failedFns_.insert(&fn);
    if (inlineStack_.empty() && diags_.errorCount() != errorsBefore)
      diags_.note(callLoc, "in " + quoted(fn.name) + ", inlined here");
    return invalid();
  }
  return result;
}

// Positional arguments fill the params in order, named ones by name; each
// is evaluated in the caller's scope and checked against its param.
bool IRGen::bindFnArgs(const ast::Expr &e, const ast::Decl &fn, std::vector<TV> &args,
                       std::map<std::string, ScalarKind> &typeVars) {
  const size_t n = fn.params.size();
  const std::string usage = " (usage: " + signatureText(fn) + ")";
  std::vector<const ast::Expr *> slot(n, nullptr);
  bool ok = true, named = false;
  size_t next = 0;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const std::string &an = e.argNames[i];
    const ast::Expr *a = e.args[i].get();
    if (an.empty()) {
      if (named) {
        error(a->loc, "a positional argument cannot follow a named one");
        return false;
      }
      if (next >= n) {
        error(a->loc, "too many arguments to " + quoted(fn.name) + ": it takes " + std::to_string(n) + usage);
        return false;
      }
      slot[next++] = a;
      continue;
    }
    named = true;
    auto p = std::find_if(fn.params.begin(), fn.params.end(), [&](const ast::Param &q) { return q.name == an; });
    if (p == fn.params.end()) {
      error(a->loc, quoted(fn.name) + " has no parameter named " + quoted(an) + usage);
      ok = false;
    } else if (slot[p - fn.params.begin()]) {
      error(a->loc, "argument " + quoted(an) + " of " + quoted(fn.name) + " given twice");
      ok = false;
    } else {
      slot[p - fn.params.begin()] = a;
    }
  }
  if (!ok) return false;
  for (size_t j = 0; j < n; ++j)
    if (!slot[j]) {
      error(e.loc, "missing argument " + quoted(fn.params[j].name) + " in the call of " + quoted(fn.name) + usage);
      ok = false;
    }
  if (!ok) return false;
  // Evaluated in the order written, as a reader expects.
  args.resize(n);
  for (const ast::ExprPtr &a : e.args) {
    size_t j = std::find(slot.begin(), slot.end(), a.get()) - slot.begin();
    args[j] = genExpr(*a);
    if (args[j].k != TV::K::Tuple) args[j] = asValue(args[j], *a);
    ok = ok && args[j].ok();
  }
  if (!ok) return false;
  // Typed arguments give the type variables their types before literals
  // would (`axpy(2.0, x, y)` with f16 x is f16).
  for (size_t j = 0; j < n; ++j) {
    const ast::Param &p = fn.params[j];
    if (!p.type.isTuple() && args[j].k != TV::K::Tuple && !scalarKind(p.type.name) && !args[j].weak &&
        !typeVars.count(p.type.name) && args[j].type.elem.ptrDepth == p.type.ptrDepth)
      typeVars[p.type.name] = args[j].type.elem.scalar;
  }
  for (size_t j = 0; j < n; ++j) {
    args[j] = fnArg(*slot[j], args[j], fn, fn.params[j], typeVars);
    ok = ok && args[j].ok();
  }
  return ok;
}

// A param's type constrains the element type only: `x: f32` takes an f32
// scalar or a tile of f32, `p: *f32` a pointer or a tile of pointers to
// f32. Weak literals take the param's type. A type variable `T` takes the
// element type of the first argument of a param typed T (a literal: its
// default type), and every later one must have it.
TV IRGen::fnArg(const ast::Expr &arg, TV v, const ast::Decl &fn, const ast::Param &p,
                std::map<std::string, ScalarKind> &typeVars) {
  if (p.type.isTuple())
    return tupleAs(v, p.type, arg, "argument " + quoted(p.name) + " of " + quoted(fn.name),
                   [&](const TV &x, const ast::TypeRef &t) {
                     ast::Param element;
                     element.name = p.name;
                     element.type = t;
                     return fnArg(arg, x, fn, element, typeVars);
                   });
  if (v.k == TV::K::Tuple) {
    error(arg.loc, "argument " + quoted(p.name) + " of " + quoted(fn.name) + " must be " + typeText(p.type) +
                       ", not a tuple");
    return invalid();
  }
  const bool isPtr = p.type.ptrDepth > 0;
  std::optional<ScalarKind> written = scalarKind(p.type.name);  // else a type variable (checked at load)
  const int depth = p.type.ptrDepth;  // `**T` takes a pointer to pointers
  if (!written && !typeVars.count(p.type.name) && v.type.elem.ptrDepth == depth) typeVars[p.type.name] = v.type.elem.scalar;
  const ScalarKind k = written ? *written : typeVars.count(p.type.name) ? typeVars[p.type.name] : ScalarKind::I32;
  bool match = v.type.elem.ptrDepth == depth && v.type.elem.scalar == k;
  if (!isPtr && v.weak && !v.type.isPtr()) {
    // An int literal fits any number type; a float literal only floats.
    match = k != ScalarKind::I1 && (ir::isFloat(k) || !v.cst->isFloat);
    if (match) {
      if (!checkWeakFits(v, k, arg.loc)) return invalid();
      return convert(v, k, arg.loc);
    }
  }
  if (!match) {
    std::string elem = written ? p.type.name : typeText(k);
    std::string want = depth > 1 ? "a pointer to pointers to " + elem : isPtr ? "a pointer to " + elem : elem;
    std::string bound = written ? "" : ", the " + p.type.name + " of this call";
    if (!written && v.type.elem.ptrDepth != depth) want = isPtr ? "a pointer" : "a number", bound = "";
    error(arg.loc, "argument " + quoted(p.name) + " of " + quoted(fn.name) + " must be " + want + bound +
                       " (or a tile of " + (isPtr ? "them" : written ? elem : "it") + "), not " + typeName(v));
    return invalid();
  }
  v.weak = false;
  return v;
}

// The value of `return [expr];` in a fn, checked against its result type.
TV IRGen::fnResult(const ast::Stmt &ret, const ast::Decl &fn) {
  TV none;
  none.k = TV::K::Void;
  if (!fn.hasResult) {
    if (!ret.value) return none;
    error(ret.value->loc, "fn " + quoted(fn.name) + " has no result type, so it returns no value (declare it as 'fn " +
                              fn.name + "(...) -> T')");
    return invalid();
  }
  if (!ret.value) {
    error(ret.loc, "fn " + quoted(fn.name) + " must return a value of type " + typeText(fn.result));
    return invalid();
  }
  TV v = genExpr(*ret.value);
  if (v.k != TV::K::Tuple) v = asValue(v, *ret.value);
  if (!v.ok()) return v;
  // One element (or the whole result) against its written type.
  auto check = [&](const TV &x, const ast::TypeRef &t) -> TV {
    auto resolved = namedType(t);  // a scalar type, or a type variable bound by the arguments
    if (!resolved) return invalid();
    const ScalarKind k = *resolved;
    const bool isPtr = t.ptrDepth > 0;
    if (!isPtr && x.weak && k != ScalarKind::I1 && (ir::isFloat(k) || !x.cst->isFloat)) {
      if (!checkWeakFits(x, k, ret.value->loc)) return invalid();
      return convert(x, k, ret.value->loc);
    }
    if (x.k == TV::K::Tuple || x.weak || x.type.elem.ptrDepth != t.ptrDepth || x.type.elem.scalar != k) {
      error(ret.value->loc, "fn " + quoted(fn.name) + " returns " + typeName(v) + ", but its result type is " +
                                typeText(fn.result));
      return invalid();
    }
    return x;
  };
  if (fn.result.isTuple()) return tupleAs(v, fn.result, *ret.value, "the result of fn " + quoted(fn.name), check);
  return check(v, fn.result);
}

void IRGen::checkFnAlone(const ast::Decl &fn, int64_t tileSize, ScalarKind typeVarKind) {
  ir::Function scratch;
  scratch.name = fn.name;
  fn_ = &scratch;
  builder_ = std::make_unique<ir::Builder>(&scratch.body);
  resetScopes();
  jumps_ = {};
  loopDepth_ = guardDepth_ = 0;
  for (const ast::Param &p : fn.params)
    if (!scalarKind(p.type.name) && !lookup(p.type.name)) {  // a type variable (checked at load)
      TV t;
      t.k = TV::K::TypeArg;
      t.typeArg = typeVarKind;
      bind(p.type.name, t);
    }
  // A param of a tuple type is a tuple of params, one per element.
  std::function<TV(const std::string &, const ast::TypeRef &)> paramOf = [&](const std::string &name,
                                                                             const ast::TypeRef &type) {
    TV v;
    if (type.isTuple()) {
      v.k = TV::K::Tuple;
      for (size_t i = 0; i < type.elems.size(); ++i) v.elems.push_back(paramOf(name + "." + std::to_string(i), type.elems[i]));
      return v;
    }
    const ScalarKind k = scalarKind(type.name).value_or(typeVarKind);
    ir::ElemType elem{k, static_cast<uint8_t>(type.ptrDepth)};
    ir::Type t = tileSize ? ir::Type::tile(elem, {tileSize}) : ir::Type{elem, {}, nullptr};
    return value(scratch.addParam(name, t));
  };
  for (const ast::Param &p : fn.params) bind(p.name, paramOf(p.name, p.type), /*isVar=*/true);
  if (fn.hasResult && fn.result.isTuple()) bindResultVars(fn.result);
  else if (fn.hasResult) bind(kResultVar, TV{}, true);
  inlineStack_.assign(1, &fn);
  const int errorsBefore = diags_.errorCount();
  genStmts(fn.body);
  const bool returned = jumps_.ret.ok() && jumps_.ret.cst && jumps_.ret.cst->i;
  const TV result = !fn.hasResult ? TV{} : fn.result.isTuple() ? resultValue(fn.result) : scopes_.front()[kResultVar].value;
  if (fn.hasResult && (!returned || !result.ok()) && diags_.errorCount() == errorsBefore)
    error(fn.loc, "fn " + quoted(fn.name) + " must end with 'return VALUE;' (its result type is " +
                      typeText(fn.result) + ")");
  inlineStack_.clear();
  builder_.reset();
  fn_ = nullptr;
}

// grammar (a call): static_assert(cond [, "message"])
TV IRGen::staticAssert(const ast::Expr &e) {
  TV none;
  none.k = TV::K::Void;
  const char *usage = " (usage: static_assert(cond, \"message\"))";
  bool named = std::any_of(e.argNames.begin(), e.argNames.end(), [](const std::string &n) { return !n.empty(); });
  if (named || e.args.empty() || e.args.size() > 2) {
    error(e.loc, std::string("static_assert takes a condition and an optional message") + usage);
    return invalid();
  }
  std::string message;
  if (e.args.size() == 2) {
    if (e.args[1]->kind != ast::ExprKind::String) {
      error(e.args[1]->loc, "the message of static_assert must be a string literal");
      return invalid();
    }
    message = e.args[1]->text;
  }
  TV c = genValue(*e.args[0]);
  if (!c.ok()) return invalid();
  if (!c.type.isBool() || c.type.isTile() || !c.cst) {
    error(e.args[0]->loc, "static_assert needs a compile-time bool condition, not " +
                              (c.type.isBool() && !c.type.isTile() ? "a value known only at run time" : typeName(c)));
    return invalid();
  }
  if (!c.cst->i) {
    error(e.loc, "static assertion failed" + (message.empty() ? "" : ": " + message));
    return invalid();
  }
  return none;
}

}  // namespace tk::lang
