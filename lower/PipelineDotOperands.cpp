// PipelineDotOperands (see PipelineDotOperands.h): the loads that feed
// tensor-core dots in a `for` become asynchronous copies into rings of
// num_stages shared slots, issued num_stages - 1 iterations ahead.
#include "lower/PipelineDotOperands.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "ir/MemoryHints.h"
#include "lower/AxisInfo.h"
#include "lower/Layouts.h"
#include "lower/Wgmma.h"

namespace tk::lower {

using ir::Op;
using ir::OpKind;
using ir::Value;

namespace detail {

// Ops that write memory, or already take part in a pipeline: a loop with one
// of them keeps its loads where they are (a prefetched load must not pass a
// store that may write what it reads).
static bool blocksPipelining(const ir::Op &op) {
  if (op.is(OpKind::Store) || op.is(OpKind::AtomicRmw) || op.is(OpKind::AtomicCas) || op.is(OpKind::AsyncCopy) ||
      op.is(OpKind::AsyncCommit) || op.is(OpKind::AsyncWait) || op.is(OpKind::SharedLoad) || op.is(OpKind::TmaCopy) ||
      op.is(OpKind::TmaWait))
    return true;
  for (const auto &region : op.regions())
    for (const auto &inner : region->ops())
      if (blocksPipelining(*inner)) return true;
  return false;
}

// The loop's step when the pipeliner can take the loop at all: a constant,
// nonzero step and nothing in the body that blocks pipelining. The two
// rewrites that prepare a loop for it ask the same question first.
std::optional<int64_t> pipelinableStep(const ir::Op &loop) {
  const Op *stepDef = loop.operand(2)->definingOp();
  if (!stepDef || !stepDef->is(OpKind::Constant) || stepDef->intAttr("value") == 0) return std::nullopt;
  for (const auto &op : loop.regions()[0]->ops())
    if (blocksPipelining(*op)) return std::nullopt;
  return stepDef->intAttr("value");
}

// A zero, as a constant tile or a splat of a constant scalar.
bool isZeroConstant(const Value *v) {
  const Op *def = v->definingOp();
  if (def && def->is(OpKind::Splat)) def = def->operand(0)->definingOp();
  return def && def->is(OpKind::Constant) && def->floatAttr("value") == 0.0;
}

}  // namespace detail

namespace {


class LoopPipeliner {
 public:
  LoopPipeliner(ir::Function &fn, Op &loop, int stages, int64_t &nextBuffer, int64_t &nextBarrier,
                const std::map<const Value *, std::vector<std::pair<Op *, size_t>>> &uses)
      : fn_(fn), loop_(loop), body_(*loop.regions()[0]), stages_(stages), nextBuffer_(nextBuffer),
        nextBarrier_(nextBarrier), uses_(uses) {
    for (const auto &a : body_.arguments()) inBody_.insert(a.get());
    for (const auto &op : body_.ops())
      if (op->result()) inBody_.insert(op->result());
  }

  bool run() {
    const std::optional<int64_t> step = detail::pipelinableStep(loop_);
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
    // Dots on mma.sync read their slot into registers (ldmatrix) within the
    // iteration, so the copy S-1 iterations ahead may refill the slot just
    // read: Triton's sm_80 pipeliner issues it at the end of the iteration
    // into that slot, S-1 slots in all. Issued here after the next
    // iteration's wait instead (the same moment, before the dots' fragments
    // are live), it is S-2 ahead of that iteration in S-1 slots; never fewer
    // than two, so that num_stages 2 still overlaps a copy with the dots.
    // Attention at 128 x 64, 3 stages, D = 64 on sm_80: 72 KiB -> 54
    // (Triton's rings 2 x 64 x 64 too; docs/perf.md). wgmma keeps its
    // operands in shared memory until its group completes: all S slots.
    else if (!fn_.wgmma() && stages_ >= 3)
      stages_ -= 1;
    ahead_ = stages_ >= 3 && keepsWgmmaGroup(loads) ? stages_ - 2 : stages_ - 1;
    rewrite(loads, invariantLoads());
    return true;
  }

