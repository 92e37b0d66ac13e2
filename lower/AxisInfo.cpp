// Alignment and contiguity analysis (see AxisInfo.h). A forward dataflow over
// the ops of a kernel; pointer parameters start from their declared alignment.
#include "lower/AxisInfo.h"
#include "tk/error.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace tk::lower {

namespace {
constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

size_t dims(const ir::Type &t) { return t.isTile() ? t.shape.size() : 1; }

AxisInfo uniform(const ir::Type &t, int64_t div) {
  size_t n = dims(t);
  AxisInfo a{std::vector<int64_t>(n, 1), std::vector<int64_t>(n, div), std::vector<int64_t>(n, 1)};
  for (size_t d = 0; d < n; ++d) a.constancy[d] = t.isTile() ? t.shape[d] : 1;
  return a;
}

AxisInfo unknown(const ir::Type &t) {
  size_t n = dims(t);
  return AxisInfo{std::vector<int64_t>(n, 1), std::vector<int64_t>(n, 1), std::vector<int64_t>(n, 1)};
}

int64_t cap(int64_t v) { return std::min(v, kMaxDivisibility); }
}  // namespace

int64_t largestPowerOfTwoDivisor(int64_t v) {
  if (v == 0) return kMaxDivisibility;
  uint64_t u = static_cast<uint64_t>(v < 0 ? -v : v);
  return cap(static_cast<int64_t>(u & (~u + 1)));
}

// What holds of both `a` and `b` (a value that may be either): the shorter
// runs; a side whose runs got shorter keeps no divisibility for them.
static AxisInfo meet(const AxisInfo &a, const AxisInfo &b) {
  AxisInfo r = a;
  for (size_t d = 0; d < a.contiguity.size(); ++d) {
    int64_t c = std::min(a.contiguity[d], b.contiguity[d]);
    int64_t divA = a.contiguity[d] == c ? a.divisibility[d] : 1;
    int64_t divB = b.contiguity[d] == c ? b.divisibility[d] : 1;
    r.contiguity[d] = c;
    r.divisibility[d] = std::min(divA, divB);
    r.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
  }
  return r;
}

static bool sameInfo(const AxisInfo &a, const AxisInfo &b) {
  return a.contiguity == b.contiguity && a.divisibility == b.divisibility && a.constancy == b.constancy;
}

AxisInfoAnalysis::AxisInfoAnalysis(ir::Function &fn) {
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ir::Value *arg = fn.body.argument(i);
    int64_t div = std::max<int64_t>(1, arg->type().isPtr() ? fn.params[i].align : fn.params[i].divisibility);
    info_[arg] = uniform(arg->type(), div);
  }
  visitBlock(fn.body);
}

void AxisInfoAnalysis::visitBlock(const ir::Block &block) {
  for (const auto &op : block.ops()) {
    if (op->is(ir::OpKind::For)) visitFor(*op);
    else if (op->is(ir::OpKind::If)) visitIf(*op);
    else if (op->is(ir::OpKind::While)) visitWhile(*op);
    else if (op->is(ir::OpKind::WarpSpecialize))
      for (const auto &region : op->regions()) visitBlock(*region);  // two sides of one body, no results
    else if (op->is(ir::OpKind::ReduceCombine) || op->is(ir::OpKind::ScanCombine) || op->is(ir::OpKind::Sort))
      for (const ir::Value *r : op->results()) info_[r] = unknown(r->type());  // data-dependent
    else if (op->result()) info_[op->result()] = visit(*op);
  }
}

// The induction variable steps from lb by step: its divisibility is what both
// share. Carried values start as their initial values and widen to what the
// body yields until nothing changes (the lattice is finite: powers of two).
void AxisInfoAnalysis::visitFor(const ir::Op &op) {
  const ir::Block &body = *op.regions()[0];
  AxisInfo iv = uniform(body.argument(0)->type(), 1);
  iv.divisibility[0] = std::min(get(op.operand(0)).divisibility[0], get(op.operand(2)).divisibility[0]);
  info_[body.argument(0)] = iv;
  for (size_t i = 0; i + 3 < op.numOperands(); ++i) info_[body.argument(i + 1)] = get(op.operand(i + 3));
  const ir::Op &yield = *body.ops().back();
  for (int round = 0; round < 64; ++round) {
    visitBlock(body);
    bool changed = false;
    for (size_t i = 0; i < yield.numOperands(); ++i) {
      AxisInfo next = meet(info_[body.argument(i + 1)], get(yield.operand(i)));
      if (!sameInfo(next, info_[body.argument(i + 1)])) {
        info_[body.argument(i + 1)] = next;
        changed = true;
      }
    }
    if (!changed) break;
  }
  for (size_t i = 0; i < op.numResults(); ++i) info_[op.result(i)] = info_[body.argument(i + 1)];
}

