// The seam between lowering and a machine. Lowering turns tile IR into
// per-thread LLVM IR and never names a GPU intrinsic itself: it asks a Target
// for thread and block ids, barriers, shuffles, shared memory and math.
// NvptxTarget (backend/nvptx) answers with llvm.nvvm.* and libdevice;
// SimTarget (backend/sim) with calls into the CPU runtime and libm.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/Atomics.h"
#include "ir/IR.h"
#include "ir/MemoryHints.h"

namespace llvm {
class Function;
class FunctionType;
class Instruction;
class Module;
class Type;
class Value;
class IRBuilderBase;
}  // namespace llvm

namespace tk::lower {

// The math functions a Target provides on f32 and f64 scalars (f16/bf16 are
// computed in f32 by the lowering): the tile IR's math ops, declared once as
// TK_MATH_OP (and TK_MATH_INSN_OP) in ir/Ops.def, with the same enum names.
// A TK_MATH_OP's name is libm's and libdevice's base name (their f32 forms
// add "f": `erff`, `__nv_erff`).
enum class MathFn {
#define TK_MATH_OP(E, NAME, ARITY, DOC) E,
#include "ir/Ops.def"
};

// "exp", "rsqrt", ...: also libdevice's base names (its f32 forms add "f").
// Inline so backends need only this header, not tk_lower.
inline const char *mathFnName(MathFn f) {
  switch (f) {
#define TK_MATH_OP(E, NAME, ARITY, DOC) \
  case MathFn::E:                       \
    return NAME;
#include "ir/Ops.def"
  }
  return "?";
}

// 1 for f(x), 2 for f(x, y) (pow, atan2).
inline int mathFnArity(MathFn f) {
  switch (f) {
#define TK_MATH_OP(E, NAME, ARITY, DOC) \
  case MathFn::E:                       \
    return ARITY;
#include "ir/Ops.def"
  }
  return 1;
}

// Whether libm and libdevice have `f` by its name (TK_MATH_OP); false for
// the functions a Target gives by an instruction (TK_MATH_INSN_OP: div_rn,
// sqrt_rn, fdiv), whose libdevice names (`__nv_fdiv_rn`, ...) follow no rule.
inline bool mathFnIsLibraryCall(MathFn f) {
  switch (f) {
#define TK_MATH_OP(E, NAME, ARITY, DOC) \
  case MathFn::E:                       \
    return true;
#define TK_MATH_INSN_OP(E, NAME, ARITY, DOC) \
  case MathFn::E:                            \
    return false;
#include "ir/Ops.def"
  }
  return true;
}

// The read-modify-write operations of Target::atomicRmw, PTX's `atom.OP`:
// Max and Min compare as signed integers, UMax and UMin as unsigned (the
// lowering builds f32/f64 max and min from them, lower/LowerAtomics.cpp).
enum class AtomicRmwOp { Add, Max, Min, UMax, UMin, Exch, And, Or, Xor };

// The archs with warpgroup tensor cores (wgmma): sm_90a. NvptxTarget and
// the sim's Target answer hasWgmma() by it; the compiler lays a kernel out
// for wgmma when one of its archs is one (the kernel attribute `wgmma`,
// which assign-layouts reads).
inline bool archHasWgmma(const std::string &arch) { return arch == "sm_90a"; }
// The archs with the tensor memory accelerator tk uses (cp.async.bulk.tensor
// with mbarriers): sm_90a, as for wgmma.
inline bool archHasTma(const std::string &arch) { return arch == "sm_90a"; }
// The archs where tk multiplies fp8 tiles with mma.sync's fp8 form
// (usesFp8Mma). sm_89, sm_90 and sm_90a all have the instruction (PTX ISA
// 8.4); on sm_89 it took stdlib matmul_fp8 from 114 to 72 registers (with a
// launch's facts), but on sm_90 ptxas took more (80 -> 94, and 4 bytes of
// spill without facts) while B is staged transposed byte by byte, so sm_90
// keeps the f16 mma for now; sm_90a runs fp8 dots on wgmma's fp8 form
// (lower/Wgmma.h).
inline bool archUsesFp8Mma(const std::string &arch) { return arch == "sm_89"; }

// The element types wgmma.mma_async multiplies (PTX ISA, "wgmma.mma_async"):
// f16 or bf16 with itself, transposed either way; the 8-bit floats in any
// pair, K-major only (the ISA transposes 16-bit types alone). k per
// instruction: 32 bytes of each row, 16 or 32 elements.
inline bool wgmmaInputsValid(ir::ScalarKind a, ir::ScalarKind b, bool transA, bool transB) {
  if (a == ir::ScalarKind::F16 || a == ir::ScalarKind::BF16) return a == b;
  return ir::isFp8(a) && ir::isFp8(b) && !transA && !transB;
}
inline int wgmmaK(ir::ScalarKind a) { return ir::isFp8(a) ? 32 : 16; }
// PTX's name of an mma.sync or wgmma element type: f16, bf16, e4m3, e5m2.
inline const char *ptxTypeName(ir::ScalarKind k) {
  return k == ir::ScalarKind::BF16 ? "bf16" : k == ir::ScalarKind::F8E4M3 ? "e4m3" : k == ir::ScalarKind::F8E5M2 ? "e5m2" : "f16";
}

class Target {
 public:
  virtual ~Target() = default;

