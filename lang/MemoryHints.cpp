// Cache hints of `load` and `store`, spelt as Triton spells them:
//   load(p, cache_modifier: ".cg", eviction_policy: "evict_last")
//   store(p, v, cache_modifier: ".cs")
//   load(p, volatile: true)
// Each is a compile-time value (a literal or a const parameter); the ops
// carry them as attributes (ir/MemoryHints.h lists what PTX takes).
#include "ir/MemoryHints.h"
#include "lang/IRGen.h"

namespace tk::lang {

namespace {
std::string choices(const std::vector<std::string> &names, const std::string &prefix) {
  std::string s;
  for (const std::string &n : names) s += (s.empty() ? "\"" : ", \"") + prefix + n + "\"";
  return s;
}
}  // namespace

std::optional<std::map<std::string, ir::Attr>> IRGen::memoryHints(const std::string &call,
                                                                   std::map<std::string, const ast::Expr *> &named) {
  const bool load = call == "load";
  std::map<std::string, ir::Attr> attrs;
  bool ok = true;
  // A string hint: "" is no hint; else `prefix` + one of `names`.
  auto text = [&](const char *arg, const char *attr, const std::string &prefix, const std::vector<std::string> &names) {
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
    for (const std::string &n : names)
      if (v.str == prefix + n) {
        attrs[attr] = n;
        return;
      }
    error(e.loc, "unknown " + std::string(arg) + " " + quoted(v.str) + " for " + quoted(call) + ": " + want);
    ok = false;
  };
  text("cache_modifier", "cache", ".", load ? ir::loadCacheOperators() : ir::storeCacheOperators());
  text("eviction_policy", "evict", "evict_", ir::evictionPolicies());
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

}  // namespace tk::lang
