// AST -> tile IR for control flow decided at run time: `for i in range(...)`
// and `while cond` loops that carry the `var`s their body assigns, and
// `if`/`else` on a runtime scalar bool that merges the `var`s its branches
// assign. Jumps out of them (return, break, continue) are flags: Jumps.cpp.
#include <algorithm>

#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

namespace {

// Names assigned anywhere in `body` from `from` on: nested blocks, branches
// and loops; `return VALUE` assigns a fn's result.
void assignedNames(const std::vector<ast::StmtPtr> &body, size_t from, std::vector<std::string> &out) {
  auto add = [&](const std::string &n) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  for (size_t i = from; i < body.size(); ++i) {
    const ast::Stmt &s = *body[i];
    if (s.kind == ast::StmtKind::Assign && s.target && s.target->kind == ast::ExprKind::Name) add(s.target->text);
    if (s.kind == ast::StmtKind::Return && s.value) add(kResultVar);
    assignedNames(s.body, 0, out);
    assignedNames(s.elseBody, 0, out);
  }
}

}  // namespace

// A region of `op` with `argTypes` arguments, appended to it.
ir::Block *addRegion(ir::Op *op, const std::vector<Type> &argTypes) {
  auto region = std::make_unique<ir::Block>();
  region->setParentOp(op);
  for (const Type &t : argTypes) region->addArgument(t);
  op->regions().push_back(std::move(region));
  return op->regions().back().get();
}

// The outer `var`s that `bodies` assign (others are the body's own, or
// errors that genAssign reports), and a fn's result once a `return` may set it.
std::vector<IRGen::Carried> IRGen::carriedVars(const std::vector<const std::vector<ast::StmtPtr> *> &bodies) {
  std::vector<std::string> names;
  for (const auto *b : bodies) assignedNames(*b, 0, names);
  return carriedNamed(names);
}

std::vector<IRGen::Carried> IRGen::carriedVars(const std::vector<ast::StmtPtr> &body, size_t from) {
  std::vector<std::string> names;
  assignedNames(body, from, names);
  return carriedNamed(names);
}

std::vector<IRGen::Carried> IRGen::carriedNamed(const std::vector<std::string> &given) {
  std::vector<Carried> out;
  std::vector<std::string> names = given;
  // A `return` of a tuple assigns one var per element.
  if (std::find(names.begin(), names.end(), kResultVar) != names.end()) {
    std::vector<std::string> elements;
    for (const auto &[n, b] : scopes_.front())
      if (n != kResultVar && isResultVar(n)) elements.push_back(n);
    std::sort(elements.begin(), elements.end());  // the IR's results in a deterministic order
    names.insert(names.end(), elements.begin(), elements.end());
  }
  for (const std::string &n : names) {
    for (size_t d = scopes_.size(); d-- > 0;) {
      auto it = scopes_[d].find(n);
      if (it == scopes_[d].end()) continue;
      // A tuple var: each element, in order (genAssign keeps its shape).
      if (it->second.isVar && (it->second.value.ok() || isResultVar(n)))
        for (std::vector<size_t> &path : tupleLeaves(it->second.value))
          out.push_back({n, *elementAt(it->second.value, path), d, std::move(path)});
      break;
    }
  }
  return out;
}

IRGen::Binding *IRGen::binding(const Carried &c) { return &scopes_[c.depth][c.name]; }

std::string IRGen::Carried::label() const { return elementLabel(name, path); }

TV IRGen::carriedValue(const Carried &c) {
  const TV *v = elementAt(binding(c)->value, c.path);
  return v ? *v : TV{};
}

void IRGen::setCarried(const Carried &c, const TV &value) {
  // No such element: an error was reported where the tuple changed shape.
  if (TV *v = elementAt(binding(c)->value, c.path)) *v = value;
}

// The value of each carried var now, materialised as an IR value of its
// type; null for a fn's result that has none yet.
// A loop keeps each var's type (`keepType`); a branch may change it, and
// mergeBranches finds the type its paths meet in.
std::vector<ir::Value *> IRGen::currentValues(const std::vector<Carried> &carried, const ast::Loc &loc, bool keepType) {
  std::vector<ir::Value *> out;
  for (const Carried &c : carried) {
    TV now = carriedValue(c);
    if (!now.ok()) now = c.before;
    out.push_back(now.ok() ? coerce(now, keepType && c.before.ok() ? c.before.type : now.type, loc) : nullptr);
  }
  return out;
}

