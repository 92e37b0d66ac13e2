// eliminateCommonSubexpressions: a pure op equal to an earlier one in the same
// block or an enclosing one (same kind, operands, attributes and result type)
// is replaced by it. Values defined inside a region are not visible after it.
// Ops are hashed structurally and kept in one scoped table (a region's
// entries leave it when the region ends), so the pass is linear in the
// number of ops.
#include <cmath>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "ir/passes/Passes.h"

namespace tk::ir {

namespace {

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

uint64_t bitsOf(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// Floats are equal bit for bit (0.0 and -0.0 differ), except that NaNs of
// one sign are one value whatever their payload, as the text form prints them.
bool sameFloat(double a, double b) {
  if (a != a || b != b) return a != a && b != b && std::signbit(a) == std::signbit(b);
  return bitsOf(a) == bitsOf(b);
}

size_t hashAttr(const Attr &a) {
  size_t h = a.index();
  if (auto *i = std::get_if<int64_t>(&a)) return mix(h, std::hash<int64_t>()(*i));
  if (auto *d = std::get_if<double>(&a)) return mix(h, *d != *d ? (std::signbit(*d) ? 1 : 2) : bitsOf(*d));
  if (auto *s = std::get_if<std::string>(&a)) return mix(h, std::hash<std::string>()(*s));
  for (int64_t v : std::get<std::vector<int64_t>>(a)) h = mix(h, std::hash<int64_t>()(v));
  return h;
}

bool sameAttr(const Attr &a, const Attr &b) {
  if (a.index() != b.index()) return false;
  if (auto *d = std::get_if<double>(&a)) return sameFloat(*d, std::get<double>(b));
  return a == b;
}

// The hash leaves layouts out (equal types may hold equal layouts in two
// objects); equality compares them structurally.
size_t hashType(const Type &t) {
  size_t h = mix(static_cast<size_t>(t.elem.scalar), t.elem.ptrDepth);
  for (int64_t d : t.shape) h = mix(h, static_cast<size_t>(d));
  return h;
}

struct OpHash {
  size_t operator()(const Op *op) const {
    size_t h = static_cast<size_t>(op->kind());
    for (const Value *v : op->operands()) h = mix(h, std::hash<const Value *>()(v));
    for (const auto &[k, a] : op->attrs()) h = mix(mix(h, std::hash<std::string>()(k)), hashAttr(a));
    return mix(h, hashType(op->result()->type()));
  }
};

struct OpEqual {
  bool operator()(const Op *a, const Op *b) const {
    if (a->kind() != b->kind() || a->operands() != b->operands() || a->attrs().size() != b->attrs().size())
      return false;
    for (auto i = a->attrs().begin(), j = b->attrs().begin(); i != a->attrs().end(); ++i, ++j)
      if (i->first != j->first || !sameAttr(i->second, j->second)) return false;
    return a->result()->type() == b->result()->type();
  }
};

class Cse {
 public:
  explicit Cse(size_t ops) { available_.reserve(ops); }

  // `nested`: the block is a region's, whose entries leave the table when it
  // ends; the function body's stay until the table goes.
  bool run(Block &block, bool nested = false) {
    std::vector<const Op *> added;  // this region's entries, removed when it ends
    for (auto it = block.ops().begin(); it != block.ops().end();) {
      Op &op = **it;
      for (auto &region : op.regions()) changed_ |= run(*region, true);
      if (!op.hasTrait(OpTrait::Pure) || !op.regions().empty() || op.numResults() != 1) {
        ++it;
        continue;
      }
      // try_emplace allocates a node only for an op not seen yet.
      auto [found, inserted] = available_.try_emplace(&op, op.result());
      if (inserted) {
        if (nested) added.push_back(&op);
        ++it;
        continue;
      }
      Value *earlier = found->second;
      if (earlier->nameHint().empty()) earlier->setNameHint(op.result()->nameHint());
      op.result()->replaceAllUsesWith(earlier);
      it = block.erase(it);
      changed_ = true;
    }
    for (const Op *op : added) available_.erase(op);
    return changed_;
  }

 private:
  std::unordered_map<const Op *, Value *, OpHash, OpEqual> available_;
  bool changed_ = false;
};

}  // namespace

bool eliminateCommonSubexpressions(Function &fn) { return Cse(fn.body.ops().size()).run(fn.body); }

}  // namespace tk::ir