  virtual std::string name() const = 0;  // "nvptx", "sim"
  // Module setup: triple and data layout.
  virtual void configureModule(llvm::Module &m) const = 0;
  // Address space of global-memory pointers (1 on NVPTX, 0 on the sim).
  virtual unsigned globalAddressSpace() const = 0;
  // Address space of shared memory (3 on NVPTX, 0 on the sim).
  virtual unsigned sharedAddressSpace() const = 0;

  // Marks `f` as a kernel entry run by `numThreads` threads per block.
  virtual void markKernel(llvm::Function &f, int numThreads) const = 0;

  // Thread index within the block (x only: tk blocks are 1-D), i32.
  virtual llvm::Value *threadId(llvm::IRBuilderBase &b) const = 0;
  // Block index and grid size along `axis` (0, 1, 2), i32.
  virtual llvm::Value *blockId(llvm::IRBuilderBase &b, int axis) const = 0;
  virtual llvm::Value *gridDim(llvm::IRBuilderBase &b, int axis) const = 0;

  // Block-wide barrier (__syncthreads).
  virtual void barrier(llvm::IRBuilderBase &b) const = 0;
  // Butterfly shuffle across the full warp: the value of lane (lane ^ laneMask).
  // `v` is i32 or f32.
  virtual llvm::Value *shuffleXor(llvm::IRBuilderBase &b, llvm::Value *v, int laneMask) const = 0;
  // Base pointer of the block's dynamic shared memory (in sharedAddressSpace()).
  virtual llvm::Value *sharedBase(llvm::IRBuilderBase &b) const = 0;

  // Masked global-memory accesses: this thread touches memory only where
  // `pred` (i1, not a constant) holds, so a masked-off lane's address may be
  // anything, out of bounds included; a null `pred` is an access every
  // thread makes (the lowering asks for one only with `hints`, which a plain
  // LLVM load or store cannot carry). The accessed type is an integer or
  // floating-point scalar, or a fixed vector of them, of 1, 2, 4, 8 or 16
  // bytes in all; `ptr` is in globalAddressSpace() and aligned to `align`
  // bytes, which for a vector is its whole size. `tag` is called on each
  // instruction that touches memory, so the lowering can mark it with its
  // source location. A GPU predicates the access (one instruction, no branch);
  // the sim branches around a plain access its instrumentation counts.
  // `hints` are the access's cache operator, eviction policy and volatility
  // (ir/MemoryHints.h), checked by the verifier: performance hints a Target
  // may ignore, except that a volatile access is made where and as often as
  // the program says.
  using TagAccess = std::function<void(llvm::Instruction &)>;
  // `*ptr` (of type `ty`) where `pred` holds, else `other` (also of `ty`).
  virtual llvm::Value *maskedLoad(llvm::IRBuilderBase &b, llvm::Type *ty, llvm::Value *ptr, llvm::Value *pred,
                                  llvm::Value *other, unsigned align, const ir::MemoryHints &hints,
                                  const TagAccess &tag) const = 0;
  // `*ptr = value` where `pred` holds.
  virtual void maskedStore(llvm::IRBuilderBase &b, llvm::Value *value, llvm::Value *ptr, llvm::Value *pred,
                           unsigned align, const ir::MemoryHints &hints, const TagAccess &tag) const = 0;

