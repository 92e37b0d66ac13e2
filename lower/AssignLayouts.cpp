// AssignLayouts (see AssignLayouts.h): demand-driven layout assignment with
// rematerialisation of pure ops and conversions after loads.
#include "lower/AssignLayouts.h"
#include "tk/error.h"

#include <algorithm>
#include <unordered_map>

#include "lower/AxisInfo.h"
#include "lower/LayoutRules.h"
#include "lower/Layouts.h"

namespace tk::lower {

namespace {

using ir::LayoutRef;
using ir::Op;
using ir::OpKind;
using ir::Value;

bool isAnchor(const Op &op) {
  return op.is(OpKind::Load) || op.is(OpKind::Store) || op.is(OpKind::AtomicRmw) || op.is(OpKind::AtomicCas) ||
         op.is(OpKind::AsyncCopy);
}

class LayoutAssigner {
 public:
  explicit LayoutAssigner(ir::Function &fn) : fn_(fn), axis_(fn) {}

  void run() {
    std::vector<Op *> ops = fn_.walk();
    // Where each op sits, for inserting conversions after it: found once,
    // since a search of its block per op would be quadratic (list iterators
    // stay valid as ops are inserted around them).
    recordPositions(fn_.body);
    chooseAnchors(ops);
    // A value carried around a loop or merged by an `if` holds one layout
    // everywhere it flows: chosen from what its uses want when the loop's
    // own flow is left out (first pass), then demanded of the values that
    // feed it (second pass).
    collectDemands(ops);
    chooseCarriedLayouts(ops);
    demands_.clear(), demandLocs_.clear();
    collectDemands(ops);
    // With every demand known, small loads may move to where they are used.
    if (loadSmallTilesWhereUsed(ops)) {
      demands_.clear(), demandLocs_.clear();
      collectDemands(ops);
    }
    rewrite(ops);
  }

 private:
  LayoutRef defaultLayout(const ir::Type &t) const { return lower::defaultLayout(t, fn_.numWarps()); }

  // A load whose uses all want one other layout is loaded in that layout
  // instead of being exchanged through shared memory after the load:
  // - like Triton's cheap-to-rematerialise loads, a tile with no more
  //   elements than the block has threads (it gets one element per thread at
  //   best anyway);
  // - beyond Triton, a tile demanded in a slice (a row such as
  //   layernorm's w broadcast against [BLOCK_R, BLOCK_D]) in which each
  //   thread's run is a wider vector than in the load's own layout: each
  //   thread loads the run it uses as one access, at the price of a copy per
  //   warp the slice replicates over (they hit in L1), where the conversion
  //   cost a store, two barriers and a load through shared memory. Not in a
  //   loop: measured there, ptxas took more registers for it (at --assume
  //   D=768, layernorm 34 instead of 32 on sm_80, the fused kernel 138
  //   instead of 128; docs/perf.md "Rows broadcast from a slice");
  // - a tile in a slice that holds each element once (a row against [1, BLOCK_D]), in loops
  //   too: the barriers kept x live (layernorm at D=781: 56 -> 40 registers on sm_80).
  bool loadSmallTilesWhereUsed(const std::vector<Op *> &ops) {
    bool moved = false;
    const int64_t threads = int64_t(fn_.numWarps()) * kWarpSize;
    for (Op *op : ops) {
      if (!op->is(OpKind::Load) || !anchor_.count(op)) continue;
      const auto &want = demands_[op->result()];
      if (want.size() != 1 || ir::sameLayout(want[0], anchor_[op])) continue;
      const int vec = vectorWidthIn(*op, want[0]);
      const bool small = op->result()->type().numElements() <= threads;
      const bool slice = want[0]->kind == ir::Layout::Kind::Slice;
      const bool widerInSlice = slice && vec > op->intAttr("vec") && !insideLoop(*op);
      const bool once = !small && slice && !RegisterMap(want[0], op->result()->type().shape).replicated();
      if (!small && !widerInSlice && !once) continue;
      anchor_[op] = want[0];
      moved = true;
      // A small tile stays scalar unless the slice widens a thread's run
      // (rope's cos/sin rows: 2 .v4 instead of 8 scalar loads): vectors cost
      // registers there (similarity at --assume n_dim=1024, rows sliced from
      // a 64 x 64 tile: 80 instead of 72 on sm_80).
      const int width = widerInSlice || once ? vec : 1;
      op->setAttr("vec", int64_t(width));
      recordMaskRun(op, axis_.contiguousDim(op->operand(0)), width);
    }
    return moved;
  }

