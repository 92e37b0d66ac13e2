// Cache hints on global loads and stores: Triton's `cache_modifier`,
// `eviction_policy` and `volatile`, which the front end turns into the
// load/store attributes `cache`, `evict` and `volatile` (their values are
// ir/Enums.def's LoadCache, StoreCache and Eviction), the verifier checks,
// and the lowering hands to the Target (lower/Target.h) as PTX's names.
#pragma once

#include <string>

namespace tk::ir {

class Op;

// The hints of a load or store op, empty where it has none.
struct MemoryHints {
  std::string cache;        // a LoadCache or StoreCache spelling (PTX's, without the dot), or ""
  std::string evict;        // an Eviction spelling, or ""
  bool isVolatile = false;  // read or written exactly where the program says, every time

  bool any() const { return !cache.empty() || !evict.empty() || isVolatile; }
};

MemoryHints memoryHintsOf(const Op &op);

// What is wrong with a load's or store's hints beyond their declared kinds
// ("" when nothing): `volatile` with another hint (PTX's ld.volatile and
// st.volatile take neither).
std::string checkMemoryHints(const Op &op);

}  // namespace tk::ir
