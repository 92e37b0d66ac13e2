// What tk's atomics take: the element types of each read-modify-write kind,
// the default semantics and scope, and an op's as enums. The kinds, semantics
// and scopes themselves are declared in ir/Enums.def (AtomicKind, AtomicSem,
// AtomicScope); their spellings are also PTX's (`atom.acq_rel.gpu.global.max`).
#pragma once

#include <optional>

#include "ir/IR.h"

namespace tk::ir {

// Whether atomic `kind` also works on f32 and f64 (every kind takes i32 and i64).
inline bool atomicTakesFloats(AtomicKind k) {
  return k == AtomicKind::Add || k == AtomicKind::Max || k == AtomicKind::Min || k == AtomicKind::Xchg;
}

// Whether atomic `kind` (nullopt: compare-and-swap) works on memory of `s`.
inline bool atomicTakes(std::optional<AtomicKind> kind, ScalarKind s) {
  const bool wideInt = s == ScalarKind::I32 || s == ScalarKind::I64;
  const bool wideFloat = s == ScalarKind::F32 || s == ScalarKind::F64;
  return wideInt || (kind && atomicTakesFloats(*kind) && wideFloat);
}

// "i32 and i64" or "i32, i64, f32 and f64": what an error says `kind` takes.
inline const char *atomicTypesText(std::optional<AtomicKind> kind) {
  return kind && atomicTakesFloats(*kind) ? "i32, i64, f32 and f64" : "i32 and i64";
}

// Triton's defaults, which a ported spin lock relies on.
inline constexpr AtomicSem kDefaultAtomicSem = AtomicSem::AcqRel;
inline constexpr AtomicScope kDefaultAtomicScope = AtomicScope::Gpu;

// Whether the semantics order the thread's earlier (release) or later
// (acquire) accesses.
inline bool atomicReleases(AtomicSem s) { return s == AtomicSem::Release || s == AtomicSem::AcqRel; }
inline bool atomicAcquires(AtomicSem s) { return s == AtomicSem::Acquire || s == AtomicSem::AcqRel; }

// An op's `sem` and `scope` attributes; an op without them (IR written before
// they existed) has the defaults.
inline AtomicSem atomicSemOf(const Op &op) { return op.optionalEnumAttr<AtomicSem>("sem").value_or(kDefaultAtomicSem); }
inline AtomicScope atomicScopeOf(const Op &op) {
  return op.optionalEnumAttr<AtomicScope>("scope").value_or(kDefaultAtomicScope);
}

}  // namespace tk::ir
