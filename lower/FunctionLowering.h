// Internal to lower/: the state of lowering one function, shared by the files
// that lower its op families (LowerToLLVM.cpp, LowerMemory.cpp).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <set>
#include <vector>

#include "ir/IR.h"
#include "lower/Layouts.h"
#include "lower/Target.h"
#include "lower/Wgmma.h"
#include "tk/compiler.h"

namespace tk::lower {

using Regs = std::vector<llvm::Value *>;

class FunctionLowering {
 public:
  FunctionLowering(ir::Function &fn, const Target &target, llvm::Module &module);
  llvm::Function *run();
  // The rings of pipelined dot operands, then the scratch the other ops
  // share (which reuses the rings' bytes where no ring is live).
  const std::vector<tk::TensorMapParam> &tensorMaps() const { return tensorMaps_; }
  int sharedBytes() const { return std::max(ringBytes_ + scratchWhileRings_, sharedBytes_); }

  // LowerToLLVM.cpp
  llvm::Type *elemType(const ir::ElemType &e);
  llvm::Type *scalarType(ir::ScalarKind k);
  const Regs &regs(const ir::Value *v) const;
  // Per-dim element indices (i32) of register `r` of a tile.
  std::vector<llvm::Value *> elementIndex(const ir::Type &t, const RegisterMap &rm, int r);
  // The row-major position of the element at `idx` in a tile of `shape`,
  // leaving out dim `skip` (a reduction's or scan's axis) when given.
  llvm::Value *linearIndex(const std::vector<int64_t> &shape, const std::vector<llvm::Value *> &idx, int skip = -1);
  // True for the one thread that owns each element of a replicated layout.
  llvm::Value *ownerPredicate(const ir::Type &t, const RegisterMap &rm);
  // `pred` and'ed, for each root dim but `exceptDim` where the block's
  // footprint exceeds the tile, with "this thread's first element is inside
  // it" (ownerPredicate over all dims; reduce and scan skip their axis).
  llvm::Value *ownsAlong(llvm::Value *pred, const RootView &root, int exceptDim);

  // LowerMemory.cpp
  Regs lowerLoad(ir::Op &op);
  Regs pointersOf(Regs ints, const ir::ElemType &elem);  // i64 addresses loaded from memory, as pointers
  void lowerStore(ir::Op &op);
  Regs lowerConvertLayout(ir::Op &op);

  // LowerAtomics.cpp
  Regs lowerAtomic(ir::Op &op);
  llvm::Value *atomicElement(const ir::Op &op, llvm::Value *ptr, llvm::Value *a, llvm::Value *b);