// The carried vars now name `op`'s results, typed as the values yielded.
void IRGen::bindResults(ir::Op *op, const std::vector<Carried> &carried, const std::vector<ir::Value *> &yielded) {
  for (size_t i = 0; i < carried.size(); ++i) {
    ir::Value *result = op->addResult(yielded[i]->type());
    if (!isResultVar(carried[i].name)) result->setNameHint(carried[i].label());
    setCarried(carried[i], value(result));
  }
}

// Loop bounds of `for i in range(...)`, checked and converted to one type.
bool IRGen::rangeBounds(const ast::Stmt &s, RangeBounds &out) {
  const ast::Expr &r = *s.value;
  std::vector<TV> bounds;
  if (!rangeArgs(r, bounds, &out.warpSpecialize)) return false;
  ScalarKind k = ScalarKind::I32;
  for (size_t i = 0; i < bounds.size(); ++i) {
    const TV &v = bounds[i];
    if (v.type.isTile() || !v.type.isInt() || v.type.isBool()) {
      error(r.args[i]->loc, "range bounds must be scalar integers, not " + typeName(v));
      return false;
    }
    if (!v.weak && v.type.elem.scalar == ScalarKind::I64) k = ScalarKind::I64;
  }
  for (size_t i = 0; i < bounds.size(); ++i)
    if (bounds[i].weak && !checkWeakFits(bounds[i], k, r.args[i]->loc)) return false;
  if (bounds.size() == 3 && bounds[2].cst && bounds[2].cst->i == 0) {
    error(r.args[2]->loc, "range step must not be 0");
    return false;
  }
  out.type = Type::scalar(k);
  TV zero = constant(ConstValue::ofInt(0), k, false), one = constant(ConstValue::ofInt(1), k, false);
  out.lb = coerce(bounds.size() == 1 ? zero : bounds[0], out.type, s.loc);
  out.ub = coerce(bounds.size() == 1 ? bounds[0] : bounds[1], out.type, s.loc);
  out.step = coerce(bounds.size() == 3 ? bounds[2] : one, out.type, s.loc);
  if (bounds.size() < 3) out.stepSign = 1;
  else if (bounds[2].cst) out.stepSign = bounds[2].cst->i > 0 ? 1 : -1;
  return true;
}

// grammar: FOR IDENT IN range(a[, b[, step]]) block
// i runs over a, a+step, ... while below b (above b for a negative step), as
// in Python; the vars the body assigns are carried from one iteration to the
// next and hold their last values after the loop. A body that may `break` or
// `return` makes a `while` loop, which can stop early.
void IRGen::genRuntimeFor(const ast::Stmt &s) {
  RangeBounds range;
  if (!rangeBounds(s, range)) return;
  if (mayJump(s.body, ast::StmtKind::Break) || mayJump(s.body, ast::StmtKind::Return)) {
    genLoop(s, &range);
    return;
  }
  std::vector<ir::Value *> operands = {range.lb, range.ub, range.step};
  std::vector<Carried> carried = carriedVars({&s.body});
  std::vector<Type> argTypes = {range.type};
  for (ir::Value *v : currentValues(carried, s.loc)) {
    operands.push_back(v);
    argTypes.push_back(v->type());
  }

  builder_->setLoc(irLoc(s.loc));
  ir::Op *loop = builder_->create(OpKind::For, operands, std::nullopt);
  if (range.warpSpecialize) loop->setAttr("warp_specialize", int64_t{1});
  ir::Block *body = addRegion(loop, argTypes);
  body->argument(0)->setNameHint(s.name);
  for (size_t i = 0; i < carried.size(); ++i) {
    setCarried(carried[i], value(body->argument(i + 1)));
    body->argument(i + 1)->setNameHint(carried[i].label());
  }
  auto outer = std::move(builder_);
  builder_ = std::make_unique<ir::Builder>(body);
  regions_.push_back({scopes_.size(), true, false, s.loc, "the 'for' loop"});
  scopes_.emplace_back();
  // The induction variable is a var, as in Python (`start_n =
  // multiple_of(start_n, BLOCK_N)`): a new value lasts for the rest of the
  // iteration, the next one starts from the loop's own count.
  bind(s.name, value(body->argument(0)), /*isVar=*/true);
  ++loopDepth_;
  genStmts(s.body);
  --loopDepth_;
  jumps_ = {};  // a `continue` ends only its iteration
  scopes_.pop_back();
  regions_.pop_back();
  std::vector<ir::Value *> next = currentValues(carried, s.loc);
  builder_->setLoc(irLoc(s.loc));
  builder_->create(OpKind::Yield, next, std::nullopt);
  builder_ = std::move(outer);
  bindResults(loop, carried, next);
}

