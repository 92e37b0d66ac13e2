// SimTarget: how lowered tile IR names the machine when it runs on tk sim.
// Ids, barriers, shuffles, tensor-core instructions and shared memory are
// calls into the sim runtime
// (backend/sim/Runtime.cpp); math is libm; everything is address space 0.
#pragma once

#include <string>

#include "lower/LowerToLLVM.h"
#include "lower/Target.h"

namespace tk::sim {

// Runtime entry points the sim module calls (resolved by the JIT).
inline constexpr const char *kFnTid = "__tk_sim_tid";
inline constexpr const char *kFnCtaid = "__tk_sim_ctaid";
inline constexpr const char *kFnNctaid = "__tk_sim_nctaid";
inline constexpr const char *kFnBarrier = "__tk_sim_barrier";
inline constexpr const char *kFnShflI32 = "__tk_sim_shfl_xor_i32";
inline constexpr const char *kFnShflF32 = "__tk_sim_shfl_xor_f32";
inline constexpr const char *kFnSharedBase = "__tk_sim_shared_base";
// <4 x i32> __tk_sim_ldmatrix(ptr row, i32 num, i32 trans) and
// <4 x float> __tk_sim_mma(i32 a0..a3, i32 b0, i32 b1, float c0..c3, i32 kind)
// (kind an MmaType, Runtime.h; s8's i32 C and D travel as f32 bits):
// warp collectives; instrumentMemoryAccesses gives every call a site.
inline constexpr const char *kFnLdmatrix = "__tk_sim_ldmatrix";
inline constexpr const char *kFnMma = "__tk_sim_mma";
// wgmma (sm_90a, backend/sim/Wgmma.cpp): void __tk_sim_wgmma(i64 descA,
// i64 descB, ptr acc, i32 n, i32 flags) is a warpgroup collective that reads
// and writes the thread's n / 2 accumulators at `acc` (flags: Runtime.h's
// WgmmaFlags); void __tk_sim_wgmma_a(i32 a0,
// i32 a1, i32 a2, i32 a3) hands the thread's A registers to the wgmma call
// that follows it (kWgmmaRegA; its descA is then 0); void __tk_sim_wgmma_wait(i32
// pending, ptr acc, i32 count), __tk_sim_wgmma_fence(), __tk_sim_wgmma_commit()
// and __tk_sim_fence_proxy_async() are per-thread.
inline constexpr const char *kFnWgmma = "__tk_sim_wgmma";
inline constexpr const char *kFnWgmmaA = "__tk_sim_wgmma_a";
inline constexpr const char *kFnWgmmaWait = "__tk_sim_wgmma_wait";
inline constexpr const char *kFnWgmmaFence = "__tk_sim_wgmma_fence";
inline constexpr const char *kFnWgmmaCommit = "__tk_sim_wgmma_commit";
inline constexpr const char *kFnFenceProxyAsync = "__tk_sim_fence_proxy_async";

// void __tk_sim_cp_async(ptr dst, ptr src, i32 bytes, i32 srcBytes): one
// cp.async, which instrumentMemoryAccesses always rewrites into its located
// form (AsyncCopy.cpp); void __tk_sim_cp_async_commit() and
// void __tk_sim_cp_async_wait(i32 n): commit_group and wait_group.
// The string attribute of a kernel parameter that is a tensor map: the
// address of its 128-byte blob (TensorMap.h), which the trampoline passes.
inline constexpr const char *kTensorMapParamAttr = "tk.tensor_map";
inline constexpr const char *kFnCpAsync = "__tk_sim_cp_async";
inline constexpr const char *kFnCpAsyncCommit = "__tk_sim_cp_async_commit";
inline constexpr const char *kFnCpAsyncWait = "__tk_sim_cp_async_wait";
// mbarriers and the tensor memory accelerator (sm_90a; Mbarrier.cpp,
// TensorCopy.cpp): void __tk_sim_mbarrier_init(ptr bar, i32 count),
// void __tk_sim_mbarrier_inval(ptr bar),
// void __tk_sim_mbarrier_arrive_expect_tx(ptr bar, i32 bytes),
// void __tk_sim_mbarrier_arrive(ptr bar) (one arrival, no bytes),
// void __tk_sim_mbarrier_wait(ptr bar, i32 parity) (parks the thread until
// the phase of that parity completes), and void __tk_sim_tma_load(ptr dst,
// ptr map, ptr bar, i32 rank, i32 c0, .., i32 c4) (coordinates innermost
// first, the unused ones 0). instrumentMemoryAccesses gives a located call
// and every tma_load a site.
inline constexpr const char *kFnMbarrierInit = "__tk_sim_mbarrier_init";
inline constexpr const char *kFnMbarrierInval = "__tk_sim_mbarrier_inval";
inline constexpr const char *kFnMbarrierArriveExpectTx = "__tk_sim_mbarrier_arrive_expect_tx";
inline constexpr const char *kFnMbarrierWait = "__tk_sim_mbarrier_wait";
inline constexpr const char *kFnMbarrierArrive = "__tk_sim_mbarrier_arrive";
// void __tk_sim_named_barrier(i32 id, i32 threads): bar.sync id, threads
// (NamedBarrier.cpp), convergent like the block barrier.
inline constexpr const char *kFnNamedBarrier = "__tk_sim_named_barrier";
inline constexpr const char *kFnTmaLoad = "__tk_sim_tma_load";
// TMA stores (TensorCopy.cpp): void __tk_sim_tma_store(ptr src, ptr map,
// i32 rank, i32 c0, .., i32 c4), which instrumentMemoryAccesses always
// locates; void __tk_sim_bulk_commit_group() and
// void __tk_sim_bulk_wait_group_read(i32 pending), counted only: the store
// completes at issue.
inline constexpr const char *kFnTmaStore = "__tk_sim_tma_store";
inline constexpr const char *kFnBulkCommitGroup = "__tk_sim_bulk_commit_group";
inline constexpr const char *kFnBulkWaitGroupRead = "__tk_sim_bulk_wait_group_read";
// void __tk_sim_print(i32 element, ptr format, ...), void __tk_sim_print_group(), and
// void __tk_sim_assert_fail(ptr message, ptr "file:line:col")
inline constexpr const char *kFnPrint = "__tk_sim_print";
inline constexpr const char *kFnPrintGroup = "__tk_sim_print_group";
inline constexpr const char *kFnAssertFail = "__tk_sim_assert_fail";
// Function attribute markKernel sets: threads per block, as a decimal string.
inline constexpr const char *kNumThreadsAttr = "tk-num-threads";

class SimTarget : public lower::Target {
 public:
  // Detects the host triple and data layout once. `arch` is the GPU the sim
  // emulates for the lowering's choices: "sm_90a" runs dot on wgmma, the
  // others (sm_80 .. sm_90) on mma.sync.
  explicit SimTarget(std::string arch = "sm_80");

