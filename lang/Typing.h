// The front end's typing rules as pure functions: the common element type of
// two operands (with weakly typed literals), NumPy broadcasting of shapes,
// and compile-time folding of constants. Documented in docs/language.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace tk::lang {

// A compile-time scalar: an integer (bools are 0/1) or a float; or, for a
// const parameter of sort Str or Type, its text in `s`.
struct ConstValue {
  bool isFloat = false;
  int64_t i = 0;
  double f = 0;
  std::string s;  // ConstSort::Str: the string; ConstSort::Type: the type's name ("f16", "bool")
  static ConstValue ofInt(int64_t v) { return {false, v, 0, {}}; }
  static ConstValue ofFloat(double v) { return {true, 0, v, {}}; }
  static ConstValue ofText(std::string t) { return {false, 0, 0, std::move(t)}; }
  double asDouble() const { return isFloat ? f : static_cast<double>(i); }
};

// What a const parameter holds: a number or bool of its scalar type, a
// string (`const ACT: str = "relu"`) or an element type (`const T: type =
// f32`). Strings and types exist only at compile time: they are compared
// with == and != and select code; a type also names element types.
enum class ConstSort { Scalar, Str, Type };

// The sort a const's written type gives: "str", "type", else Scalar.
ConstSort constSortOf(const std::string &typeName);
// A type's name as the language writes it: "bool" for i1, else "f16" etc.
std::string typeText(ir::ScalarKind k);

// An element type as the typing rules see it: weak elements come from
// literals and adapt to the other operand.
struct ElemInfo {
  ir::ScalarKind kind;
  bool weak = false;
};

// The type a weak int literal takes alone: i32 when it fits, else i64.
ir::ScalarKind weakIntKind(int64_t v);
bool fitsIn(int64_t v, ir::ScalarKind k);
// Sign-extends the low bitWidth(k) bits of `v` (C-style wrap-around).
int64_t wrapTo(int64_t v, ir::ScalarKind k);
// The wider of two int or two float kinds; f16 with bf16 gives f32.
ir::ScalarKind widerKind(ir::ScalarKind a, ir::ScalarKind b);
// The common element of two numeric operands (neither a pointer).
ElemInfo commonElem(ElemInfo a, ElemInfo b);

// NumPy broadcasting: dims aligned from the right, size 1 grows. Nullopt
// when the shapes are incompatible.
std::optional<std::vector<int64_t>> broadcastShapes(const std::vector<int64_t> &a,
                                                    const std::vector<int64_t> &b);
std::string shapeStr(const std::vector<int64_t> &shape);  // "[64, 32]"

// The predicate of a comparison operator (`<` is lt); nullopt for any other.
std::optional<ir::CmpPredicate> comparisonOf(const std::string &op);

// Converts a constant of kind `from` to kind `to` (value semantics of a
// cast). Nullopt when the value is out of the target's range (float->int).
std::optional<ConstValue> convertConst(ConstValue v, ir::ScalarKind to);

// Folds `a op b` (both already of kind `k`). `weak` folds in full i64 or
// double precision and reports overflow. Returns nullopt with `error` set on
// a real error, or nullopt with `error` empty when the operation should be
// left to run time (f16/bf16 arithmetic). Comparisons give 0/1.
std::optional<ConstValue> foldBinary(const std::string &op, ConstValue a, ConstValue b, ir::ScalarKind k,
                                     bool weak, std::string &error);

// A constant's spelling as a define value would write it ("1024", "0.5", "true").
std::string constText(ConstValue v, ir::ScalarKind k);

}  // namespace tk::lang
