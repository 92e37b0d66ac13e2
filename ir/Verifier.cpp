// The tile IR verifier: structure (dominance, terminator, parent links),
// then per-op operand and attribute rules (ir/OpRules.cpp), then types and layouts. It keeps
// going after an error so one run reports every problem.
#include "ir/Verifier.h"

#include <algorithm>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <unordered_set>

#include "ir/OpAttrs.h"
#include "ir/OpRules.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "tk/gpu.h"

namespace tk::ir {
namespace {

// As Triton: a block-level tile beyond 2^20 elements cannot be held by one
// CTA's registers anyway, and the limit keeps shape arithmetic far from overflow.
constexpr int64_t kMaxTileElements = int64_t(1) << 20;


class Verifier {
 public:
  explicit Verifier(const Function &fn) : fn_(fn) {}

  bool run(std::string &error) {
    checkFunction();
    error.clear();
    for (size_t i = 0; i < errors_.size(); ++i) error += (i ? "\n" : "") + errors_[i];
    return errors_.empty();
  }

 private:
  // --------------------------------------------------------- reporting

  std::string where(const Location &loc) const { return loc.known() ? loc.str() : "@" + fn_.name; }

  void fnError(const std::string &msg) { errors_.push_back(where(fn_.loc) + ": error: kernel @" + fn_.name + ": " + msg); }

  void opError(const Op &op, const std::string &msg) {
    errors_.push_back(where(op.loc()) + ": error: '" + op.info().mnemonic + "' op: " + msg + "\n  in @" + fn_.name +
                      ": " + printOpSummary(op, names()));
  }

  // --------------------------------------------------------- types and layouts

  // Returns an empty string when `l` is a valid layout of rank `rank`.
  std::string layoutProblem(const Layout &l, int rank, int depth = 0) const {
    if (depth > 64) return "layout nested too deeply";
    if (l.kind == Layout::Kind::Slice) {
      if (!l.parent) return "#slice has no parent layout";
      int parentRank = l.parent->kind == Layout::Kind::Blocked ? static_cast<int>(l.parent->sizePerThread.size()) : rank + 1;
      if (parentRank != rank + 1)
        return "#slice of a rank-" + std::to_string(parentRank) + " parent describes rank " + std::to_string(parentRank - 1) +
               ", not " + std::to_string(rank);
      if (l.dim < 0 || l.dim >= parentRank) return "#slice dim " + std::to_string(l.dim) + " is not a dim of its parent";
      return layoutProblem(*l.parent, rank + 1, depth + 1);
    }
    const std::vector<int> *fields[] = {&l.sizePerThread, &l.threadsPerWarp, &l.warpsPerCTA, &l.order};
    for (auto *f : fields)
      if (static_cast<int>(f->size()) != rank)
        return "#blocked fields must each have " + std::to_string(rank) + " entries (the tile's rank)";
    int64_t threads = 1, warps = 1;
    for (int i = 0; i < rank; ++i) {
      if (!isPowerOfTwo(l.sizePerThread[i]) || !isPowerOfTwo(l.threadsPerWarp[i]) || !isPowerOfTwo(l.warpsPerCTA[i]))
        return "#blocked sizes must be powers of two";
      threads *= l.threadsPerWarp[i];
      warps *= l.warpsPerCTA[i];
      if (threads > kWarpSize || warps > 1024) break;  // wrong already; stop before the products overflow
    }
    std::vector<int> sorted = l.order;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < rank; ++i)
      if (sorted[i] != i) return "#blocked order must be a permutation of the dims";
    if (threads != kWarpSize)
      return "#blocked threadsPerWarp must multiply to " + std::to_string(kWarpSize) + ", not " + std::to_string(threads);
    if (warps != fn_.numWarps())
      return "#blocked warpsPerCTA multiply to " + std::to_string(warps) + " but the kernel has num_warps = " +
             std::to_string(fn_.numWarps());
    return "";
  }


