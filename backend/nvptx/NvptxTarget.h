// The NVPTX answer to lowering's Target: llvm.nvvm.* intrinsics for ids,
// barriers, shuffles and tensor cores (ldmatrix, mma.sync; wgmma as inline PTX), addrspace(1)/(3) memory, and libdevice
// math (or PTX approx instructions when libdevice is off or absent).
#pragma once

#include "backend/nvptx/Codegen.h"
#include "lower/Target.h"

namespace tk::nvptx {

// NVPTX data layout of LLVM 19 (64-bit pointers, no short pointers).
extern const char *const kDataLayout;
extern const char *const kTriple;  // "nvptx64-nvidia-cuda"

class NvptxTarget : public lower::Target {
 public:
  explicit NvptxTarget(const CodegenOptions &o = {});

  std::string name() const override { return "nvptx"; }
  void configureModule(llvm::Module &m) const override;
  unsigned globalAddressSpace() const override { return 1; }
  unsigned sharedAddressSpace() const override { return 3; }
  void markKernel(llvm::Function &f, int numThreads) const override;

  llvm::Value *threadId(llvm::IRBuilderBase &b) const override;
  llvm::Value *blockId(llvm::IRBuilderBase &b, int axis) const override;
  llvm::Value *gridDim(llvm::IRBuilderBase &b, int axis) const override;

  void barrier(llvm::IRBuilderBase &b) const override;
  llvm::Value *shuffleXor(llvm::IRBuilderBase &b, llvm::Value *v, int laneMask) const override;
  llvm::Value *sharedBase(llvm::IRBuilderBase &b) const override;
  // Predicated inline PTX, as Triton emits: `@p ld.global[.nc][.vN].bW` with
  // the outputs preset to `other`, and `@p st.global[.vN].bW`. Elements of
  // up to 32 bits travel packed in b32 words (v1, v2 or v4), 64-bit ones in
  // b64, a lone byte as u8; `.nc` where LLVM would pick ld.global.nc (the
  // pointer is based only on noalias read-only kernel parameters).
  llvm::Value *maskedLoad(llvm::IRBuilderBase &b, llvm::Type *ty, llvm::Value *ptr, llvm::Value *pred,
                          llvm::Value *other, unsigned align, const ir::MemoryHints &hints,
                          const TagAccess &tag) const override;
  void maskedStore(llvm::IRBuilderBase &b, llvm::Value *value, llvm::Value *ptr, llvm::Value *pred, unsigned align,
                   const ir::MemoryHints &hints, const TagAccess &tag) const override;
  // Atomics on global memory: PTX atom through inline asm (Atomics.cpp).
  llvm::Value *atomicRmw(llvm::IRBuilderBase &b, lower::AtomicRmwOp op, llvm::Value *ptr, llvm::Value *value,
                         ir::AtomicSem sem, ir::AtomicScope scope, const TagAccess &tag) const override;
  llvm::Value *atomicCas(llvm::IRBuilderBase &b, llvm::Value *ptr, llvm::Value *expected, llvm::Value *desired,
                         ir::AtomicSem sem, ir::AtomicScope scope, const TagAccess &tag) const override;
  // llvm.nvvm.ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16 on a
  // ptr addrspace(3) row address.
  std::vector<llvm::Value *> ldmatrix(llvm::IRBuilderBase &b, llvm::Value *rowAddress, int num,
                                      bool trans) const override;
  // llvm.nvvm.mma.m16n8k16.row.col.f32.f32 (f16 inputs as <2 x half>) or
  // llvm.nvvm.mma.m16n8k16.row.col.bf16 (bf16 inputs as i32).
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
  llvm::Value *floatToFp8(llvm::IRBuilderBase &b, llvm::Value *f, ir::ScalarKind k) const override;
  llvm::Value *fp8ToFloat(llvm::IRBuilderBase &b, llvm::Value *code, ir::ScalarKind k) const override;
  // llvm.nvvm.cp.async.{cg,ca}.shared.global.{16,8,4}[.s] (the .s form, with
  // a source size, unless every byte is read), commit_group and wait_group.
  void cpAsync(llvm::IRBuilderBase &b, llvm::Value *dst, llvm::Value *src, int bytes, llvm::Value *srcBytes,
               const TagAccess &tag) const override;
  void cpAsyncCommitGroup(llvm::IRBuilderBase &b) const override;
  void cpAsyncWaitGroup(llvm::IRBuilderBase &b, int n) const override;

