// Reading and checking the cache-hint attributes of loads and stores.
#include "ir/MemoryHints.h"

#include <variant>

#include "ir/IR.h"

namespace tk::ir {

namespace {
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
  const MemoryHints h = memoryHintsOf(op);
  if (h.isVolatile && (!h.cache.empty() || !h.evict.empty()))
    return "a volatile access takes no cache operator or eviction policy";
  return "";
}

}  // namespace tk::ir