  std::string typeProblem(const Type &t) const {
    int64_t elements = 1;
    for (int64_t d : t.shape) {
      // Any size until pad-tiles pads it; a layout holds powers of two only.
      if (d < 1) return "tile dims must be positive: " + t.str();
      if (t.layout && !isPowerOfTwo(d)) return "a tile with a layout has power-of-two dims (pad-tiles pads them): " + t.str();
      // Checked per dim so the product cannot overflow; padded, as it will be.
      const int64_t p = paddedDim(d);
      if (p > kMaxTileElements || (elements *= p) > kMaxTileElements)
        return "a tile may hold at most " + std::to_string(kMaxTileElements) + " elements: " + t.str();
    }
    if (t.isScalar() && t.layout) return "a scalar cannot have a layout";
    if (t.layout) {
      std::string p = layoutProblem(*t.layout, t.rank());
      if (!p.empty()) return p + " in " + t.str();
    }
    return "";
  }

  // --------------------------------------------------------- structure

  void checkFunction() {
    visible_.reserve(2 * fn_.body.ops().size() + fn_.body.arguments().size());
    if (fn_.params.size() != fn_.body.arguments().size())
      fnError(std::to_string(fn_.params.size()) + " params describe " + std::to_string(fn_.body.arguments().size()) +
              " body arguments");
    if (std::string bad = checkKernelAttrs(fn_); !bad.empty()) fnError(bad);
    for (size_t i = 0; i < fn_.body.arguments().size(); ++i) {
      const Value *arg = fn_.body.argument(i);
      std::string p = typeProblem(arg->type());
      if (!p.empty()) fnError("parameter " + names()(arg) + ": " + p);
      if (i < fn_.params.size() && fn_.params[i].align) {
        if (!arg->type().isPtr()) fnError("parameter " + names()(arg) + ": only pointers have an alignment");
        else if (!isPowerOfTwo(fn_.params[i].align)) fnError("parameter " + names()(arg) + ": alignment must be a power of two");
      }
      visible_.insert(arg);
    }
    if (fn_.body.ops().empty() || !fn_.body.ops().back()->is(OpKind::Return)) fnError("the body must end with 'return'");
    checkBlock(fn_.body, true);
  }

  void checkBlock(const Block &block, bool isBody) {
    std::vector<const Value *> added;
    for (auto it = block.ops().begin(); it != block.ops().end(); ++it) {
      const Op &op = **it;
      if (op.parentBlock() != &block) opError(op, "its parent-block link is wrong");
      for (size_t i = 0; i < op.numOperands(); ++i) {
        if (!op.operand(i)) opError(op, "operand " + std::to_string(i) + " is null");
        else if (!visible_.count(op.operand(i)))
          opError(op, "operand " + std::to_string(i) + " (" + names()(op.operand(i)) + ") is not defined before its use");
      }
      const bool last = std::next(it) == block.ops().end();
      if (op.is(OpKind::Return) && (!isBody || !last)) opError(op, "must be the last op of the kernel body");
      if (op.is(OpKind::Yield) && (isBody || !last)) opError(op, "must be the last op of a region");
      if (!isBody && last && !op.is(OpKind::Yield)) opError(op, "a region must end with 'yield'");
      for (const auto &region : op.regions()) {
        if (region->parentOp() != &op) opError(op, "a region's parent-op link is wrong");
        std::vector<const Value *> args;
        for (const auto &a : region->arguments()) {
          visible_.insert(a.get());
          args.push_back(a.get());
        }
        checkBlock(*region, false);
        for (const Value *a : args) visible_.erase(a);
      }
      checkOp(op);
      for (size_t i = 0; i < op.numResults(); ++i) {
        const Value *r = op.result(i);
        visible_.insert(r);
        added.push_back(r);
      }
    }
    if (!isBody)
      for (const Value *v : added) visible_.erase(v);
  }

  // --------------------------------------------------------- per op