  std::string name() const override { return "sim"; }
  void configureModule(llvm::Module &m) const override;
  unsigned globalAddressSpace() const override { return 0; }
  unsigned sharedAddressSpace() const override { return 0; }
  void markKernel(llvm::Function &f, int numThreads) const override;

  llvm::Value *threadId(llvm::IRBuilderBase &b) const override;
  llvm::Value *blockId(llvm::IRBuilderBase &b, int axis) const override;
  llvm::Value *gridDim(llvm::IRBuilderBase &b, int axis) const override;
  void barrier(llvm::IRBuilderBase &b) const override;
  llvm::Value *shuffleXor(llvm::IRBuilderBase &b, llvm::Value *v, int laneMask) const override;
  llvm::Value *sharedBase(llvm::IRBuilderBase &b) const override;
  // A branch around a plain load or store, which instrumentMemoryAccesses
  // then routes through the runtime like any unmasked access.
  llvm::Value *maskedLoad(llvm::IRBuilderBase &b, llvm::Type *ty, llvm::Value *ptr, llvm::Value *pred,
                          llvm::Value *other, unsigned align, const ir::MemoryHints &hints,
                          const TagAccess &tag) const override;
  void maskedStore(llvm::IRBuilderBase &b, llvm::Value *value, llvm::Value *ptr, llvm::Value *pred, unsigned align,
                   const ir::MemoryHints &hints, const TagAccess &tag) const override;
  // Atomics on global memory: LLVM atomicrmw and cmpxchg on the host.
  llvm::Value *atomicRmw(llvm::IRBuilderBase &b, lower::AtomicRmwOp op, llvm::Value *ptr, llvm::Value *value,
                         ir::AtomicSem sem, ir::AtomicScope scope, const TagAccess &tag) const override;
  llvm::Value *atomicCas(llvm::IRBuilderBase &b, llvm::Value *ptr, llvm::Value *expected, llvm::Value *desired,
                         ir::AtomicSem sem, ir::AtomicScope scope, const TagAccess &tag) const override;
  std::vector<llvm::Value *> ldmatrix(llvm::IRBuilderBase &b, llvm::Value *rowAddress, int num,
                                      bool trans) const override;
  std::vector<llvm::Value *> mmaM16N8K16(llvm::IRBuilderBase &b, bool bf16, const std::vector<llvm::Value *> &a,
                                         const std::vector<llvm::Value *> &bFrag,
                                         const std::vector<llvm::Value *> &c) const override;
  std::vector<llvm::Value *> mmaM16N8K8Tf32(llvm::IRBuilderBase &b, const std::vector<llvm::Value *> &a,
                                            const std::vector<llvm::Value *> &bFrag,
                                            const std::vector<llvm::Value *> &c) const override;
  std::vector<llvm::Value *> mmaM16N8K32S8(llvm::IRBuilderBase &b, const std::vector<llvm::Value *> &a,
                                           const std::vector<llvm::Value *> &bFrag,
                                           const std::vector<llvm::Value *> &c) const override;
  llvm::Value *roundToTf32(llvm::IRBuilderBase &b, llvm::Value *x) const override;
  llvm::Value *packHalves(llvm::IRBuilderBase &b, llvm::Value *lo, llvm::Value *hi, bool bf16) const override;
  std::vector<llvm::Value *> mmaM16N8K32Fp8(llvm::IRBuilderBase &b, ir::ScalarKind atype, ir::ScalarKind btype,
                                            const std::vector<llvm::Value *> &a,
                                            const std::vector<llvm::Value *> &bFrag,
                                            const std::vector<llvm::Value *> &c) const override;
  bool hasWgmma() const override { return lower::archHasWgmma(arch_); }
  bool usesFp8Mma() const override { return lower::archUsesFp8Mma(arch_); }
  bool locatesIntegerArithmetic() const override { return true; }  // for sim:overflow (InstrumentOverflow.h)
  // The offset from the block's shared base: the sim's shared window starts
  // at address 0, as a GPU's dynamic shared memory does.
  llvm::Value *sharedWindowAddress(llvm::IRBuilderBase &b, llvm::Value *ptr) const override;
  void fenceProxyAsync(llvm::IRBuilderBase &b) const override;
  void wgmmaFence(llvm::IRBuilderBase &b) const override;
  // The accumulators travel through a stack array of the function (one per
  // function, in its entry block), which the runtime reads and rewrites.
  std::vector<llvm::Value *> wgmmaMmaAsync(llvm::IRBuilderBase &b, int n, ir::ScalarKind atype, ir::ScalarKind btype,
                                           bool transA, bool transB,
                                           llvm::Value *descA, llvm::Value *descB,
                                           const std::vector<llvm::Value *> &acc) const override;
  std::vector<llvm::Value *> wgmmaMmaAsyncRegA(llvm::IRBuilderBase &b, int n, bool bf16, bool transB,
                                               const std::vector<llvm::Value *> &a, llvm::Value *descB,
                                               const std::vector<llvm::Value *> &acc) const override;
  void wgmmaCommitGroup(llvm::IRBuilderBase &b) const override;
  std::vector<llvm::Value *> wgmmaWaitGroup(llvm::IRBuilderBase &b, int pending,
                                            const std::vector<llvm::Value *> &acc) const override;