  // Atomics on global memory (PTX ISA "Parallel Synchronization and
  // Communication Instructions: atom"): this thread's one atomic access of
  // `*ptr` (in globalAddressSpace(), naturally aligned), returning the old
  // value, with the memory semantics `sem` at scope `scope`. The value is
  // i32 or i64, or for Add also f32 or f64. The access is always made: the
  // lowering branches around it for a mask. `tag` marks the instruction that
  // touches memory, as for maskedLoad.
  virtual llvm::Value *atomicRmw(llvm::IRBuilderBase &b, AtomicRmwOp op, llvm::Value *ptr, llvm::Value *value,
                                 ir::AtomicSem sem, ir::AtomicScope scope, const TagAccess &tag) const = 0;
  // Compare-and-swap of i32 or i64 `*ptr`: `desired` is written where the
  // old value equals `expected`; returns the old value.
  virtual llvm::Value *atomicCas(llvm::IRBuilderBase &b, llvm::Value *ptr, llvm::Value *expected,
                                 llvm::Value *desired, ir::AtomicSem sem, ir::AtomicScope scope,
                                 const TagAccess &tag) const = 0;

  // Tensor cores (PTX ISA, "Warp-level matrix instructions"). Both are
  // warp-collective: every lane of the warp executes them together, in
  // convergent code.
  //
  // ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16, num 1, 2 or 4:
  // lane l supplies `rowAddress` (a 16-byte aligned pointer in
  // sharedAddressSpace()), the address of row l % 8 of matrix l / 8 (lanes
  // past 8 * num supply ignored addresses). Returns `num` i32 values: from
  // matrix i, the lane's two consecutive b16 elements, row lane / 4, columns
  // 2 * (lane % 4) and + 1 (with `trans`, of the transposed 8x8 matrix).
  virtual std::vector<llvm::Value *> ldmatrix(llvm::IRBuilderBase &b, llvm::Value *rowAddress, int num,
                                              bool trans) const = 0;
  // mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32:
  // D = A * B + C on a 16x16 A, 16x8 B and 16x8 C/D in the PTX ISA's fragment
  // layouts, per lane 4 i32 of A (each two f16 or bf16), 2 i32 of B, 4 f32 of
  // C. Returns the lane's 4 f32 of D.
  virtual std::vector<llvm::Value *> mmaM16N8K16(llvm::IRBuilderBase &b, bool bf16, const std::vector<llvm::Value *> &a,
                                                 const std::vector<llvm::Value *> &bFrag,
                                                 const std::vector<llvm::Value *> &c) const = 0;
  // mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: D = A * B + C on a
  // 16x8 A, 8x8 B and 16x8 C/D; per lane 4 i32 of A and 2 of B, each one
  // tf32 (f32 bits rounded by roundToTf32), 4 f32 of C. Returns 4 f32 of D.
  virtual std::vector<llvm::Value *> mmaM16N8K8Tf32(llvm::IRBuilderBase &b, const std::vector<llvm::Value *> &a,
                                                    const std::vector<llvm::Value *> &bFrag,
                                                    const std::vector<llvm::Value *> &c) const = 0;
  // mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32: D = A * B + C on a
  // 16x32 A, 32x8 B and 16x8 C/D; per lane 4 i32 of A and 2 of B (each four
  // s8, the first in the low byte), 4 i32 of C. Returns 4 i32 of D (sums
  // wrap modulo 2^32).
  virtual std::vector<llvm::Value *> mmaM16N8K32S8(llvm::IRBuilderBase &b, const std::vector<llvm::Value *> &a,
                                                   const std::vector<llvm::Value *> &bFrag,
                                                   const std::vector<llvm::Value *> &c) const = 0;
  // mma.sync.aligned.m16n8k32.row.col.f32.{atype}.{btype}.f32 (each
  // f8e4m3 or f8e5m2): D = A * B + C on a 16x32 A, 32x8 B and 16x8 C/D; per
  // lane 4 i32 of A and 2 of B in mmaM16N8K32S8's fragments (four fp8 codes
  // each, the first in the low byte), 4 f32 of C. Products exact, sums in
  // f32. Only where usesFp8Mma() holds.
  virtual std::vector<llvm::Value *> mmaM16N8K32Fp8(llvm::IRBuilderBase &b, ir::ScalarKind atype,
                                                    ir::ScalarKind btype,
                                                    const std::vector<llvm::Value *> &a,
                                                    const std::vector<llvm::Value *> &bFrag,
                                                    const std::vector<llvm::Value *> &c) const;
  // cvt.rna.tf32.f32: the f32 `x` rounded to tf32 (10 mantissa bits, to
  // nearest, ties away from zero), returned as the i32 register that holds
  // it (f32 bits whose low 13 are zero): an A or B register of
  // mmaM16N8K8Tf32.
  virtual llvm::Value *roundToTf32(llvm::IRBuilderBase &b, llvm::Value *x) const = 0;
  // cvt.rn.{f16x2,bf16x2}.f32: f32 `lo` and `hi` rounded to nearest even
  // into one i32 register, `lo` in the low half: an A register of
  // mmaM16N8K16 or wgmmaMmaAsyncRegA made from f32 in one instruction.
  virtual llvm::Value *packHalves(llvm::IRBuilderBase &b, llvm::Value *lo, llvm::Value *hi, bool bf16) const = 0;
  // f32 `f` to the i8 code of `k` (f8e4m3 or f8e5m2): nearest even,
  // saturating to the largest finite value, NaN to 0x7f (cvt.rn.satfinite);
  // and a code back to its f32 value, exactly. By default lower/Fp8.h's
  // integer form, which every target runs and the sim checks bit for bit
  // against tk/fp8.h; NvptxTarget uses sm_89's cvt instructions.
  virtual llvm::Value *floatToFp8(llvm::IRBuilderBase &b, llvm::Value *f, ir::ScalarKind k) const;
  virtual llvm::Value *fp8ToFloat(llvm::IRBuilderBase &b, llvm::Value *code, ir::ScalarKind k) const;

