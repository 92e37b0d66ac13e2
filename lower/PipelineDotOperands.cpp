// PipelineDotOperands (see PipelineDotOperands.h): the loads that feed
// tensor-core dots in a `for` become asynchronous copies into rings of
// num_stages shared slots, issued num_stages - 1 iterations ahead.
#include "lower/PipelineDotOperands.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "ir/MemoryHints.h"
#include "lower/AxisInfo.h"
#include "lower/Layouts.h"

namespace tk::lower {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Value;

// Ops that write memory, or already take part in a pipeline: a loop with one
// of them keeps its loads where they are (a prefetched load must not pass a
// store that may write what it reads).
bool blocksPipelining(const Op &op) {
  if (op.is(OpKind::Store) || op.is(OpKind::AtomicRmw) || op.is(OpKind::AtomicCas) || op.is(OpKind::AsyncCopy) ||
      op.is(OpKind::AsyncCommit) || op.is(OpKind::AsyncWait) || op.is(OpKind::SharedLoad))
    return true;
  for (const auto &region : op.regions())
    for (const auto &inner : region->ops())
      if (blocksPipelining(*inner)) return true;
  return false;
}

// A zero, as a constant tile or a splat of a constant scalar.
bool isZeroConstant(const Value *v) {
  const Op *def = v->definingOp();
  if (def && def->is(OpKind::Splat)) def = def->operand(0)->definingOp();
  return def && def->is(OpKind::Constant) && def->floatAttr("value") == 0.0;
}

// The loop's step when the pipeliner can take the loop at all: a constant,
// nonzero step and nothing in the body that blocks pipelining. The two
// rewrites that prepare a loop for it ask the same question first.
std::optional<int64_t> pipelinableStep(const Op &loop) {
  const Op *stepDef = loop.operand(2)->definingOp();
  if (!stepDef || !stepDef->is(OpKind::Constant) || stepDef->intAttr("value") == 0) return std::nullopt;
  for (const auto &op : loop.regions()[0]->ops())
    if (blocksPipelining(*op)) return std::nullopt;
  return stepDef->intAttr("value");
}

class LoopPipeliner {
 public:
  LoopPipeliner(ir::Function &fn, Op &loop, int stages, int64_t &nextBuffer,
                const std::map<const Value *, std::vector<std::pair<Op *, size_t>>> &uses)
      : fn_(fn), loop_(loop), body_(*loop.regions()[0]), stages_(stages), nextBuffer_(nextBuffer), uses_(uses) {
    for (const auto &a : body_.arguments()) inBody_.insert(a.get());
    for (const auto &op : body_.ops())
      if (op->result()) inBody_.insert(op->result());
  }

  bool run() {
    const std::optional<int64_t> step = pipelinableStep(loop_);
    if (!step) return false;
    step_ = *step;
    std::vector<Op *> loads;
    for (const auto &op : body_.ops())
      if (op->is(OpKind::Load) && !ir::memoryHintsOf(*op).isVolatile && feedsTensorCoreDots(*op) && sliceOf(*op))
        loads.push_back(op.get());  // a volatile load is read in its own iteration, never ahead
    if (loads.empty()) return false;
    // A copy whose runs are under 4 bytes along both dims (a 16-bit operand
    // with run-time strides) cannot be a cp.async: the lowering loads and
    // stores it to shared memory in program order, so each thread waits for
    // its loads where the copy is issued, however far ahead. More slots then
    // hide nothing and cost shared memory and prologue code: two slots, one
    // iteration ahead (the 128 x 128 x 32 matmul without integer facts, 4
    // stages: its rings 74 KiB -> 37, the kernel's shared memory 80 KiB ->
    // 64, its epilogue's scratch; docs/perf.md).
    if (std::none_of(loads.begin(), loads.end(), [&](const Op *l) { return mayCopyAsync(*l); })) stages_ = 2;
    ahead_ = stages_ >= 3 && keepsWgmmaGroup(loads) ? stages_ - 2 : stages_ - 1;
    rewrite(loads, invariantLoads());
    return true;
  }

 private:
  // Every use of the load is an operand (a or b) of a tensor-core dot in this
  // body, and masked-off elements read as zero (a copy zero-fills them).
  bool feedsTensorCoreDots(const Op &load) const {
    const ir::Type &t = load.result()->type();
    if (t.rank() != 2 || (load.numOperands() > 2 && !isZeroConstant(load.operand(2)))) return false;
    auto it = uses_.find(load.result());
    if (it == uses_.end() || it->second.empty()) return false;
    for (const auto &[user, index] : it->second)
      if (!operandOfDot(user, index) && !(user->is(OpKind::Cast) && castForDots(*user))) return false;
    return true;
  }

