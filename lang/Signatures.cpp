// The checks of kernel and fn parameter declarations (Signatures.h), apart
// from the Frontend's loading and lowering so each reads in one sitting.
#include "lang/Signatures.h"

#include <functional>
#include <set>

#include "lang/Specialise.h"
#include "syntax/AST.h"

namespace tk::lang {

std::string tooDeep(const ast::TypeRef &t) {
  return "pointers nest at most " + std::to_string(ir::kMaxPtrDepth) + " deep ('**f32'), not '" + t.str() + "'";
}

const ast::Param *findParam(const ast::Decl &d, const std::string &name) {
  for (const ast::Param &p : d.params)
    if (p.name == name) return &p;
  return nullptr;
}

// A run-time parameter whose type is a type const (`x: *T`): its type and
// alignment as `consts` give them; when T has no value yet it stays as written.
void resolveGenericParam(const ast::Param &p, const std::vector<ConstBinding> &consts, ParamSig &ps, bool &ok,
                         DiagnosticEngine &diags) {
  auto kind = IRGen::resolveType(p.type.name, consts);
  if (!kind) return;
  ps.type = std::string(p.type.ptrDepth, '*') + typeText(*kind);
  if (p.type.ptrDepth == 0) return;
  ps.align = p.hasAlign ? p.align : 16;
  int64_t elemBytes = ir::ElemType{*kind, static_cast<uint8_t>(p.type.ptrDepth)}.pointee().bytes();
  if (p.hasAlign && (!ir::isPowerOfTwo(p.align) || p.align < elemBytes)) {
    diags.error(p.alignLoc, "align(" + std::to_string(p.align) + ") must be a power of two of at least " +
                                std::to_string(elemBytes) + " (the size of " + p.type.name + " = " + typeText(*kind) + ")");
    ok = false;
  }
}

// A const parameter's type and default (evaluated with the consts before
// it in scope), appended to `consts`.
void checkConstParam(const ast::Param &p, std::vector<ConstBinding> &consts, const std::vector<std::string> &runtime,
                     ParamSig &ps, bool &ok, DiagnosticEngine &diags, const std::string &file, const FnTable *fns) {
  auto type = constTypeOf(p, consts);
  if (!type) {
    diags.error(p.type.loc, "unknown type '" + p.type.name + "'");
    ok = false;
    return;
  }
  if (p.type.ptrDepth) {
    diags.error(p.type.loc, "const parameter " + quoted(p.name) + " must have an int, float or bool type, or str or type");
    ok = false;
    return;
  }
  if (p.hasAlign) {
    diags.error(p.alignLoc, "align(N) applies only to pointer parameters");
    ok = false;
  }
  if (!p.defaultValue) return;
  IRGen gen(diags, file);
  gen.setFns(fns);
  auto v = gen.evalConst(*p.defaultValue, p.name, type->kind, consts, runtime, type->sort);
  if (!v) {
    ok = false;
    return;
  }
  ConstBinding b{p.name, type->sort == ConstSort::Type ? *IRGen::scalarKind(v->s) : type->kind, *v, type->sort};
  ps.constValue = bindingText(b);
  consts.push_back(b);
}

// A fn's signature: known types, no const/default/align params (a fn is
// inlined, so a constant argument stays constant inside it anyway).
bool checkFnSignature(const ast::Decl &d, DiagnosticEngine &diags) {
  bool ok = true;
  auto fail = [&](const Location &l, const std::string &m) { diags.error(l, m); ok = false; };
  std::function<void(const ast::TypeRef &)> checkType = [&](const ast::TypeRef &t) {
    if (t.isTuple()) {
      for (const ast::TypeRef &e : t.elems) checkType(e);
    } else if (!IRGen::scalarKind(t.name) && !IRGen::isTypeVariable(t.name))
      fail(t.loc, "unknown type '" + t.name + "' (a fn generic over element types names them with one capital "
                  "letter, such as T)");
    else if (t.ptrDepth > ir::kMaxPtrDepth)
      fail(t.loc, tooDeep(t));
  };
  std::set<std::string> names;
  for (const ast::Param &p : d.params) {
    if (!names.insert(p.name).second) fail(p.loc, "parameter " + quoted(p.name) + " is declared twice");
    checkType(p.type);
    if (p.isDescriptor)
      fail(p.loc, "fn parameters cannot be tensor descriptors yet: load the block in the kernel and pass the tile");
    else if (p.isConst)
      fail(p.loc, "fn parameters cannot be const: a fn is inlined, so a compile-time argument stays constant in it");
    else if (p.defaultValue)
      fail(p.defaultValue->loc, "default values of fn parameters are not supported yet");
    if (p.hasAlign) fail(p.alignLoc, "align(N) applies only to kernel parameters");
    for (const ast::Attribute &a : p.attributes)
      fail(a.loc, "parameter attributes apply only to kernel parameters");
  }
  if (d.hasResult) {
    checkType(d.result);
    // Every type variable of the result is some parameter's (or an element's).
    std::set<std::string> given;
    std::function<void(const ast::TypeRef &)> collect = [&](const ast::TypeRef &t) {
      given.insert(t.name);
      for (const ast::TypeRef &e : t.elems) collect(e);
    };
    for (const ast::Param &p : d.params) collect(p.type);
    std::function<void(const ast::TypeRef &)> checkBound = [&](const ast::TypeRef &t) {
      for (const ast::TypeRef &e : t.elems) checkBound(e);
      if (!t.isTuple() && IRGen::isTypeVariable(t.name) && !given.count(t.name))
        fail(t.loc, "result type '" + t.name + "' is no parameter's type, so no call can give it one");
    };
    checkBound(d.result);
  }
  return ok;
}

// `@no_specialize` and `@multiple_of(N)` after an integer kernel parameter's
// type: what launches may assume of its value (docs/language.md, "Integer
// specialisation"). Fills `ps`; false after reporting an error.
bool checkParamAttributes(const ast::Param &p, std::optional<ir::ScalarKind> kind, ParamSig &ps,
                           DiagnosticEngine &diags) {
  bool ok = true;
  const ast::Attribute *first = nullptr;
  for (const ast::Attribute &a : p.attributes) {
    auto fail = [&](const std::string &m) { diags.error(a.loc, m); ok = false; };
    const ast::Expr &call = *a.call;
    const std::string &name = call.text;
    if (name != "no_specialize" && name != "multiple_of") {
      fail("unknown parameter attribute '@" + (name.size() > 40 ? name.substr(0, 40) + "...'" : name + "'") +
           " (parameters take @no_specialize and @multiple_of(N))");
      continue;
    }
    if (p.isConst || p.type.ptrDepth || !kind || ir::isFloat(*kind) || *kind == ir::ScalarKind::I1) {
      fail("@" + name + " applies to integer parameters that are not const");
      continue;
    }
    if (first) {
      fail(first->call->text == name ? "@" + name + " is given twice"
                                     : "@no_specialize and @multiple_of contradict each other");
      diags.note(first->loc, "the first is here");
      continue;
    }
    first = &a;
    if (name == "no_specialize") {
      if (!call.args.empty()) fail("@no_specialize takes no arguments");
      ps.noSpecialize = true;
      continue;
    }
    const ast::Expr *n = call.args.size() == 1 && call.argNames[0].empty() ? call.args[0].get() : nullptr;
    if (!n || n->kind != ast::ExprKind::Int || n->intValue < 2 || n->intValue > (int64_t{1} << 30) ||
        !ir::isPowerOfTwo(n->intValue)) {
      fail("@multiple_of takes one power of two from 2 to 2^30, e.g. @multiple_of(16)");
      continue;
    }
    ps.multipleOf = n->intValue;
  }
  return ok;
}

}  // namespace tk::lang
