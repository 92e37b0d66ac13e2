// AST -> tile IR for the statements that leave a path early: `return`,
// `break` and `continue`. The tile IR's control flow is structured, so a jump
// becomes a flag (an i1 that is true once the path has jumped), and what
// follows a statement that may have jumped runs under `if !jumped`, which
// carries out the vars it assigns and the flags it may set. Nothing is
// copied: the IR grows linearly with the source.
#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

namespace {
// Each statement list after a possible jump nests one region deeper: more
// than this many in a row is refused (the IR's text parser reads 256 levels).
constexpr int kMaxGuards = 128;

bool taken(const TV &f) { return f.ok(); }  // may have jumped (or surely has)
bool surely(const TV &f) { return f.ok() && f.cst && f.cst->i; }
}  // namespace

bool IRGen::mayHaveJumped() const { return taken(jumps_.ret) || taken(jumps_.brk) || taken(jumps_.cont); }
bool IRGen::surelyJumped() const { return surely(jumps_.ret) || surely(jumps_.brk) || surely(jumps_.cont); }
TV IRGen::jumped() const { return constant(ConstValue::ofInt(1), ScalarKind::I1, false); }

bool IRGen::mayJump(const std::vector<ast::StmtPtr> &body, ast::StmtKind kind, bool nestedLoop) {
  for (const ast::StmtPtr &s : body) {
    if (s->kind == kind && (kind == ast::StmtKind::Return || !nestedLoop)) return true;
    const bool loop = s->kind == ast::StmtKind::For || s->kind == ast::StmtKind::While;
    if (mayJump(s->body, kind, nestedLoop || loop) || mayJump(s->elseBody, kind, nestedLoop)) return true;
  }
  return false;
}

// A flag as an i1 value: false where no jump was taken.
ir::Value *IRGen::flagValue(const TV &f, const ast::Loc &loc) {
  return coerce(taken(f) ? f : constant(ConstValue::ofInt(0), ScalarKind::I1, false), Type::scalar(ScalarKind::I1), loc);
}

// True where the path has jumped in any way.
ir::Value *IRGen::skipCondition(const ast::Loc &loc) {
  ir::Value *c = nullptr;
  for (const TV *f : {&jumps_.ret, &jumps_.brk, &jumps_.cont}) {
    if (!taken(*f)) continue;
    ir::Value *v = flagValue(*f, loc);
    c = c ? emit(OpKind::Or, {c, v}, Type::scalar(ScalarKind::I1), loc) : v;
  }
  return c;
}

// genStmts from `from` on, after a statement that may have jumped: they run
// under `if !jumped`.
void IRGen::guardRest(const std::vector<ast::StmtPtr> &body, size_t from) {
  std::vector<Carried> carried = carriedVars(body, from);
  guard(carried, body[from]->loc, [&] { genStmts(body, from); });
}

void IRGen::guard(std::vector<Carried> &carried, const ast::Loc &loc, const std::function<void()> &rest) {
  if (guardDepth_ >= kMaxGuards) {
    error(loc, "more than " + std::to_string(kMaxGuards) +
                   " statements in a row follow a possible 'return', 'break' or 'continue'; "
                   "merge the conditions into fewer jumps");
    return;
  }
  const Jumps before = jumps_;
  // The rest's own names reach past the guard only where the list it ends
  // is a branch whose names are merged after its `if`.
  const bool mergesNames =
      !regions_.empty() && regions_.back().scopeStart + 1 == scopes_.size() && regions_.back().mergesNames;
  ir::Value *skip = skipCondition(loc);
  builder_->setLoc(irLoc(loc));
  ir::Op *branch = builder_->create(OpKind::If, {skip}, std::nullopt);
  auto outer = std::move(builder_);
  std::vector<BranchEnd> ends(2);
  // Then: the path has jumped; everything keeps its value.
  builder_ = std::make_unique<ir::Builder>(addRegion(branch, {}));
  for (const Carried &c : carried)
    ends[0].vals.push_back(c.before.ok() ? coerce(c.before, c.before.type, loc) : nullptr);
  ends[0].jumps = before;
  // With one flag set, the path that skips has surely taken that jump.
  int set = 0;
  for (const TV *f : {&before.ret, &before.brk, &before.cont}) set += taken(*f);
  if (set == 1)
    for (TV *f : {&ends[0].jumps.ret, &ends[0].jumps.brk, &ends[0].jumps.cont})
      if (taken(*f)) *f = jumped();
  ends[0].builder = std::move(builder_);
  ends[0].what = "the path that jumped";
  ends[0].label = ends[0].what + " before " + std::to_string(loc.line) + ":" + std::to_string(loc.col);
  // Else: the rest runs, with no jump taken so far.
  builder_ = std::make_unique<ir::Builder>(addRegion(branch, {}));
  jumps_ = {};
  ++guardDepth_;
  regions_.push_back({scopes_.size(), false, mergesNames, loc, "the statements after a possible jump"});
  scopes_.emplace_back();
  rest();
  ends[1].vals = currentValues(carried, loc, /*keepType=*/false);
  if (mergesNames) ends[1].names = std::move(scopes_.back());
  scopes_.pop_back();
  regions_.pop_back();
  --guardDepth_;
  ends[1].what = "the statements after the possible jump";
  ends[1].label = "the statements from " + std::to_string(loc.line) + ":" + std::to_string(loc.col) + " on";
  ends[1].jumps = jumps_;
  ends[1].builder = std::move(builder_);
  builder_ = std::move(outer);
  mergeBranches(branch, carried, ends, loc);
}

// grammar: RETURN [expr] ';'
// In a kernel, `return;` ends the path; in a fn, `return VALUE;` also sets
// the fn's result (a var no name can reach).
void IRGen::genReturn(const ast::Stmt &s) {
  if (inlineStack_.empty()) {
    if (s.value) {
      error(s.value->loc, "a kernel returns no value: use 'return;'");
      return;
    }
    jumps_.ret = jumped();
    return;
  }
  const ast::Decl &fn = *inlineStack_.back();
  TV v = fnResult(s, fn);
  jumps_.ret = jumped();
  if (!v.ok() || v.k == TV::K::Void) return;
  if (v.k == TV::K::Tuple) {
    returnTuple(s, v);
    return;
  }
  Binding &result = scopes_.front()[kResultVar];
  if (result.value.ok() && (result.value.type.shape != v.type.shape || result.value.type.elem != v.type.elem)) {
    error(s.value->loc, "fn " + quoted(fn.name) + " returns " + typeName(v) + " here but " + typeName(result.value) +
                            " at an earlier 'return'");
    return;
  }
  result.value = v;
}

// grammar: BREAK ';' | CONTINUE ';'
void IRGen::genLoopJump(const ast::Stmt &s) {
  const bool brk = s.kind == ast::StmtKind::Break;
  if (loopDepth_ == 0) {
    error(s.loc, std::string(brk ? "'break'" : "'continue'") + " outside a loop" +
                     (inlineStack_.empty() ? "" : " (a fn's body cannot leave its caller's loop)"));
    return;
  }
  (brk ? jumps_.brk : jumps_.cont) = jumped();
}

}  // namespace tk::lang