// As a `for`'s carried values: both regions see the initial values widened
// by what the body yields.
void AxisInfoAnalysis::visitWhile(const ir::Op &op) {
  const ir::Block &before = *op.regions()[0], &body = *op.regions()[1];
  for (size_t i = 0; i < op.numOperands(); ++i) info_[before.argument(i)] = info_[body.argument(i)] = get(op.operand(i));
  const ir::Op &yield = *body.ops().back();
  for (int round = 0; round < 64; ++round) {
    visitBlock(before);
    visitBlock(body);
    bool changed = false;
    for (size_t i = 0; i < yield.numOperands(); ++i) {
      AxisInfo next = meet(info_[body.argument(i)], get(yield.operand(i)));
      if (!sameInfo(next, info_[body.argument(i)])) {
        info_[before.argument(i)] = info_[body.argument(i)] = next;
        changed = true;
      }
    }
    if (!changed) break;
  }
  for (size_t i = 0; i < op.numResults(); ++i) info_[op.result(i)] = info_[body.argument(i)];
}

void AxisInfoAnalysis::visitIf(const ir::Op &op) {
  for (const auto &region : op.regions()) visitBlock(*region);
  const ir::Op &yThen = *op.regions()[0]->ops().back(), &yElse = *op.regions()[1]->ops().back();
  for (size_t i = 0; i < op.numResults(); ++i) info_[op.result(i)] = meet(get(yThen.operand(i)), get(yElse.operand(i)));
}

const AxisInfo &AxisInfoAnalysis::get(const ir::Value *v) const {
  auto it = info_.find(v);
  if (it == info_.end()) throw tk::InternalError("axis info asked for an unknown value");
  return it->second;
}

// a + b (or a - b when `sub`, where only a may carry the contiguity);
// `scaleB` multiplies b's divisibility (element size for pointer offsets).
static AxisInfo addLike(const AxisInfo &a, const AxisInfo &b, int64_t scaleB, bool sub) {
  AxisInfo r = a;
  for (size_t d = 0; d < a.contiguity.size(); ++d) {
    int64_t fromA = std::min(a.contiguity[d], b.constancy[d]);
    int64_t fromB = sub ? 1 : std::min(b.contiguity[d], a.constancy[d]);
    r.contiguity[d] = std::max(fromA, fromB);
    int64_t divB = cap(b.divisibility[d] * scaleB), edB = cap(b.elementDivisibility(d) * scaleB);
    if (r.contiguity[d] > 1 && fromA >= fromB)
      r.divisibility[d] = std::gcd(a.divisibility[d], edB);
    else if (r.contiguity[d] > 1)
      r.divisibility[d] = std::gcd(a.elementDivisibility(d), divB);
    else
      r.divisibility[d] = std::gcd(a.elementDivisibility(d), edB);
    r.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
  }
  return r;
}

// axis_hint: what the program asserts on top of what is proven about `x`
// (neither is lost).
static AxisInfo hinted(AxisInfo r, const ir::Op &op) {
  const ir::Type &t = op.result()->type();
  auto take = [&](const char *key, std::vector<int64_t> &field, bool withinDim) {
    auto it = op.attrs().find(key);
    if (it == op.attrs().end()) return;
    const auto &v = std::get<std::vector<int64_t>>(it->second);
    for (size_t d = 0; d < field.size() && d < v.size(); ++d) {
      int64_t x = withinDim && t.isTile() ? std::min(v[d], t.shape[d]) : v[d];
      field[d] = cap(std::max(field[d], x));
    }
  };
  take("multiple_of", r.divisibility, false);
  take("max_contiguous", r.contiguity, true);
  take("max_constancy", r.constancy, true);
  return r;
}

