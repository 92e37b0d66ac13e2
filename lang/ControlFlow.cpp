// AST -> tile IR for control flow decided at run time: `for i in range(...)`
// loops that carry the `var`s their body assigns, `if`/`else` on a runtime
// scalar bool that merges the `var`s its branches assign, and `return` under
// a runtime condition, which moves the rest of the kernel into the branches
// that do not return (the tile IR's control flow is structured).
#include <algorithm>

#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

namespace {

// Names assigned anywhere in `body`: nested blocks, branches and loops.
void assignedNames(const std::vector<ast::StmtPtr> &body, std::vector<std::string> &out) {
  for (const ast::StmtPtr &s : body) {
    if (s->kind == ast::StmtKind::Assign && s->target && s->target->kind == ast::ExprKind::Name &&
        std::find(out.begin(), out.end(), s->target->text) == out.end())
      out.push_back(s->target->text);
    assignedNames(s->body, out);
    assignedNames(s->elseBody, out);
  }
}

bool containsReturn(const std::vector<ast::StmtPtr> &body) {
  for (const ast::StmtPtr &s : body)
    if (s->kind == ast::StmtKind::Return || containsReturn(s->body) || containsReturn(s->elseBody)) return true;
  return false;
}

// A region of `op` with `argTypes` arguments, appended to it.
ir::Block *addRegion(ir::Op *op, const std::vector<Type> &argTypes) {
  auto region = std::make_unique<ir::Block>();
  region->setParentOp(op);
  for (const Type &t : argTypes) region->addArgument(t);
  op->regions().push_back(std::move(region));
  return op->regions().back().get();
}

}  // namespace

// The outer `var`s that `stmts` assign (others are the body's own, or errors
// that genAssign reports).
std::vector<IRGen::Carried> IRGen::carriedVars(const std::vector<const std::vector<ast::StmtPtr> *> &bodies) {
  std::vector<std::string> names;
  for (const auto *b : bodies) assignedNames(*b, names);
  std::vector<Carried> out;
  for (const std::string &n : names) {
    Binding *b = lookup(n);
    if (b && b->isVar && b->value.ok()) out.push_back({n, b->value});
  }
  return out;
}

// The value of each carried var now, materialised as an IR value of its type.
std::vector<ir::Value *> IRGen::currentValues(const std::vector<Carried> &carried, const ast::Loc &loc) {
  std::vector<ir::Value *> out;
  for (const Carried &c : carried) {
    TV now = lookup(c.name)->value;
    out.push_back(coerce(now.ok() ? now : c.before, c.before.type, loc));
  }
  return out;
}

// The carried vars now name `op`'s results, typed as the values yielded.
void IRGen::bindResults(ir::Op *op, const std::vector<Carried> &carried, const std::vector<ir::Value *> &yielded) {
  for (size_t i = 0; i < carried.size(); ++i) {
    ir::Value *result = op->addResult(yielded[i]->type());
    result->setNameHint(carried[i].name);
    lookup(carried[i].name)->value = value(result);
  }
}

// grammar: FOR IDENT IN range(a[, b[, step]]) block
// i runs over a, a+step, ... while below b (above b for a negative step), as
// in Python; the vars the body assigns are carried from one iteration to the
// next and hold their last values after the loop.
void IRGen::genRuntimeFor(const ast::Stmt &s) {
  const ast::Expr &r = *s.value;
  std::vector<TV> bounds;
  if (!rangeArgs(r, bounds)) return;
  ScalarKind k = ScalarKind::I32;
  for (size_t i = 0; i < bounds.size(); ++i) {
    const TV &v = bounds[i];
    if (v.type.isTile() || !v.type.isInt() || v.type.isBool()) {
      error(r.args[i]->loc, "range bounds must be scalar integers, not " + typeName(v));
      return;
    }
    if (!v.weak && v.type.elem.scalar == ScalarKind::I64) k = ScalarKind::I64;
  }
  for (size_t i = 0; i < bounds.size(); ++i)
    if (bounds[i].weak && !checkWeakFits(bounds[i], k, r.args[i]->loc)) return;
  if (bounds.size() == 3 && bounds[2].cst && bounds[2].cst->i == 0) {
    error(r.args[2]->loc, "range step must not be 0");
    return;
  }
  const Type it = Type::scalar(k);
  TV zero = constant(ConstValue::ofInt(0), k, false), one = constant(ConstValue::ofInt(1), k, false);
  std::vector<ir::Value *> operands = {
      coerce(bounds.size() == 1 ? zero : bounds[0], it, s.loc),
      coerce(bounds.size() == 1 ? bounds[0] : bounds[1], it, s.loc),
      coerce(bounds.size() == 3 ? bounds[2] : one, it, s.loc),
  };
  std::vector<Carried> carried = carriedVars({&s.body});
  std::vector<Type> argTypes = {it};
  for (ir::Value *v : currentValues(carried, s.loc)) {
    operands.push_back(v);
    argTypes.push_back(v->type());
  }

  builder_->setLoc(irLoc(s.loc));
  ir::Op *loop = builder_->create(OpKind::For, operands, std::nullopt);
  ir::Block *body = addRegion(loop, argTypes);
  body->argument(0)->setNameHint(s.name);
  for (size_t i = 0; i < carried.size(); ++i) {
    lookup(carried[i].name)->value = value(body->argument(i + 1));
    body->argument(i + 1)->setNameHint(carried[i].name);
  }
  auto outer = std::move(builder_);
  builder_ = std::make_unique<ir::Builder>(body);
  scopes_.emplace_back();
  bind(s.name, value(body->argument(0)));
  ++loopDepth_;
  genStmts(s.body);
  --loopDepth_;
  scopes_.pop_back();
  std::vector<ir::Value *> next = currentValues(carried, s.loc);
  builder_->setLoc(irLoc(s.loc));
  builder_->create(OpKind::Yield, next, std::nullopt);
  builder_ = std::move(outer);
  bindResults(loop, carried, next);
}