  // Whether the load's pointers allow runs of 4 bytes or more along some
  // dim, as a cp.async needs (lowerAsyncCopy decides with the layout; this
  // is the analysis's upper bound on what it may find).
  bool mayCopyAsync(const Op &load) const {
    const ir::Value *ptrs = load.operand(0);
    const int elt = std::max(1, ir::bitWidth(ptrs->type().elem.pointee().scalar) / 8);
    if (!axis_) axis_.emplace(fn_);
    for (int d = 0; d < ptrs->type().rank(); ++d)
      if (axis_->vectorWidth(ptrs, d) * elt >= 4) return true;
    return false;
  }

  // `user` reads the load as a or b of a tensor-core dot in this body.
  bool operandOfDot(const Op *user, size_t index) const {
    return user->is(OpKind::Dot) && index <= 1 && user->parentBlock() == &body_ && pipelinedDot(*user, fn_);
  }

  // A cast in this body whose every use is an a or b of such a dot: fp8
  // operands widened to f16 (emulate-fp8) or any other conversion before
  // the dot. The ring then holds the loaded bytes and the cast reads the
  // slot into registers (not in place): the copies still run ahead.
  bool castForDots(const Op &cast) const {
    if (cast.parentBlock() != &body_) return false;
    auto it = uses_.find(cast.result());
    if (it == uses_.end() || it->second.empty()) return false;
    for (const auto &[user, index] : it->second)
      if (!operandOfDot(user, index)) return false;
    return true;
  }

  // Loads before the loop, in its block, whose every use is an operand of a
  // tensor-core dot in the body (attention's q): each becomes a ring of one
  // slot, copied once beside the prologue and read in place by every
  // iteration's dots, instead of a register tile staged into shared memory
  // again in every iteration (and live in registers all the while). The copy
  // is issued where the loop starts, so nothing between the load and the
  // loop may write memory.
  std::vector<Op *> invariantLoads() const {
    ir::Block &outer = *loop_.parentBlock();
    std::vector<Op *> found;
    for (auto it = outer.find(&loop_); it != outer.ops().begin();) {
      Op *op = (--it)->get();
      if (blocksPipelining(*op)) break;
      if (op->is(OpKind::Load) && !ir::memoryHintsOf(*op).isVolatile && feedsTensorCoreDots(*op))
        found.push_back(op);
    }
    std::reverse(found.begin(), found.end());
    return found;
  }

  // Whether the body's one dot can keep a wgmma group in flight across
  // iterations (PipelineDotOperands.h): the lowering decides by the same
  // facts and its layouts, and otherwise waits for every group, which is
  // right at any distance.
  bool keepsWgmmaGroup(const std::vector<Op *> &loads) const {
    if (!fn_.wgmma()) return false;
    const Op *dot = nullptr;
    for (const auto &op : body_.ops()) {
      if (op->is(OpKind::Dot)) {
        if (dot) return false;
        dot = op.get();
      }
      for (const auto &region : op->regions())
        for (const auto &inner : region->ops())
          if (inner->is(OpKind::Dot)) return false;
    }
    if (!dot) return false;
    const std::optional<MmaKind> kind = mmaKind(*dot);
    const ir::Type &at = dot->operand(0)->type(), &bt = dot->operand(1)->type();
    if (!kind || (*kind != MmaKind::F16 && *kind != MmaKind::BF16) ||
        !wgmmaShape(at.shape[0], bt.shape[1], at.shape[1], fn_.numWarps()))
      return false;
    for (size_t k = 0; k < 2; ++k) {
      const Op *def = dot->operand(k)->definingOp();
      if (std::find(loads.begin(), loads.end(), def) == loads.end()) return false;
    }
    // The accumulator: carried argument j + 1, yielded value j, nothing else.
    const Value *acc = dot->operand(2);
    size_t j = 0;
    while (j + 1 < body_.arguments().size() && body_.argument(j + 1) != acc) ++j;
    if (j + 1 >= body_.arguments().size()) return false;
    auto onlyUse = [&](const Value *v, const Op *user, size_t index) {
      auto it = uses_.find(v);
      return it != uses_.end() && it->second.size() == 1 && it->second[0].first == user &&
             it->second[0].second == index;
    };
    return onlyUse(acc, dot, 2) && onlyUse(dot->result(), body_.ops().back().get(), j);
  }

