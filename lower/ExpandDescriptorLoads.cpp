// expandDescriptorLoads: a host descriptor's load (desc_load) becomes the
// masked gather a user would write by hand -- pointers base + sum_i (c_i +
// arange(B_i)) * s_i in 64-bit offsets, a mask 0 <= c_i + arange(B_i) <
// shape_i per dim, zero elsewhere -- which every arch and the sim run; a
// store (desc_store) the masked scatter through the same pointers.
//
// Why the front end does not expand them itself: on sm_90a (the kernel's
// `tma` flag) a load that feeds a tensor-core dot in a loop may be pipelined
// into copies of the tensor memory accelerator instead, which need the
// descriptor and the coordinates, not pointers. Those it keeps for
// pipeline-dot-operands, which expands any it does not take. A store there
// becomes a tma_store (staged in shared memory, written by one thread's
// bulk copies) where its block fits the accelerator's boxes.
#include <functional>
#include <tuple>

#include "lower/Layouts.h"
#include "lower/PipelineDotOperands.h"
#include "lower/Wgmma.h"

namespace tk::lower {

using namespace ir;

namespace {

bool isPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// `v` is body argument i of `fn` named `name`.
bool isParam(const Function &fn, const Value *v, const std::string &name) {
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.body.argument(i) == v) return fn.params[i].name == name;
  return false;
}

// desc_load or desc_store `op` of rank `n` reads (writes) a host descriptor
// parameter as the launcher passes it: its base, sizes and outer strides the
// parameter's, the inner stride 1 (the tensor map is made from the same
// tk::TensorDescriptor).
bool readsHostParameter(const Function &fn, const Op &op, size_t n) {
  std::string base;
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.body.argument(i) == op.operand(0)) base = fn.params[i].name;
  if (base.empty()) return false;
  for (size_t i = 0; i < n; ++i) {
    if (!isParam(fn, op.operand(1 + i), base + ".shape" + std::to_string(i))) return false;
    if (i + 1 < n && !isParam(fn, op.operand(1 + n + i), base + ".stride" + std::to_string(i))) return false;
  }
  const Op *inner = op.operand(2 * n)->definingOp();
  return inner && inner->is(OpKind::Constant) && inner->intAttr("value") == 1;
}

// `op` may become TMA copies on its own: a 2-D f16, bf16 or fp8 block of
// powers of two from a host descriptor parameter, in a loop the pipeliner
// takes.
bool tmaCandidate(const Function &fn, const Op &op) {
  const Type &t = op.result()->type();
  if (!op.is(OpKind::DescLoad) || t.rank() != 2 || !isPowerOfTwo(t.shape[0]) || !isPowerOfTwo(t.shape[1]) ||
      (t.elem.scalar != ScalarKind::F16 && t.elem.scalar != ScalarKind::BF16 && !ir::isFp8(t.elem.scalar)))
    return false;
  const Op *loop = op.parentBlock()->parentOp();
  return loop && loop->is(OpKind::For) && detail::pipelinableStep(*loop) && readsHostParameter(fn, op, 2);
}

// Whether an op in `block` or its regions reads `v`.
bool usedIn(const Block &block, const Value *v) {
  for (const auto &op : block.ops()) {
    for (const Value *o : op->operands())
      if (o == v) return true;
    for (const auto &region : op->regions())
      if (usedIn(*region, v)) return true;
  }
  return false;
}

// Calls f(user, operand index) for each use of `v` by an op of `block`;
// false where f is, where `v` has no use, or where an op's region uses it.
bool eachUse(const Block &block, const Value *v, const std::function<bool(const Op &, size_t)> &f) {
  bool any = false;
  for (const auto &user : block.ops()) {
    for (size_t k = 0; k < user->numOperands(); ++k)
      if (user->operand(k) == v) {
        any = true;
        if (!f(*user, k)) return false;
      }
    for (const auto &region : user->regions())
      if (usedIn(*region, v)) return false;
  }
  return any;
}

}  // namespace

