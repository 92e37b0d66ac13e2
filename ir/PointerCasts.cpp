// The rules of int_to_ptr, ptr_to_int and bitcast (ir/PointerCasts.h).
#include "ir/PointerCasts.h"

namespace tk::ir {

bool bitcastable(ScalarKind from, ScalarKind to) {
  return from != ScalarKind::I1 && to != ScalarKind::I1 && bitWidth(from) == bitWidth(to);
}

std::string checkPointerCast(const Op &op) {
  const Type &src = op.operand(0)->type(), &rt = op.result()->type();
  if (src.shape != rt.shape || !sameLayout(src.layout, rt.layout))
    return "must keep the shape and layout: " + src.str() + " to " + rt.str();
  // Addresses are 64-bit on every target tk has (NVPTX's generic and global
  // spaces, the sim's host): an i64 holds one exactly.
  const Type i64 = rt.withScalar(ScalarKind::I64);
  switch (op.kind()) {
    case OpKind::IntToPtr:
      if (src.elem != i64.elem) return "operand must be i64 (an address) or a tile of them, not " + src.str();
      if (!rt.isPtr()) return "result must be a pointer or a tile of pointers, not " + rt.str();
      return "";
    case OpKind::PtrToInt:
      if (!src.isPtr()) return "operand must be a pointer or a tile of pointers, not " + src.str();
      if (rt.elem != i64.elem) return "result must be i64 (an address) or a tile of them, not " + rt.str();
      return "";
    case OpKind::Bitcast:
      if (src.isPtr() || rt.isPtr())
        return "reinterprets numbers only (int_to_ptr and ptr_to_int move addresses): " + src.str() + " to " + rt.str();
      if (!bitcastable(src.elem.scalar, rt.elem.scalar))
        return std::string("needs types of one width (not bool): ") + scalarName(src.elem.scalar) + " is " +
               std::to_string(bitWidth(src.elem.scalar)) + " bits, " + scalarName(rt.elem.scalar) + " " +
               std::to_string(bitWidth(rt.elem.scalar));
      return "";
    default: return "not a reinterpreting cast";
  }
}

}  // namespace tk::ir
