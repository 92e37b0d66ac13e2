// AST -> tile IR for one specialised kernel: statements, names, operators,
// indexing, casts, and the explicit casts/splats/broadcasts between them.
// Built-in calls live in Builtins.cpp.
#include "lang/IRGen.h"

#include <algorithm>

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

std::optional<ScalarKind> IRGen::scalarKind(const std::string &name) {
  if (name == "bool") return ScalarKind::I1;
  if (name == "i1") return std::nullopt;
  if (name == "f8e4nv" || name == "float8e4nv") return ScalarKind::F8E4M3;  // Triton's names
  if (name == "f8e5" || name == "float8e5") return ScalarKind::F8E5M2;
  return ir::scalarFromName(name);
}

std::optional<ScalarKind> IRGen::resolveType(const std::string &name, const std::vector<ConstBinding> &consts) {
  if (auto k = scalarKind(name)) return k;
  for (const ConstBinding &c : consts)
    if (c.name == name && c.sort == ConstSort::Type) return c.kind;
  return std::nullopt;
}

// ---------------------------------------------------------------- values

TV IRGen::value(ir::Value *v) const {
  TV t;
  t.k = TV::K::Value;
  t.type = v->type();
  t.v = v;
  return t;
}

TV IRGen::constant(ConstValue c, ScalarKind k, bool weak) const {
  TV t;
  t.k = TV::K::Value;
  t.weak = weak;
  if (weak && !c.isFloat) k = weakIntKind(c.i);
  if (weak && c.isFloat) k = ScalarKind::F32;
  t.type = Type::scalar(k);
  t.cst = c;
  return t;
}

std::string IRGen::typeName(const TV &x) const {
  if (x.k == TV::K::Desc) {
    std::string s = "a tensor descriptor of " + x.elems[0].type.elem.pointee().str() + " blocks [";
    for (size_t i = 0; i < x.block.size(); ++i) s += (i ? ", " : "") + std::to_string(x.block[i]);
    return s + "]";
  }
  if (x.k == TV::K::Tuple) {
    std::string s = "(";
    for (size_t i = 0; i < x.elems.size(); ++i) s += (i ? ", " : "") + typeName(x.elems[i]);
    return s + (x.elems.size() == 1 ? ",)" : ")");
  }
  if (x.weak) return x.cst && x.cst->isFloat ? "float literal" : "int literal";
  std::string s = x.type.str();
  // Users write bool, not i1.
  if (x.type.isBool()) s.replace(s.find("i1"), 2, "bool");
  return s;
}

ir::Value *IRGen::emit(OpKind k, std::vector<ir::Value *> operands, Type t, const ast::Loc &loc,
                       std::map<std::string, ir::Attr> attrs) {
  builder_->setLoc(irLoc(loc));
  return builder_->value(k, std::move(operands), std::move(t), std::move(attrs));
}

ir::Value *IRGen::emitConst(ConstValue c, const Type &t, const ast::Loc &loc) {
  ir::Attr v;
  if (t.isFloat()) v = c.asDouble();
  else v = c.isFloat ? static_cast<int64_t>(c.f) : c.i;
  return emit(OpKind::Constant, {}, t, loc, {{"value", v}});
}

bool IRGen::checkWeakFits(const TV &x, ScalarKind k, const ast::Loc &loc) {
  if (!x.weak || !x.cst || x.cst->isFloat || ir::isFloat(k)) return true;
  if (k != ScalarKind::I1 && fitsIn(x.cst->i, k)) return true;
  error(loc, "integer literal " + std::to_string(x.cst->i) + " does not fit in " +
                 (k == ScalarKind::I1 ? std::string("bool") : ir::scalarName(k)));
  return false;
}