  // Warpgroup-level tensor cores (PTX ISA, "Asynchronous Warpgroup Level
  // Matrix Multiply-Accumulate", sm_90a): a warpgroup is 4 consecutive warps
  // (warps 4g .. 4g + 3), and wgmma reads A and B from shared memory through
  // 64-bit matrix descriptors (lower/Wgmma.h encodes them). The lowering asks
  // for the instructions only where hasWgmma() holds.
  //
  // Whether the machine lowered for runs wgmma (sm_90a; the sim when it
  // emulates sm_90a): the lowering picks wgmma or mma.sync by it.
  virtual bool hasWgmma() const { return false; }
  // Whether fp8 dots multiply their codes with mmaM16N8K32Fp8 rather than
  // their f16 values (archUsesFp8Mma; lower/LowerDotMma.cpp).
  virtual bool usesFp8Mma() const { return false; }
  // The shared-state-space address (i32) of `ptr`, a pointer in
  // sharedAddressSpace(): what a descriptor's start address holds.
  virtual llvm::Value *sharedWindowAddress(llvm::IRBuilderBase &b, llvm::Value *ptr) const = 0;
  // fence.proxy.async.shared::cta: orders this thread's earlier generic-proxy
  // writes to shared memory before later async-proxy reads (wgmma's), once a
  // barrier has ordered the threads.
  virtual void fenceProxyAsync(llvm::IRBuilderBase &b) const = 0;
  // wgmma.fence.sync.aligned: before the first wgmma.mma_async, and whenever
  // the accumulator registers were written by other instructions.
  virtual void wgmmaFence(llvm::IRBuilderBase &b) const = 0;
  // wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{atype}.{btype}: D = A B + D
  // on a 64xk A and a kxn B (n a multiple of 8 up to 256), both read through
  // descriptors (i64). The element types (wgmmaInputsValid): f16 or bf16,
  // the same for both, k = 16, where `transA` / `transB` pick M-major A /
  // N-major B (else K-major); or f8e4m3 / f8e5m2 in any pair, k = 32, both
  // K-major. `acc` is the thread's n / 2 f32 accumulators in the ISA's D
  // fragment layout; returns them as the instruction leaves them, which may
  // be read only after a wgmmaWaitGroup that covers it (they are still valid
  // inputs of the next wgmma.mma_async).
  virtual std::vector<llvm::Value *> wgmmaMmaAsync(llvm::IRBuilderBase &b, int n, ir::ScalarKind atype,
                                                   ir::ScalarKind btype, bool transA, bool transB,
                                                   llvm::Value *descA, llvm::Value *descB,
                                                   const std::vector<llvm::Value *> &acc) const = 0;
  // The same with A from registers: `a` is the thread's 4 i32 registers of
  // A's register fragment, two f16/bf16 each (the lower-indexed element in
  // the low half). Warp w of the warpgroup supplies rows 16w .. 16w + 15, in
  // mma.m16n8k16's A layout: registers 0-3 hold row g, g + 8, g, g + 8
  // (g = lane / 4), at columns 2t, 2t + 1 (t = lane % 4) plus 0, 0, 8, 8.
  virtual std::vector<llvm::Value *> wgmmaMmaAsyncRegA(llvm::IRBuilderBase &b, int n, bool bf16, bool transB,
                                                       const std::vector<llvm::Value *> &a, llvm::Value *descB,
                                                       const std::vector<llvm::Value *> &acc) const = 0;
  // wgmma.commit_group.sync.aligned: the wgmma.mma_async issued since the
  // last commit become one group.
  virtual void wgmmaCommitGroup(llvm::IRBuilderBase &b) const = 0;
  // wgmma.wait_group.sync.aligned `pending`: waits until at most `pending`
  // groups are in flight. `acc` passes through it (returned): the registers
  // its groups write, so no read of them is moved above the wait.
  virtual std::vector<llvm::Value *> wgmmaWaitGroup(llvm::IRBuilderBase &b, int pending,
                                                    const std::vector<llvm::Value *> &acc) const = 0;