  // Collects into slice_ the body ops the load's pointer and mask are
  // computed by; false when one is not pure or reads a carried value (only
  // the induction variable and values from outside the loop may vary).
  bool sliceOf(const Op &load) {
    std::set<const Op *> slice;
    std::vector<const Value *> work{load.operand(0)};
    if (load.numOperands() > 1) work.push_back(load.operand(1));
    while (!work.empty()) {
      const Value *v = work.back();
      work.pop_back();
      if (!inBody_.count(v) || v == body_.argument(0)) continue;
      const Op *def = v->definingOp();
      if (!def) return false;  // a carried value
      if (!def->hasTrait(ir::OpTrait::Pure) || !def->regions().empty()) return false;
      if (!slice.insert(def).second) continue;
      for (const Value *o : def->operands()) work.push_back(o);
    }
    slice_.insert(slice.begin(), slice.end());
    return true;
  }

  // The ops of slice_ cloned at `b` with the induction variable replaced by
  // `iv`, in body order; returns the map from original to clone.
  std::map<const Value *, Value *> cloneSlice(ir::Builder &b, Value *iv) {
    std::map<const Value *, Value *> map{{body_.argument(0), iv}};
    for (const auto &op : body_.ops()) {
      if (!slice_.count(op.get())) continue;
      std::vector<Value *> operands;
      for (Value *o : op->operands()) operands.push_back(map.count(o) ? map[o] : o);
      b.setLoc(op->loc());
      map[op->result()] = b.value(op->kind(), operands, op->result()->type(), op->attrs());
    }
    return map;
  }

  // One stage: for each load, a copy of its tile at induction value `iv`
  // into `slot`, masked to the loop's range; then one commit for them all.
  void issueStage(ir::Builder &b, Value *iv, Value *slot, const std::vector<Op *> &loads) {
    std::map<const Value *, Value *> map = cloneSlice(b, iv);
    auto mapped = [&](Value *v) { return map.count(v) ? map[v] : v; };
    b.setLoc(loop_.loc());
    Value *inRange = b.value(OpKind::Cmp, {iv, loop_.operand(1)}, ir::Type::scalar(ir::ScalarKind::I1),
                             {{"predicate", ir::attrOf(step_ > 0 ? ir::CmpPredicate::Lt : ir::CmpPredicate::Gt)}});
    for (Op *load : loads) {
      b.setLoc(load->loc());
      const ir::Type maskType = load->operand(0)->type().withScalar(ir::ScalarKind::I1);
      Value *mask = b.value(OpKind::Splat, {inRange}, maskType);
      if (load->numOperands() > 1) mask = b.value(OpKind::And, {mapped(load->operand(1)), mask}, maskType);
      b.create(OpKind::AsyncCopy, {mapped(load->operand(0)), slot, mask}, std::nullopt, ringAttrs(load));
    }
    b.setLoc(loop_.loc());
    b.create(OpKind::AsyncCommit, {}, std::nullopt);
  }

  // A ring's attributes: its buffer and stages, and how far ahead its
  // copies run when that is not S-1.
  std::map<std::string, ir::Attr> ringAttrs(const Op *load) {
    std::map<std::string, ir::Attr> attrs{{"buffer", buffers_[load]}, {"stages", int64_t(stages_)}};
    if (ahead_ != stages_ - 1) attrs["ahead"] = int64_t(ahead_);
    return attrs;
  }

