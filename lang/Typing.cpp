// The typing rules of the front end: common element types, broadcasting,
// constant conversion and folding (the arithmetic is ir/Fold.h).
#include "lang/Typing.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "ir/Fold.h"

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

int64_t wrapTo(int64_t v, ScalarKind k) { return ir::wrapInt(v, ir::bitWidth(k)); }

ScalarKind widerKind(ScalarKind a, ScalarKind b) {
  if (a == b) return a;
  if ((a == ScalarKind::F16 && b == ScalarKind::BF16) || (a == ScalarKind::BF16 && b == ScalarKind::F16))
    return ScalarKind::F32;
  if (ir::isFp8(a) && ir::isFp8(b)) return ScalarKind::F16;  // e4m3 op e5m2: f16 holds both exactly
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
    if (to == ScalarKind::F32 || ir::isFp8(to)) d = *ir::roundFloat(d, to);
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

std::optional<ir::CmpPredicate> comparisonOf(const std::string &op) {
  if (op == "<") return ir::CmpPredicate::Lt;
  if (op == "<=") return ir::CmpPredicate::Le;
  if (op == ">") return ir::CmpPredicate::Gt;
  if (op == ">=") return ir::CmpPredicate::Ge;
  if (op == "==") return ir::CmpPredicate::Eq;
  if (op == "!=") return ir::CmpPredicate::Ne;
  return std::nullopt;
}

namespace {
std::optional<ir::FoldOp> foldOpOf(const std::string &op) {
  if (op == "+") return ir::FoldOp::Add;
  if (op == "-") return ir::FoldOp::Sub;
  if (op == "*") return ir::FoldOp::Mul;
  if (op == "/") return ir::FoldOp::Div;
  if (op == "%") return ir::FoldOp::Rem;
  if (op == "&" || op == "&&") return ir::FoldOp::And;
  if (op == "|" || op == "||") return ir::FoldOp::Or;
  if (op == "^") return ir::FoldOp::Xor;
  if (op == "<<") return ir::FoldOp::Shl;
  if (op == ">>") return ir::FoldOp::Shr;
  return std::nullopt;
}
}  // namespace

// The arithmetic is ir/Fold.h's (shared with canonicalize); what is an
// error here, and the untyped literals' i64, is the front end's.
std::optional<ConstValue> foldBinary(const std::string &op, ConstValue a, ConstValue b, ScalarKind k,
                                     bool weak, std::string &error) {
  error.clear();
  if (auto cmp = comparisonOf(op))
    return ConstValue::ofInt(ir::isFloat(k) ? ir::foldCompare(*cmp, a.f, b.f) : ir::foldCompare(*cmp, a.i, b.i));
  auto fop = foldOpOf(op);
  if (ir::isFloat(k)) {
    if (!weak && !ir::roundFloat(0.0, k)) return std::nullopt;  // f16, bf16
    if (!fop || (*fop != ir::FoldOp::Add && *fop != ir::FoldOp::Sub && *fop != ir::FoldOp::Mul &&
                 *fop != ir::FoldOp::Div && *fop != ir::FoldOp::Rem))
      return std::nullopt;
    double r = *ir::foldFloat(*fop, a.f, b.f);
    return ConstValue::ofFloat(weak ? r : *ir::roundFloat(r, k));
  }
  if (!fop) return std::nullopt;
  const int width = weak ? 64 : ir::bitWidth(k);
  ir::IntFold f = ir::foldInt(*fop, a.i, b.i, width);
  switch (f.status) {
    case ir::IntFold::DivByZero:
      error = op == "/" ? "division by zero in a constant expression" : "remainder by zero in a constant expression";
      return std::nullopt;
    case ir::IntFold::ShiftOutOfRange:
      error = "shift amount " + std::to_string(b.i) + " is out of range for a " + std::to_string(width) + "-bit value";
      return std::nullopt;
    case ir::IntFold::NotFoldable: return std::nullopt;
    case ir::IntFold::Ok: break;
  }
  if (weak && f.overflowed) {
    error = "integer constant expression overflows i64";
    return std::nullopt;
  }
  return ConstValue::ofInt(f.value);
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
