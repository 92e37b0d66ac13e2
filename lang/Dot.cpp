// `dot(a, b)` and `dot(a, b, acc)`: the tile matrix product a @ b (+ acc).
// It becomes one `dot` op of the tile IR, whose accumulator is always there
// (a zero tile when the call gives none).
#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

namespace {
// The element a product of `in` tiles accumulates in, or nullopt where dot
// does not apply: f16, bf16 and fp8 accumulate in f32, i8 in i32.
std::optional<ScalarKind> dotAccElem(ScalarKind in) {
  switch (in) {
    case ScalarKind::F16:
    case ScalarKind::BF16:
    case ScalarKind::F32:
    case ScalarKind::F8E4M3:
    case ScalarKind::F8E5M2:
      return ScalarKind::F32;
    case ScalarKind::F64:
      return ScalarKind::F64;
    case ScalarKind::I8:
      return ScalarKind::I32;
    default:
      return std::nullopt;
  }
}
}  // namespace

// grammar (a call): 'dot' '(' a ',' b [',' acc] [',' 'input_precision' ':' STRING] ')'
//                   | 'dot' '(' a ',' b ',' 'acc' ':' C ... ')'
// and Triton's other keywords, as ports write them: out_dtype: T (the
// accumulator's type), allow_tf32: B (input_precision "tf32" or "ieee"),
// max_num_imprecise_acc: N (accepted; tk accumulates every product in f32).
TV IRGen::dotCall(const ast::Expr &e) {
  const std::string usage = "dot(a, b) or dot(a, b, acc: c)";
  const ast::Expr *ae = nullptr, *be = nullptr, *acce = nullptr, *precisione = nullptr, *outTypeE = nullptr,
                  *allowTf32E = nullptr, *impreciseE = nullptr;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const std::string &n = e.argNames[i];
    const ast::Expr *arg = e.args[i].get();
    const ast::Expr **slot = n.empty()                ? (!ae     ? &ae
                                                         : !be   ? &be
                                                         : !acce ? &acce
                                                                 : nullptr)
                             : n == "acc"             ? &acce
                             : n == "input_precision" ? &precisione
                             : n == "out_dtype"       ? &outTypeE
                             : n == "allow_tf32"      ? &allowTf32E
                             : n == "max_num_imprecise_acc" ? &impreciseE
                                                      : nullptr;
    if (!slot) {
      error(arg->loc, n.empty() ? "too many arguments to 'dot': " + usage
                                : "'dot' has no argument named " + quoted(n) + ": " + usage);
      return invalid();
    }
    if (*slot) {
      error(arg->loc, "argument " + quoted(n.empty() ? "acc" : n) + " of 'dot' given twice");
      return invalid();
    }
    *slot = arg;
  }
  if (!be) {
    error(e.loc, "'dot' needs two tiles: " + usage);
    return invalid();
  }
  TV a = genValue(*ae), b = genValue(*be);
  if (!a.ok() || !b.ok()) return invalid();
  for (auto [x, xe, which] : {std::tuple{&a, ae, "left"}, std::tuple{&b, be, "right"}}) {
    if (x->type.rank() != 2 || x->type.isPtr()) {
      error(xe->loc,
            std::string("the ") + which + " operand of 'dot' must be a 2-D tile of numbers, not " + typeName(*x));
      return invalid();
    }
  }
  const ScalarKind in = a.type.elem.scalar;
  // f8e4m3 by f8e5m2 is a product fp8 tensor cores take as it is (Triton
  // allows it too); other pairs convert one side first.
  if (b.type.elem.scalar != in && !(ir::isFp8(in) && ir::isFp8(b.type.elem.scalar))) {
    error(e.loc, "'dot' of " + typeName(a) + " and " + typeName(b) +
                     ": both operands must have one element type (cast one with 'as'; only the two fp8 formats "
                     "mix)");
    return invalid();
  }
  const auto accElem = dotAccElem(in);
  if (!accElem) {
    error(e.loc, std::string("'dot' works on f16, bf16, f8e4m3, f8e5m2, f32, f64 and i8 tiles, not ") +
                     ir::scalarName(in));
    return invalid();
  }
  if (outTypeE) {
    TV t = genExpr(*outTypeE);
    if (!t.ok()) return invalid();
    if (t.k != TV::K::TypeArg) {
      error(outTypeE->loc, "'out_dtype' of 'dot' must be a type, not " + typeName(t));
      return invalid();
    }
    if (t.typeArg != *accElem) {
      error(outTypeE->loc, std::string("'dot' of ") + ir::scalarName(in) + " tiles accumulates in " +
                               ir::scalarName(*accElem) + ": out_dtype must be " + ir::scalarName(*accElem) +
                               " (convert the result with 'as')");
      return invalid();
    }
  }
  if (impreciseE) {
    TV n = genValue(*impreciseE);
    if (!n.ok()) return invalid();
    if (!n.cst || !n.type.isInt() || n.type.isBool() || n.type.isTile()) {
      error(impreciseE->loc, "'max_num_imprecise_acc' of 'dot' must be a compile-time integer, not " + typeName(n));
      return invalid();
    }
  }
  // allow_tf32 (Triton's older spelling): true is input_precision "tf32",
  // false "ieee"; like Triton, it changes nothing for other operand types.
  bool tf32 = false;
  if (allowTf32E) {
    if (precisione) {
      error(allowTf32E->loc, "'dot' takes 'allow_tf32' or 'input_precision', not both");
      return invalid();
    }
    TV f = genValue(*allowTf32E);
    if (!f.ok()) return invalid();
    if (!f.cst || !f.type.isBool() || f.type.isTile()) {
      error(allowTf32E->loc, "'allow_tf32' of 'dot' must be a compile-time bool, not " + typeName(f));
      return invalid();
    }
    tf32 = f.cst->i != 0 && in == ScalarKind::F32;
  }
  // input_precision: "tf32" lets an f32 dot round its operands to tf32 and
  // run on tensor cores; "ieee" (the default, docs/language.md) keeps f32.
  std::map<std::string, ir::Attr> attrs;
  if (tf32) attrs["input_precision"] = ir::attrOf(ir::InputPrecision::Tf32);
  if (precisione) {
    const std::string choices = ir::enumChoices<ir::InputPrecision>();
    if (precisione->kind != ast::ExprKind::String) {
      error(precisione->loc, "'input_precision' of 'dot' must be a string: " + choices);
      return invalid();
    }
    const std::optional<ir::InputPrecision> p = ir::parseEnum<ir::InputPrecision>(precisione->text);
    if (!p) {
      error(precisione->loc, "unknown 'input_precision' " + quoted(precisione->text) + " of 'dot': want " + choices);
      return invalid();
    }
    if (in != ScalarKind::F32) {
      error(precisione->loc,
            std::string("'input_precision' of 'dot' applies to f32 operands, not ") + ir::scalarName(in));
      return invalid();
    }
    if (*p == ir::InputPrecision::Tf32) attrs["input_precision"] = ir::attrOf(*p);
  }
  const int64_t M = a.type.shape[0], K = a.type.shape[1], N = b.type.shape[1];
  if (b.type.shape[0] != K) {
    error(e.loc, "'dot' of " + shapeStr(a.type.shape) + " and " + shapeStr(b.type.shape) + ": the inner dims differ (" +
                     std::to_string(K) + " and " + std::to_string(b.type.shape[0]) + ")");
    return invalid();
  }
  // Both operands fit the limits, but their M x N product may not.
  if (!checkTileShape({M, N}, e.loc)) return invalid();
  const Type rt = Type::tile(ir::ElemType{*accElem, false}, {M, N});
  ir::Value *acc = nullptr;
  if (acce) {
    TV c = genValue(*acce);
    if (!c.ok()) return invalid();
    if (c.type.isPtr() || c.type.shape != rt.shape || c.type.elem != rt.elem) {
      error(acce->loc,
            "the accumulator of 'dot' must be " + rt.str() + " (the product's shape and element), not " + typeName(c));
      return invalid();
    }
    acc = coerce(c, rt, acce->loc);
  } else {
    acc = emitConst(ir::isFloat(*accElem) ? ConstValue::ofFloat(0) : ConstValue::ofInt(0), rt, e.loc);
  }
  ir::Value *av = coerce(a, a.type, ae->loc), *bv = coerce(b, b.type, be->loc);
  if (!acc || !av || !bv) return invalid();
  return value(emit(OpKind::Dot, {av, bv, acc}, rt, e.loc, std::move(attrs)));
}

}  // namespace tk::lang