  void rewrite(const std::vector<Op *> &loads, const std::vector<Op *> &invariant) {
    for (Op *load : invariant) buffers_[load] = nextBuffer_++;
    for (Op *load : loads) buffers_[load] = nextBuffer_++;
    const ir::Type ivType = body_.argument(0)->type();
    const ir::Type i32 = ir::Type::scalar(ir::ScalarKind::I32);
    ir::Block &outer = *loop_.parentBlock();
    auto loopPos = outer.find(&loop_);

    // The invariant operands' one-slot rings, copied in the oldest group:
    // complete at the body's first async_wait.
    ir::Builder pre(&outer, loopPos);
    Value *slot0 = invariant.empty() ? nullptr : pre.constInt(0, i32);
    for (Op *load : invariant) {
      pre.setLoc(load->loc());
      std::vector<Value *> operands{load->operand(0), slot0};
      if (load->numOperands() > 1) operands.push_back(load->operand(1));
      std::map<std::string, ir::Attr> attrs{{"buffer", buffers_[load]}, {"stages", int64_t(1)}};
      pre.create(OpKind::AsyncCopy, operands, std::nullopt, attrs);
    }
    if (!invariant.empty()) {
      pre.setLoc(loop_.loc());
      pre.create(OpKind::AsyncCommit, {}, std::nullopt);
    }

    // Prologue: stages 0 .. A-1 for the first A = ahead_ iterations.
    pre.setLoc(loop_.loc());
    for (int s = 0; s < ahead_; ++s) {
      Value *iv = loop_.operand(0);
      if (s > 0) iv = pre.value(OpKind::Add, {iv, pre.constInt(s * step_, ivType)}, ivType);
      issueStage(pre, iv, pre.constInt(s, i32), loads);
    }

    // The slot this iteration reads travels around the loop.
    pre.setLoc(loop_.loc());
    std::vector<Value *> operands = loop_.operands();
    operands.push_back(pre.constInt(0, i32));
    loop_.setOperands(operands);
    loop_.addResult(i32);
    Value *slot = body_.addArgument(i32);

    // Body: wait for this iteration's stage, then issue the one A ahead
    // into the slot iteration i + A - S read (the previous one for A = S-1;
    // every thread is past it: the wait ends in a barrier), then the dots
    // read this iteration's slot.
    // Issuing first ends the copies' address and mask registers before the
    // dots' fragments are live (ptxas: 223 registers against 252 issuing
    // after the dots, docs/perf.md).
    ir::Builder wait(&body_, body_.ops().begin());
    wait.setLoc(loop_.loc());
    Op *waitOp = wait.create(OpKind::AsyncWait, {}, std::nullopt, {{"pending", int64_t(ahead_ - 1)}});
    Op *yield = body_.ops().back().get();
    ir::Builder issue(&body_, std::next(body_.find(waitOp)));
    issue.setLoc(loop_.loc());
    Value *ahead = issue.value(OpKind::Add, {body_.argument(0), issue.constInt(ahead_ * step_, ivType)}, ivType);
    Value *zero = issue.constInt(0, i32), *one = issue.constInt(1, i32);
    // The slot written: (slot + A) % S, i.e. slot - (S - A) unless that is
    // below 0.
    const int back = stages_ - ahead_;
    Value *write;
    if (back == 1) {
      Value *isFirst = issue.value(OpKind::Cmp, {slot, zero}, ir::Type::scalar(ir::ScalarKind::I1),
                                   {{"predicate", ir::attrOf(ir::CmpPredicate::Eq)}});
      write = issue.value(OpKind::Select,
                          {isFirst, issue.constInt(stages_ - 1, i32), issue.value(OpKind::Sub, {slot, one}, i32)}, i32);
    } else {
      Value *wraps = issue.value(OpKind::Cmp, {slot, issue.constInt(back, i32)}, ir::Type::scalar(ir::ScalarKind::I1),
                                 {{"predicate", ir::attrOf(ir::CmpPredicate::Lt)}});
      write = issue.value(OpKind::Select,
                          {wraps, issue.value(OpKind::Add, {slot, issue.constInt(ahead_, i32)}, i32),
                           issue.value(OpKind::Sub, {slot, issue.constInt(back, i32)}, i32)},
                          i32);
    }
    issueStage(issue, ahead, write, loads);
    issue.setLoc(loop_.loc());
    Value *next = issue.value(OpKind::Add, {slot, one}, i32);
    Value *wraps = issue.value(OpKind::Cmp, {next, issue.constInt(stages_, i32)}, ir::Type::scalar(ir::ScalarKind::I1),
                               {{"predicate", ir::attrOf(ir::CmpPredicate::Eq)}});
    next = issue.value(OpKind::Select, {wraps, zero, next}, i32);
    std::vector<Value *> yielded = yield->operands();
    yielded.push_back(next);
    yield->setOperands(yielded);

    // Each load becomes a read of its slot; the dots read it in place.
    for (Op *load : loads) {
      auto pos = body_.find(load);
      ir::Builder at(&body_, pos);
      at.setLoc(load->loc());
      Value *tile = at.value(OpKind::SharedLoad, {slot}, load->result()->type(), ringAttrs(load));
      tile->setNameHint(load->result()->nameHint());
      for (const auto &[user, index] : uses_.at(load->result())) user->setOperand(index, tile);
      body_.erase(body_.find(load));
    }

    // An invariant operand is read from its slot after the body's wait.
    for (Op *load : invariant) {
      ir::Builder at(&body_, std::next(body_.find(waitOp)));
      at.setLoc(load->loc());
      Value *tile = at.value(OpKind::SharedLoad, {slot0}, load->result()->type(),
                             {{"buffer", buffers_[load]}, {"stages", int64_t(1)}});
      tile->setNameHint(load->result()->nameHint());
      for (const auto &[user, index] : uses_.at(load->result())) user->setOperand(index, tile);
      outer.erase(outer.find(load));
    }

    // Nothing stays in flight past the loop.
    ir::Builder post(&outer, std::next(outer.find(&loop_)));
    post.setLoc(loop_.loc());
    post.create(OpKind::AsyncWait, {}, std::nullopt, {{"pending", int64_t(0)}});
  }