ir::Value *IRGen::coerce(const TV &x, const Type &t, const ast::Loc &loc) {
  if (x.cst && !t.isPtr()) {
    auto c = convertConst(*x.cst, t.elem.scalar);
    if (c) return emitConst(*c, t, loc);
  }
  ir::Value *v = x.v ? x.v : emitConst(*x.cst, x.type, loc);
  if (v->type().elem != t.elem) v = emit(OpKind::Cast, {v}, v->type().withElem(t.elem), loc);
  if (v->type().shape == t.shape) return v;
  if (v->type().isScalar()) return emit(OpKind::Splat, {v}, t, loc);
  while (v->type().rank() < t.rank()) {
    std::vector<int64_t> s = v->type().shape;
    s.insert(s.begin(), 1);
    v = emit(OpKind::ExpandDims, {v}, v->type().withShape(s), loc, {{"axis", int64_t{0}}});
  }
  if (v->type().shape != t.shape) v = emit(OpKind::Broadcast, {v}, t, loc);
  return v;
}

std::optional<std::vector<int64_t>> IRGen::broadcast(const std::vector<const TV *> &vals, const ast::Loc &loc) {
  std::vector<int64_t> shape;
  for (const TV *v : vals) {
    auto s = broadcastShapes(shape, v->type.shape);
    if (!s) {
      std::string msg = "cannot broadcast shapes";
      for (const TV *w : vals) msg += " " + shapeStr(w->type.shape);
      error(loc, msg);
      return std::nullopt;
    }
    shape = *s;
  }
  // Each operand fits the limit, but their broadcast may not.
  if (!checkTileShape(shape, loc)) return std::nullopt;
  return shape;
}

// ---------------------------------------------------------------- kernels

std::unique_ptr<ir::Function> IRGen::lowerKernel(const ast::Decl &kernel, const std::vector<ConstBinding> &consts,
                                                 int numWarps, const std::map<std::string, int64_t> &facts) {
  int errorsBefore = diags_.errorCount();
  auto fn = std::make_unique<ir::Function>();
  fn->name = kernel.name;
  fn->loc = kernel.loc;
  fn->attrs["num_warps"] = int64_t{numWarps};
  fn->attrs["source"] = file_;
  fn_ = fn.get();
  builder_ = std::make_unique<ir::Builder>(&fn->body);
  resetScopes();
  unrolledIterations_ = 0;
  inlineStack_.clear();
  failedFns_.clear();
  inlinedCalls_ = 0;
  quietFailure_ = false;
  jumps_ = {};
  loopDepth_ = guardDepth_ = 0;
  numWarps_ = numWarps;
  // Consts first: a descriptor's block may name one declared after it.
  for (const ast::Param &p : kernel.params) {
    if (p.isConst) {
      for (const ConstBinding &c : consts) {
        if (c.name != p.name) continue;
        bind(p.name, constBinding(c));
        lookup(p.name)->isConstParam = true;
        if (c.sort != ConstSort::Scalar) fn->attrs["const." + p.name] = c.value.s;
        else if (ir::isFloat(c.kind)) fn->attrs["const." + p.name] = c.value.asDouble();
        else fn->attrs["const." + p.name] = c.value.i;
      }
    }
  }
  for (const ast::Param &p : kernel.params) {
    if (p.isConst) continue;
    if (p.isDescriptor) {
      bindDescriptorParam(p, *resolveType(p.type.name, consts));  // checked by Frontend::lowerKernel
      continue;
    }
    ScalarKind k = *resolveType(p.type.name, consts);  // checked by specialiseConsts
    Type t{ir::ElemType{k, static_cast<uint8_t>(p.type.ptrDepth)}, {}, nullptr};
    ir::Value *v = fn->addParam(p.name, t, p.type.ptrDepth ? (p.hasAlign ? p.align : 16) : 0);
    v->setNameHint(p.name);
    auto fact = facts.find(p.name);
    if (fact != facts.end() && fact->second == 1) {
      // An IR constant, not a front-end one: the variant folds `x * 1`, but
      // the language does not treat the argument as compile-time.
      builder_->setLoc(p.loc);
      ir::Value *one = emitConst(ConstValue::ofInt(1), t, p.loc);
      one->setNameHint(p.name);
      bind(p.name, value(one), /*isVar=*/true);
      continue;
    }
    if (fact != facts.end()) fn->params.back().divisibility = fact->second;
    bind(p.name, value(v), /*isVar=*/true);  // as in Triton: `X_ptr += row * stride`
  }
  genStmts(kernel.body);
  ast::Loc end = kernel.loc;
  builder_->setLoc(end);
  builder_->create(OpKind::Return, {}, std::nullopt);
  fn_ = nullptr;
  builder_.reset();
  if (diags_.errorCount() != errorsBefore || quietFailure_) return nullptr;
  return fn;
}