namespace detail {

const Op *ringSource(const Op &dot, size_t k, bool *transposed) {
  const Op *def = dot.operand(k)->definingOp();
  if (def && fp8Source(dot.operand(k))) def = def->operand(0)->definingOp();
  const bool trans = def && k == 1 && def->is(OpKind::Trans) && def->result()->type().rank() == 2;
  if (trans) def = def->operand(0)->definingOp();
  if (transposed) *transposed = trans;
  return def;
}

int64_t stageBytes(const std::vector<Op *> &loads) {
  int64_t bytes = 0;
  for (const Op *load : loads) bytes += load->result()->type().numElements() * load->result()->type().elem.bytes();
  return bytes;
}

bool tmaTakes(const Function &fn, const Op &op) {
  if (!fn.tma() || fn.numStages() < 2 || !tmaCandidate(fn, op)) return false;
  const Block &body = *op.parentBlock();
  // The desc_load behind operand k of `dot` (ringSource: Triton's
  // `dot(a, b.T)` of a B stored [N, K], fp8 codes through their widening).
  auto source = [&](const Op &dot, size_t k, bool *transposed = nullptr) -> const Op * {
    const Op *def = ringSource(dot, k, transposed);
    return def && def->parentBlock() == &body && tmaCandidate(fn, *def) ? def : nullptr;
  };
  // The dot's other operand: a TMA load too, or no load of this loop at all
  // (a register tile from before the loop, or computed in it: wgmma reads
  // it from registers or stages it).
  auto other = [&](const Op &dot, size_t k) -> bool {
    if (source(dot, k)) return true;
    const Op *def = dot.operand(k)->definingOp();
    if (def && def->is(OpKind::Cast)) def = def->operand(0)->definingOp();
    return !def || def->parentBlock() != &body || (!def->is(OpKind::Load) && !def->is(OpKind::DescLoad));
  };
  // An fp8 operand: the tile itself (before emulate-fp8) or its widening.
  auto fp8 = [](const Value *v) { return fp8Source(v) || (!v->type().isPtr() && ir::isFp8(v->type().elem.scalar)); };
  auto dotTakes = [&](const Op &dot) {
    const Type &at = dot.operand(0)->type(), &bt = dot.operand(1)->type();
    if (!wgmmaShape(at.shape[0], bt.shape[1], at.shape[1], fn.numWarps())) return false;
    // fp8 codes into f32 (a pipelined f16 dot once emulate-fp8 has widened
    // them): wgmma reads both from shared memory, K-major (B as b.T), in k
    // steps of 32.
    if (fp8(dot.operand(0)) || fp8(dot.operand(1))) {
      bool transposedB = false;
      return fp8(dot.operand(0)) && fp8(dot.operand(1)) && dot.result()->type().elem.scalar == ScalarKind::F32 &&
             at.shape[1] % 32 == 0 && source(dot, 0) && source(dot, 1, &transposedB) && transposedB;
    }
    return pipelinedDot(dot, fn) && ((source(dot, 0) && other(dot, 1)) || (other(dot, 0) && source(dot, 1)));
  };
  // Every use of `v` (the load, its trans, or emulate-fp8's cast of either)
  // leads to an operand of such a dot: a, or b (a trans is always b's).
  std::function<bool(const Value *, bool, bool)> feedsDots = [&](const Value *v, bool transposed, bool widened) {
    return eachUse(body, v, [&](const Op &user, size_t k) {
      if (user.is(OpKind::Trans))
        return !transposed && !widened && user.result()->type().rank() == 2 && feedsDots(user.result(), true, false);
      if (user.is(OpKind::Cast))
        return !widened && fp8Source(user.result()) == v && feedsDots(user.result(), transposed, true);
      return user.is(OpKind::Dot) && (transposed ? k == 1 : k <= 1) && dotTakes(user);
    });
  };
  return feedsDots(op.result(), false, false);
}

// A TMA copy's boxes: wgmma's layout of the operand the load is (its first
// use decides; tmaTakes made every use agree in kind), one swizzle span
// wide: A in boxes of 8 rows (wgmmaOffsetA keeps groups of 8 logical rows
// together, in an order of its own), B in boxes of all K rows (one N-major
// slab). nullopt if wgmma's layout has no swizzle here.
std::optional<std::map<std::string, ir::Attr>> tmaCopyAttrs(const Function &fn, const Op &load, const Uses &uses) {
  const auto &users = uses.at(load.result());
  auto [dot, index] = users.front();
  // B through a trans: the block is B^T ([N, K]), held K-major.
  const bool kMajor = dot->is(OpKind::Trans);
  if (kMajor) {
    if (users.size() != 1) return std::nullopt;
    std::tie(dot, index) = uses.at(dot->result()).front();
  }
  // fp8 codes through emulate-fp8's cast: the dot's plan has their width.
  if (dot->is(OpKind::Cast)) std::tie(dot, index) = uses.at(dot->result()).front();
  const WgmmaPlan plan = wgmmaPlan(*dot, fn.numWarps());
  const ir::Type &t = load.result()->type();
  const int elemBytes = ir::bitWidth(t.elem.scalar) / 8;
  const int swizzle = kMajor ? wgmmaSwizzleFor(plan.K, elemBytes) : index == 0 ? plan.swizzleA : plan.swizzleB;
  // wgmma reads fp8's B K-major only (WgmmaPlan::kMajorB): an N-major block is not its layout.
  if (swizzle == 0 || plan.elemBytes != elemBytes || (index == 1 && plan.kMajorB && !kMajor)) return std::nullopt;
  std::map<std::string, ir::Attr> attrs{{"block", t.shape},
                                        {"box", std::vector<int64_t>{index == 0 ? 8 : t.shape[0], swizzle / elemBytes}},
                                        {"swizzle", int64_t(swizzle)},
                                        {"operand", int64_t(index + 1)}};
  if (kMajor) attrs["k_major"] = int64_t(1);
  return attrs;
}

}  // namespace detail

