// Device debugging built-ins: `print` (Triton's device_print: one line per
// element, made by the thread that owns it) and `assert` (the launch fails
// with the message where a condition is false). Both become ops with no
// result that the optimizer keeps.
#include <algorithm>

#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;

namespace {
TV voidValue() {
  TV v;
  v.k = TV::K::Void;
  return v;
}

bool hasNamedArg(const ast::Expr &e) {
  return std::any_of(e.argNames.begin(), e.argNames.end(), [](const std::string &n) { return !n.empty(); });
}
}  // namespace

TV IRGen::debugCall(const ast::Expr &e) {
  if (e.text == "debug_barrier") return barrierCall(e);
  return e.text == "print" ? printCall(e) : assertCall(e);
}

// grammar (a call): debug_barrier()
// Triton's tl.debug_barrier: a block-wide barrier (bar.sync 0 on a GPU) that
// orders the program's own global and shared accesses, e.g. a store and a
// load of the same elements by other threads of the program. Control flow
// in tk branches on scalars, which every thread of a program shares, so a
// barrier is never reached by only some of them.
TV IRGen::barrierCall(const ast::Expr &e) {
  if (!e.args.empty()) {
    error(e.loc, "'debug_barrier' takes no arguments (usage: debug_barrier())");
    return invalid();
  }
  builder_->setLoc(e.loc);
  builder_->create(OpKind::Barrier, {}, std::nullopt);
  return voidValue();
}

// grammar (a call): print("prefix" [, value]...)
// Values are scalars or tiles of numbers, bools or pointers; each prints on
// its own lines, so they need not share a shape.
TV IRGen::printCall(const ast::Expr &e) {
  const char *usage = " (usage: print(\"x =\", x))";
  if (hasNamedArg(e)) {
    error(e.loc, std::string("'print' takes no named arguments") + usage);
    return invalid();
  }
  if (e.args.empty()) {
    error(e.loc, std::string("'print' needs a string prefix and the values to print") + usage);
    return invalid();
  }
  if (e.args[0]->kind != ast::ExprKind::String) {
    error(e.args[0]->loc, std::string("the first argument of 'print' must be a string literal (its prefix)") + usage);
    return invalid();
  }
  std::vector<ir::Value *> operands;
  bool bad = false;
  for (size_t i = 1; i < e.args.size(); ++i) {
    const ast::Expr &a = *e.args[i];
    if (a.kind == ast::ExprKind::String) {
      error(a.loc, "only the first argument of 'print' may be a string (the prefix)");
      bad = true;
      continue;
    }
    TV v = genValue(a);
    if (!v.ok()) {
      bad = true;
      continue;
    }
    // A literal prints in the type it takes alone (i32, f32).
    if (ir::Value *x = coerce(v, v.type, a.loc)) operands.push_back(x);
    else bad = true;
  }
  if (bad) return invalid();
  builder_->setLoc(e.loc);
  builder_->create(OpKind::Print, operands, std::nullopt, {{"prefix", e.args[0]->text}});
  return voidValue();
}

// grammar (a call): assert(cond [, "message"])
// `cond` is a bool scalar or tile; every element must hold.
TV IRGen::assertCall(const ast::Expr &e) {
  const char *usage = " (usage: assert(cond, \"message\"))";
  if (hasNamedArg(e) || e.args.empty() || e.args.size() > 2) {
    error(e.loc, std::string("'assert' takes a condition and an optional message") + usage);
    return invalid();
  }
  std::string message;
  if (e.args.size() == 2) {
    if (e.args[1]->kind != ast::ExprKind::String) {
      error(e.args[1]->loc, std::string("the message of 'assert' must be a string literal") + usage);
      return invalid();
    }
    message = e.args[1]->text;
  }
  if (e.args[0]->kind == ast::ExprKind::String) {
    error(e.args[0]->loc, std::string("the first argument of 'assert' is the condition") + usage);
    return invalid();
  }
  TV c = genValue(*e.args[0]);
  if (!c.ok()) return invalid();
  if (!c.type.isBool()) {
    error(e.args[0]->loc, "the condition of 'assert' must be bool (a scalar or a tile), not " + typeName(c));
    return invalid();
  }
  ir::Value *cond = coerce(c, c.type, e.args[0]->loc);
  if (!cond) return invalid();
  builder_->setLoc(e.loc);
  builder_->create(OpKind::Assert, {cond}, std::nullopt, {{"message", message}});
  return voidValue();
}

}  // namespace tk::lang
