// The vocabulary of tk's atomics, declared once: the read-modify-write kinds
// and the element types each takes, the memory semantics and the scopes. The
// front end checks a call against it, the verifier an op, the lowering reads
// the names back; the names are also PTX's (`atom.acq_rel.gpu.global.max`).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ir/IR.h"

namespace tk::ir {

// atomic_rmw's `kind`: the tk builtin is `atomic_<kind>`.
enum class AtomicKind { Add, Max, Min, Xchg, And, Or, Xor };

struct AtomicKindInfo {
  AtomicKind kind;
  const char *name;
  bool floats;  // also on f32 and f64 (every kind takes i32 and i64)
};

inline constexpr AtomicKindInfo kAtomicKinds[] = {
    {AtomicKind::Add, "add", true},  {AtomicKind::Max, "max", true}, {AtomicKind::Min, "min", true},
    {AtomicKind::Xchg, "xchg", true}, {AtomicKind::And, "and", false}, {AtomicKind::Or, "or", false},
    {AtomicKind::Xor, "xor", false},
};

inline std::optional<AtomicKind> parseAtomicKind(std::string_view s) {
  for (const AtomicKindInfo &k : kAtomicKinds)
    if (s == k.name) return k.kind;
  return std::nullopt;
}

inline const AtomicKindInfo &atomicKindInfo(AtomicKind k) { return kAtomicKinds[static_cast<int>(k)]; }

// Whether atomic `kind` (nullopt: compare-and-swap) works on memory of `s`.
inline bool atomicTakes(std::optional<AtomicKind> kind, ScalarKind s) {
  const bool wideInt = s == ScalarKind::I32 || s == ScalarKind::I64;
  const bool wideFloat = s == ScalarKind::F32 || s == ScalarKind::F64;
  return wideInt || (kind && atomicKindInfo(*kind).floats && wideFloat);
}

// "i32 and i64" or "i32, i64, f32 and f64": what an error says `kind` takes.
inline const char *atomicTypesText(std::optional<AtomicKind> kind) {
  return kind && atomicKindInfo(*kind).floats ? "i32, i64, f32 and f64" : "i32 and i64";
}

// The memory semantics (PTX ISA "Memory Consistency Model"): how the atomic
// orders this thread's other accesses. seq_cst is not offered: PTX's atom has
// no .sc form (it would be fence.sc + atom), and Triton has none either.
enum class AtomicSem { Relaxed, Acquire, Release, AcqRel };
// The threads the atomic is atomic with respect to: the block, the GPU, or
// the whole system (host and peer GPUs, through mapped memory).
enum class AtomicScope { Cta, Gpu, Sys };

inline constexpr const char *kAtomicSemNames[] = {"relaxed", "acquire", "release", "acq_rel"};
inline constexpr const char *kAtomicScopeNames[] = {"cta", "gpu", "sys"};
// Triton's defaults, which a ported spin lock relies on.
inline constexpr AtomicSem kDefaultAtomicSem = AtomicSem::AcqRel;
inline constexpr AtomicScope kDefaultAtomicScope = AtomicScope::Gpu;

inline const char *atomicSemName(AtomicSem s) { return kAtomicSemNames[static_cast<int>(s)]; }
inline const char *atomicScopeName(AtomicScope s) { return kAtomicScopeNames[static_cast<int>(s)]; }

inline std::optional<AtomicSem> parseAtomicSem(std::string_view s) {
  for (int i = 0; i < 4; ++i)
    if (s == kAtomicSemNames[i]) return static_cast<AtomicSem>(i);
  return std::nullopt;
}
inline std::optional<AtomicScope> parseAtomicScope(std::string_view s) {
  for (int i = 0; i < 3; ++i)
    if (s == kAtomicScopeNames[i]) return static_cast<AtomicScope>(i);
  return std::nullopt;
}

// Whether the semantics order the thread's earlier (release) or later
// (acquire) accesses.
inline bool atomicReleases(AtomicSem s) { return s == AtomicSem::Release || s == AtomicSem::AcqRel; }
inline bool atomicAcquires(AtomicSem s) { return s == AtomicSem::Acquire || s == AtomicSem::AcqRel; }

// An op's `sem` and `scope` attributes; an op without them (IR written before
// they existed) has the defaults.
inline AtomicSem atomicSemOf(const Op &op) {
  auto s = op.hasAttr("sem") ? parseAtomicSem(op.strAttr("sem")) : std::nullopt;
  return s ? *s : kDefaultAtomicSem;
}
inline AtomicScope atomicScopeOf(const Op &op) {
  auto s = op.hasAttr("scope") ? parseAtomicScope(op.strAttr("scope")) : std::nullopt;
  return s ? *s : kDefaultAtomicScope;
}

}  // namespace tk::ir