// grammar: WHILE expr block
void IRGen::genWhile(const ast::Stmt &s) { genLoop(s, nullptr); }

// A `while` op: the carried vars, then (for a `for` loop) the induction
// variable, then the flags of a `break` and a `return` in the body, which
// stop the loop. The condition is evaluated only while no flag is set.
void IRGen::genLoop(const ast::Stmt &s, const RangeBounds *range) {
  std::vector<Carried> carried = carriedVars({&s.body});
  for (const Carried &c : carried)
    if (!c.before.ok()) {
      error(s.loc, "a 'return' with a value inside a runtime loop needs an earlier 'return' of the fn to fix the "
                   "type of its result");
      return;
    }
  const bool hasBreak = mayJump(s.body, ast::StmtKind::Break);
  const bool hasReturn = mayJump(s.body, ast::StmtKind::Return);
  const Type i1 = Type::scalar(ScalarKind::I1);
  std::vector<ir::Value *> inits = currentValues(carried, s.loc);
  if (range) inits.push_back(range->lb);
  for (bool flag : {hasBreak, hasReturn})
    if (flag) inits.push_back(flagValue(TV{}, s.loc));
  std::vector<Type> types;
  for (ir::Value *v : inits) types.push_back(v->type());

  builder_->setLoc(irLoc(s.loc));
  ir::Op *loop = builder_->create(OpKind::While, inits, std::nullopt);
  ir::Block *before = addRegion(loop, types), *body = addRegion(loop, types);
  auto outer = std::move(builder_);
  const size_t ivAt = carried.size(), brkAt = ivAt + (range ? 1 : 0), retAt = brkAt + (hasBreak ? 1 : 0);

  // The condition, from the carried values.
  builder_ = std::make_unique<ir::Builder>(before);
  for (size_t i = 0; i < carried.size(); ++i) setCarried(carried[i], value(before->argument(i)));
  ir::Value *stop = nullptr;
  if (hasBreak) stop = before->argument(brkAt);
  if (hasReturn) stop = stop ? emit(OpKind::Or, {stop, before->argument(retAt)}, i1, s.loc) : before->argument(retAt);
  ir::Value *cond = nullptr;
  if (range) {
    cond = rangeCondition(before->argument(ivAt), *range, s.loc);
    if (stop) cond = emit(OpKind::And, {cond, emit(OpKind::Not, {stop}, i1, s.loc)}, i1, s.loc);
  } else if (!stop) {
    cond = loopCondition(*s.value);
  } else {
    builder_->setLoc(irLoc(s.loc));
    ir::Op *test = builder_->create(OpKind::If, {stop}, i1);
    auto inner = std::move(builder_);
    builder_ = std::make_unique<ir::Builder>(addRegion(test, {}));
    builder_->create(OpKind::Yield, {flagValue(TV{}, s.loc)}, std::nullopt);
    builder_ = std::make_unique<ir::Builder>(addRegion(test, {}));
    ir::Value *c = loopCondition(*s.value);
    builder_->setLoc(irLoc(s.loc));
    builder_->create(OpKind::Yield, {c}, std::nullopt);
    builder_ = std::move(inner);
    cond = test->result();
  }
  builder_->setLoc(irLoc(s.loc));
  builder_->create(OpKind::Yield, {cond}, std::nullopt);

  // The body, with no flag set on entry.
  builder_ = std::make_unique<ir::Builder>(body);
  for (size_t i = 0; i < carried.size(); ++i) {
    setCarried(carried[i], value(body->argument(i)));
    body->argument(i)->setNameHint(carried[i].label());
  }
  regions_.push_back({scopes_.size(), true, false, s.loc, range ? "the 'for' loop" : "the 'while' loop"});
  scopes_.emplace_back();
  if (range) {
    bind(s.name, value(body->argument(ivAt)), /*isVar=*/true);
    body->argument(ivAt)->setNameHint(s.name);
  }
  jumps_ = {};
  ++loopDepth_;
  genStmts(s.body);
  --loopDepth_;
  scopes_.pop_back();
  regions_.pop_back();
  std::vector<ir::Value *> next = currentValues(carried, s.loc);
  if (range) next.push_back(emit(OpKind::Add, {body->argument(ivAt), range->step}, range->type, s.loc));
  if (hasBreak) next.push_back(flagValue(jumps_.brk, s.loc));
  if (hasReturn) next.push_back(flagValue(jumps_.ret, s.loc));
  builder_->setLoc(irLoc(s.loc));
  builder_->create(OpKind::Yield, next, std::nullopt);
  builder_ = std::move(outer);

  for (size_t i = 0; i < types.size(); ++i) loop->addResult(types[i]);
  for (size_t i = 0; i < carried.size(); ++i) {
    loop->result(i)->setNameHint(carried[i].label());
    setCarried(carried[i], value(loop->result(i)));
  }
  jumps_ = {};
  if (hasReturn) jumps_.ret = value(loop->result(retAt));
}