  void checkOp(const Op &op) {
    const OpInfo &info = op.info();
    int n = static_cast<int>(op.numOperands());
    if (n < info.minOperands || (info.maxOperands >= 0 && n > info.maxOperands)) {
      std::string want = info.minOperands == info.maxOperands ? std::to_string(info.minOperands)
                         : info.maxOperands < 0 ? "at least " + std::to_string(info.minOperands)
                                                : std::to_string(info.minOperands) + " to " + std::to_string(info.maxOperands);
      opError(op, "expects " + want + " operands, has " + std::to_string(n));
      return;
    }
    if (info.numResults >= 0 && static_cast<int>(op.numResults()) != info.numResults) {
      opError(op, info.numResults ? "must have a result" : "must not have a result");
      return;
    }
    for (const Value *v : op.operands())
      if (!v) return;  // reported above
    for (size_t i = 0; i < op.numResults(); ++i) {
      std::string p = typeProblem(op.result(i)->type());
      if (!p.empty()) {
        opError(op, p);
        return;
      }
    }
    // Attribute presence and kinds, from Ops.def: every rule below reads the
    // declared attributes as what they declare.
    if (std::string bad = checkDeclaredAttrs(op); !bad.empty()) return opError(op, bad);
    if (op.is(OpKind::For) || op.is(OpKind::If) || op.is(OpKind::While)) {
      checkControlFlow(op);
      return;
    }
    if (op.is(OpKind::ReduceCombine) || op.is(OpKind::ScanCombine)) {
      checkCombine(op);
      return;
    }
    if (op.is(OpKind::WarpSpecialize)) {
      checkWarpSpecialize(op);
      return;
    }
    if (!op.regions().empty()) opError(op, "cannot have regions");
    rules_.check(op);
  }


  // The values a region's `yield` passes on, checked against `want`.
  void checkYield(const Op &op, const Block &region, const std::vector<Value *> &want, const char *which) {
    if (region.ops().empty()) opError(op, std::string(which) + " is empty: a region must end with 'yield'");
    if (region.ops().empty() || !region.ops().back()->is(OpKind::Yield)) return;  // reported by checkBlock
    const Op &y = *region.ops().back();
    if (y.numOperands() != want.size()) {
      opError(op, std::string(which) + " yields " + std::to_string(y.numOperands()) + " values for " +
                      std::to_string(want.size()) + " results");
      return;
    }
    for (size_t i = 0; i < want.size(); ++i)
      if (y.operand(i)->type() != want[i]->type())
        opError(op, std::string(which) + " yields " + y.operand(i)->type().str() + " as value " + std::to_string(i) +
                        ", expected " + want[i]->type().str());
  }

  // reduce_combine / scan_combine: N tiles of numbers of one shape, N
  // results (reduce: the shape without `axis`; scan: the operands' types),
  // one region ^(left..., right...) of scalars of the operands' elements that
  // yields N such scalars and computes with pure scalar ops (an `if` too):
  // lowering inlines it at every combining step.
  void checkCombine(const Op &op) {
    const size_t n = op.numOperands();
    const Type &first = op.operand(0)->type();
    for (size_t i = 0; i < n; ++i) {
      const Type &t = op.operand(i)->type();
      if (!t.isTile() || t.isPtr() || t.shape != first.shape)
        return opError(op, "operands must be tiles of numbers of one shape, not " + t.str());
    }
    const int64_t k = op.intAttr("axis");
    if (k < 0 || k >= first.rank())
      return opError(op, "'axis' = " + std::to_string(k) + " is not in [0, " + std::to_string(first.rank() - 1) + "]");
    if (op.numResults() != n)
      return opError(op, "has " + std::to_string(n) + " operands for " + std::to_string(op.numResults()) + " results");
    for (size_t i = 0; i < n; ++i) {
      const Type &src = op.operand(i)->type(), &rt = op.result(i)->type();
      std::vector<int64_t> want = src.shape;
      if (op.is(OpKind::ReduceCombine)) want.erase(want.begin() + k);
      const Type expect{src.elem, want, nullptr};
      if (rt.shape != want || rt.elem != src.elem)
        opError(op, "result " + std::to_string(i) + " must be " + expect.str() + ", not " + rt.str());
    }
    if (op.regions().size() != 1) return opError(op, "needs one region (the combine function)");
    const Block &body = *op.regions()[0];
    if (body.arguments().size() != 2 * n)
      return opError(op, "the combine region must take " + std::to_string(2 * n) + " arguments (left, then right)");
    for (size_t i = 0; i < 2 * n; ++i)
      if (body.argument(i)->type() != Type{op.operand(i % n)->type().elem, {}, nullptr})
        opError(op, "combine argument " + std::to_string(i) + " must be a scalar " + op.operand(i % n)->type().elem.str());
    std::vector<Value *> want;
    for (size_t i = 0; i < n; ++i) want.push_back(body.argument(i));
    checkYield(op, body, want, "the combine region");
    checkScalarRegion(op, body);
  }