  // Asynchronous copies from global to shared memory (PTX ISA "Data Movement
  // and Conversion Instructions: cp.async"), sm_80+: the operand ring of a
  // pipelined dot (lower/LowerPipeline.cpp). Each thread tracks its own
  // copies: cpAsync starts one, cpAsyncCommitGroup closes the thread's
  // copies not yet in a group into a new group (possibly empty), and
  // cpAsyncWaitGroup(n) waits until at most the `n` most recently committed
  // groups are still in flight. Only that wait completes a copy: before it
  // the destination bytes are undefined, and a barrier completes nothing.
  // Other threads see the bytes after a barrier that follows the wait.
  //
  // cp.async.{cg,ca}.shared.global [dst], [src], bytes, srcBytes: `bytes`
  // is 4, 8 or 16 (16 uses .cg, which caches in L2 only); `dst` (in
  // sharedAddressSpace()) and `src` (globalAddressSpace()) are aligned to
  // `bytes`. Only the first `srcBytes` (i32, 0..bytes) bytes are read; the
  // rest of the destination is zero-filled, so with srcBytes 0 nothing is
  // read and `src` may be any address. `tag` marks the instruction with its
  // source location (the sim names its global and shared sides by it).
  virtual void cpAsync(llvm::IRBuilderBase &b, llvm::Value *dst, llvm::Value *src, int bytes, llvm::Value *srcBytes,
                       const TagAccess &tag) const = 0;
  virtual void cpAsyncCommitGroup(llvm::IRBuilderBase &b) const = 0;
  virtual void cpAsyncWaitGroup(llvm::IRBuilderBase &b, int n) const = 0;

