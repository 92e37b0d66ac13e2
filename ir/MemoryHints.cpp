// Reading and checking the cache-hint attributes of loads and stores.
#include "ir/MemoryHints.h"

#include <algorithm>
#include <variant>

#include "ir/IR.h"

namespace tk::ir {

namespace {
bool listed(const std::vector<std::string> &names, const std::string &s) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

// A string attribute's value, or "" where it is absent or not a string (the
// checker reports the latter).
std::string stringAttr(const Op &op, const char *key) {
  auto it = op.attrs().find(key);
  if (it == op.attrs().end()) return "";
  const auto *s = std::get_if<std::string>(&it->second);
  return s ? *s : "";
}
}  // namespace

MemoryHints memoryHintsOf(const Op &op) {
  MemoryHints h;
  h.cache = stringAttr(op, "cache");
  h.evict = stringAttr(op, "evict");
  auto v = op.attrs().find("volatile");
  h.isVolatile = v != op.attrs().end() && std::holds_alternative<int64_t>(v->second) && std::get<int64_t>(v->second);
  return h;
}

std::string checkMemoryHints(const Op &op) {
  const bool load = op.is(OpKind::Load);
  for (const char *key : {"cache", "evict"}) {
    auto it = op.attrs().find(key);
    if (it != op.attrs().end() && !std::holds_alternative<std::string>(it->second))
      return std::string("attribute '") + key + "' must be a string";
  }
  if (auto v = op.attrs().find("volatile"); v != op.attrs().end()) {
    const auto *i = std::get_if<int64_t>(&v->second);
    if (!i || (*i != 0 && *i != 1)) return "attribute 'volatile' must be 0 or 1";
  }
  const MemoryHints h = memoryHintsOf(op);
  if (!h.cache.empty() && !listed(load ? loadCacheOperators() : storeCacheOperators(), h.cache))
    return "'" + h.cache + "' is not a cache operator of a " + (load ? "load" : "store");
  if (!h.evict.empty() && !listed(evictionPolicies(), h.evict))
    return "'" + h.evict + "' is not an eviction policy (first, last)";
  if (h.isVolatile && (!h.cache.empty() || !h.evict.empty()))
    return "a volatile access takes no cache operator or eviction policy";
  return "";
}

}  // namespace tk::ir
