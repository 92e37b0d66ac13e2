// Cache hints on global loads and stores, declared once: Triton's
// `cache_modifier`, `eviction_policy` and `volatile`, which the front end
// turns into the load/store attributes `cache`, `evict` and `volatile`, the
// verifier checks, and the lowering hands to the Target (lower/Target.h).
#pragma once

#include <string>
#include <vector>

namespace tk::ir {

class Op;

// PTX's cache operators (PTX ISA "Cache Operators"), without the dot: what
// `cache_modifier: ".cg"` may name on a load, and on a store.
inline const std::vector<std::string> &loadCacheOperators() {
  static const std::vector<std::string> ops = {"ca", "cg", "cs", "lu", "cv"};
  return ops;
}
inline const std::vector<std::string> &storeCacheOperators() {
  static const std::vector<std::string> ops = {"wb", "cg", "cs", "wt"};
  return ops;
}

// `eviction_policy: "evict_first" | "evict_last"`: the attribute holds
// "first" or "last".
inline const std::vector<std::string> &evictionPolicies() {
  static const std::vector<std::string> ops = {"first", "last"};
  return ops;
}

// The hints of a load or store op, empty where it has none.
struct MemoryHints {
  std::string cache;        // an entry of load/storeCacheOperators(), or ""
  std::string evict;        // an entry of evictionPolicies(), or ""
  bool isVolatile = false;  // read or written exactly where the program says, every time

  bool any() const { return !cache.empty() || !evict.empty() || isVolatile; }
};

MemoryHints memoryHintsOf(const Op &op);

// What is wrong with a load's or store's hint attributes ("" when nothing):
// an unknown cache operator or policy, or `volatile` with another hint (PTX's
// ld.volatile and st.volatile take neither).
std::string checkMemoryHints(const Op &op);

}  // namespace tk::ir