  // The tensor memory accelerator and mbarriers (PTX ISA 8.0, sm_90a; the
  // sim when it emulates sm_90a). A pipelined loop whose operands come
  // through host descriptors fills its rings with them (LowerTma.cpp): one
  // thread expects a stage's bytes on the stage's mbarrier and issues its
  // box copies; every thread waits for the barrier's phase before reading.
  // Shared pointers are sharedBase's; the lowering asks only where hasTma().
  virtual bool hasTma() const { return false; }
  // Parameter `argNo` of kernel `fn` (declared `ptr`) is a tensor map
  // (CUtensorMap: 128 bytes, 64-byte aligned) passed by value: the target
  // makes it byval([128 x i8]) align 64 (NVPTX also a grid_constant, so the
  // kernel reads the parameter in place instead of a local copy).
  virtual void markTensorMapParam(llvm::Function &fn, unsigned argNo) const;
  // mbarrier.init.shared::cta.b64 [bar], arrivals; mbarrier.inval.
  virtual void mbarrierInit(llvm::IRBuilderBase &b, llvm::Value *bar, int arrivals) const;
  virtual void mbarrierInval(llvm::IRBuilderBase &b, llvm::Value *bar) const;
  // mbarrier.arrive.expect_tx.shared::cta.b64: one arrival, and `bytes` more
  // transaction bytes the current phase waits for.
  virtual void mbarrierArriveExpectTx(llvm::IRBuilderBase &b, llvm::Value *bar, int bytes) const;
  // Waits until the phase of parity `parity` (i32, 0 or 1) of `bar` has
  // completed (a loop on mbarrier.try_wait.parity).
  virtual void mbarrierWait(llvm::IRBuilderBase &b, llvm::Value *bar, llvm::Value *parity) const;
  // cp.async.bulk.tensor.{N}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes:
  // the box of tensor map `map` (the by-value parameter's address) at
  // `coords` (i32, the innermost dim first, as PTX orders them) into shared
  // `dst`, out-of-bounds elements zero; the box's bytes complete on `bar`.
  virtual void tmaLoad(llvm::IRBuilderBase &b, llvm::Value *dst, llvm::Value *map,
                       const std::vector<llvm::Value *> &coords, llvm::Value *bar) const;
  // cp.async.bulk.tensor.{N}d.global.shared::cta.tile.bulk_group: the box
  // of tensor map `map` at `coords` (i32, innermost first) written from
  // shared `src` (the box's bytes, row-major in the map's swizzle); elements
  // outside the tensor are not written. The executing thread's generic
  // writes to `src`, and every other thread's, must be fenced for the async
  // proxy (fenceProxyAsync, then a barrier) before it issues the store.
  virtual void tmaStore(llvm::IRBuilderBase &b, llvm::Value *src, llvm::Value *map,
                        const std::vector<llvm::Value *> &coords) const;
  // cp.async.bulk.commit_group: the thread's bulk stores issued since the
  // last commit become one group.
  virtual void bulkCommitGroup(llvm::IRBuilderBase &b) const;
  // cp.async.bulk.wait_group.read `pending`: waits until all but the newest
  // `pending` of the thread's groups have finished reading shared memory
  // (their sources may then be rewritten; the global writes may still be in
  // flight, and are visible to the next kernel on the stream).
  virtual void bulkWaitGroupRead(llvm::IRBuilderBase &b, int pending) const;
  // Its count, checked by every target alike: an immediate, 0..63 (far more
  // groups than a ring keeps in flight); throws tk::InternalError naming `who`.
  static void checkBulkWaitGroup(const char *who, int pending);