namespace {

// The shared memory an H100 block may have (227 KiB), less a margin for
// mbarriers and alignment.
constexpr int64_t kSharedBudget = 227 * 1024 - 2048;

// desc_store `op` as a tma_store's attributes (box, swizzle), or nullopt
// where it stays a masked store: a `tma` kernel, a 2-D block of 2- or
// 4-byte elements, powers of two, 8 to 256 rows (whole swizzle patterns) and a 32-byte swizzle
// span of columns or more, of a host descriptor parameter; and its staging
// (the whole block) fits in shared memory beside every host-descriptor
// load's ring (counted at full depth wherever it is: rings may be live
// around the store).
std::optional<std::map<std::string, ir::Attr>> tmaStoreAttrs(Function &fn, const Op &op) {
  const Type &vt = op.operand(op.numOperands() - 1)->type();
  if (!fn.tma() || vt.rank() != 2 || !readsHostParameter(fn, op, 2)) return std::nullopt;
  const int bytes = static_cast<int>(vt.elem.bytes());
  if ((bytes != 2 && bytes != 4) || !isPowerOfTwo(vt.shape[0]) ||
      !isPowerOfTwo(vt.shape[1]) || vt.shape[0] < 8 || vt.shape[0] > 256)
    return std::nullopt;
  const int swizzle = wgmmaSwizzleFor(vt.shape[1], bytes);
  if (swizzle == 0) return std::nullopt;
  int64_t shared = vt.numElements() * bytes;
  for (const Op *load : fn.walk())
    if (load->is(OpKind::DescLoad)) {
      const Type &t = load->result()->type();
      shared += (t.numElements() * t.elem.bytes() + 1023) / 1024 * 1024 * std::max(1, fn.numStages());
    }
  if (shared > kSharedBudget) return std::nullopt;
  return std::map<std::string, ir::Attr>{{"box", std::vector<int64_t>{vt.shape[0], swizzle / bytes}},
                                         {"swizzle", int64_t(swizzle)}};
}

// The pointers and mask of desc_load or desc_store `op`'s block (of type
// `rt`), built at `b`.
std::pair<Value *, Value *> descriptorPointers(Builder &b, Op &op, const Type &rt) {
  const size_t n = static_cast<size_t>(rt.rank());
  auto broadcastTo = [&](Value *v, const std::vector<int64_t> &shape) {
    return v->type().shape == shape ? v : b.value(OpKind::Broadcast, {v}, v->type().withShape(shape));
  };
  Value *offset = nullptr, *mask = nullptr;
  std::vector<int64_t> shape(n, 1);
  for (size_t i = 0; i < n; ++i) {
    // The block's indices along dim i, shaped [1, .., B_i, .., 1].
    Value *range = b.value(OpKind::Arange, {}, Type::tile({ScalarKind::I32, false}, {rt.shape[i]}),
                           {{"start", int64_t{0}}, {"end", rt.shape[i]}});
    for (size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      std::vector<int64_t> s = range->type().shape;
      s.insert(s.begin() + int64_t(j), 1);
      range = b.value(OpKind::ExpandDims, {range}, range->type().withShape(s), {{"axis", int64_t(j)}});
    }
    const Type it = range->type();
    Value *index = b.value(OpKind::Add, {b.value(OpKind::Splat, {op.operand(1 + 2 * n + i)}, it), range}, it);
    Value *wide = b.value(OpKind::Cast, {index}, it.withScalar(ScalarKind::I64));
    // A constant stride as a constant tile, as the front end writes it: the
    // contiguity analysis reads it there.
    const Op *strideDef = op.operand(1 + n + i)->definingOp();
    Value *stride = strideDef && strideDef->is(OpKind::Constant)
                        ? b.constInt(strideDef->intAttr("value"), wide->type())
                        : b.value(OpKind::Splat, {op.operand(1 + n + i)}, wide->type());
    Value *term = b.value(OpKind::Mul, {wide, stride}, wide->type());
    const Type bt = it.withScalar(ScalarKind::I1);
    Value *below = b.value(OpKind::Cmp, {index, b.value(OpKind::Splat, {op.operand(1 + i)}, it)}, bt,
                           {{"predicate", attrOf(CmpPredicate::Lt)}});
    Value *nonNegative = b.value(OpKind::Cmp, {index, b.constInt(0, it)}, bt, {{"predicate", attrOf(CmpPredicate::Ge)}});
    Value *inside = b.value(OpKind::And, {nonNegative, below}, bt);
    if (!offset) {
      offset = term;
      mask = inside;
    } else {
      std::vector<int64_t> joined = shape;
      joined[i] = rt.shape[i];
      offset = b.value(OpKind::Add, {broadcastTo(offset, joined), broadcastTo(term, joined)}, wide->type().withShape(joined));
      mask = b.value(OpKind::And, {broadcastTo(mask, joined), broadcastTo(inside, joined)}, bt.withShape(joined));
    }
    shape[i] = rt.shape[i];
  }
  const Type ptrs = rt.withElem(op.operand(0)->type().elem);
  Value *p = b.value(OpKind::AddPtr, {b.value(OpKind::Splat, {op.operand(0)}, ptrs), offset}, ptrs);
  return {p, mask};
}

// desc_store `op` as a tma_store, or the masked store through its pointers.
void expandDescriptorStore(Function &fn, Op &op) {
  Block &block = *op.parentBlock();
  Builder b(&block, block.find(&op));
  b.setLoc(op.loc());
  Value *value = op.operand(op.numOperands() - 1);
  if (std::optional<std::map<std::string, ir::Attr>> attrs = tmaStoreAttrs(fn, op)) {
    const size_t n = 2;
    b.create(OpKind::TmaStore, {op.operand(0), op.operand(1 + 2 * n), op.operand(2 + 2 * n), value}, std::nullopt,
             *attrs);
  } else {
    auto [p, mask] = descriptorPointers(b, op, value->type());
    b.create(OpKind::Store, {p, value, mask}, std::nullopt);
  }
  block.erase(block.find(&op));
}

}  // namespace