// Evaluates into a scratch function: a constant expression emits nothing
// that is kept.
void IRGen::beginConstEval(ir::Function &scratch, const std::vector<ConstBinding> &consts,
                           const std::vector<std::string> &runtimeParams, std::string context) {
  fn_ = &scratch;
  builder_ = std::make_unique<ir::Builder>(&scratch.body);
  resetScopes();
  for (const ConstBinding &c : consts) bind(c.name, constBinding(c));
  runtimeNames_ = runtimeParams;
  constContext_ = std::move(context);
}

void IRGen::endConstEval() {
  builder_.reset();
  fn_ = nullptr;
  runtimeNames_.clear();
}

std::optional<ConstValue> IRGen::evalConst(const ast::Expr &e, const std::string &param, ScalarKind kind,
                                           const std::vector<ConstBinding> &consts,
                                           const std::vector<std::string> &runtimeParams, ConstSort sort) {
  ir::Function scratch;
  beginConstEval(scratch, consts, runtimeParams, "the default value of const parameter " + quoted(param));
  int errorsBefore = diags_.errorCount();
  TV v = sort == ConstSort::Scalar ? genValue(e) : genExpr(e);
  endConstEval();
  if (diags_.errorCount() != errorsBefore || !v.ok()) return std::nullopt;
  if (sort != ConstSort::Scalar) {
    bool isStr = sort == ConstSort::Str;
    if (v.k != (isStr ? TV::K::Str : TV::K::TypeArg)) {
      error(e.loc, "the default value of const parameter " + quoted(param) + " must be " +
                       (isStr ? "a string such as \"relu\"" : "a type such as f32"));
      return std::nullopt;
    }
    return ConstValue::ofText(isStr ? v.str : typeText(v.typeArg));
  }
  if (v.k == TV::K::Str || v.k == TV::K::TypeArg) return std::nullopt;  // genValue reported it
  if (!v.cst || v.type.isTile()) {
    error(e.loc, "the default value of const parameter " + quoted(param) + " is not a compile-time constant");
    return std::nullopt;
  }
  bool fromBool = v.type.isBool(), toBool = kind == ScalarKind::I1;
  bool fromFloat = v.type.isFloat();
  if (fromBool != toBool || (fromFloat && !ir::isFloat(kind))) {
    error(e.loc, "the default value of const parameter " + quoted(param) + " has type " + typeName(v) + ", not " +
                     (toBool ? std::string("bool") : ir::scalarName(kind)));
    return std::nullopt;
  }
  if (!checkWeakFits(v, kind, e.loc)) return std::nullopt;
  return convertConst(*v.cst, kind);
}

// ---------------------------------------------------------------- expressions

TV IRGen::genValue(const ast::Expr &e) { return asValue(genExpr(e), e); }