  static bool insideLoop(const Op &op) {
    for (const Op *p = op.parentBlock()->parentOp(); p; p = p->parentBlock()->parentOp())
      if (p->is(OpKind::For) || p->is(OpKind::While)) return true;
    return false;
  }

  // The widest vector `op`'s access can use in layout `l`: the alignment
  // analysis's width along the pointers' contiguous dim, bounded by the run
  // of consecutive elements a thread holds along it (none when that dim is
  // not the layout's fastest, as for a column of a row-major parent).
  int vectorWidthIn(const Op &op, const LayoutRef &l) const {
    const Value *ptrs = op.operand(0);
    const int dim = axis_.contiguousDim(ptrs);
    const RegisterMap rm(l, ptrs->type().shape);
    const int rootDim = rm.root().kept[dim];
    if (rootDim != rm.root().blocked->order[0]) return 1;
    return std::max(1, std::min(axis_.vectorWidth(ptrs, dim), rm.contiguousPerThread(rootDim)));
  }

  // How many consecutive elements along the vector dim share one mask
  // value: a vector access within such a run needs no per-element fallback
  // for partly-on masks.
  void recordMaskRun(Op *op, int dim, int vec) {
    const size_t maskOperand = op->is(OpKind::Load) ? 1 : op->is(OpKind::Store) || op->is(OpKind::AsyncCopy) ? 2 : 0;
    if (maskOperand && op->numOperands() > maskOperand && vec > 1)
      if (int64_t run = std::min<int64_t>(vec, axis_.get(op->operand(maskOperand)).constancy[dim]); run > 1)
        op->setAttr("mask_run", run);
  }

  // The first layout `v` is demanded in, or null.
  LayoutRef firstDemand(Value *v) {
    auto it = demands_.find(v);
    return it == demands_.end() || it->second.empty() ? nullptr : it->second.front();
  }

  // For each tile a `for` carries, the layout of its body argument's uses
  // (computed once per iteration), else the natural layout of what the body
  // yields, else of the result's uses, else the default; for each tile an
  // `if` merges, the then branch's natural layout, else its result's.
  // A `while` is a `for` without an induction variable, whose `before`
  // region's arguments are used as the body's.
  void chooseCarriedLayouts(const std::vector<Op *> &ops) {
    for (Op *op : ops) {
      if (!op->is(OpKind::For) && !op->is(OpKind::If) && !op->is(OpKind::While)) continue;
      const bool isWhile = op->is(OpKind::While);
      for (size_t i = 0; i < op->numResults(); ++i) {
        Value *r = op->result(i);
        if (!r->type().isTile()) continue;
        LayoutRef l = op->is(OpKind::For) ? firstDemand(op->regions()[0]->argument(i + 1)) : nullptr;
        if (isWhile) {
          l = firstDemand(op->regions()[1]->argument(i));
          if (!l) l = firstDemand(op->regions()[0]->argument(i));
        }
        if (!l) {
          const ir::Block &region = *op->regions()[isWhile ? 1 : 0];
          l = naturalLayout(region.ops().back()->operand(i));
        }
        if (!l) l = firstDemand(r);
        if (!l) l = defaultLayout(r->type());
        carried_[r] = l;
      }
    }
  }