  // The loop's host-descriptor loads as rings the tensor memory accelerator
  // fills (PipelineDotOperands.h), where every operand load of its dots is
  // one detail::tmaTakes; false, and nothing changed, otherwise.
  bool runTma() {
    const std::optional<int64_t> step = detail::pipelinableStep(loop_);
    if (!step) return false;
    step_ = *step;
    std::vector<Op *> loads;
    for (const auto &op : body_.ops()) {
      if (op->is(OpKind::Load) && feedsTensorCoreDots(*op)) return false;  // a cp.async ring too: not here
      if (op->is(OpKind::DescLoad) && detail::tmaTakes(fn_, *op)) {
        if (!sliceOf(*op) || !tmaBox(*op)) return false;
        loads.push_back(op.get());
      }
    }
    if (loads.empty()) return false;
    tma_ = true;
    barrier_ = nextBarrier_++;
    ahead_ = stages_ >= 3 && keepsWgmmaGroup(loads) ? stages_ - 2 : stages_ - 1;
    // An invariant operand (attention's q) is a one-slot cp.async ring,
    // complete before the loop (the body waits on mbarriers only).
    rewrite(loads, invariantLoads());
    return true;
  }

 private:
  // Every use of the load is an operand (a or b) of a tensor-core dot in this
  // body, and masked-off elements read as zero (a copy zero-fills them).
  bool feedsTensorCoreDots(const Op &load) const {
    const ir::Type &t = load.result()->type();
    if (t.rank() != 2 || (load.numOperands() > 2 && !detail::isZeroConstant(load.operand(2)))) return false;
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

  // The load's tma_copy attributes (detail::tmaCopyAttrs) into tmaAttrs_.
  bool tmaBox(const Op &load) {
    std::optional<std::map<std::string, ir::Attr>> attrs = detail::tmaCopyAttrs(fn_, load, uses_);
    if (attrs) tmaAttrs_[&load] = std::move(*attrs);
    return attrs.has_value();
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
      if (detail::blocksPipelining(*op)) break;
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
      // fp8 codes are read in place through emulate-fp8's cast; a TMA ring
      // of B^T replaces its trans too (tma_copy k_major).
      bool transposed = false;
      const Op *def = detail::ringSource(*dot, k, &transposed);
      if (transposed && !tma_) return false;
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
    if (load.is(OpKind::DescLoad))
      work.assign(load.operands().begin(), load.operands().end());
    else if (load.numOperands() > 1)
      work.push_back(load.operand(1));
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
    if (tma_) {
      // One arrival expecting every box's bytes, then the copies.
      b.create(OpKind::TmaExpect, {slot, inRange}, std::nullopt,
               {{"barrier", barrier_}, {"stages", int64_t(stages_)}, {"bytes", detail::stageBytes(loads)}});
      for (Op *load : loads) {
        b.setLoc(load->loc());
        const size_t n = static_cast<size_t>(load->result()->type().rank());
        std::vector<Value *> operands{load->operand(0), slot, inRange};
        for (size_t i = 0; i < n; ++i) operands.push_back(mapped(load->operand(1 + 2 * n + i)));
        std::map<std::string, ir::Attr> attrs = ringAttrs(load);
        attrs.insert(tmaAttrs_.at(load).begin(), tmaAttrs_.at(load).end());
        attrs["barrier"] = barrier_;
        b.create(OpKind::TmaCopy, operands, std::nullopt, attrs);
      }
      return;
    }
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
      if (tma_) pre.create(OpKind::AsyncWait, {}, std::nullopt, {{"pending", int64_t(0)}});
    }

    // Prologue: stages 0 .. A-1 for the first A = ahead_ iterations.
    pre.setLoc(loop_.loc());
    const std::map<std::string, ir::Attr> group{{"barrier", barrier_}, {"stages", int64_t(stages_)}};
    if (tma_) pre.create(OpKind::TmaInit, {}, std::nullopt, group);
    for (int s = 0; s < ahead_; ++s) {
      Value *iv = loop_.operand(0);
      if (s > 0) iv = pre.value(OpKind::Add, {iv, pre.constInt(s * step_, ivType)}, ivType);
      issueStage(pre, iv, pre.constInt(s, i32), loads);
    }

    // The slot this iteration reads travels around the loop.
    pre.setLoc(loop_.loc());
    // With TMA, so does the parity of the phase its mbarrier completes: slot
    // s's k-th fill completes phase k.
    std::vector<Value *> operands = loop_.operands();
    operands.push_back(pre.constInt(0, i32));
    if (tma_) operands.push_back(pre.constInt(0, i32));
    loop_.setOperands(operands);
    loop_.addResult(i32);
    Value *slot = body_.addArgument(i32), *phase = nullptr;
    if (tma_) {
      loop_.addResult(i32);
      phase = body_.addArgument(i32);
    }

    // Body: wait for this iteration's stage, then issue the one A ahead
    // into the slot iteration i + A - S read (the previous one for A = S-1;
    // every thread is past it: the wait ends in a barrier), then the dots
    // read this iteration's slot.
    // Issuing first ends the copies' address and mask registers before the
    // dots' fragments are live (ptxas: 223 registers against 252 issuing
    // after the dots, docs/perf.md).
    ir::Builder wait(&body_, body_.ops().begin());
    wait.setLoc(loop_.loc());
    Op *waitOp = tma_ ? wait.create(OpKind::TmaWait, {slot, phase}, std::nullopt, group)
                      : wait.create(OpKind::AsyncWait, {}, std::nullopt, {{"pending", int64_t(ahead_ - 1)}});
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
    if (tma_)
      yielded.push_back(issue.value(OpKind::Select, {wraps, issue.value(OpKind::Xor, {phase, one}, i32), phase}, i32));
    yield->setOperands(yielded);

    // Each load becomes a read of its slot; the dots read it in place. A
    // K-major TMA ring holds B^T: the slot is read as the trans was.
    for (Op *load : loads) {
      auto pos = body_.find(load);
      ir::Builder at(&body_, pos);
      at.setLoc(load->loc());
      Op *trans = tma_ && tmaAttrs_.at(load).count("k_major") ? uses_.at(load->result()).front().first : nullptr;
      const Value *read = trans ? trans->result() : load->result();
      Value *tile = at.value(OpKind::SharedLoad, {slot}, read->type(), ringAttrs(load));
      tile->setNameHint(read->nameHint());
      for (const auto &[user, index] : uses_.at(read)) user->setOperand(index, tile);
      if (trans) body_.erase(body_.find(trans));
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
    if (tma_)
      post.create(OpKind::TmaRelease, {}, std::nullopt, group);
    else
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
  int64_t &nextBarrier_;
  bool tma_ = false;      // the rings are filled by the tensor memory accelerator
  int64_t barrier_ = 0;   // then: their mbarrier group
  std::map<const Op *, std::map<std::string, ir::Attr>> tmaAttrs_;  // tma_copy's block, box, swizzle, operand
  const std::map<const Value *, std::vector<std::pair<Op *, size_t>>> &uses_;
  std::set<const Value *> inBody_;
  std::set<const Op *> slice_;
  std::map<const Op *, int64_t> buffers_;
};

}  // namespace

// The host-descriptor loads expand-descriptor-loads kept for the tensor
// memory accelerator that no loop took: masked loads, as everywhere else.
static bool expandDescriptorLoadsIn(ir::Block &body) {
  std::vector<Op *> loads;
  for (const auto &op : body.ops())
    if (op->is(OpKind::DescLoad)) loads.push_back(op.get());
  for (Op *op : loads) expandDescriptorLoad(*op);
  return !loads.empty();
}

static bool expandDescriptorLoadsLeft(ir::Function &fn) {
  bool changed = false;
  for (Op *op : fn.walk())
    if (op->is(OpKind::DescLoad)) {
      expandDescriptorLoad(*op);
      changed = true;
    }
  return changed;
}

bool pipelineDotOperands(ir::Function &fn) {
  const int stages = fn.numStages();
  if (stages < 2) return expandDescriptorLoadsLeft(fn);
  bool changed = false;
  int64_t nextBuffer = 0, nextBarrier = 0;
  std::vector<Op *> loops;
  for (Op *op : fn.walk()) {
    if (op->hasAttr("buffer")) nextBuffer = std::max(nextBuffer, op->intAttr("buffer") + 1);
    if (op->hasAttr("barrier")) nextBarrier = std::max(nextBarrier, op->intAttr("barrier") + 1);
    if (op->is(OpKind::For)) loops.push_back(op);
  }
  for (Op *loop : loops) {
    // Uses are recomputed per loop: rewriting one loop replaces values.
    changed |= detail::inductCarriedPointers(fn, *loop);
    auto uses = ir::computeUses(fn);
    if (LoopPipeliner(fn, *loop, stages, nextBuffer, nextBarrier, uses).runTma()) {
      changed = true;
      continue;
    }
    if (expandDescriptorLoadsIn(*loop->regions()[0])) {
      changed = true;
      uses = ir::computeUses(fn);
    }
    if (detail::loadTransposed(fn, *loop, uses)) {
      changed = true;
      uses = ir::computeUses(fn);
    }
    changed |= LoopPipeliner(fn, *loop, stages, nextBuffer, nextBarrier, uses).run();
  }
  changed |= expandDescriptorLoadsLeft(fn);
  return changed;
}

}  // namespace tk::lower