  // A combining step of a reduction or scan: the components (a value, its
  // index, a tuple's elements) of `left` and `right`, combined in that order.
  using Vals = std::vector<llvm::Value *>;
  using Combine = std::function<Vals(const Vals &left, const Vals &right)>;
  // LowerReduce.cpp: `src` (one Regs per component, all of tile type `st`)
  // reduced along `axis` to `rt`'s shape. `ordered`: combines only
  // neighbours, left before right (a combine that need not commute).
  Regs lowerReduce(ir::Op &op);
  std::vector<Regs> reduceAlong(const ir::Type &st, const std::vector<Regs> &src, int axis, const ir::Type &rt,
                                const Combine &combine, bool ordered);
  // LowerScan.cpp: the inclusive scan of `src` along `axis`, from the end
  // when `reverse` (the combine's left operand is what came before).
  std::vector<Regs> scanAlong(const ir::Type &st, const std::vector<Regs> &src, int axis, bool reverse,
                              const Combine &combine);
  // LowerSort.cpp: sort (a bitonic network) and gather; readShared passes
  // each component of a tile of type `t` through shared memory (row-major,
  // its owners writing) and gives, for r < numRead, the element whose
  // per-dim index is at(r).
  std::vector<Regs> lowerSort(ir::Op &op);
  Regs lowerGather(ir::Op &op);
  Regs lowerHistogram(ir::Op &op);  // LowerHistogram.cpp
  std::vector<Regs> readShared(const ir::Type &t, const std::vector<Regs> &vals, int numRead,
                               const std::function<std::vector<llvm::Value *>(int r)> &at, const ir::Location &loc);
  // LowerCombine.cpp: reduce_combine and scan_combine, their region inlined
  // at each step.
  std::vector<Regs> lowerCombineOp(ir::Op &op);
  Vals combineRegion(ir::Op &op, const Vals &left, const Vals &right);
  // Each component's partials through shared memory: writes `vals[i][s]`
  // to slot `slot[s]` where `writer`, then (after a barrier) returns every
  // component of the slots `read` (LowerReduce.cpp).
  std::vector<Vals> exchangeSlots(const std::vector<Vals> &vals, const std::vector<llvm::Value *> &slot,
                                  llvm::Value *writer, int64_t numSlots, const std::vector<llvm::Value *> &read,
                                  const ir::Location &loc);
  // LowerDebug.cpp
  void lowerPrint(ir::Op &op);
  void lowerAssert(ir::Op &op);
  Regs lowerScan(ir::Op &op);    // LowerScan.cpp
  Regs lowerDot(ir::Op &op);     // LowerDot.cpp
  Regs lowerDotMma(ir::Op &op);  // LowerDotMma.cpp: on tensor cores
  // LowerDotWgmma.cpp: on sm_90a's warpgroup tensor cores.
  Regs lowerDotWgmma(ir::Op &op);
  // Whether `op` is a dot lowerDot sends to lowerDotWgmma.
  bool dotOnWgmma(const ir::Op &op) const;
  // The tile such a dot's operand `k` (0: a, 1: b) stages or reads in
  // place: the operand, or for fp8 codes (wgmmaPlan's elemBytes 1) the
  // tile its cast to f16 widened.
  const ir::Value *wgmmaOperand(const ir::Op &op, size_t k) const;
  // The wgmma part of a dot whose A and B are staged at shared pointers
  // `baseA` and `baseB` in the layouts wgmmaOffsetA/B give: wgmma.fence, an
  // mma_async per m64 block and k16 step, commit, wait 0. Returns the
  // accumulators (registers of `resultType`). A pipelined loop can call it
  // on each stage's buffers.
  // `pending`: the wgmma groups left in flight by its wait_group (0 unless
  // planWgmmaInFlight chose 1 for the dot).
  // With `a` non-null, A comes from registers instead of baseA: the tile
  // `a` in the accumulator's layout (aFromRegisters).
  Regs issueWgmma(const WgmmaPlan &p, const ir::Type &resultType, llvm::Value *baseA, llvm::Value *baseB, Regs acc,
                  const ir::Location &loc, int pending = 0, const ir::Value *a = nullptr);
  // Whether the f16/bf16 A of tensor-core dot `op` is read from registers:
  // it is in the layout of the dot's result, one warp across its columns
  // (attention's P, from the previous dot's accumulators), so each thread
  // already holds the rows and columns its A fragment needs.
  bool aFromRegisters(const ir::Op &op) const;
  // The thread's 4 A registers (two f16/bf16 each) for m16 tile `tile` and
  // k16 step `ks` of A, in mma.m16n8k16's A fragment order.
  std::vector<llvm::Value *> fragmentA(const ir::Value *a, int64_t tile, int64_t ks);
  // One mma.sync of `kind` (not fp8) on fragments a, b and accumulators c.
  std::vector<llvm::Value *> mmaSync(MmaKind kind, const std::vector<llvm::Value *> &a,
                                     const std::vector<llvm::Value *> &b, const std::vector<llvm::Value *> &c);
  // Tags the last call in the current block (the Target's ldmatrix or mma)
  // with `loc`, and returns `out`.
  std::vector<llvm::Value *> lastCallAt(std::vector<llvm::Value *> out, const ir::Location &loc);
  // In a swizzled ring slot (sharedSlotLayout): the address `chunks` 16-byte
  // chunks (i32; its low 3 bits XORed, the rest added) and `bytes` past a
  // lane's address, which lies in a 128-byte aligned block (lowerDotMma).
  llvm::Value *swizzledAddress(llvm::Value *lane, llvm::Value *chunks, llvm::Value *bytes);
  // Byte offsets (i32) of logical element (row, col) of A and of B in their
  // staging regions, swizzle included.
  llvm::Value *wgmmaOffsetA(const WgmmaPlan &p, llvm::Value *row, llvm::Value *col);
  llvm::Value *wgmmaOffsetB(const WgmmaPlan &p, llvm::Value *row, llvm::Value *col);