// x % y (integers) on top of `r`, the operands' constancy. Where x runs
// contiguously from multiples of dx and y is one value along d, a multiple
// of dy: over aligned groups of g = min(run, dx, dy), x0 + i wraps nowhere
// inside a group (x0 % y is a multiple of g below y), so (x0 + i) % y =
// x0 % y + i. Tutorial 03's `(pid_m * BLOCK_M + arange(BLOCK_M)) % M` with
// M % 16 == 0 stays 16-contiguous, as Triton's axis analysis finds (a
// negative x, whose remainder would be negative, is an index before the
// buffer either way).
static AxisInfo remainder(AxisInfo r, const AxisInfo &x, const AxisInfo &y) {
  for (size_t d = 0; d < r.contiguity.size(); ++d) {
    if (x.contiguity[d] <= 1) continue;
    const int64_t g = std::min({x.contiguity[d], x.divisibility[d], y.constancy[d], y.elementDivisibility(d)});
    if (g <= 1) continue;
    r.contiguity[d] = g;
    r.divisibility[d] = std::gcd(x.divisibility[d], y.elementDivisibility(d));
  }
  return r;
}

// a `pred` b on top of `r`, the operands' constancy. x < y where x runs
// contiguously (from multiples of dx) and y is constant (a multiple of dy)
// along d: over aligned groups of g = min(dx, dy), x0 + i < y iff x0 < y,
// since x0 and y are multiples of g and 0 <= i < g. So a bounds mask like
// `c0 + arange(B) < D` with D % 16 == 0 is one value per 16 elements, and a
// vector access under it needs no per-element fallback. Likewise y > x,
// x >= y, y <= x.
static AxisInfo comparison(AxisInfo r, ir::CmpPredicate pred, const AxisInfo &a, const AxisInfo &b) {
  const bool ltLike = pred == ir::CmpPredicate::Lt || pred == ir::CmpPredicate::Ge;
  const bool gtLike = pred == ir::CmpPredicate::Gt || pred == ir::CmpPredicate::Le;
  if (!ltLike && !gtLike) return r;
  const AxisInfo &x = ltLike ? a : b, &y = ltLike ? b : a;
  for (size_t d = 0; d < r.constancy.size(); ++d) {
    if (x.contiguity[d] <= 1) continue;
    const int64_t g = std::min({x.contiguity[d], x.divisibility[d], y.constancy[d], y.elementDivisibility(d)});
    r.constancy[d] = std::max(r.constancy[d], g);
  }
  return r;
}