Value *expandDescriptorLoad(Op &op) {
  const Type rt = op.result()->type();
  Block &block = *op.parentBlock();
  Builder b(&block, block.find(&op));
  b.setLoc(op.loc());
  auto [p, mask] = descriptorPointers(b, op, rt);
  Value *other = rt.isFloat() ? b.constFloat(0.0, rt) : b.constInt(0, rt);
  Value *loaded = b.value(OpKind::Load, {p, mask, other}, rt);
  loaded->setNameHint(op.result()->nameHint());
  op.result()->replaceAllUsesWith(loaded);
  block.erase(block.find(&op));
  return loaded;
}

bool expandDescriptorLoads(Function &fn) {
  std::vector<Op *> loads, stores;
  for (Op *op : fn.walk()) {
    if (op->is(OpKind::DescLoad)) loads.push_back(op);
    if (op->is(OpKind::DescStore)) stores.push_back(op);
  }
  bool changed = !stores.empty();
  // Stores first: their shared-memory budget counts the loads as written.
  for (Op *op : stores) expandDescriptorStore(fn, *op);
  for (Op *op : loads) {
    if (detail::tmaTakes(fn, *op)) continue;
    expandDescriptorLoad(*op);
    changed = true;
  }
  return changed;
}

}  // namespace tk::lower