  // LowerPipeline.cpp: the shared rings of pipelined dot operands.
  struct Ring {
    int64_t offset = 0;  // bytes from the shared base
    SharedSlotLayout slot;
    int64_t stages = 0;
    // 0: the slot is sharedSlotLayout's row-major tile; 1 (2): it is the A
    // (B) of wgmma dots of `plan`, in wgmmaOffsetA's (B's) swizzled layout,
    // 1024-byte aligned, read in place through matrix descriptors.
    int wgmmaOperand = 0;
    WgmmaPlan plan;
    // The slot holds the tile transposed (element (i, j) at row j, column i
    // of `slot`): its copies read global memory contiguous along dim 0 (a
    // column-contiguous tile such as attention's k loaded as [D, BLOCK_N]),
    // so cp.async writes whole slot rows; an mma.sync dot reads it as B
    // with plain ldmatrix (lowerDotMma's B^T path). On a wgmma B ring it
    // goes with plan.kMajorB: the copies run along dim 0 into wgmmaOffsetB.
    bool transposed = false;
  };
  // Places every ring named by the function's async_copy / shared_load ops
  // at the start of shared memory (ringBytes_); scratch follows them.
  void planRings();
  // planRings' last step: swizzles the slots read only by mma.sync (every
  // shared_load of the ring in place, `mmaOnly`) whose `copies` allow it,
  // and gives each ring of `order` its offset.
  void placeRings(const std::vector<int64_t> &order, const std::map<int64_t, bool> &mmaOnly,
                  const std::map<int64_t, int64_t> &elts, const std::map<int64_t, std::vector<const ir::Op *>> &copies);
  // Where a pipelined loop keeps a wgmma group in flight across iterations
  // (LowerPipeline.cpp): fills wgmmaPending_ and drainAfter_. Needs
  // planRings' inPlace_.
  void planWgmmaInFlight();
  // The byte offset (i32) of element (row, col) in a ring slot of layout
  // `s` (slotByteOffset, as IR).
  llvm::Value *slotOffset(const SharedSlotLayout &s, llvm::Value *row, llvm::Value *col, int64_t elt);
  // `ptr` with `mask` XORed into its address bits: a swizzled slot's chunk
  // bits, where ptr lies in a 128-byte aligned block.
  llvm::Value *xorAddress(llvm::Value *ptr, llvm::Value *mask);
  void lowerAsyncCopy(ir::Op &op);
  void lowerAsyncWait(ir::Op &op);
  Regs lowerSharedLoad(ir::Op &op);
  // LowerTma.cpp: the tensor memory accelerator's rings. Tensor-map
  // parameters follow the IR's, one per (descriptor, box, swizzle) a
  // tma_copy uses, in order of first use; the mbarrier groups lie after
  // the rings.
  void planTensorMaps();
  void planBarriers();
  void lowerTma(ir::Op &op);
  void lowerTmaCopy(ir::Op &op, llvm::Value *first);
  void lowerTmaStore(ir::Op &op);
  // The kernel argument carrying the tensor map planTensorMaps gave a
  // tma_copy or tma_store.
  llvm::Value *tensorMapArg(const ir::Op &op) const;
  llvm::Value *mbarrierAddress(int64_t group, llvm::Value *slot);
  tk::TensorMapParam tensorMapOf(const ir::Op &copy) const;  // the map a tma_copy reads through
  // LowerWarpSpecialize.cpp: a warp_specialize op's two sides. The
  // producer's thread issues the copies (tmaIssuer_ true there, else thread
  // 0 does); inside the consumers' region a block barrier is named barrier
  // 1 of their threads (consumerThreads_), which the producer never reaches.
  void lowerWarpSpecialize(ir::Op &op);
  int producerWarps() const;
  llvm::Value *tmaIssuer_ = nullptr;
  int consumerThreads_ = 0;
  std::vector<tk::TensorMapParam> tensorMaps_;
  std::map<int64_t, int64_t> barrierOffsets_;  // group -> bytes from the shared base
  std::vector<int64_t> uniformDeltas(const ir::Type &t, const RegisterMap &rm,
                                     const std::function<int64_t(int64_t, int64_t)> &offsetAt);
  // Every async_copy of `copies` reaches its elements of a slot laid out by
  // `offsetAt` at constant distances from one address per thread
  // (uniformDeltas, no replicated elements).
  bool copiesKeepOneAddress(const std::vector<const ir::Op *> &copies,
                            const std::function<int64_t(int64_t, int64_t)> &offsetAt);
  // The first byte of slot `slot` (an i32) of ring `buffer`.
  llvm::Value *slotBase(int64_t buffer, llvm::Value *slot);
  // The slot a shared_load reads, when a tensor-core dot reads it in place
  // (its value is never materialised in registers); else null.
  const ir::Op *inPlaceOperand(const ir::Value *v) const;
  // Where the ops that exchange values through shared memory start: past
  // the rings while a pipelined loop's rings are live, else at the base;
  // `align` (a power of two up to 1024, the base's alignment) rounds the
  // start past the rings up.
  llvm::Value *scratchBase(int64_t align = 16);
  // Records that an op uses `bytes` of scratch from scratchBase(align).
  void useScratch(int64_t bytes, int64_t align = 16);