  // The layout of result `i` of the `for`/`if` that `region` belongs to.
  LayoutRef carriedLayout(const Op &yield, size_t i) {
    Op *parent = yield.parentBlock()->parentOp();
    // A while's `before` region yields its scalar condition.
    if (parent && parent->is(OpKind::While) && yield.parentBlock() == parent->regions()[0].get()) return nullptr;
    if (parent && isCombine(*parent)) return nullptr;  // yields scalars
    return parent ? carried_[parent->result(i)] : nullptr;
  }
  void chooseAnchors(const std::vector<Op *> &ops) {
    for (Op *op : ops) {
      if (!isAnchor(*op)) continue;
      Value *ptrs = op->operand(0);
      const ir::Type &t = ptrs->type();
      if (!t.isTile()) {
        op->setAttr("vec", int64_t(1));
        continue;
      }
      int dim = axis_.contiguousDim(ptrs);
      // Like Triton's coalescing: no wider per thread than needed to give
      // every thread of the block an element, so small tiles are spread over
      // all threads instead of replicated.
      int64_t threads = int64_t(fn_.numWarps()) * kWarpSize;
      const bool atomic = op->is(OpKind::AtomicRmw) || op->is(OpKind::AtomicCas);  // one element per instruction
      int vec = atomic ? 1
                       : static_cast<int>(std::min<int64_t>(axis_.vectorWidth(ptrs, dim),
                                                            std::max<int64_t>(1, t.numElements() / threads)));
      std::vector<int> order{dim};
      for (int d = t.rank() - 1; d >= 0; --d)
        if (d != dim) order.push_back(d);
      anchor_[op] = defaultBlockedLayout(t.shape, fn_.numWarps(), vec, order);
      if (op->is(OpKind::Store))
        if (LayoutRef acc =
                accumulatorStoreLayout(*op, dim, axis_.vectorWidth(ptrs, dim), axis_.get(ptrs).contiguity[dim], fn_, vec))
          anchor_[op] = acc;
      op->setAttr("vec", int64_t(vec));
      recordMaskRun(op, dim, vec);
      // An async copy zero-fills past a source size: it can copy a vector
      // whose mask is on for a prefix of its elements.
      const bool uniformRuns = op->hasAttr("mask_run") && op->intAttr("mask_run") >= vec;
      // A store's vector likewise: with a prefix mask, a run partly on has
      // its last element off, so that element needs no single store.
      if ((op->is(OpKind::AsyncCopy) || op->is(OpKind::Store)) && op->numOperands() > 2 && vec > 1 && !uniformRuns &&
          prefixMask(op->operand(2), dim, vec))
        op->setAttr("mask_prefix", int64_t(1));
    }
  }

  // True when, within each aligned run of `vec` elements along `dim`, mask
  // `v`'s true elements come first: uniform runs, `x < y` (or `y > x`) with x
  // stepping by 1 and y uniform along the run, broadcasts along other dims
  // and conjunctions of those.
  bool prefixMask(const Value *v, int dim, int64_t vec, int depth = 0) const {
    if (axis_.get(v).constancy[dim] >= vec) return true;
    const Op *def = v->definingOp();
    if (!def || depth > 16) return false;
    if (def->is(OpKind::And))
      return prefixMask(def->operand(0), dim, vec, depth + 1) && prefixMask(def->operand(1), dim, vec, depth + 1);
    if (def->is(OpKind::Broadcast) && def->operand(0)->type().shape[dim] == v->type().shape[dim])
      return prefixMask(def->operand(0), dim, vec, depth + 1);
    if (!def->is(OpKind::Cmp) || !def->operand(0)->type().isInt()) return false;
    const ir::CmpPredicate p = def->enumAttr<ir::CmpPredicate>("predicate");
    const bool less = p == ir::CmpPredicate::Lt || p == ir::CmpPredicate::Le;
    const bool greater = p == ir::CmpPredicate::Gt || p == ir::CmpPredicate::Ge;
    if (!less && !greater) return false;
    const Value *rising = def->operand(less ? 0 : 1), *bound = def->operand(less ? 1 : 0);
    return axis_.get(rising).contiguity[dim] >= vec && axis_.get(bound).constancy[dim] >= vec;
  }

