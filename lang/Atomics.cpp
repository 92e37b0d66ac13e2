// Atomics on global memory: `atomic_add`, `atomic_max`, `atomic_cas`. Each
// element's update happens once, whatever the layout; the result is the old
// values, of the pointer's shape.
#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

// grammar (a call): atomic_add(ptr, value, mask: m) | atomic_max(ptr, value, mask: m)
//                 | atomic_cas(ptr, expected, value)
TV IRGen::atomicCall(const ast::Expr &e) {
  const std::string &name = e.text;
  const bool cas = name == "atomic_cas";
  const std::string usage = cas ? "atomic_cas(ptr, expected, value)" : name + "(ptr, value, mask: m)";
  std::vector<TV> pos;
  const ast::Expr *maskE = nullptr;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const std::string &n = e.argNames[i];
    if (n.empty() && pos.size() < (cas ? 3u : 2u)) {
      pos.push_back(genValue(*e.args[i]));
    } else if (n == "mask" && !cas && !maskE) {
      maskE = e.args[i].get();
    } else {
      error(e.args[i]->loc, "unexpected argument to " + quoted(name) + ": " + usage);
      return invalid();
    }
  }
  if (pos.size() != (cas ? 3u : 2u)) {
    error(e.loc, quoted(name) + " takes " + usage);
    return invalid();
  }
  for (const TV &v : pos)
    if (!v.ok()) return invalid();
  const TV &ptr = pos[0];
  if (!ptr.type.isPtr()) {
    error(e.args[0]->loc, quoted(name) + " needs a pointer, not " + typeName(ptr));
    return invalid();
  }
  const ScalarKind k = ptr.type.elem.scalar;
  const bool wideInt = k == ScalarKind::I32 || k == ScalarKind::I64;
  const bool ok = name == "atomic_add" ? wideInt || k == ScalarKind::F32 || k == ScalarKind::F64 : wideInt;
  if (!ok) {
    error(e.loc, quoted(name) + " works on " +
                     std::string(name == "atomic_add" ? "i32, i64, f32 and f64" : "i32 and i64") +
                     " memory, not " + ir::scalarName(k));
    return invalid();
  }
  std::vector<const TV *> all = {&ptr};
  for (size_t i = 1; i < pos.size(); ++i) {
    if (pos[i].type.isPtr()) {
      error(e.args[i]->loc, quoted(name) + " cannot store a pointer");
      return invalid();
    }
    if (!checkWeakFits(pos[i], k, e.args[i]->loc)) return invalid();
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
  for (size_t i = 1; i < pos.size(); ++i) ops.push_back(coerce(pos[i], vt, e.args[i]->loc));
  if (maskE) ops.push_back(coerce(mask, vt.withScalar(ScalarKind::I1), maskE->loc));
  for (ir::Value *v : ops)
    if (!v) return invalid();
  if (cas) return value(emit(OpKind::AtomicCas, ops, vt, e.loc));
  return value(emit(OpKind::AtomicRmw, ops, vt, e.loc, {{"kind", std::string(name == "atomic_add" ? "add" : "max")}}));
}

}  // namespace tk::lang