  ir::Function &fn_;
  Op &loop_;
  ir::Block &body_;
  int stages_;
  int ahead_ = 0;  // how many iterations ahead the copies run: S-1, or S-2
  mutable std::optional<AxisInfoAnalysis> axis_;  // computed when first asked
  int64_t step_ = 0;
  int64_t &nextBuffer_;
  const std::map<const Value *, std::vector<std::pair<Op *, size_t>>> &uses_;
  std::set<const Value *> inBody_;
  std::set<const Op *> slice_;
  std::map<const Op *, int64_t> buffers_;
};

// `trans(load(p, mask, other))` in the loop's body, read only by
// tensor-core dots (Triton's `tl.dot(a, tl.trans(x))`): the trans becomes a
// load of the transposed pointers, mask and other, which the pipeliner can
// ring like any dot operand (the trans between a load and its dot stopped
// that; copied through registers and staged for the dot in every iteration
// instead: attention's backward written with trans took 190 registers on
// sm_90a, 119 loaded this way). The original load keeps its other uses; if
// they are dots too, both become rings, and the second read of the same
// bytes hits L1/L2.
// Only where the pipeliner can ring the new load (a constant step, nothing
// in the body that blocks it, addresses from the induction variable and
// values from outside): otherwise it would only add a load.
bool loadTransposed(ir::Function &fn, Op &loop, const std::map<const Value *, std::vector<std::pair<Op *, size_t>>> &uses) {
  ir::Block &body = *loop.regions()[0];
  if (!pipelinableStep(loop)) return false;
  // Whether `v` is computed in the body from a carried value.
  std::function<bool(const Value *)> carried = [&](const Value *v) {
    const Op *def = v->definingOp();
    if (!def) return v != body.argument(0) && std::any_of(body.arguments().begin(), body.arguments().end(),
                                                          [&](const auto &a) { return a.get() == v; });
    if (def->parentBlock() != &body) return false;
    if (!def->regions().empty()) return true;  // what its regions yield: not followed
    return std::any_of(def->operands().begin(), def->operands().end(), carried);
  };
  std::vector<Op *> transposes;
  for (const auto &op : body.ops()) {
    if (!op->is(OpKind::Trans) || op->result()->type().rank() != 2) continue;
    const Op *load = op->operand(0)->definingOp();
    if (!load || !load->is(OpKind::Load) || load->parentBlock() != &body || ir::memoryHintsOf(*load).isVolatile ||
        std::any_of(load->operands().begin(), load->operands().end(), carried))
      continue;
    auto it = uses.find(op->result());
    bool dotsOnly = it != uses.end() && !it->second.empty();
    if (dotsOnly)
      for (const auto &[user, index] : it->second)
        dotsOnly = dotsOnly && user->is(OpKind::Dot) && index < 2 && pipelinedDot(*user, fn);
    if (dotsOnly) transposes.push_back(op.get());
  }
  for (Op *trans : transposes) {
    const Op &load = *trans->operand(0)->definingOp();
    ir::Builder b(&body, body.find(trans));
    b.setLoc(trans->loc());
    auto transposed = [&](Value *v) -> Value * {
      const ir::Type t = v->type().withShape({v->type().shape[1], v->type().shape[0]});
      const Op *def = v->definingOp();
      if (def && def->is(OpKind::Constant)) return b.value(OpKind::Constant, {}, t, def->attrs());
      if (def && def->is(OpKind::Splat)) return b.value(OpKind::Splat, {def->operand(0)}, t);
      return b.value(OpKind::Trans, {v}, t);
    };
    std::vector<Value *> operands;
    for (Value *o : load.operands()) operands.push_back(transposed(o));
    Value *loaded = b.value(OpKind::Load, operands, trans->result()->type(), load.attrs());
    loaded->setNameHint(trans->result()->nameHint());
    for (const auto &[user, index] : uses.at(trans->result())) user->setOperand(index, loaded);
    body.erase(body.find(trans));
  }
  return !transposes.empty();
}

// Pointers a loop advances by a fixed amount (Triton's tutorial 03:
// `a_ptrs += BLOCK_K * stride_ak`, carried from one iteration to the next)
// become functions of the induction variable: in the body, the carried
// argument's uses read `p0 + ((iv - lb) / step) * d` (in i64, as the
// repeated pointer additions were), so the loads through them are pure
// functions of iv and values from outside, which the pipeliner can issue
// iterations ahead. The carried chain stays for any use after the loop
// (LLVM drops it where there is none). Only in a loop the pipeliner can
// take, with a tensor-core dot to feed: elsewhere it would change nothing.
bool inductCarriedPointers(ir::Function &fn, Op &loop) {
  ir::Block &body = *loop.regions()[0];
  const std::optional<int64_t> pipelinable = pipelinableStep(loop);
  if (!pipelinable || std::none_of(body.ops().begin(), body.ops().end(), [&](const auto &op) {
        return op->is(OpKind::Dot) && pipelinedDot(*op, fn);
      }))
    return false;
  const int64_t step = *pipelinable;
  Op *yield = body.ops().back().get();
  Value *iv = body.argument(0);
  Value *count = nullptr;  // (iv - lb) / step, made once
  ir::Builder b(&body, body.ops().begin());  // each new op after the last
  bool changed = false;
  for (size_t j = 0; j + 1 < body.arguments().size() && j < yield->numOperands(); ++j) {
    Value *arg = body.argument(j + 1);
    const Op *next = yield->operand(j)->definingOp();
    if (!arg->type().elem.isPtr() || !next || !next->is(OpKind::AddPtr) || next->operand(0) != arg ||
        next->parentBlock() != &body)
      continue;
    Value *d = next->operand(1);
    if (d->definingOp() && d->definingOp()->parentBlock() == &body) continue;  // not invariant
    if (d == iv || std::any_of(body.arguments().begin(), body.arguments().end(),
                               [&](const auto &a) { return a.get() == d; }))
      continue;
    b.setLoc(next->loc());
    const ir::Type i64 = ir::Type::scalar(ir::ScalarKind::I64);
    if (!count) {
      Value *n = b.value(OpKind::Sub, {iv, loop.operand(0)}, iv->type());
      if (step != 1) n = b.value(OpKind::Div, {n, b.constInt(step, iv->type())}, iv->type());
      count = iv->type() == i64 ? n : b.value(OpKind::Cast, {n}, i64);
    }
    const ir::Type dt = d->type().withScalar(ir::ScalarKind::I64);
    Value *d64 = d->type() == dt ? d : b.value(OpKind::Cast, {d}, dt);
    Value *n = dt.isTile() ? b.value(OpKind::Splat, {count}, dt) : count;
    Value *at = b.value(OpKind::AddPtr, {loop.operand(3 + j), b.value(OpKind::Mul, {d64, n}, dt)}, arg->type());
    at->setNameHint(arg->nameHint());
    std::function<void(ir::Block &)> replace = [&](ir::Block &block) {
      for (const auto &op : block.ops()) {
        for (size_t k = 0; k < op->numOperands(); ++k)
          if (op->operand(k) == arg) op->setOperand(k, at);
        for (auto &region : op->regions()) replace(*region);
      }
    };
    replace(body);
    changed = true;
  }
  return changed;
}

}  // namespace

bool pipelineDotOperands(ir::Function &fn) {
  const int stages = fn.numStages();
  if (stages < 2) return false;
  int64_t nextBuffer = 0;
  std::vector<Op *> loops;
  for (Op *op : fn.walk()) {
    if (op->hasAttr("buffer")) nextBuffer = std::max(nextBuffer, op->intAttr("buffer") + 1);
    if (op->is(OpKind::For)) loops.push_back(op);
  }
  bool changed = false;
  for (Op *loop : loops) {
    // Uses are recomputed per loop: rewriting one loop replaces values.
    changed |= inductCarriedPointers(fn, *loop);
    auto uses = ir::computeUses(fn);
    if (loadTransposed(fn, *loop, uses)) {
      changed = true;
      uses = ir::computeUses(fn);
    }
    changed |= LoopPipeliner(fn, *loop, stages, nextBuffer, uses).run();
  }
  return changed;
}

}  // namespace tk::lower
