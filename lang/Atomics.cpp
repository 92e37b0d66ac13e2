// Atomics on global memory: `atomic_add max min xchg and or xor` and
// `atomic_cas`, with Triton's `sem:` and `scope:`. Each element's update
// happens once, whatever the layout; the result is the old values, of the
// pointer's shape. The names are ir/Enums.def's, the type rules ir/Atomics.h's.
#include "ir/Atomics.h"
#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

// grammar (a call): atomic_OP(ptr, value [, mask: m] [, sem: STRING] [, scope: STRING])
//                 | atomic_cas(ptr, expected, value [, sem: STRING] [, scope: STRING])
// with OP one of add max min xchg and or xor.
TV IRGen::atomicCall(const ast::Expr &e) {
  const std::string &name = e.text;
  const bool cas = name == "atomic_cas";
  const std::optional<ir::AtomicKind> kind = cas ? std::nullopt : ir::parseEnum<ir::AtomicKind>(name.substr(7));
  const std::string usage = cas ? "atomic_cas(ptr, expected, value, sem:, scope:)"
                                : name + "(ptr, value, mask: m, sem:, scope:)";
  const size_t npos = cas ? 3u : 2u;
  std::vector<const ast::Expr *> posE;
  const ast::Expr *maskE = nullptr, *semE = nullptr, *scopeE = nullptr;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const std::string &n = e.argNames[i];
    const ast::Expr *arg = e.args[i].get();
    if (n.empty() && posE.size() < npos) {
      posE.push_back(arg);
      continue;
    }
    const ast::Expr **slot = n == "mask" && !cas ? &maskE : n == "sem" ? &semE : n == "scope" ? &scopeE : nullptr;
    if (!slot) {
      error(arg->loc, "unexpected argument to " + quoted(name) + ": " + usage);
      return invalid();
    }
    if (*slot) {
      error(arg->loc, "argument " + quoted(n) + " of " + quoted(name) + " given twice");
      return invalid();
    }
    *slot = arg;
  }
  if (posE.size() != npos) {
    error(e.loc, quoted(name) + " takes " + usage);
    return invalid();
  }

  // sem and scope are string literals, checked before any operand is generated.
  ir::AtomicSem sem = ir::kDefaultAtomicSem;
  ir::AtomicScope scope = ir::kDefaultAtomicScope;
  // `e`'s literal parsed by `parse` into `out`; false after an error.
  auto literal = [&](const ast::Expr *e, const char *arg, const std::string &want, auto parse, auto &out,
                     const std::string &note) {
    if (!e) return true;
    if (e->kind != ast::ExprKind::String) {
      error(e->loc, std::string("'") + arg + "' of " + quoted(name) + " must be a string literal: " + want);
      return false;
    }
    auto v = parse(e->text);
    if (!v) {
      error(e->loc, std::string("unknown '") + arg + "' " + quoted(e->text) + " of " + quoted(name) + ": want " + want +
                        note);
      return false;
    }
    out = *v;
    return true;
  };
  // seq_cst is what a C++ or CUDA user reaches for; PTX's atom has no .sc form.
  const std::string seqCst = semE && semE->text == "seq_cst"
                                 ? " (PTX atomics have no seq_cst form; Triton has none either)"
                                 : "";
  if (!literal(semE, "sem", ir::enumChoices<ir::AtomicSem>(), ir::parseEnum<ir::AtomicSem>, sem, seqCst) ||
      !literal(scopeE, "scope", ir::enumChoices<ir::AtomicScope>(), ir::parseEnum<ir::AtomicScope>, scope, ""))
    return invalid();

  std::vector<TV> pos;
  for (const ast::Expr *p : posE) pos.push_back(genValue(*p));
  for (const TV &v : pos)
    if (!v.ok()) return invalid();
  const TV &ptr = pos[0];
  if (!ptr.type.isPtr()) {
    error(posE[0]->loc, quoted(name) + " needs a pointer, not " + typeName(ptr));
    return invalid();
  }
  const ScalarKind k = ptr.type.elem.scalar;
  if (!ir::atomicTakes(kind, k)) {
    error(e.loc, quoted(name) + " works on " + ir::atomicTypesText(kind) + " memory, not " + ir::scalarName(k));
    return invalid();
  }
  std::vector<const TV *> all = {&ptr};
  for (size_t i = 1; i < pos.size(); ++i) {
    if (pos[i].type.isPtr()) {
      error(posE[i]->loc, quoted(name) + " cannot store a pointer");
      return invalid();
    }
    if (!checkWeakFits(pos[i], k, posE[i]->loc)) return invalid();
    all.push_back(&pos[i]);
  }
  TV mask;
  if (maskE) {
    mask = genValue(*maskE);
    if (!mask.ok()) return invalid();
    if (!mask.type.isBool()) {
      error(maskE->loc, "the mask of " + quoted(name) + " must be bool, not " + typeName(mask));
      return invalid();
    }
    all.push_back(&mask);
  }
  auto shape = broadcast(all, e.loc);
  if (!shape) return invalid();
  if (*shape != ptr.type.shape) {
    error(e.loc, quoted(name) + " of values of shape " + shapeStr(*shape) + " through pointers of shape " +
                     shapeStr(ptr.type.shape) + "; the values and mask must fit the pointers' shape");
    return invalid();
  }
  const Type vt = Type::scalar(k).withShape(*shape);
  std::vector<ir::Value *> ops = {ptr.v};
  for (size_t i = 1; i < pos.size(); ++i) ops.push_back(coerce(pos[i], vt, posE[i]->loc));
  if (maskE) ops.push_back(coerce(mask, vt.withScalar(ScalarKind::I1), maskE->loc));
  for (ir::Value *v : ops)
    if (!v) return invalid();
  std::map<std::string, ir::Attr> attrs = {{"sem", ir::attrOf(sem)}, {"scope", ir::attrOf(scope)}};
  if (kind) attrs["kind"] = ir::attrOf(*kind);
  return value(emit(cas ? OpKind::AtomicCas : OpKind::AtomicRmw, ops, vt, e.loc, attrs));
}

}  // namespace tk::lang
