// SpecializeWarps (SpecializeWarps.h): a loop written `range(..,
// warp_specialize: true)` on a `tma` kernel splits the kernel between a
// producer warpgroup, one thread of which issues the TMA copies of the
// loop's dot operands, and the kernel's own warps, which wait for each
// slot, run the dots and hand the slot back:
//
//   tma_init {consumers = num_warps}       a full and an empty mbarrier per slot
//   warp_specialize {producer_warps = 4} ({
//     the scalar slice of the kernel the copies' coordinates need, and per
//     iteration: tma_acquire %slot, %phase (the slot is empty); tma_expect;
//     tma_copy..
//   }, {
//     the kernel's body; in the loop: tma_wait %slot, %phase (full);
//     shared_load the slot for the dots; tma_consumed %previous_slot; after
//     the loop tma_consumed %last_slot
//   })
//   tma_release {consumers = num_warps}
//
// The consumers release a slot one iteration late, once the wgmma group
// that read it is complete (the dot keeps one group in flight: `ahead = S
// - 2`, LowerPipeline.cpp planWgmmaInFlight), so they never wait for a
// block barrier in the loop; the producer runs as far ahead as the slots
// allow, across output tiles when the loop is a persistent loop's (the
// warp_specialize loop holds the dot loop in its body).
#include "lower/SpecializeWarps.h"

#include <algorithm>
#include <set>

#include "ir/MemoryHints.h"
#include "lower/PipelineDotOperands.h"

namespace tk::lower {

using namespace ir;

namespace {

const Type kI32 = Type::scalar(ScalarKind::I32);

class WarpSpecializer {
 public:
  explicit WarpSpecializer(Function &fn) : fn_(fn), uses_(computeUses(fn)) {}

  bool run() {
    for (const auto &op : fn_.body.ops())
      if (op->is(OpKind::For) && op->hasAttr("warp_specialize") && op->intAttr("warp_specialize")) {
        outer_ = op.get();
        break;
      }
    if (!outer_ || !plan()) return false;
    rewrite();
    return true;
  }

 private:
  // The dot loop (the warp_specialize loop, or the one loop in its body
  // with TMA operands), its loads and the producer's slice; false where the
  // loop is not one a producer can feed (it is then pipelined as usual).
  bool plan() {
    // The consumers must reach the release after the op: a `return` inside
    // the body would leave the producer waiting for slots nobody frees.
    if (fn_.body.ops().empty() || !fn_.body.ops().back()->is(OpKind::Return)) return false;
    for (Op *op : walk(fn_.body))
      if (op->is(OpKind::Return) && op != fn_.body.ops().back().get()) return false;
    if (takenLoads(*outer_)) inner_ = outer_;
    for (const auto &op : outer_->regions()[0]->ops()) {
      if (inner_ == outer_ || !op->is(OpKind::For) || !takenLoads(*op)) continue;
      if (inner_) return false;
      inner_ = op.get();
    }
    if (!inner_ || !detail::pipelinableStep(*inner_)) return false;
    Block &body = *inner_->regions()[0];
    for (Op *op : walk(body)) {
      if (op->is(OpKind::DescLoad) && !detail::tmaTakes(fn_, *op)) return false;
      if (op->is(OpKind::DescLoad)) loads_.push_back(op);
      if (op->is(OpKind::Dot) && !readsARing(*op, body)) return false;
    }
    planInvariants();
    for (Op *load : loads_) {
      std::optional<std::map<std::string, Attr>> attrs = detail::tmaCopyAttrs(fn_, *load, uses_);
      if (!attrs) return false;
      copyAttrs_[load] = std::move(*attrs);
    }
    std::vector<const Value *> work(inner_->operands().begin(), inner_->operands().begin() + 3);
    work.insert(work.end(), outer_->operands().begin(), outer_->operands().begin() + 3);
    for (Op *load : loads_) {
      const size_t n = static_cast<size_t>(load->result()->type().rank());
      for (size_t i = 0; i < n; ++i) work.push_back(load->operand(1 + 2 * n + i));
    }
    return sliceOf(std::move(work));
  }