  // A reduction's operand layout for a result demanded in `want`: the parent
  // when `want` slices the reduced axis away (no data moves), else the
  // default blocked layout of the operand (and a conversion after).
  LayoutRef reduceInputLayout(const Op &op, const LayoutRef &want) {
    const int axis = static_cast<int>(op.intAttr("axis"));
    if (want && want->kind == ir::Layout::Kind::Slice && want->dim == axis) return want->parent;
    if (LayoutRef n = naturalLayout(op.operand(0))) return n;
    return defaultLayout(op.operand(0)->type());
  }

  // The layout `v` would have if nothing asked: that of the load it is
  // computed from elementwise (a reduction's: the slice of its operand's),
  // or null. Using it where a use has no preference of its own avoids
  // moving a whole tile through shared memory to reach a default layout.
  LayoutRef naturalLayout(const Value *v, int depth = 0) {
    const Op *def = v->definingOp();
    if (!def || !v->type().isTile() || depth > 16) return nullptr;
    if (def->is(OpKind::Load) && anchor_.count(const_cast<Op *>(def))) {
      const LayoutRef &l = anchor_[const_cast<Op *>(def)];
      return l->kind == ir::Layout::Kind::Blocked ? l : nullptr;
    }
    if (LayoutRef mma = tensorCoreLayout(*def, fn_)) return mma;
    if (def->is(OpKind::Trans))
      return permutedLayout(naturalLayout(def->operand(0), depth + 1), inversePermutation(ir::transOrder(*def)));
    if (def->is(OpKind::Reduce)) {
      LayoutRef in = naturalLayout(def->operand(0), depth + 1);
      return in ? ir::Layout::slice(static_cast<int>(def->intAttr("axis")), in) : nullptr;
    }
    // An `if`'s result: what a branch yields (attention's masked scores).
    if (def->is(OpKind::If)) {
      for (const auto &region : def->regions())
        if (!region->ops().empty() && region->ops().back()->is(OpKind::Yield))
          if (LayoutRef l = naturalLayout(region->ops().back()->operand(v->resultIndex()), depth + 1)) return l;
      return nullptr;
    }
    if (!def->hasTrait(ir::OpTrait::Elementwise)) return nullptr;
    for (const Value *operand : def->operands())
      if (operand->type().shape == v->type().shape)
        if (LayoutRef l = naturalLayout(operand, depth + 1)) return l;
    return nullptr;
  }

  // dot stages its a and b to shared memory from whatever blocked layout
  // they have (both lowerings read them back from there): the one they are
  // loaded in, when they come from a load, so they are not exchanged through
  // shared memory twice.
  LayoutRef dotOperandLayout(Value *v) {
    if (LayoutRef n = naturalLayout(v)) return n;
    return defaultLayout(v->type());
  }

  LayoutRef operandLayoutOf(const Op &op, size_t i, const LayoutRef &result) {
    if (op.is(OpKind::Dot) && i < 2) return dotOperandLayout(op.operand(i));
    // reshape exchanges elements through shared memory (as convert_layout
    // does), and gather reads its source from there: they keep the layout
    // they have.
    if (op.is(OpKind::Reshape) || (op.is(OpKind::Gather) && i == 0)) return dotOperandLayout(op.operand(i));
    // histogram reads its input (and mask, in the same layout) from there too.
    if (op.is(OpKind::Histogram)) return dotOperandLayout(op.operand(0));
    return operandLayout(op, i, result);
  }