  // warp_specialize: at the kernel's top level, two regions without
  // arguments ending in an empty yield; the producer's (the first) computes
  // scalars, loops over them and issues TMA ops, nothing else: its warps hold
  // no tile and reach no block barrier.
  void checkWarpSpecialize(const Op &op) {
    if (op.parentBlock() && op.parentBlock()->parentOp()) opError(op, "must be at the kernel's top level");
    if (op.intAttr("producer_warps") != 4) opError(op, "needs 'producer_warps' = 4 (one warpgroup)");
    if (op.regions().size() != 2) {
      opError(op, "needs two regions (producer, consumers), has " + std::to_string(op.regions().size()));
      return;
    }
    for (int r = 0; r < 2; ++r) {
      if (!op.regions()[r]->arguments().empty()) opError(op, "its regions take no arguments");
      checkYield(op, *op.regions()[r], {}, r ? "the consumer region" : "the producer region");
    }
    checkProducerRegion(op, *op.regions()[0]);
  }

  void checkProducerRegion(const Op &ws, const Block &block) {
    for (const auto &inner : block.ops()) {
      const Op &o = *inner;
      const bool allowed = o.is(OpKind::Yield) || o.is(OpKind::For) || o.is(OpKind::If) || o.is(OpKind::TmaAcquire) ||
                           o.is(OpKind::TmaExpect) || o.is(OpKind::TmaCopy) ||
                           (o.hasTrait(OpTrait::Pure) && o.regions().empty());
      if (!allowed) opError(ws, std::string("the producer region issues TMA copies only, not '") + o.info().mnemonic + "'");
      for (const Value *v : o.results())
        if (v->type().isTile()) opError(ws, "the producer region computes on scalars, not " + v->type().str());
      for (const auto &r : o.regions()) checkProducerRegion(ws, *r);
    }
  }

  void checkScalarRegion(const Op &combine, const Block &block) {
    for (const auto &inner : block.ops()) {
      const Op &o = *inner;
      if (!o.is(OpKind::Yield) && !o.is(OpKind::If) && (!o.hasTrait(OpTrait::Pure) || !o.regions().empty()))
        opError(combine, std::string("a combine region computes with pure scalar ops, not '") + o.info().mnemonic + "'");
      for (const Value *v : o.operands())
        if (v && v->type().isTile()) opError(combine, "a combine region computes on scalars, not " + v->type().str());
      for (const auto &r : o.regions()) checkScalarRegion(combine, *r);
    }
  }

  // for: %lb, %ub, %step (one scalar int type), then one init per result;
  // one region with (iv, carried...) arguments. if: a scalar i1, two regions.
  void checkControlFlow(const Op &op) {
    if (op.is(OpKind::While)) {
      checkWhile(op);
      return;
    }
    if (op.is(OpKind::If)) {
      if (op.operand(0)->type() != Type::scalar(ScalarKind::I1))
        opError(op, "the condition must be a scalar i1, not " + op.operand(0)->type().str());
      if (op.regions().size() != 2) {
        opError(op, "needs two regions (then, else), has " + std::to_string(op.regions().size()));
        return;
      }
      for (int r = 0; r < 2; ++r) {
        if (!op.regions()[r]->arguments().empty()) opError(op, "its regions take no arguments");
        checkYield(op, *op.regions()[r], op.results(), r ? "the else region" : "the then region");
      }
      return;
    }
    const Type &iv = op.operand(0)->type();
    if (iv != Type::scalar(ScalarKind::I32) && iv != Type::scalar(ScalarKind::I64))
      opError(op, "the bounds must be scalar i32 or i64, not " + iv.str());
    for (size_t i = 1; i < 3; ++i)
      if (op.operand(i)->type() != iv) opError(op, "the bounds and step must have one type");
    const size_t carried = op.numOperands() - 3;
    if (op.numResults() != carried) {
      opError(op, "has " + std::to_string(carried) + " initial values for " + std::to_string(op.numResults()) +
                      " results");
      return;
    }
    if (op.regions().size() != 1) {
      opError(op, "needs one region (the body), has " + std::to_string(op.regions().size()));
      return;
    }
    const Block &body = *op.regions()[0];
    if (body.arguments().size() != carried + 1) {
      opError(op, "the body must take the induction variable and " + std::to_string(carried) + " carried values");
      return;
    }
    if (body.argument(0)->type() != iv) opError(op, "the induction variable must have the bounds' type");
    for (size_t i = 0; i < carried; ++i) {
      const Type &t = op.result(i)->type();
      if (op.operand(3 + i)->type() != t || body.argument(1 + i)->type() != t)
        opError(op, "carried value " + std::to_string(i) + ": initial value, body argument and result must have one type (" +
                        t.str() + ")");
    }
    checkYield(op, body, op.results(), "the body");
  }