  // LowerControlFlow.cpp: lowers a block's ops up to its terminator and
  // returns what its `yield` passes on (nothing after `return`).
  std::vector<Regs> lowerRegion(ir::Block &block);
  void lowerFor(ir::Op &op);
  void lowerIf(ir::Op &op);
  void lowerWhile(ir::Op &op);

 private:
  Regs lowerOp(ir::Op &op);
  Regs lowerElementwise(ir::Op &op);
  void locateArithmetic(llvm::Value *result, const std::vector<llvm::Value *> &args, const ir::Location &loc);
  llvm::Value *scalarOp(ir::Op &op, const std::vector<llvm::Value *> &args);
  llvm::Value *castScalar(llvm::Value *v, const ir::ElemType &from, const ir::ElemType &to);
  // A narrowing float conversion rounded to nearest even, made toward zero (cast rounding = "rtz").
  llvm::Value *towardZero(llvm::Value *x, llvm::Value *rounded);
  llvm::Value *mathScalar(MathFn f, const std::vector<llvm::Value *> &args);
  llvm::Value *threadPart(const ir::Layout &blocked, int dim);

  // LowerDot.cpp: writes a 2-D tile to shared memory, row-major with
  // `rowStride` elements per row, its elements converted to `as` (then by
  // `convert`, to a value of the same size, where given). `transposed`
  // writes element (i, j) at row j, column i, one element per store.
  void stageTile(const ir::Value *v, llvm::Value *base, int64_t rowStride, const ir::ElemType &as,
                 const ir::Location &loc, const std::function<llvm::Value *(llvm::Value *)> &convert = nullptr,
                 bool transposed = false);

  // LowerDotWgmma.cpp helpers
  // Writes 2-D tile `v` at base + offsetOf(row, col); dim `contiguous` is
  // the one whose consecutive elements sit at consecutive addresses.
  void stageForWgmma(const ir::Value *v, llvm::Value *base,
                     const std::function<llvm::Value *(llvm::Value *, llvm::Value *)> &offsetOf,
                     const ir::Location &loc, int contiguous = 1);
  llvm::Value *wgmmaDescriptor(llvm::Value *at, uint32_t leadingBytes, uint32_t strideBytes, int swizzleBytes);

  // LowerReduce.cpp helpers
  llvm::Value *shuffleXor(llvm::Value *v, int laneMask);