  // One reduction per operand layout its uses need; a use that wants the
  // result in another layout than the slice gets a conversion.
  void rewriteReduce(Op *op) {
    ir::Block *block = op->parentBlock();
    Value *source = op->operand(0);
    const int axis = static_cast<int>(op->intAttr("axis"));
    const ir::Type resultType = op->result()->type();
    if (!resultType.isTile()) {
      op->setOperand(0, lookup(source, reduceInputLayout(*op, nullptr)));
      return;
    }
    const auto &want = demands_[op->result()];
    if (want.empty()) {
      dead_.push_back(op);
      return;
    }
    std::vector<std::pair<LayoutRef, Value *>> reductions;  // by operand layout
    auto pos = after(op);
    for (const LayoutRef &w : want) {
      LayoutRef in = reduceInputLayout(*op, w);
      Value *reduced = nullptr;
      for (auto &[l, v] : reductions)
        if (ir::sameLayout(l, in)) reduced = v;
      ir::Builder b(block, pos);
      b.setLoc(op->loc());
      if (!reduced) {
        Op *target = reductions.empty() ? op : b.create(op->kind(), {source}, resultType, op->attrs());
        target->setOperand(0, lookup(source, in));
        target->result()->setType(resultType.withLayout(ir::Layout::slice(axis, in)));
        reduced = target->result();
        reductions.push_back({in, reduced});
      }
      Value *version = reduced;
      if (!ir::sameLayout(reduced->type().layout, w))
        version = b.value(OpKind::ConvertLayout, {reduced}, resultType.withLayout(w));
      versions_[op->result()].push_back({w, version});
    }
  }

  // reduce_combine, scan_combine and sort read their tiles together.
  static bool isCombine(const Op &op) {
    return op.is(OpKind::ReduceCombine) || op.is(OpKind::ScanCombine) || op.is(OpKind::Sort);
  }

  // Such an op reads all its tiles in one layout: the first's natural one
  // (else the default), chosen once.
  LayoutRef combineLayout(const Op &op) {
    LayoutRef &l = combineIn_[&op];
    if (l) return l;
    l = naturalLayout(op.operand(0));
    if (!l) l = defaultLayout(op.operand(0)->type());
    if (!op.is(OpKind::ReduceCombine)) l = alongOneRun(l, op.operand(0)->type().shape, static_cast<int>(op.intAttr("axis")));
    return l;
  }

  // Its results: the operands' layout (a reduction's sliced along the axis),
  // converted for uses that want another.
  void rewriteCombine(Op *op) {
    const LayoutRef in = combineLayout(*op);
    for (size_t i = 0; i < op->numOperands(); ++i) op->setOperand(i, lookup(op->operand(i), in));
    const LayoutRef out =
        op->is(OpKind::ReduceCombine) ? ir::Layout::slice(static_cast<int>(op->intAttr("axis")), in) : in;
    ir::Builder b(op->parentBlock(), after(op));
    b.setLoc(op->loc());
    for (Value *r : op->results())
      if (r->type().isTile()) settle(r, out, b);
  }

  // A `for` or `if`: carried tiles take their chosen layout; uses wanting
  // another get a conversion (at the top of the body for the body argument,
  // after the op for its result).
  void rewriteCarried(Op *op) {
    for (size_t i = 0; i < op->numResults(); ++i) {
      Value *r = op->result(i);
      if (!r->type().isTile()) continue;
      const LayoutRef &l = carried_[r];
      if (op->is(OpKind::For)) {
        op->setOperand(3 + i, lookup(op->operand(3 + i), l));
        ir::Block *body = op->regions()[0].get();
        ir::Builder b(body, body->ops().begin());
        b.setLoc(op->loc());
        settle(body->argument(i + 1), l, b);
      }
      if (op->is(OpKind::While)) {
        op->setOperand(i, lookup(op->operand(i), l));
        for (auto &region : op->regions()) {
          ir::Builder b(region.get(), region->ops().begin());
          b.setLoc(op->loc());
          settle(region->argument(i), l, b);
        }
      }
      // After the wait that drains a pipelined loop's copies, so that the
      // conversion may use the shared memory of its rings.
      auto pos = after(op);
      while (pos != op->parentBlock()->ops().end() && (*pos)->is(OpKind::AsyncWait)) ++pos;
      ir::Builder b(op->parentBlock(), pos);
      b.setLoc(op->loc());
      settle(r, l, b);
    }
  }