// grammar: IF expr block [ELSE (block | if_stmt)], the condition a runtime
// scalar bool. Without a `return` in it, each branch starts from the vars'
// values before the `if`, and the vars either assigns are merged after it.
void IRGen::genRuntimeIf(const ast::Stmt &s, ir::Value *cond) {
  const bool returns = containsReturn(s.body) || containsReturn(s.elseBody);
  // A `return` in a loop or fn is reported by genReturn; in an unrolled
  // loop the rest of the kernel includes the later iterations, which the
  // frames below do not hold.
  if (returns && loopDepth_ == 0 && unrollDepth_ == 0 && inlineStack_.empty()) {
    genReturningIf(s, cond);
    return;
  }
  std::vector<Carried> carried = carriedVars({&s.body, &s.elseBody});
  builder_->setLoc(irLoc(s.loc));
  ir::Op *branch = builder_->create(OpKind::If, {cond}, std::nullopt);
  auto outer = std::move(builder_);
  std::vector<ir::Value *> yielded;
  for (int r = 0; r < 2; ++r) {
    builder_ = std::make_unique<ir::Builder>(addRegion(branch, {}));
    for (const Carried &c : carried) lookup(c.name)->value = c.before;
    scopes_.emplace_back();
    ++branchDepth_;
    genStmts(r ? s.elseBody : s.body);
    --branchDepth_;
    scopes_.pop_back();
    yielded = currentValues(carried, s.loc);
    builder_->setLoc(irLoc(s.loc));
    builder_->create(OpKind::Yield, yielded, std::nullopt);
  }
  builder_ = std::move(outer);
  bindResults(branch, carried, yielded);
}

// An `if` with a `return` in it: each branch that does not end the kernel
// goes on with the rest of it (the statements after the `if` in every
// enclosing statement list), so nothing follows the `if` itself.
void IRGen::genReturningIf(const ast::Stmt &s, ir::Value *cond) {
  const auto savedScopes = scopes_;
  std::vector<size_t> savedNext;
  for (const Frame &f : frames_) savedNext.push_back(f.next);
  builder_->setLoc(irLoc(s.loc));
  ir::Op *branch = builder_->create(OpKind::If, {cond}, std::nullopt);
  auto outer = std::move(builder_);
  for (int r = 0; r < 2; ++r) {
    scopes_ = savedScopes;
    for (size_t k = 0; k < frames_.size(); ++k) frames_[k].next = savedNext[k];
    builder_ = std::make_unique<ir::Builder>(addRegion(branch, {}));
    scopes_.emplace_back();
    genStmts(r ? s.elseBody : s.body);
    scopes_.pop_back();
    // By index: the statements generated here push frames of their own,
    // which may move the stack.
    for (size_t k = frames_.size(); k-- > 0 && !returned_;) {
      scopes_.resize(frames_[k].scopeDepth);
      while (frames_[k].next < frames_[k].stmts->size() && !returned_ && !diags_.tooManyErrors())
        genStmt(*(*frames_[k].stmts)[frames_[k].next++]);
    }
    returned_ = false;
    builder_->setLoc(irLoc(s.loc));
    builder_->create(OpKind::Yield, {}, std::nullopt);
  }
  builder_ = std::move(outer);
  scopes_ = savedScopes;
  for (Frame &f : frames_) f.next = f.stmts->size();
  returned_ = true;  // every path of the rest was generated in the branches
}

}  // namespace tk::lang