// `v`, which `e` gave, where one value is wanted: not a type, a string,
// nothing, or a tuple.
TV IRGen::asValue(TV v, const ast::Expr &e) {
  if (v.k == TV::K::Tuple) {
    error(e.loc, "a tuple of " + std::to_string(v.elems.size()) +
                     " values is not one value: unpack it ('let (a, b) = ...') or index it ('t[0]')");
    return invalid();
  }
  if (v.k == TV::K::TypeArg) {
    error(e.loc, "type '" + (e.kind == ast::ExprKind::Name ? e.text : e.type.str()) + "' is not a value" +
                     (e.kind == ast::ExprKind::Name ? " (a type const is compared with == and != or names a type)" : ""));
    return invalid();
  }
  if (v.k == TV::K::Str) {
    if (e.kind == ast::ExprKind::String)
      error(e.loc, "string literals are only allowed in import, print, static_assert and comparisons with a string const");
    else
      error(e.loc, "string const " + quoted(e.text) + " is not a value: compare it with == or != at compile time");
    return invalid();
  }
  if (v.k == TV::K::Void) {
    error(e.loc, quoted(e.text) + " does not produce a value");
    return invalid();
  }
  if (v.k == TV::K::Desc) {
    error(e.loc, typeName(v) + " is not a value: load through it, load(d, [offsets]), or store through it, "
                               "store(d, [offsets], tile)");
    return invalid();
  }
  return v;
}

TV IRGen::genExpr(const ast::Expr &e) {
  switch (e.kind) {
    case ast::ExprKind::Int: return constant(ConstValue::ofInt(e.intValue), ScalarKind::I32, true);
    case ast::ExprKind::Float: return constant(ConstValue::ofFloat(e.floatValue), ScalarKind::F32, true);
    case ast::ExprKind::Bool: return constant(ConstValue::ofInt(e.intValue), ScalarKind::I1, false);
    case ast::ExprKind::String: {
      TV t;
      t.k = TV::K::Str;
      t.str = e.text;
      return t;
    }
    case ast::ExprKind::None:
      error(e.loc, "'None' is only allowed in an index, as in t[:, None]");
      return invalid();
    case ast::ExprKind::Slice:
      error(e.loc, "':' is only allowed in an index, as in t[:, None]");
      return invalid();
    case ast::ExprKind::Name: return genName(e);
    case ast::ExprKind::Type: {
      if (e.type.ptrDepth) {  // `*f16` as an argument: only casts take one
        error(e.loc, "a pointer type such as '" + e.type.str() + "' is an argument only of 'bitcast', 'cast' and '.to'");
        return invalid();
      }
      auto k = scalarKind(e.type.name);
      if (!k) return invalid();
      TV t;
      t.k = TV::K::TypeArg;
      t.typeArg = *k;
      return t;
    }
    case ast::ExprKind::Unary: return genUnary(e);
    case ast::ExprKind::Binary: return genBinary(e);
    case ast::ExprKind::Call: return genCall(e);
    case ast::ExprKind::Index: return genIndex(e);
    case ast::ExprKind::Cast: return castExpr(e);
    case ast::ExprKind::List:
      error(e.loc, "a list is only allowed as a shape, as in zeros([BI, BJ], f32)");
      return invalid();
    case ast::ExprKind::Tuple: return genTuple(e);
    case ast::ExprKind::Error: return invalid();
  }
  return invalid();
}

// A const parameter's binding: a constant, a string or a type.
TV IRGen::constBinding(const ConstBinding &c) const {
  TV t;
  if (c.sort == ConstSort::Scalar) return constant(c.value, c.kind, false);
  t.k = c.sort == ConstSort::Str ? TV::K::Str : TV::K::TypeArg;
  t.str = c.value.s;
  t.typeArg = c.kind;
  return t;
}

// The element type a written type names: a scalar type, or a type const in
// scope (`as T`).
std::optional<ScalarKind> IRGen::namedType(const ast::TypeRef &t) {
  if (auto k = scalarKind(t.name)) return k;
  if (Binding *b = lookup(t.name); b && b->value.k == TV::K::TypeArg) return b->value.typeArg;
  error(t.loc, "unknown type " + quoted(t.name) + (lookup(t.name) ? " (it is not a type const)" : ""));
  return std::nullopt;
}

