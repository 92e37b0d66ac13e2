// The typing rules of the front end: common element types, broadcasting,
// constant conversion and folding.
#include "lang/Typing.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "lang/Compare.h"

namespace tk::lang {

using ir::ScalarKind;

ScalarKind weakIntKind(int64_t v) { return fitsIn(v, ScalarKind::I32) ? ScalarKind::I32 : ScalarKind::I64; }

bool fitsIn(int64_t v, ScalarKind k) {
  switch (k) {
    case ScalarKind::I1: return v == 0 || v == 1;
    case ScalarKind::I8: return v >= INT8_MIN && v <= INT8_MAX;
    case ScalarKind::I16: return v >= INT16_MIN && v <= INT16_MAX;
    case ScalarKind::I32: return v >= INT32_MIN && v <= INT32_MAX;
    default: return true;
  }
}

int64_t wrapTo(int64_t v, ScalarKind k) {
  switch (k) {
    case ScalarKind::I1: return v & 1;
    case ScalarKind::I8: return static_cast<int8_t>(v);
    case ScalarKind::I16: return static_cast<int16_t>(v);
    case ScalarKind::I32: return static_cast<int32_t>(v);
    default: return v;
  }
}

ScalarKind widerKind(ScalarKind a, ScalarKind b) {
  if (a == b) return a;
  if ((a == ScalarKind::F16 && b == ScalarKind::BF16) || (a == ScalarKind::BF16 && b == ScalarKind::F16))
    return ScalarKind::F32;
  return ir::bitWidth(a) >= ir::bitWidth(b) ? a : b;
}

ElemInfo commonElem(ElemInfo a, ElemInfo b) {
  bool af = ir::isFloat(a.kind), bf = ir::isFloat(b.kind);
  if (a.weak && b.weak) return {af || bf ? ScalarKind::F32 : ScalarKind::I64, true};
  if (a.weak) std::swap(a, b), std::swap(af, bf);
  if (b.weak) {
    // a is typed: a weak int takes a's type; a weak float takes a's float
    // type, or f32 against an int.
    if (bf && !af) return {ScalarKind::F32, false};
    return {a.kind, false};
  }
  if (af != bf) return {af ? a.kind : b.kind, false};
  return {widerKind(a.kind, b.kind), false};
}

std::optional<std::vector<int64_t>> broadcastShapes(const std::vector<int64_t> &a,
                                                    const std::vector<int64_t> &b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::optional<ConstValue> convertConst(ConstValue v, ScalarKind to) {
  if (to == ScalarKind::I1) return ConstValue::ofInt(v.isFloat ? v.f != 0 : v.i != 0);
  if (ir::isFloat(to)) {
    double d = v.asDouble();
    if (to == ScalarKind::F32) d = static_cast<float>(d);
    return ConstValue::ofFloat(d);
  }
  if (!v.isFloat) return ConstValue::ofInt(wrapTo(v.i, to));
  double t = std::trunc(v.f);
  // Out of range (or NaN): leave it to the cast at run time.
  if (!(t >= -9.2233720368547758e18 && t < 9.2233720368547758e18)) return std::nullopt;
  int64_t i = static_cast<int64_t>(t);
  if (!fitsIn(i, to)) return std::nullopt;
  return ConstValue::ofInt(i);
}

namespace {
bool isCompare(const std::string &op) {
  return op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=";
}

}  // namespace

std::optional<ConstValue> foldBinary(const std::string &op, ConstValue a, ConstValue b, ScalarKind k,
                                     bool weak, std::string &error) {
  error.clear();
  if (ir::isFloat(k)) {
    if (isCompare(op)) return ConstValue::ofInt(compareValues(op, a.f, b.f));
    if (!weak && k != ScalarKind::F32 && k != ScalarKind::F64) return std::nullopt;
    double r;
    if (op == "+") r = a.f + b.f;
    else if (op == "-") r = a.f - b.f;
    else if (op == "*") r = a.f * b.f;
    else if (op == "/") r = a.f / b.f;
    else if (op == "%") r = std::fmod(a.f, b.f);
    else return std::nullopt;
    if (k == ScalarKind::F32 && !weak) r = static_cast<float>(r);
    return ConstValue::ofFloat(r);
  }
  int64_t x = a.i, y = b.i, r = 0;
  if (isCompare(op)) return ConstValue::ofInt(compareValues(op, x, y));
  bool overflow = false;
  if (op == "+") overflow = __builtin_add_overflow(x, y, &r);
  else if (op == "-") overflow = __builtin_sub_overflow(x, y, &r);
  else if (op == "*") overflow = __builtin_mul_overflow(x, y, &r);
  else if (op == "/" || op == "%") {
    if (y == 0) {
      error = op == "/" ? "division by zero in a constant expression" : "remainder by zero in a constant expression";
      return std::nullopt;
    }
    if (x == INT64_MIN && y == -1) overflow = true, r = op == "/" ? INT64_MIN : 0;
    else r = op == "/" ? x / y : x % y;
  } else if (op == "&" || op == "&&") r = x & y;
  else if (op == "|" || op == "||") r = x | y;
  else if (op == "^") r = x ^ y;
  else if (op == "<<" || op == ">>") {
    int width = weak ? 64 : ir::bitWidth(k);
    if (y < 0 || y >= width) {
      error = "shift amount " + std::to_string(y) + " is out of range for a " + std::to_string(width) + "-bit value";
      return std::nullopt;
    }
    r = op == "<<" ? static_cast<int64_t>(static_cast<uint64_t>(x) << y) : x >> y;
  } else {
    return std::nullopt;
  }
  if (weak && overflow) {
    error = "integer constant expression overflows i64";
    return std::nullopt;
  }
  return ConstValue::ofInt(weak ? r : wrapTo(r, k));
}

ConstSort constSortOf(const std::string &typeName) {
  if (typeName == "str") return ConstSort::Str;
  if (typeName == "type") return ConstSort::Type;
  return ConstSort::Scalar;
}

std::string typeText(ScalarKind k) { return k == ScalarKind::I1 ? "bool" : ir::scalarName(k); }

std::string constText(ConstValue v, ScalarKind k) {
  if (k == ScalarKind::I1) return v.i ? "true" : "false";
  if (!ir::isFloat(k)) return std::to_string(v.i);
  char buf[64];
  // f32 values print in their shortest f32 spelling (1e-05, not 9.99...e-06).
  auto r = k == ScalarKind::F32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v.asDouble()))
                                : std::to_chars(buf, buf + sizeof buf, v.asDouble());
  std::string s(buf, r.ptr);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

}  // namespace tk::lang
