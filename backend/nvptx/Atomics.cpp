// NvptxTarget's atomics: `atom.{sem}.{scope}.global.{op}.{type}` as inline
// asm. LLVM 19's NVPTX backend drops both the ordering and the syncscope of
// atomicrmw and cmpxchg (even seq_cst becomes a bare `atom.global.add.u32`,
// with no fence: checked with llc for sm_80 and sm_90), so a spin lock
// written with acquire/release would compile to relaxed atomics.
// tests/lit/tkc/atomics-ptx.tk checks the PTX; runtime_atomics_ptxas_test
// assembles every combination.
#include "backend/nvptx/NvptxTarget.h"
#include "tk/error.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>

namespace tk::nvptx {

using namespace llvm;
using lower::AtomicRmwOp;

namespace {

// The operand's PTX register constraint and the type suffix of `op` on it.
struct AtomType {
  const char *constraint;
  std::string suffix;
};

AtomType atomType(AtomicRmwOp op, Type *t) {
  const bool wide = t->getPrimitiveSizeInBits() == 64;
  const std::string bits = wide ? "64" : "32";
  if (t->isFloatingPointTy()) {
    if (op != AtomicRmwOp::Add) throw tk::InternalError("NvptxTarget::atomicRmw: only add takes a float");
    return {wide ? "d" : "f", ".add.f" + bits};
  }
  if (!t->isIntegerTy(32) && !t->isIntegerTy(64))
    throw tk::InternalError("NvptxTarget: atomics take i32, i64, f32 or f64");
  const char *c = wide ? "l" : "r";
  switch (op) {
    case AtomicRmwOp::Add: return {c, ".add.u" + bits};
    case AtomicRmwOp::Max: return {c, ".max.s" + bits};
    case AtomicRmwOp::Min: return {c, ".min.s" + bits};
    case AtomicRmwOp::UMax: return {c, ".max.u" + bits};
    case AtomicRmwOp::UMin: return {c, ".min.u" + bits};
    case AtomicRmwOp::Exch: return {c, ".exch.b" + bits};
    case AtomicRmwOp::And: return {c, ".and.b" + bits};
    case AtomicRmwOp::Or: return {c, ".or.b" + bits};
    case AtomicRmwOp::Xor: return {c, ".xor.b" + bits};
  }
  throw tk::InternalError("NvptxTarget::atomicRmw: unknown op");
}

// `atom.acq_rel.gpu.global`: the names are PTX's qualifiers (ir/Enums.def).
std::string atomPrefix(ir::AtomicSem sem, ir::AtomicScope scope) {
  return std::string("atom.") + ir::enumName(sem) + "." + ir::enumName(scope) + ".global";
}

// A side effect with a memory clobber: never dropped when its result is
// unused, never moved across another memory access.
Value *callAtom(IRBuilderBase &b, const std::string &text, const std::string &constraints, Type *ret,
                std::vector<Value *> args, const lower::Target::TagAccess &tag) {
  std::vector<Type *> params;
  for (Value *a : args) params.push_back(a->getType());
  auto *asmFn = InlineAsm::get(FunctionType::get(ret, params, false), text, constraints + ",~{memory}",
                               /*hasSideEffects=*/true);
  CallInst *call = b.CreateCall(asmFn, args);
  call->setDoesNotThrow();
  tag(*call);
  return call;
}

}  // namespace

Value *NvptxTarget::atomicRmw(IRBuilderBase &b, AtomicRmwOp op, Value *ptr, Value *value, ir::AtomicSem sem,
                              ir::AtomicScope scope, const TagAccess &tag) const {
  const AtomType t = atomType(op, value->getType());
  const std::string c = t.constraint;
  return callAtom(b, atomPrefix(sem, scope) + t.suffix + " $0, [$1], $2;", "=" + c + ",l," + c, value->getType(),
                  {ptr, value}, tag);
}

Value *NvptxTarget::atomicCas(IRBuilderBase &b, Value *ptr, Value *expected, Value *desired, ir::AtomicSem sem,
                              ir::AtomicScope scope, const TagAccess &tag) const {
  Type *t = expected->getType();
  if (!t->isIntegerTy(32) && !t->isIntegerTy(64))
    throw tk::InternalError("NvptxTarget::atomicCas: compare-and-swap takes i32 or i64");
  const bool wide = t->isIntegerTy(64);
  const std::string c = wide ? "l" : "r";
  return callAtom(b, atomPrefix(sem, scope) + (wide ? ".cas.b64" : ".cas.b32") + " $0, [$1], $2, $3;",
                  "=" + c + ",l," + c + "," + c, t, {ptr, expected, desired}, tag);
}

}  // namespace tk::nvptx