  // Warp specialisation (sm_90a, lower/LowerWarpSpecialize.cpp): a producer
  // warpgroup after the consumer warps fills the rings while the consumers
  // compute, the two sides ordered by mbarriers alone.
  // One arrival on the current phase of `bar` (mbarrier.arrive.shared::cta.b64).
  virtual void mbarrierArrive(llvm::IRBuilderBase &b, llvm::Value *bar) const;
  // `bar.sync id, threads`: waits until `threads` threads (a multiple of 32)
  // have arrived at barrier `id` (1..15); the consumers' block barrier, which
  // the producer warps never reach.
  virtual void namedBarrier(llvm::IRBuilderBase &b, int id, int threads) const;
  // setmaxnreg.{inc,dec}.sync.aligned.u32 `regs` (24..256, a multiple of 8):
  // the executing warpgroup's registers per thread from here on. ptxas 13.0
  // honours it only in a kernel whose entry count it knows: call
  // markMaxNReg too, or it drops every setmaxnreg (info C7508).
  virtual void setMaxNReg(llvm::IRBuilderBase &b, bool increase, int regs) const;
  // The registers per thread kernel `f` launches with (.maxnreg, 24..255),
  // the pool setMaxNReg redistributes between warpgroups.
  virtual void markMaxNReg(llvm::Function &f, int regs) const;
  // The PTX rules of the three above, checked by every target alike (the
  // sim refuses what ptxas would); each throws tk::InternalError naming `who`.
  static void checkNamedBarrier(const char *who, int id, int threads);
  static void checkSetMaxNReg(const char *who, int regs);
  static void checkMarkMaxNReg(const char *who, int regs);

  // f(x), or f(x, y) for a binary `f` (mathFnArity), for scalars `x` and `y`
  // of one type, f32 or f64.
  virtual llvm::Value *math(llvm::IRBuilderBase &b, MathFn f, llvm::Value *x, llvm::Value *y = nullptr) const = 0;

  // Device printf of one line by this thread (lower/LowerDebug.cpp): `format`
  // uses %d (i32), %lld (i64), %f (double) and 0x%llx (i64), and `args` are
  // promoted already (small ints to i32, floats to double), as C varargs and
  // CUDA's vprintf want them. `element` (i32) is the printed element's
  // row-major index in its tile (0 for a scalar): the sim orders lines by it,
  // a GPU prints in whatever order its threads run.
  virtual void print(llvm::IRBuilderBase &b, const std::string &format, const std::vector<llvm::Value *> &args,
                     llvm::Value *element) const = 0;
  // Called by every thread before the lines of one printed value: the sim
  // orders a block's lines by these groups, then by element. A GPU prints as
  // it goes, so by default nothing happens.
  virtual void beginPrintGroup(llvm::IRBuilderBase & /*b*/) const {}
  // A failed device assertion in this thread: `message`, where it was written
  // and the kernel's name. A GPU traps; the sim fails the launch.
  virtual void assertFail(llvm::IRBuilderBase &b, const std::string &message, const std::string &file, int line,
                          int col, const std::string &function) const = 0;
  // Whether integer arithmetic of elementwise ops carries its .tk location
  // (`!tk.loc`, as memory accesses do): the sim's overflow check names the
  // line of an index computation that wraps. A GPU has no use for it, so the
  // NVPTX module stays as it was.
  virtual bool locatesIntegerArithmetic() const { return false; }
};

}  // namespace tk::lower