TV IRGen::genName(const ast::Expr &e) {
  if (Binding *b = lookup(e.text)) {
    if (!b->useError.empty()) {
      error(e.loc, b->useError);
      b->useError.clear();  // one report per name
    }
    return b->value;
  }
  bool runtime = std::find(runtimeNames_.begin(), runtimeNames_.end(), e.text) != runtimeNames_.end();
  if (runtime)
    error(e.loc, constContext_ + " cannot use the run-time parameter " + quoted(e.text));
  else {
    std::string guess = closest(e.text, namesInScope());
    error(e.loc, "unknown name " + quoted(e.text) + (guess.empty() ? "" : " (did you mean " + quoted(guess) + "?)"));
  }
  bind(e.text, invalid());  // report each unknown name once
  return invalid();
}

TV IRGen::convert(TV x, ScalarKind to, const ast::Loc &loc) {
  if (x.type.isPtr()) {
    error(loc, "cannot cast the pointer type " + typeName(x) + " to " + ir::scalarName(to) + " (only to i64, its address)");
    return invalid();
  }
  if (x.cst && !x.type.isTile()) {
    if (auto c = convertConst(*x.cst, to)) return constant(*c, to, false);
  }
  if (!x.weak && x.type.elem.scalar == to) return x;
  ir::Value *v = x.v ? x.v : emitConst(*x.cst, x.type, loc);
  return value(emit(OpKind::Cast, {v}, v->type().withScalar(to), loc));
}

TV IRGen::genUnary(const ast::Expr &e) {
  TV x = genValue(*e.args[0]);
  if (!x.ok()) return x;
  const std::string &op = e.text;
  if (x.type.isPtr()) {
    error(e.loc, "operator '" + op + "' cannot be applied to the pointer type " + typeName(x));
    return invalid();
  }
  ScalarKind k = x.type.elem.scalar;
  if (op == "!") {
    if (!x.type.isBool()) {
      error(e.loc, "operator '!' needs a bool operand, not " + typeName(x) + " (use '~' for bitwise not)");
      return invalid();
    }
    if (x.cst) return constant(ConstValue::ofInt(!x.cst->i), k, false);
    return value(emit(OpKind::Not, {x.v}, x.type, e.loc));
  }
  if (x.type.isBool()) {
    error(e.loc, "operator '" + op + "' cannot be applied to bool" + (op == "~" ? " (use '!')" : ""));
    return invalid();
  }
  if (op == "~") {
    if (x.type.isFloat()) {
      error(e.loc, "operator '~' needs an integer operand, not " + typeName(x));
      return invalid();
    }
    if (x.cst) return constant(ConstValue::ofInt(x.weak ? ~x.cst->i : wrapTo(~x.cst->i, k)), k, x.weak);
    return value(emit(OpKind::Not, {x.v}, x.type, e.loc));
  }
  // Unary minus.
  if (x.cst) {
    if (x.cst->isFloat) return constant(ConstValue::ofFloat(-x.cst->f), k, x.weak);
    if (x.weak) return constant(ConstValue::ofInt(-x.cst->i), k, true);  // literals are > INT64_MIN
    if (k != ScalarKind::F16 && k != ScalarKind::BF16)
      return constant(ConstValue::ofInt(wrapTo(static_cast<int64_t>(0ull - static_cast<uint64_t>(x.cst->i)), k)), k,
                      false);
  }
  ir::Value *v = x.v ? x.v : emitConst(*x.cst, x.type, e.loc);
  return value(emit(OpKind::Neg, {v}, x.type, e.loc));
}