  // Gives `v` layout `l`, and a conversion for each other demanded layout.
  // A conversion carries the location of the op whose demand made it (a
  // `trans`, a store), so tkc report charges its shared traffic there.
  void settle(Value *v, const LayoutRef &l, ir::Builder &b) {
    v->setType(v->type().withLayout(l));
    versions_[v].push_back({l, v});
    const ir::Location at = b.loc();
    for (size_t i = 0; i < demands_[v].size(); ++i) {
      if (ir::sameLayout(demands_[v][i], l)) continue;
      b.setLoc(demandLocs_[v][i]);
      versions_[v].push_back({demands_[v][i], b.value(OpKind::ConvertLayout, {v}, v->type().withLayout(demands_[v][i]))});
    }
    b.setLoc(at);
  }

  void demand(Value *v, const LayoutRef &l) {
    if (!l || !v->type().isTile()) return;
    auto &list = demands_[v];
    for (const LayoutRef &have : list)
      if (ir::sameLayout(have, l)) return;
    list.push_back(l);
    demandLocs_[v].push_back(demander_->loc());
  }

  // Walks backwards so every use has stated its demand before the def is seen.
  void collectDemands(const std::vector<Op *> &ops) {
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      Op *op = demander_ = *it;
      if (isAnchor(*op) && anchor_.count(op)) {
        for (Value *v : op->operands()) demand(v, anchor_[op]);
        continue;
      }
      if (LayoutRef mma = tensorCoreLayout(*op, fn_)) {
        demand(op->operand(0), dotOperandLayout(op->operand(0)));
        demand(op->operand(1), dotOperandLayout(op->operand(1)));
        demand(op->operand(2), mma);
        continue;
      }
      if (op->is(OpKind::Reduce)) {
        if (!op->result()->type().isTile()) demand(op->operand(0), reduceInputLayout(*op, nullptr));
        for (const LayoutRef &l : demands_[op->result()]) demand(op->operand(0), reduceInputLayout(*op, l));
        continue;
      }
      if (isCombine(*op)) {
        for (Value *v : op->operands()) demand(v, combineLayout(*op));
        continue;
      }
      if (op->is(OpKind::For) || op->is(OpKind::While)) {  // initial values (nothing before carried layouts are chosen)
        const size_t first = op->is(OpKind::For) ? 3 : 0;
        for (size_t i = 0; i < op->numResults(); ++i) demand(op->operand(first + i), carried_[op->result(i)]);
        continue;
      }
      if (op->is(OpKind::Yield)) {
        for (size_t i = 0; i < op->numOperands(); ++i) demand(op->operand(i), carriedLayout(*op, i));
        continue;
      }
      if (op->is(OpKind::If)) continue;
      if (!op->result() || !op->result()->type().isTile()) {
        // An op that reads tiles but makes none (print, assert): any layout.
        // A TMA store stages an accumulator from its own (no conversion).
        for (Value *v : op->operands()) {
          LayoutRef acc = op->is(OpKind::TmaStore) ? accumulatorLayout(v, fn_) : nullptr;
          if (v->type().isTile() && !firstDemand(v)) demand(v, acc ? acc : defaultLayout(v->type()));
        }
        continue;
      }
      for (const LayoutRef &l : demands_[op->result()])
        for (size_t i = 0; i < op->numOperands(); ++i) demand(op->operand(i), operandLayoutOf(*op, i, l));
    }
  }

  Value *lookup(Value *v, const LayoutRef &l) {
    if (!l || !v->type().isTile()) return v;
    for (auto &[have, value] : versions_[v])
      if (ir::sameLayout(have, l)) return value;
    throw tk::InternalError("assign-layouts: no version of a value in a demanded layout");
  }