  static std::vector<Op *> walk(Block &block) {
    std::vector<Op *> out;
    for (const auto &op : block.ops()) {
      out.push_back(op.get());
      for (const auto &region : op->regions())
        for (Op *inner : walk(*region)) out.push_back(inner);
    }
    return out;
  }

  bool takenLoads(const Op &loop) const {
    for (const auto &op : loop.regions()[0]->ops())
      if (op->is(OpKind::DescLoad) && detail::tmaTakes(fn_, *op)) return true;
    return false;
  }

  // The dot sits in the loop's body and reads a taken load (b maybe
  // through a trans: a K-major ring; fp8 through emulate-fp8's cast); its other operand is no load of the
  // body: a register tile computed in it (attention's P) or a tile from
  // before the loop (attention's q: planInvariants rings it).
  bool readsARing(const Op &dot, const Block &body) const {
    if (dot.parentBlock() != &body) return false;
    bool ring = false;
    for (size_t k = 0; k < 2; ++k) {
      const Op *def = detail::ringSource(dot, k);
      if (def && def->is(OpKind::DescLoad)) ring = true;
      else if (def && def->parentBlock() == &body && def->is(OpKind::Load)) return false;
    }
    return ring;
  }

  // Loads just before the dot loop, in its block, whose every use is an a
  // or b of a dot in its body, masked-off elements zero (attention's q): a
  // one-slot cp.async ring the consumers fill before the loop and every
  // iteration's wgmma reads in place, as pipeline-dot-operands makes of
  // them; left a register tile, each iteration would stage it into shared
  // memory again (attention_desc D = 128: 255 registers and 300 B of spill).
  void planInvariants() {
    Block &outer = *inner_->parentBlock();
    for (auto it = outer.find(inner_); it != outer.ops().begin();) {
      Op *op = (--it)->get();
      if (!op->hasTrait(OpTrait::Pure) && !op->is(OpKind::Load)) break;  // a prefetch must not pass a write
      if (!op->is(OpKind::Load) || memoryHintsOf(*op).isVolatile || op->result()->type().rank() != 2) continue;
      if (op->numOperands() > 2 && !detail::isZeroConstant(op->operand(2))) continue;
      const std::vector<std::pair<Op *, size_t>> users = op->result()->uses();
      const bool dotsOnly = !users.empty() && std::all_of(users.begin(), users.end(), [&](const auto &u) {
        return u.first->is(OpKind::Dot) && u.second <= 1 && u.first->parentBlock() == inner_->regions()[0].get();
      });
      if (dotsOnly) invariants_.push_back(op);
    }
  }

  // Collects into slice_ the ops `work`'s values are computed by: pure
  // scalar ops without regions at the top level, in the outer loop's body
  // or in the dot loop's; the loops' induction variables and the kernel's
  // parameters end the walk. False at anything else (a carried value, a
  // tile, a load).
  bool sliceOf(std::vector<const Value *> work) {
    std::set<const Value *> ivs{inner_->regions()[0]->argument(0), outer_->regions()[0]->argument(0)};
    const std::set<const Block *> blocks{&fn_.body, outer_->regions()[0].get(), inner_->regions()[0].get()};
    while (!work.empty()) {
      const Value *v = work.back();
      work.pop_back();
      if (ivs.count(v)) continue;
      const Op *def = v->definingOp();
      if (!def) {
        const bool param = std::any_of(fn_.body.arguments().begin(), fn_.body.arguments().end(),
                                       [&](const auto &a) { return a.get() == v; });
        if (!param) return false;
        continue;
      }
      if (!blocks.count(def->parentBlock()) || !def->hasTrait(OpTrait::Pure) || !def->regions().empty() ||
          def->result()->type().isTile())
        return false;
      if (!slice_.insert(def).second) continue;
      for (const Value *o : def->operands()) work.push_back(o);
    }
    return true;
  }

  void rewrite();
  Op *buildProducerLoop(Builder &b, Value *slot, Value *phase);
  void consumeInLoop(Value *slot, Value *phase);
  void ringInvariants(Builder &before, Builder &top);
  std::pair<Value *, Value *> advance(Builder &b, Value *slot, Value *phase);
  void cloneSlice(Builder &b, Block &block);

  std::map<std::string, Attr> group(bool withConsumers) const {
    std::map<std::string, Attr> attrs{{"barrier", barrier_}, {"stages", int64_t(stages_)}};
    if (withConsumers) attrs["consumers"] = int64_t(fn_.numWarps());
    return attrs;
  }