TV IRGen::genBinary(const ast::Expr &e) {
  TV a = genExpr(*e.args[0]);
  TV b = genExpr(*e.args[1]);
  if (!a.ok() || !b.ok()) return invalid();
  auto aggregate = [](const TV &x) { return x.k == TV::K::Tuple || x.k == TV::K::Desc; };
  if (aggregate(a) || aggregate(b)) return asValue(aggregate(a) ? a : b, *e.args[aggregate(a) ? 0 : 1]);
  auto notValue = [](const TV &x) { return x.k == TV::K::Str || x.k == TV::K::TypeArg; };
  if ((notValue(a) || notValue(b)) && (e.text == "==" || e.text == "!=")) return compareAtCompileTime(e, a, b);
  if (notValue(a) || notValue(b)) {
    genValue(*e.args[notValue(a) ? 0 : 1]);  // a string or type leaf: says why it is no value
    return invalid();
  }
  if (a.k == TV::K::Void || b.k == TV::K::Void) {
    const ast::Expr &v = *e.args[a.k == TV::K::Void ? 0 : 1];
    error(v.loc, quoted(v.text) + " does not produce a value");
    return invalid();
  }
  return binaryOp(e.text, a, b, e.loc);
}

// Strings and types exist at compile time only: `ACT == "gelu"`, `T != f16`
// fold to a bool constant.
TV IRGen::compareAtCompileTime(const ast::Expr &e, const TV &a, const TV &b) {
  auto what = [&](const TV &x) -> std::string {
    if (x.k == TV::K::Str) return "a string";
    if (x.k == TV::K::TypeArg) return "a type";
    return typeName(x);
  };
  if (a.k != b.k) {
    error(e.loc, "operator '" + e.text + "' cannot compare " + what(a) + " with " + what(b));
    return invalid();
  }
  bool same = a.k == TV::K::Str ? a.str == b.str : a.typeArg == b.typeArg;
  return constant(ConstValue::ofInt(same == (e.text == "==")), ScalarKind::I1, false);
}

namespace {
OpKind arithOp(const std::string &op) {
  if (op == "+") return OpKind::Add;
  if (op == "-") return OpKind::Sub;
  if (op == "*") return OpKind::Mul;
  if (op == "/") return OpKind::Div;
  if (op == "%") return OpKind::Rem;
  if (op == "<<") return OpKind::Shl;
  if (op == ">>") return OpKind::Shr;
  if (op == "&" || op == "&&") return OpKind::And;
  if (op == "|" || op == "||") return OpKind::Or;
  if (op == "^") return OpKind::Xor;
  if (op == "max") return OpKind::Max;
  if (op == "min") return OpKind::Min;
  return OpKind::Cmp;
}

}  // namespace