  // fp8 mma.sync (sm_89): inline PTX, ISA 8.4 (TensorCores.cpp).
  std::vector<llvm::Value *> mmaM16N8K32Fp8(llvm::IRBuilderBase &b, ir::ScalarKind atype, ir::ScalarKind btype,
                                            const std::vector<llvm::Value *> &a,
                                            const std::vector<llvm::Value *> &bFrag,
                                            const std::vector<llvm::Value *> &c) const override;
  // wgmma on sm_90a: LLVM 19 has no intrinsics for it, so each instruction
  // is inline PTX with side effects (never moved across the barrier and
  // fences around it); accumulators are tied in/out "f" registers.
  bool hasWgmma() const override { return lower::archHasWgmma(arch_); }
  bool usesFp8Mma() const override { return lower::archUsesFp8Mma(arch_); }
  llvm::Value *sharedWindowAddress(llvm::IRBuilderBase &b, llvm::Value *ptr) const override;
  void fenceProxyAsync(llvm::IRBuilderBase &b) const override;
  void wgmmaFence(llvm::IRBuilderBase &b) const override;
  std::vector<llvm::Value *> wgmmaMmaAsync(llvm::IRBuilderBase &b, int n, ir::ScalarKind atype, ir::ScalarKind btype,
                                           bool transA, bool transB,
                                           llvm::Value *descA, llvm::Value *descB,
                                           const std::vector<llvm::Value *> &acc) const override;
  std::vector<llvm::Value *> wgmmaMmaAsyncRegA(llvm::IRBuilderBase &b, int n, bool bf16, bool transB,
                                               const std::vector<llvm::Value *> &a, llvm::Value *descB,
                                               const std::vector<llvm::Value *> &acc) const override;
  void wgmmaCommitGroup(llvm::IRBuilderBase &b) const override;
  // The tensor memory accelerator and mbarriers (Tma.cpp): inline PTX too.
  bool hasTma() const override { return lower::archHasTma(arch_); }
  void markTensorMapParam(llvm::Function &fn, unsigned argNo) const override;
  void mbarrierInit(llvm::IRBuilderBase &b, llvm::Value *bar, int arrivals) const override;
  void mbarrierInval(llvm::IRBuilderBase &b, llvm::Value *bar) const override;
  void mbarrierArriveExpectTx(llvm::IRBuilderBase &b, llvm::Value *bar, int bytes) const override;
  void mbarrierWait(llvm::IRBuilderBase &b, llvm::Value *bar, llvm::Value *parity) const override;
  void mbarrierArrive(llvm::IRBuilderBase &b, llvm::Value *bar) const override;
  // Warp specialisation (Tma.cpp): barrier.sync id, threads; setmaxnreg as
  // inline PTX; .maxnreg through nvvm.annotations, as markKernel's maxntidx.
  void namedBarrier(llvm::IRBuilderBase &b, int id, int threads) const override;
  void setMaxNReg(llvm::IRBuilderBase &b, bool increase, int regs) const override;
  void markMaxNReg(llvm::Function &f, int regs) const override;
  void tmaLoad(llvm::IRBuilderBase &b, llvm::Value *dst, llvm::Value *map, const std::vector<llvm::Value *> &coords,
               llvm::Value *bar) const override;
  // TMA stores: cp.async.bulk.tensor global.shared::cta .bulk_group, and its
  // commit_group and wait_group.read.
  void tmaStore(llvm::IRBuilderBase &b, llvm::Value *src, llvm::Value *map,
                const std::vector<llvm::Value *> &coords) const override;
  void bulkCommitGroup(llvm::IRBuilderBase &b) const override;
  void bulkWaitGroupRead(llvm::IRBuilderBase &b, int pending) const override;
  std::vector<llvm::Value *> wgmmaWaitGroup(llvm::IRBuilderBase &b, int pending,
                                            const std::vector<llvm::Value *> &acc) const override;

  llvm::Value *math(llvm::IRBuilderBase &b, lower::MathFn f, llvm::Value *x, llvm::Value *y = nullptr) const override;
  // vprintf and __assertfail, the CUDA runtime's device entry points.
  void print(llvm::IRBuilderBase &b, const std::string &format, const std::vector<llvm::Value *> &args,
             llvm::Value *element) const override;
  void assertFail(llvm::IRBuilderBase &b, const std::string &message, const std::string &file, int line, int col,
                  const std::string &function) const override;

  // Whether math() calls libdevice (else the approx fallback).
  bool usesLibdevice() const { return libdevice_; }
  const std::string &arch() const { return arch_; }

 private:
  std::string arch_;
  bool libdevice_;
};

}  // namespace tk::nvptx