  void rewrite(const std::vector<Op *> &ops) {
    for (Op *op : ops) {
      ir::Block *block = op->parentBlock();
      if (isAnchor(*op) && anchor_.count(op)) {
        const LayoutRef &l = anchor_[op];
        for (size_t i = 0; i < op->numOperands(); ++i) op->setOperand(i, lookup(op->operand(i), l));
        if (op->result()) {
          ir::Builder b(block, after(op));
          b.setLoc(op->loc());
          settle(op->result(), l, b);
        }
        continue;
      }
      if (LayoutRef mma = tensorCoreLayout(*op, fn_)) {
        op->setOperand(0, lookup(op->operand(0), dotOperandLayout(op->operand(0))));
        op->setOperand(1, lookup(op->operand(1), dotOperandLayout(op->operand(1))));
        op->setOperand(2, lookup(op->operand(2), mma));
        ir::Builder b(block, after(op));
        b.setLoc(op->loc());
        settle(op->result(), mma, b);
        continue;
      }
      if (op->is(OpKind::Reduce)) {
        rewriteReduce(op);
        continue;
      }
      if (op->is(OpKind::For) || op->is(OpKind::If) || op->is(OpKind::While)) {
        rewriteCarried(op);
        continue;
      }
      if (isCombine(*op)) {
        rewriteCombine(op);
        continue;
      }
      if (op->is(OpKind::Yield)) {
        for (size_t i = 0; i < op->numOperands(); ++i) op->setOperand(i, lookup(op->operand(i), carriedLayout(*op, i)));
        continue;
      }
      if (!op->result() || !op->result()->type().isTile()) {
        for (size_t i = 0; i < op->numOperands(); ++i)
          if (op->operand(i)->type().isTile()) op->setOperand(i, lookup(op->operand(i), demands_[op->operand(i)].front()));
        continue;
      }
      const auto &want = demands_[op->result()];
      if (want.empty()) {
        dead_.push_back(op);
        continue;
      }
      // The op itself takes the first layout; clones follow it for the rest.
      std::vector<Value *> originals = op->operands();
      auto pos = after(op);
      for (size_t k = 0; k < want.size(); ++k) {
        Op *target = op;
        if (k > 0) {
          ir::Builder b(block, pos);
          b.setLoc(op->loc());
          target = b.create(op->kind(), originals, op->result()->type(), op->attrs());
        }
        for (size_t i = 0; i < originals.size(); ++i)
          target->setOperand(i, lookup(originals[i], operandLayoutOf(*op, i, want[k])));
        target->result()->setType(op->result()->type().withLayout(want[k]));
        target->result()->setNameHint(op->result()->nameHint());
        versions_[op->result()].push_back({want[k], target->result()});
      }
    }
    // Unused tile values: erase users before their operands.
    for (auto it = dead_.rbegin(); it != dead_.rend(); ++it) {
      ir::Block *block = (*it)->parentBlock();
      block->erase(block->find(*it));
    }
  }

  void recordPositions(ir::Block &b) {
    for (auto it = b.ops().begin(); it != b.ops().end(); ++it) {
      at_[it->get()] = it;
      for (auto &r : (*it)->regions()) recordPositions(*r);
    }
  }
  ir::Block::iterator after(const Op *op) const { return std::next(at_.at(op)); }

  ir::Function &fn_;
  std::unordered_map<const Op *, ir::Block::iterator> at_;
  AxisInfoAnalysis axis_;
  std::unordered_map<Op *, LayoutRef> anchor_;
  std::unordered_map<Value *, std::vector<LayoutRef>> demands_;
  std::unordered_map<Value *, std::vector<ir::Location>> demandLocs_;  // who demanded each, as demands_
  Op *demander_ = nullptr;
  std::unordered_map<Value *, LayoutRef> carried_;  // results of for/if -> their layout
  std::unordered_map<const Op *, LayoutRef> combineIn_;  // reduce_combine/scan_combine -> their operands' layout
  std::unordered_map<Value *, std::vector<std::pair<LayoutRef, Value *>>> versions_;
  std::vector<Op *> dead_;
};

}  // namespace

bool assignLayouts(ir::Function &fn) {
  requirePaddedTiles(fn);
  decideRowWarps(fn);
  LayoutAssigner(fn).run();
  return true;
}

}  // namespace tk::lower