  // while: one init per result; two regions taking the carried values, the
  // first yielding a scalar i1, the second the next carried values.
  void checkWhile(const Op &op) {
    if (op.numResults() != op.numOperands()) {
      opError(op, "has " + std::to_string(op.numOperands()) + " initial values for " +
                      std::to_string(op.numResults()) + " results");
      return;
    }
    if (op.regions().size() != 2) {
      opError(op, "needs two regions (before, body), has " + std::to_string(op.regions().size()));
      return;
    }
    for (size_t i = 0; i < op.numResults(); ++i)
      if (op.operand(i)->type() != op.result(i)->type())
        opError(op, "carried value " + std::to_string(i) + ": initial value and result must have one type (" +
                        op.result(i)->type().str() + ")");
    for (int r = 0; r < 2; ++r) {
      const Block &region = *op.regions()[r];
      if (region.arguments().size() != op.numResults()) {
        opError(op, std::string(r ? "the body" : "the before region") + " must take the " +
                        std::to_string(op.numResults()) + " carried values");
        return;
      }
      for (size_t i = 0; i < op.numResults(); ++i)
        if (region.argument(i)->type() != op.result(i)->type())
          opError(op, std::string(r ? "the body" : "the before region") + "'s argument " + std::to_string(i) +
                          " must have the carried type " + op.result(i)->type().str());
    }
    const Block &before = *op.regions()[0];
    if (before.ops().empty() || !before.ops().back()->is(OpKind::Yield)) {
      if (before.ops().empty()) opError(op, "the before region is empty: a region must end with 'yield'");
    } else {
      const Op &y = *before.ops().back();
      if (y.numOperands() != 1 || !y.operand(0) || y.operand(0)->type() != Type::scalar(ScalarKind::I1))
        opError(op, "the before region must yield one scalar i1 (whether the body runs again)");
    }
    checkYield(op, *op.regions()[1], op.results(), "the body");
  }


  const Function &fn_;
  // Names for messages, made on the first error: numbering every value
  // costs more than verifying a correct function.
  const ValueNames &names() {
    if (!names_) names_ = std::make_unique<ValueNames>(fn_);
    return *names_;
  }

  std::unique_ptr<ValueNames> names_;
  // The verifier runs after every pass: its set's nodes come from one
  // arena, freed at once, instead of a malloc and a free per value (a third
  // of `tkc compile` on a kernel of 16k op pairs went to those).
  std::pmr::monotonic_buffer_resource arena_;
  std::pmr::unordered_set<const Value *> visible_{&arena_};
  std::vector<std::string> errors_;
  OpRules rules_{[this](const Op &op, const std::string &msg) { opError(op, msg); }};
};

}  // namespace

bool verifyFunction(const Function &fn, std::string &error) { return Verifier(fn).run(error); }

std::unique_ptr<Module> parseVerifiedModule(const std::string &text, const std::string &filename, std::string &error) {
  auto module = parseModule(text, filename, error);
  if (!module) return nullptr;
  std::string problems;
  if (!verifyModule(*module, problems)) {
    error = "invalid tile IR:\n" + problems;
    return nullptr;
  }
  return module;
}

bool verifyModule(const Module &module, std::string &error) {
  error.clear();
  std::set<std::string> names;
  for (const auto &fn : module.functions) {
    std::string e;
    if (!names.insert(fn->name).second) e = "@" + fn->name + ": error: kernel @" + fn->name + " is defined twice";
    std::string fe;
    if (!verifyFunction(*fn, fe)) e += (e.empty() ? "" : "\n") + fe;
    if (!e.empty()) error += (error.empty() ? "" : "\n") + e;
  }
  return error.empty();
}

}  // namespace tk::ir