AxisInfo AxisInfoAnalysis::visit(const ir::Op &op) const {
  const ir::Type &t = op.result()->type();
  auto in = [&](size_t i) -> const AxisInfo & { return get(op.operand(i)); };
  auto constancyOfOperands = [&]() {
    AxisInfo r = unknown(t);
    for (size_t d = 0; d < r.constancy.size(); ++d) {
      int64_t k = t.isTile() ? t.shape[d] : 1;
      for (ir::Value *v : op.operands())
        if (v->type().shape == t.shape) k = std::min(k, get(v).constancy[d]);
      r.constancy[d] = k;
    }
    return r;
  };

  switch (op.kind()) {
    case ir::OpKind::Constant:
      if (t.isInt()) return uniform(t, largestPowerOfTwoDivisor(op.intAttr("value")));
      return uniform(t, 1);
    case ir::OpKind::Arange: {
      AxisInfo r = unknown(t);
      r.contiguity[0] = t.shape[0];
      r.divisibility[0] = largestPowerOfTwoDivisor(op.intAttr("start"));
      return r;
    }
    case ir::OpKind::Splat: return uniform(t, in(0).divisibility[0]);
    case ir::OpKind::SharedLoad: return unknown(t);  // a slot's contents: nothing known
    case ir::OpKind::ExpandDims: {
      const AxisInfo &a = in(0);
      size_t axis = static_cast<size_t>(op.intAttr("axis"));
      int64_t all = kMaxDivisibility;
      for (size_t d = 0; d < a.contiguity.size(); ++d) all = std::min(all, a.elementDivisibility(d));
      AxisInfo r = a;
      r.contiguity.insert(r.contiguity.begin() + axis, 1);
      r.divisibility.insert(r.divisibility.begin() + axis, all);
      r.constancy.insert(r.constancy.begin() + axis, 1);
      return r;
    }
    case ir::OpKind::Trans: {
      const AxisInfo &a = in(0);
      AxisInfo r = a;
      const std::vector<int> order = ir::transOrder(op);
      for (size_t d = 0; d < order.size(); ++d) {
        r.contiguity[d] = a.contiguity[order[d]];
        r.divisibility[d] = a.divisibility[order[d]];
        r.constancy[d] = a.constancy[order[d]];
      }
      return r;
    }
    case ir::OpKind::Reshape: return unknown(t);
    case ir::OpKind::Broadcast: {
      AxisInfo r = in(0);
      const auto &src = op.operand(0)->type().shape;
      for (size_t d = 0; d < t.shape.size(); ++d)
        if (src[d] == 1 && t.shape[d] != 1) {
          r.contiguity[d] = 1;
          r.constancy[d] = t.shape[d];
        }
      return r;
    }
    case ir::OpKind::ConvertLayout: return in(0);
    case ir::OpKind::AxisHint: return hinted(in(0), op);
    case ir::OpKind::Reduce: case ir::OpKind::Gather: case ir::OpKind::Histogram: return unknown(t);
    case ir::OpKind::Add:
      if (!t.isInt()) return constancyOfOperands();
      return addLike(in(0), in(1), 1, false);
    case ir::OpKind::Sub:
      if (!t.isInt()) return constancyOfOperands();
      return addLike(in(0), in(1), 1, true);
    case ir::OpKind::AddPtr:
      return addLike(in(0), in(1), static_cast<int>(t.elem.pointee().bytes()), false);
    case ir::OpKind::IntToPtr:
    case ir::OpKind::PtrToInt: {
      // The address is the same number, so its divisibility and constancy
      // carry over; contiguity counts elements for pointers and units for
      // integers, so runs are not claimed across the change. (A pointer
      // loaded from memory is a load's result: nothing known, as Triton.)
      AxisInfo r = in(0);
      for (size_t d = 0; d < r.contiguity.size(); ++d) {
        r.divisibility[d] = r.elementDivisibility(d);
        r.contiguity[d] = 1;
      }
      return r;
    }
    case ir::OpKind::Mul: {
      AxisInfo r = constancyOfOperands();
      if (!t.isInt()) return r;
      for (size_t d = 0; d < r.divisibility.size(); ++d)
        r.divisibility[d] = cap(in(0).elementDivisibility(d) * in(1).elementDivisibility(d));
      return r;
    }
    case ir::OpKind::Rem: {
      AxisInfo r = constancyOfOperands();
      if (!t.isInt()) return r;
      return remainder(std::move(r), in(0), in(1));
    }
    case ir::OpKind::Shl: {
      AxisInfo r = constancyOfOperands();
      const ir::Op *amount = op.operand(1)->definingOp();
      if (t.isInt() && amount && amount->is(ir::OpKind::Constant)) {
        int64_t s = amount->intAttr("value");
        if (s >= 0 && s < 30)
          for (size_t d = 0; d < r.divisibility.size(); ++d)
            r.divisibility[d] = cap(in(0).elementDivisibility(d) << s);
      }
      return r;
    }
    case ir::OpKind::Cast:
      if (t.isInt() && op.operand(0)->type().isInt() && !op.operand(0)->type().isBool() && !t.isBool())
        return in(0);
      return constancyOfOperands();
    case ir::OpKind::Cmp: {
      const ir::CmpPredicate pred = op.enumAttr<ir::CmpPredicate>("predicate");
      return comparison(constancyOfOperands(), pred, in(0), in(1));
    }
    default: return constancyOfOperands();
  }
}

int AxisInfoAnalysis::contiguousDim(const ir::Value *ptrs) const {
  const AxisInfo &a = get(ptrs);
  int best = static_cast<int>(a.contiguity.size()) - 1;
  for (int d = best - 1; d >= 0; --d)
    if (a.contiguity[d] > a.contiguity[best]) best = d;
  return best;
}

int AxisInfoAnalysis::vectorWidth(const ir::Value *ptrs, int dim) const {
  const ir::Type &t = ptrs->type();
  if (!t.isTile()) return 1;
  const AxisInfo &a = get(ptrs);
  int64_t eltBytes = t.elem.pointee().bytes();
  int64_t v = 16 / eltBytes;
  v = std::min(v, a.contiguity[dim]);
  v = std::min(v, std::max<int64_t>(1, a.divisibility[dim] / eltBytes));
  v = std::min(v, t.shape[dim]);
  return static_cast<int>(std::max<int64_t>(1, v));
}

}  // namespace tk::lower