// iv < ub for a positive step, iv > ub for a negative one (known or not).
ir::Value *IRGen::rangeCondition(ir::Value *iv, const RangeBounds &range, const ast::Loc &loc) {
  const Type i1 = Type::scalar(ScalarKind::I1);
  using ir::CmpPredicate;
  auto cmp = [&](ir::Value *a, ir::Value *b, CmpPredicate p) {
    return emit(OpKind::Cmp, {a, b}, i1, loc, {{"predicate", ir::attrOf(p)}});
  };
  if (range.stepSign) return cmp(iv, range.ub, range.stepSign > 0 ? CmpPredicate::Lt : CmpPredicate::Gt);
  ir::Value *zero = emitConst(ConstValue::ofInt(0), range.type, loc);
  ir::Value *up = emit(OpKind::And, {cmp(range.step, zero, CmpPredicate::Gt), cmp(iv, range.ub, CmpPredicate::Lt)}, i1, loc);
  ir::Value *down =
      emit(OpKind::And, {cmp(range.step, zero, CmpPredicate::Lt), cmp(iv, range.ub, CmpPredicate::Gt)}, i1, loc);
  return emit(OpKind::Or, {up, down}, i1, loc);
}

// A while loop's condition (false after an error).
ir::Value *IRGen::loopCondition(const ast::Expr &e) { return flagValue(condition(e, "a 'while'"), e.loc); }

// grammar: IF expr block [ELSE (block | if_stmt)], the condition a runtime
// scalar bool. Each branch starts from the vars' values before the `if`; the
// vars either assigns, the names both bind and the flags of the jumps either
// may take are merged after it (Merge.cpp).
void IRGen::genRuntimeIf(const ast::Stmt &s, ir::Value *cond) {
  std::vector<Carried> carried = carriedVars({&s.body, &s.elseBody});
  builder_->setLoc(irLoc(s.loc));
  ir::Op *branch = builder_->create(OpKind::If, {cond}, std::nullopt);
  auto outer = std::move(builder_);
  std::vector<BranchEnd> ends(2);
  for (int r = 0; r < 2; ++r) {
    builder_ = std::make_unique<ir::Builder>(addRegion(branch, {}));
    for (const Carried &c : carried) setCarried(c, c.before);
    jumps_ = {};
    regions_.push_back({scopes_.size(), false, true, s.loc, "the 'if'"});
    scopes_.emplace_back();
    genStmts(r ? s.elseBody : s.body);
    ends[r].vals = currentValues(carried, s.loc, /*keepType=*/false);
    ends[r].names = std::move(scopes_.back());
    scopes_.pop_back();
    regions_.pop_back();
    labelBranch(ends[r], s, r);
    ends[r].jumps = jumps_;
    ends[r].builder = std::move(builder_);
  }
  builder_ = std::move(outer);
  mergeBranches(branch, carried, ends, s.loc);
}

}  // namespace tk::lang
