// What a program tells the compiler, in Triton's words. Alignment facts:
//   multiple_of(x, 16)   max_contiguous(x, BLOCK)   max_constancy(x, [1, 8])
// and cache hints of `load` and `store`:
//   load(p, cache_modifier: ".cg", eviction_policy: "evict_last")
//   store(p, v, cache_modifier: ".cs")
//   load(p, volatile: true)
// Each is a compile-time value (a literal or a const parameter); the ops
// carry them as attributes (ir/Ops.def's axis_hint; ir/Enums.def lists the
// cache operators and eviction policies PTX takes).
#include "ir/MemoryHints.h"
#include "lang/IRGen.h"

namespace tk::lang {

namespace {
std::string choices(std::span<const char *const> names, const std::string &prefix) {
  std::string s;
  for (const char *n : names) s += (s.empty() ? "\"" : ", \"") + prefix + n + "\"";
  return s;
}
}  // namespace

std::optional<std::map<std::string, ir::Attr>> IRGen::memoryHints(const std::string &call,
                                                                   std::map<std::string, const ast::Expr *> &named) {
  const bool load = call == "load";
  std::map<std::string, ir::Attr> attrs;
  bool ok = true;
  // A string hint: "" is no hint; else `prefix` + one of `names`.
  auto text = [&](const char *arg, const char *attr, const std::string &prefix, std::span<const char *const> names) {
    auto it = named.find(arg);
    if (it == named.end()) return;
    const ast::Expr &e = *it->second;
    named.erase(it);
    const std::string want = "one of " + choices(names, prefix) + " (or \"\" for none)";
    TV v = genExpr(e);
    if (!v.ok()) {
      ok = false;
      return;
    }
    if (v.k != TV::K::Str) {
      error(e.loc, quoted(arg) + " of " + quoted(call) + " must be a string: " + want);
      ok = false;
      return;
    }
    if (v.str.empty()) return;
    for (const char *n : names)
      if (v.str == prefix + n) {
        attrs[attr] = std::string(n);
        return;
      }
    error(e.loc, "unknown " + std::string(arg) + " " + quoted(v.str) + " for " + quoted(call) + ": " + want);
    ok = false;
  };
  text("cache_modifier", "cache", ".", load ? ir::enumNames<ir::LoadCache>() : ir::enumNames<ir::StoreCache>());
  text("eviction_policy", "evict", "evict_", ir::enumNames<ir::Eviction>());
  if (auto it = named.find("volatile"); it != named.end()) {
    const ast::Expr &e = *it->second;
    named.erase(it);
    TV v = genValue(e);
    if (!v.ok()) return std::nullopt;
    if (!v.cst || v.type.isTile() || !v.type.isBool()) {
      error(e.loc, "'volatile' of " + quoted(call) + " must be a compile-time bool (true or false)");
      return std::nullopt;
    }
    if (v.cst->i) {
      if (attrs.count("cache") || attrs.count("evict")) {
        error(e.loc, "a volatile " + call + " takes no cache_modifier or eviction_policy (PTX's " +
                         (load ? "ld" : "st") + ".volatile has neither)");
        return std::nullopt;
      }
      attrs["volatile"] = int64_t(1);
    }
  }
  if (!ok) return std::nullopt;
  return attrs;
}

// grammar (a call): multiple_of(x, n | [n, ...]) | max_contiguous(...) | max_constancy(...)
// Triton's tl.multiple_of, tl.max_contiguous, tl.max_constancy: `x` (an
// integer or pointer scalar or tile) unchanged, with facts AxisInfo takes as
// true (lower/AxisInfo.cpp): every element (of each contiguous run, its
// first) is a multiple of n (bytes for pointers); each aligned group of n
// elements along a dim steps by 1; or holds one value. One n for every dim,
// or one per dim.
TV IRGen::axisHintCall(const ast::Expr &e, const ast::Expr &xE, const ast::Expr &valuesE) {
  const std::string &name = e.text;
  TV x = genValue(xE);
  if (!x.ok()) return invalid();
  if (!(x.type.isPtr() || (x.type.isInt() && !x.type.isBool()))) {
    error(xE.loc, quoted(name) + " takes an integer or a pointer (a scalar or a tile), not " + typeName(x));
    return invalid();
  }
  const size_t rank = std::max<size_t>(1, x.type.shape.size());
  std::vector<const ast::Expr *> items;
  if (valuesE.kind == ast::ExprKind::List)
    for (const ast::ExprPtr &d : valuesE.args) items.push_back(d.get());
  else
    items.assign(rank, &valuesE);
  if (items.size() != rank) {
    error(valuesE.loc, quoted(name) + " of a value of rank " + std::to_string(rank) + " takes one value per dim, not " +
                           std::to_string(items.size()));
    return invalid();
  }
  std::vector<int64_t> values;
  for (const ast::Expr *item : items) {
    auto v = constInt(*item, genValue(*item), "the value of " + quoted(name));
    if (!v) return invalid();
    if (*v < 1 || *v > (int64_t(1) << 30) || (*v & (*v - 1))) {
      error(item->loc, "the value of " + quoted(name) + " must be a power of two from 1 to 2^30, not " +
                           std::to_string(*v));
      return invalid();
    }
    values.push_back(*v);
  }
  if (x.cst) return x;  // a constant's facts are known exactly
  ir::Value *v = coerce(x, x.type, e.loc);
  return value(emit(ir::OpKind::AxisHint, {v}, v->type(), e.loc, {{name, values}}));
}

}  // namespace tk::lang