  Function &fn_;
  detail::Uses uses_;
  Op *outer_ = nullptr, *inner_ = nullptr;
  std::vector<Op *> loads_;
  std::vector<Op *> invariants_;  // loads before the loop the consumers ring (planInvariants)
  std::map<const Op *, std::map<std::string, Attr>> copyAttrs_;
  std::set<const Op *> slice_;
  std::map<const Value *, Value *> cloned_;  // the producer's copies of slice_'s values
  std::map<const Op *, int64_t> buffers_;
  int stages_ = 0;
  int64_t barrier_ = 0;
};

// The slot after `slot`, and the phase of its fill: it flips as the ring
// wraps.
std::pair<Value *, Value *> WarpSpecializer::advance(Builder &b, Value *slot, Value *phase) {
  Value *next = b.value(OpKind::Add, {slot, b.constInt(1, kI32)}, kI32);
  Value *wraps = b.value(OpKind::Cmp, {next, b.constInt(stages_, kI32)}, Type::scalar(ScalarKind::I1),
                         {{"predicate", attrOf(CmpPredicate::Eq)}});
  next = b.value(OpKind::Select, {wraps, b.constInt(0, kI32), next}, kI32);
  Value *flipped = b.value(OpKind::Xor, {phase, b.constInt(1, kI32)}, kI32);
  return {next, b.value(OpKind::Select, {wraps, flipped, phase}, kI32)};
}

void WarpSpecializer::cloneSlice(Builder &b, Block &block) {
  for (const auto &op : block.ops()) {
    if (!slice_.count(op.get())) continue;
    std::vector<Value *> operands;
    for (Value *o : op->operands()) operands.push_back(cloned_.count(o) ? cloned_[o] : o);
    b.setLoc(op->loc());
    cloned_[op->result()] = b.value(op->kind(), operands, op->result()->type(), op->attrs());
  }
}

// A `for` like `loop` over the same (cloned) bounds, carrying the slot and
// phase; its body's block.
static Block *forCarryingSlot(Builder &b, const Op &loop, const std::map<const Value *, Value *> &cloned,
                              Value *slot, Value *phase, Op *&made) {
  auto mapped = [&](Value *v) { return cloned.count(v) ? cloned.at(v) : v; };
  b.setLoc(loop.loc());
  made = b.create(OpKind::For, {mapped(loop.operand(0)), mapped(loop.operand(1)), mapped(loop.operand(2)), slot, phase},
                  std::nullopt);
  made->addResult(kI32);
  made->addResult(kI32);
  made->regions().push_back(std::make_unique<Block>());
  Block *body = made->regions()[0].get();
  body->setParentOp(made);
  body->addArgument(loop.operand(0)->type());
  body->addArgument(kI32);
  body->addArgument(kI32);
  return body;
}

// The producer's loop nest: the outer loop (when it is not the dot loop)
// with its slice, the dot loop with its slice, and per iteration the wait
// for an empty slot, the expected bytes and the copies.
Op *WarpSpecializer::buildProducerLoop(Builder &b, Value *slot, Value *phase) {
  Op *outerClone = nullptr;
  Builder *at = &b;
  Builder inOuter(&fn_.body);
  if (outer_ != inner_) {
    Block *body = forCarryingSlot(b, *outer_, cloned_, slot, phase, outerClone);
    cloned_[outer_->regions()[0]->argument(0)] = body->argument(0);
    slot = body->argument(1);
    phase = body->argument(2);
    inOuter.setInsertionPointToEnd(body);
    cloneSlice(inOuter, *outer_->regions()[0]);
    at = &inOuter;
  }
  Op *loop = nullptr;
  Block *body = forCarryingSlot(*at, *inner_, cloned_, slot, phase, loop);
  cloned_[inner_->regions()[0]->argument(0)] = body->argument(0);
  Builder in(body);
  cloneSlice(in, *inner_->regions()[0]);
  in.setLoc(inner_->loc());
  Value *s = body->argument(1), *p = body->argument(2);
  in.create(OpKind::TmaAcquire, {s, p}, std::nullopt, group(false));
  Value *yes = in.constInt(1, Type::scalar(ScalarKind::I1));
  std::map<std::string, Attr> expect = group(false);
  expect["bytes"] = detail::stageBytes(loads_);
  in.create(OpKind::TmaExpect, {s, yes}, std::nullopt, expect);
  for (Op *load : loads_) {
    in.setLoc(load->loc());
    const size_t n = static_cast<size_t>(load->result()->type().rank());
    std::vector<Value *> operands{load->operand(0), s, yes};
    for (size_t i = 0; i < n; ++i) operands.push_back(cloned_.at(load->operand(1 + 2 * n + i)));
    std::map<std::string, Attr> attrs = copyAttrs_.at(load);
    attrs.insert({{"buffer", buffers_.at(load)}, {"stages", int64_t(stages_)}, {"barrier", barrier_}});
    in.create(OpKind::TmaCopy, operands, std::nullopt, attrs);
  }
  in.setLoc(inner_->loc());
  auto [next, nextPhase] = advance(in, s, p);
  in.create(OpKind::Yield, {next, nextPhase}, std::nullopt);
  if (!outerClone) return loop;
  inOuter.setLoc(outer_->loc());
  inOuter.create(OpKind::Yield, {loop->result(0), loop->result(1)}, std::nullopt);
  return outerClone;
}

// The consumers' dot loop: carries the slot, its phase and the slot the
// previous iteration read (-1: none); waits for the slot, reads it in
// place, releases the previous one after the dot, the last one after the
// loop.
void WarpSpecializer::consumeInLoop(Value *slot, Value *phase) {
  Block &body = *inner_->regions()[0];
  Builder before(inner_->parentBlock(), inner_->parentBlock()->find(inner_));
  before.setLoc(inner_->loc());
  std::vector<Value *> operands = inner_->operands();
  operands.insert(operands.end(), {slot, phase, before.constInt(-1, kI32)});
  inner_->setOperands(operands);
  const size_t first = inner_->numResults();
  for (int i = 0; i < 3; ++i) inner_->addResult(kI32);
  Value *s = body.addArgument(kI32), *p = body.addArgument(kI32), *previous = body.addArgument(kI32);

  Builder top(&body, body.ops().begin());
  top.setLoc(inner_->loc());
  top.create(OpKind::TmaWait, {s, p}, std::nullopt, group(false));
  ringInvariants(before, top);
  // One wgmma group stays in flight (planWgmmaInFlight reads `ahead`): the
  // slot it reads is released an iteration later.
  const int64_t ahead = stages_ - 2;
  for (Op *load : loads_) {
    Builder at(&body, body.find(load));
    at.setLoc(load->loc());
    const bool kMajor = copyAttrs_.at(load).count("k_major") != 0;
    Op *trans = kMajor ? load->result()->uses().front().first : nullptr;
    Value *read = trans ? trans->result() : load->result();
    Value *tile = at.value(OpKind::SharedLoad, {s}, read->type(),
                           {{"buffer", buffers_.at(load)}, {"stages", int64_t(stages_)}, {"ahead", ahead}});
    tile->setNameHint(read->nameHint());
    read->replaceAllUsesWith(tile);
    if (trans) body.erase(body.find(trans));
    body.erase(body.find(load));
  }
  Op *yield = body.ops().back().get();
  Builder end(&body, body.find(yield));
  end.setLoc(inner_->loc());
  end.create(OpKind::TmaConsumed, {previous}, std::nullopt, group(false));
  auto [next, nextPhase] = advance(end, s, p);
  std::vector<Value *> yielded = yield->operands();
  yielded.insert(yielded.end(), {next, nextPhase, s});
  yield->setOperands(yielded);

  Builder after(inner_->parentBlock(), std::next(inner_->parentBlock()->find(inner_)));
  after.setLoc(inner_->loc());
  after.create(OpKind::TmaConsumed, {inner_->result(first + 2)}, std::nullopt, group(false));
  if (outer_ == inner_) return;
  Block &outerBody = *outer_->regions()[0];
  Op *outerYield = outerBody.ops().back().get();
  std::vector<Value *> passed = outerYield->operands();
  passed.insert(passed.end(), {inner_->result(first), inner_->result(first + 1)});
  outerYield->setOperands(passed);
}

// The invariant loads' one-slot rings: copied and complete before the loop
// (`before`), read in place after the body's wait (`top`).
void WarpSpecializer::ringInvariants(Builder &before, Builder &top) {
  if (invariants_.empty()) return;
  Value *slot0 = before.constInt(0, kI32);
  for (Op *load : invariants_) {
    before.setLoc(load->loc());
    std::vector<Value *> operands{load->operand(0), slot0};
    if (load->numOperands() > 1) operands.push_back(load->operand(1));
    before.create(OpKind::AsyncCopy, operands, std::nullopt, {{"buffer", buffers_.at(load)}, {"stages", int64_t(1)}});
  }
  before.setLoc(inner_->loc());
  before.create(OpKind::AsyncCommit, {}, std::nullopt);
  before.create(OpKind::AsyncWait, {}, std::nullopt, {{"pending", int64_t(0)}});
  for (Op *load : invariants_) {
    top.setLoc(load->loc());
    Value *tile = top.value(OpKind::SharedLoad, {slot0}, load->result()->type(),
                            {{"buffer", buffers_.at(load)}, {"stages", int64_t(1)}});
    tile->setNameHint(load->result()->nameHint());
    load->result()->replaceAllUsesWith(tile);
    load->parentBlock()->erase(load->parentBlock()->find(load));
  }
}

void WarpSpecializer::rewrite() {
  stages_ = fn_.numStages();
  int64_t nextBuffer = 0;
  for (Op *op : fn_.walk()) {
    if (op->hasAttr("buffer")) nextBuffer = std::max(nextBuffer, op->intAttr("buffer") + 1);
    if (op->hasAttr("barrier")) barrier_ = std::max(barrier_, op->intAttr("barrier") + 1);
  }
  for (Op *load : invariants_) buffers_[load] = nextBuffer++;
  for (Op *load : loads_) buffers_[load] = nextBuffer++;

  // Every op but the return moves into the consumers' region.
  Block &body = fn_.body;
  Op *ret = body.ops().back().get();
  Builder b(&body, body.find(ret));
  b.setLoc(outer_->loc());
  b.create(OpKind::TmaInit, {}, std::nullopt, group(true));
  Op *ws = b.create(OpKind::WarpSpecialize, {}, std::nullopt, {{"producer_warps", int64_t(4)}});
  b.create(OpKind::TmaRelease, {}, std::nullopt, group(true));
  for (int r = 0; r < 2; ++r) {
    ws->regions().push_back(std::make_unique<Block>());
    ws->regions()[r]->setParentOp(ws);
  }
  Block &producer = *ws->regions()[0], &consumer = *ws->regions()[1];
  const Op *init = std::prev(body.find(ws))->get();
  while (body.ops().front().get() != init) {
    std::unique_ptr<Op> moved = std::move(body.ops().front());
    body.ops().pop_front();
    consumer.push_back(std::move(moved));
  }

  Builder p(&producer);
  cloneSlice(p, consumer);  // the top level's part: every such op comes before the loop it feeds
  p.setLoc(outer_->loc());
  buildProducerLoop(p, p.constInt(0, kI32), p.constInt(0, kI32));
  p.create(OpKind::Yield, {}, std::nullopt);

  Builder c(&consumer, consumer.find(outer_));
  c.setLoc(outer_->loc());
  Value *slot = c.constInt(0, kI32), *phase = c.constInt(0, kI32);
  if (outer_ != inner_) {
    std::vector<Value *> operands = outer_->operands();
    operands.insert(operands.end(), {slot, phase});
    outer_->setOperands(operands);
    outer_->addResult(kI32);
    outer_->addResult(kI32);
    slot = outer_->regions()[0]->addArgument(kI32);
    phase = outer_->regions()[0]->addArgument(kI32);
  }
  consumeInLoop(slot, phase);
  Builder ce(&consumer);
  ce.setLoc(outer_->loc());
  ce.create(OpKind::Yield, {}, std::nullopt);
}

}  // namespace

bool specializeWarps(Function &fn) {
  if (!fn.tma() || !fn.wgmma() || fn.numStages() < 2) return false;
  return WarpSpecializer(fn).run();
}

}  // namespace tk::lower
