// Casts that reinterpret rather than convert: an i64 address as a pointer
// and back (`addr as *f16`, `p as i64`, Triton's
// `.to(tl.pointer_type(tl.float16))`), and `bitcast(x, T)` between types of
// one width (Triton's `.to(T, bitcast=True)`). Tutorial 08's grouped GEMM
// passes its per-group matrices as arrays of such addresses.
//   x as T    cast(x, T)    x.to(T)    x.to(T, bitcast: true)    bitcast(x, T)
#include "ir/PointerCasts.h"
#include "lang/IRGen.h"

namespace tk::lang {

namespace {
std::string typeText(const ir::ElemType &e) {
  return e.isPtr() ? std::string(e.ptrDepth, '*') + ir::scalarName(e.scalar)
                   : e.scalar == ir::ScalarKind::I1 ? "bool" : ir::scalarName(e.scalar);
}
}  // namespace

std::optional<ir::ElemType> IRGen::namedElemType(const ast::TypeRef &t) {
  if (t.ptrDepth > ir::kMaxPtrDepth) {
    error(t.loc, "pointers nest at most " + std::to_string(ir::kMaxPtrDepth) + " deep ('**f32'), not '" + t.str() + "'");
    return std::nullopt;
  }
  auto k = namedType(t);
  if (!k) return std::nullopt;
  return ir::ElemType{*k, static_cast<uint8_t>(t.ptrDepth)};
}

// e: `x as T` (args[0] = x), or `x.to(T, bitcast: b)` (args[1] = b, a
// compile-time bool: false is `x as T`).
TV IRGen::castExpr(const ast::Expr &e) {
  TV x = genValue(*e.args[0]);
  if (!x.ok()) return x;
  bool bits = false;
  if (e.args.size() > 1) {
    TV flag = genValue(*e.args[1]);
    if (!flag.ok()) return flag;
    if (!flag.cst || flag.type.isTile() || !flag.type.isBool()) {
      error(e.args[1]->loc, "'bitcast' of '.to' must be a compile-time bool (true or false), not " + typeName(flag));
      return invalid();
    }
    bits = flag.cst->i != 0;
  }
  if (e.text == "rtz") return castTowardZero(x, e.type, e.loc);
  return bits ? bitcastTo(x, e.type, e.loc) : castTo(x, e.type, e.loc);
}

// `x.to(T, fp_downcast_rounding: "rtz")`: a float to a narrower float,
// rounded toward zero (a cast with `rounding = "rtz"`, never folded).
TV IRGen::castTowardZero(TV x, const ast::TypeRef &t, const ast::Loc &loc) {
  auto to = namedElemType(t);
  if (!to) return invalid();
  if (to->isPtr() || x.type.isPtr() || !ir::isNarrowingFloatCast(x.type.elem.scalar, to->scalar)) {
    error(loc, "fp_downcast_rounding: \"rtz\" rounds a float to a narrower float (f64 to f32, f16 or bf16; f32 "
               "to f16 or bf16), not " + typeName(x) + " to " + typeText(*to));
    return invalid();
  }
  ir::Value *v = x.v ? x.v : emitConst(*x.cst, x.type, loc);
  return value(emit(ir::OpKind::Cast, {v}, v->type().withScalar(to->scalar), loc,
                    {{"rounding", ir::attrOf(ir::Rounding::Rtz)}}));
}

// A value cast to a written type. Numbers convert (IRGen::convert); an i64
// becomes the pointer at that address, a pointer its i64 address or a
// pointer of another type at the same address.
TV IRGen::castTo(TV x, const ast::TypeRef &t, const ast::Loc &loc) {
  auto to = namedElemType(t);
  if (!to) return invalid();
  if (!to->isPtr() && !x.type.isPtr()) return convert(x, to->scalar, loc);
  if (x.type.isPtr() && x.type.elem == *to) return x;
  if (!to->isPtr() && to->scalar != ir::ScalarKind::I64) {
    error(loc, "a pointer casts only to i64 (its address) or to another pointer type, not to " + typeText(*to) +
                   " (cast the i64 further: 'p as i64 as " + typeText(*to) + "')");
    return invalid();
  }
  if (x.type.isPtr()) {
    ir::Value *addr = emit(ir::OpKind::PtrToInt, {x.v}, x.type.withScalar(ir::ScalarKind::I64), loc);
    if (!to->isPtr()) return value(addr);
    return value(emit(ir::OpKind::IntToPtr, {addr}, x.type.withElem(*to), loc));
  }
  // A pointer from a number: only i64 holds an address; an untyped literal
  // (`0 as *f32`, a null pointer) is taken as one.
  if (x.type.isFloat() || x.type.isBool() || (!x.weak && x.type.elem.scalar != ir::ScalarKind::I64)) {
    error(loc, "only an i64 (an address) casts to the pointer type " + typeText(*to) + ", not " + typeName(x) +
                   (x.type.isInt() && !x.type.isBool() ? " (widen it first: 'x as i64 as " + typeText(*to) + "')" : ""));
    return invalid();
  }
  const ir::Type i64 = x.type.withScalar(ir::ScalarKind::I64);
  ir::Value *addr = coerce(x, i64, loc);
  return value(emit(ir::OpKind::IntToPtr, {addr}, i64.withElem(*to), loc));
}

// The same bits as another type of the same width: numbers through the IR's
// bitcast, pointer <-> i64 as castTo does it (an address is its bits).
TV IRGen::bitcastTo(TV x, const ast::TypeRef &t, const ast::Loc &loc) {
  auto to = namedElemType(t);
  if (!to) return invalid();
  auto width = [](const ir::ElemType &e) { return e.isPtr() ? 64 : ir::bitWidth(e.scalar); };
  if (x.weak) {
    error(loc, "'bitcast' needs a value of a known type, not an " + typeName(x) + " (write 'bitcast(" +
                   std::string(x.cst->isFloat ? "1.0 as f32" : "1 as i32") + ", T)')");
    return invalid();
  }
  const ir::ElemType from = x.type.elem;
  if (from == *to) return x;
  const bool anyPtr = from.isPtr() || to->isPtr();
  const ir::ElemType &number = from.isPtr() ? *to : from;  // the other side of a pointer
  const bool ok = anyPtr ? number.isPtr() || number.scalar == ir::ScalarKind::I64
                         : ir::bitcastable(from.scalar, to->scalar);
  if (!ok) {
    std::string why = typeName(x) + " is " + std::to_string(width(from)) + " bits, " + typeText(*to) + " " +
                      std::to_string(width(*to));
    if (x.type.isBool() || (!to->isPtr() && to->scalar == ir::ScalarKind::I1))
      why = "bool has no bits of its own to reinterpret";
    else if (anyPtr && width(from) == width(*to))
      why = "a pointer's bits are an i64 address";
    error(loc, "cannot bitcast " + typeName(x) + " to " + typeText(*to) + ": " + why);
    return invalid();
  }
  if (from.isPtr() || to->isPtr()) return castTo(x, t, loc);
  ir::Value *v = x.v ? x.v : emitConst(*x.cst, x.type, loc);
  return value(emit(ir::OpKind::Bitcast, {v}, v->type().withElem(*to), loc));
}

// cast(x, T) and bitcast(x, T): T a type, scalar or pointer (`bitcast(addr,
// *f16)`), or a type const's name (`cast(x, T)`).
TV IRGen::typedCastCall(const ast::Expr &e, const ast::Expr &x, const ast::Expr &type, bool bits) {
  const char *name = bits ? "bitcast" : "cast";
  if (type.kind != ast::ExprKind::Type && type.kind != ast::ExprKind::Name) {
    error(type.loc, std::string("the second argument of '") + name + "' must be a type such as " +
                        (bits ? "i32 or *f16" : "f16"));
    return invalid();
  }
  ast::TypeRef t = type.type;
  if (type.kind == ast::ExprKind::Name) {
    if (Binding *b = lookup(type.text); !b || b->value.k != TV::K::TypeArg) {
      genExpr(type);  // reports an unknown name as any use does
      if (b && b->value.ok())
        error(type.loc, std::string("the second argument of '") + name + "' must be a type such as f16");
      return invalid();
    }
    t.name = type.text, t.loc = type.loc;  // a type const
  }
  TV v = genValue(x);
  if (!v.ok()) return v;
  return bits ? bitcastTo(v, t, e.loc) : castTo(v, t, e.loc);
}

// The value a masked-off lane of a load reads without `other`: 0, or the
// null pointer for a buffer of pointers.
ir::Value *IRGen::zeroOf(const ir::Type &t, const ast::Loc &loc) {
  if (!t.isPtr()) return emitConst(ConstValue::ofInt(0), t, loc);
  ir::Value *zero = emitConst(ConstValue::ofInt(0), t.withScalar(ir::ScalarKind::I64), loc);
  return emit(ir::OpKind::IntToPtr, {zero}, t, loc);
}

}  // namespace tk::lang