// `op` is a source operator, or "max"/"min" for maximum()/minimum().
TV IRGen::binaryOp(const std::string &op, TV a, TV b, const ast::Loc &loc) {
  if (a.type.isPtr() || b.type.isPtr()) return pointerArith(op, a, b, loc);
  bool compare = arithOp(op) == OpKind::Cmp;
  bool logical = op == "&&" || op == "||";
  bool bitwise = op == "&" || op == "|" || op == "^";
  bool shift = op == "<<" || op == ">>";
  std::string opName = op == "max" ? "maximum" : op == "min" ? "minimum" : "operator '" + op + "'";
  if (logical) {
    if (!a.type.isBool() || !b.type.isBool()) {
      error(loc, opName + " needs bool operands, not " + typeName(a) + " and " + typeName(b));
      return invalid();
    }
  } else if (a.type.isBool() || b.type.isBool()) {
    bool ok = (a.type.isBool() && b.type.isBool()) && (bitwise || op == "==" || op == "!=");
    if (!ok) {
      error(loc, opName + " cannot be applied to " + typeName(a) + " and " + typeName(b) +
                     (a.type.isBool() != b.type.isBool() ? " (cast the bool with 'as')" : ""));
      return invalid();
    }
  }
  if ((bitwise || shift) && (a.type.isFloat() || b.type.isFloat())) {
    error(loc, opName + " needs integer operands, not " + typeName(a) + " and " + typeName(b));
    return invalid();
  }
  ElemInfo el = commonElem(a.elem(), b.elem());
  if (!checkWeakFits(a, el.kind, loc) || !checkWeakFits(b, el.kind, loc)) return invalid();
  if (shift && b.cst && !el.weak && (b.cst->i < 0 || b.cst->i >= ir::bitWidth(el.kind))) {
    error(loc, "shift amount " + std::to_string(b.cst->i) + " is out of range for a " +
                   std::to_string(ir::bitWidth(el.kind)) + "-bit value");
    return invalid();
  }
  auto shape = broadcast({&a, &b}, loc);
  if (!shape) return invalid();

  if (a.cst && b.cst && shape->empty()) {
    // Fold: weak operands keep full i64/double precision, typed ones are
    // converted to the common type first.
    auto operand = [&](const TV &x) -> std::optional<ConstValue> {
      if (!el.weak) return convertConst(*x.cst, el.kind);
      return ir::isFloat(el.kind) ? ConstValue::ofFloat(x.cst->asDouble()) : *x.cst;
    };
    auto ca = operand(a), cb = operand(b);
    std::string err;
    std::optional<ConstValue> r;
    if (ca && cb && (op == "max" || op == "min")) {
      auto lt = foldBinary("<", *ca, *cb, el.kind, el.weak, err);
      if (lt) r = (lt->i != 0) == (op == "min") ? *ca : *cb;
    } else if (ca && cb) {
      r = foldBinary(op, *ca, *cb, el.kind, el.weak, err);
    }
    if (!err.empty()) {
      error(loc, err);
      return invalid();
    }
    if (r) return compare ? constant(*r, ScalarKind::I1, false) : constant(*r, el.kind, el.weak);
  }
  // Weak operands that were not folded take the type they have alone.
  ScalarKind k = el.weak ? (ir::isFloat(el.kind) ? ScalarKind::F32 : ScalarKind::I64) : el.kind;
  Type t = Type::scalar(k).withShape(*shape);
  ir::Value *va = coerce(a, t, loc), *vb = coerce(b, t, loc);
  if (compare)
    return value(emit(OpKind::Cmp, {va, vb}, t.withScalar(ScalarKind::I1), loc,
                      {{"predicate", ir::attrOf(comparisonOf(op).value_or(ir::CmpPredicate::Ne))}}));
  return value(emit(arithOp(op), {va, vb}, t, loc));
}

// ptr + int, int + ptr, ptr - int: element offsets through `addptr`.
TV IRGen::pointerArith(const std::string &op, TV a, TV b, const ast::Loc &loc) {
  if (b.type.isPtr() && op == "+") std::swap(a, b);
  if (!a.type.isPtr() || b.type.isPtr() || (op != "+" && op != "-")) {
    std::string what = op == "max" || op == "min" ? op + "imum" : "operator '" + op + "'";
    error(loc, what + " cannot be applied to " + typeName(a) + " and " + typeName(b) +
                   (op == "-" && b.type.isPtr() ? " (pointer difference is not supported)" : ""));
    return invalid();
  }
  if (!b.type.isInt() || b.type.isBool()) {
    error(loc, "a pointer offset must be an integer, not " + typeName(b));
    return invalid();
  }
  auto shape = broadcast({&a, &b}, loc);
  if (!shape) return invalid();
  ScalarKind ok = b.weak ? weakIntKind(b.cst->i) : b.type.elem.scalar;
  if (ok == ScalarKind::I8 || ok == ScalarKind::I16) ok = ScalarKind::I32;
  if (op == "-") {
    if (b.cst) {
      b = constant(ConstValue::ofInt(-b.cst->i), ok, false);
    } else {
      ir::Value *ob = coerce(b, b.type.withScalar(ok), loc);
      b = value(emit(OpKind::Neg, {ob}, ob->type(), loc));
    }
  }
  ir::Value *p = coerce(a, a.type.withShape(*shape), loc);
  ir::Value *o = coerce(b, Type::scalar(ok).withShape(*shape), loc);
  return value(emit(OpKind::AddPtr, {p, o}, p->type(), loc));
}

}  // namespace tk::lang