  // Calls into the runtime's per-thread copy queues (AsyncCopy.cpp).
  void cpAsync(llvm::IRBuilderBase &b, llvm::Value *dst, llvm::Value *src, int bytes, llvm::Value *srcBytes,
               const TagAccess &tag) const override;
  void cpAsyncCommitGroup(llvm::IRBuilderBase &b) const override;
  void cpAsyncWaitGroup(llvm::IRBuilderBase &b, int n) const override;
  // Calls into the runtime's mbarriers and box copies (SimTargetTma.cpp).
  bool hasTma() const override { return lower::archHasWgmma(arch_); }
  void markTensorMapParam(llvm::Function &fn, unsigned argNo) const override;
  void mbarrierInit(llvm::IRBuilderBase &b, llvm::Value *bar, int arrivals) const override;
  void mbarrierInval(llvm::IRBuilderBase &b, llvm::Value *bar) const override;
  void mbarrierArriveExpectTx(llvm::IRBuilderBase &b, llvm::Value *bar, int bytes) const override;
  void mbarrierWait(llvm::IRBuilderBase &b, llvm::Value *bar, llvm::Value *parity) const override;
  void mbarrierArrive(llvm::IRBuilderBase &b, llvm::Value *bar) const override;
  // Warp specialisation: a named barrier is a runtime call; the sim has no
  // register file, so setMaxNReg only checks its count and emits nothing,
  // and markMaxNReg only checks its count.
  void namedBarrier(llvm::IRBuilderBase &b, int id, int threads) const override;
  void setMaxNReg(llvm::IRBuilderBase &b, bool increase, int regs) const override;
  void markMaxNReg(llvm::Function &f, int regs) const override;
  void tmaLoad(llvm::IRBuilderBase &b, llvm::Value *dst, llvm::Value *map, const std::vector<llvm::Value *> &coords,
               llvm::Value *bar) const override;
  // TMA stores complete at issue (TensorCopy.cpp): commit and wait only
  // check their operands and are counted as instructions.
  void tmaStore(llvm::IRBuilderBase &b, llvm::Value *src, llvm::Value *map,
                const std::vector<llvm::Value *> &coords) const override;
  void bulkCommitGroup(llvm::IRBuilderBase &b) const override;
  void bulkWaitGroupRead(llvm::IRBuilderBase &b, int pending) const override;
  llvm::Value *math(llvm::IRBuilderBase &b, lower::MathFn f, llvm::Value *x, llvm::Value *y = nullptr) const override;
  void print(llvm::IRBuilderBase &b, const std::string &format, const std::vector<llvm::Value *> &args,
             llvm::Value *element) const override;
  void beginPrintGroup(llvm::IRBuilderBase &b) const override;
  void assertFail(llvm::IRBuilderBase &b, const std::string &message, const std::string &file, int line, int col,
                  const std::string &function) const override;

  const std::string &triple() const { return triple_; }
  const std::string &dataLayout() const { return dataLayout_; }
  const std::string &arch() const { return arch_; }

 private:
  std::string triple_, dataLayout_, arch_;
};

// Initialises LLVM's native target once per process (thread-safe); returns the
// host triple and data layout the JIT uses. Throws SimError if there is none.
struct HostTarget {
  std::string triple, dataLayout;
};
const HostTarget &hostTarget();

// The tile IR `fn` (layouts assigned) as the sim's LLVM IR for `arch`, in
// `ctx`: the one road to the sim, which the driver's pipeline and the sim
// device both take. A bug in the lowering (a std::logic_error: a map's at())
// comes out as tk::InternalError, as the lowering's own errors do.
lower::LoweredKernel lowerForSim(ir::Function &fn, const std::string &arch, llvm::LLVMContext &ctx);

}  // namespace tk::sim