  // LowerMemory.cpp helpers
  void tagGlobal(llvm::Instruction *inst, const ir::Location &loc);
  // Tags what the Target just emitted (the insert block's last instruction)
  // with `loc`: the sim names that line in its reports.
  void tagEmitted(const ir::Location &loc);
  // A shared-memory access: `!tk.shared`, and `!tk.loc` so the sim's race
  // check can name the line.
  void tagShared(llvm::Instruction *inst, const ir::Location &loc);
  // The block-wide barrier, tagged with the op's location.
  void barrier(const ir::Location &loc);
  // `if (pred) body();` where a null or constant-true `pred` runs it always
  // and a constant-false one never.
  void ifThen(llvm::Value *pred, const std::function<void()> &body, const char *name);
  // `pred ? emit() : other`, with emit() run only on the taken path.
  llvm::Value *guarded(llvm::Value *pred, llvm::Type *ty, const std::function<llvm::Value *()> &emit,
                       llvm::Value *other);
  // Values only `owner` threads computed, made known to every thread through
  // shared memory (elements at their row-major position).
  Regs shareFromOwners(const ir::Type &t, const Regs &vals, llvm::Value *owner, const ir::Location &loc);
  // `pad` elements after each row (the last dim): lowerConvertLayout's rows.
  std::vector<llvm::Value *> sharedAddresses(const ir::Type &t, llvm::Type *memTy, size_t count, int64_t pad = 0);
  void storeShared(const Regs &vals, const std::vector<llvm::Value *> &addresses, llvm::Value *writer,
                   const ir::Location &loc);
  Regs loadShared(llvm::Type *ty, const std::vector<llvm::Value *> &addresses, const ir::Location &loc);
  // A copy of `ptr`'s address arithmetic at the insertion point.
  llvm::Value *addressHere(llvm::Value *ptr);
  // A copy of `pred` at the insertion point when it is an `and` of masks.
  llvm::Value *predicateHere(llvm::Value *pred);
  // Tags an access the Target emits with `loc` (tagGlobal).
  Target::TagAccess tagAs(const ir::Location &loc);
  // `*ptr`, where `pred` holds (null: always), else `other`; the store alike.
  // An access with cache hints goes to the Target even when unmasked.
  llvm::Value *guardedLoad(llvm::Value *pred, llvm::Type *ty, llvm::Value *ptr, llvm::Value *other,
                           const ir::Location &loc, const ir::MemoryHints &hints = {});
  void guardedStore(llvm::Value *pred, llvm::Value *val, llvm::Value *ptr, const ir::Location &loc,
                    const ir::MemoryHints &hints = {});

 public:
  ir::Function &fn_;
  const Target &target_;
  llvm::Module &module_;
  llvm::LLVMContext &ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function *llfn_ = nullptr;
  llvm::Value *tid_ = nullptr, *lane_ = nullptr, *warp_ = nullptr;
  // The entry block computes thread coordinates before branching to the
  // kernel's code, so values cached there dominate every later block.
  llvm::BasicBlock *entry_ = nullptr;
  std::map<const ir::Value *, Regs> values_;
  std::set<const ir::Value *> used_;  // values some op reads
  ir::Location loc_;                  // of the op being lowered
  std::map<std::pair<const ir::Layout *, int>, llvm::Value *> threadParts_;
  int sharedBytes_ = 0;
  int ringBytes_ = 0;
  // Between a loop's first async_copy and its final async_wait the rings are
  // live: scratch starts after them. scratchWhileRings_ is the most scratch
  // used then; sharedBytes_ the most used from the base at other times.
  bool ringsLive_ = false;
  int scratchWhileRings_ = 0;
  std::map<int64_t, Ring> rings_;
  std::set<const ir::Value *> inPlace_;  // shared_load results only mma dots read
  bool wgmmaRings_ = false;              // some ring feeds wgmma in place
  // planWgmmaInFlight: the dots whose wait_group leaves groups in flight,
  // with how many; per loop of such a dot, the results that need a
  // wait_group 0 after it.
  std::map<const ir::Op *, int> wgmmaPending_;
  std::map<const ir::Op *, std::vector<size_t>> drainAfter_;
};

}  // namespace tk::lower
