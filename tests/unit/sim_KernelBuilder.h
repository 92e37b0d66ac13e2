// Test helper: builds sim kernels by hand with IRBuilder and SimTarget's hooks,
// marking global and shared accesses the way the lowering does.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/sim/SimTarget.h"
#include "backend/sim/Simulator.h"
#include "lower/LocMetadata.h"

namespace tk::sim::test {

class KernelBuilder {
 public:
  KernelBuilder()
      : ctx_(std::make_unique<llvm::LLVMContext>()), m_(std::make_unique<llvm::Module>("test", *ctx_)), b_(*ctx_) {
    target_.configureModule(*m_);
  }

  llvm::IRBuilder<> &b() { return b_; }
  llvm::LLVMContext &ctx() { return *ctx_; }
  llvm::Module &module() { return *m_; }
  const SimTarget &target() const { return target_; }
  llvm::Type *f32() { return b_.getFloatTy(); }
  llvm::Type *i32() { return b_.getInt32Ty(); }
  llvm::Type *ptr() { return b_.getPtrTy(0); }

  // Starts kernel `name`; the builder is left in its entry block.
  llvm::Function *kernel(const std::string &name, std::vector<llvm::Type *> params, int numThreads) {
    auto *f = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                                     llvm::GlobalValue::ExternalLinkage, name, *m_);
    target_.markKernel(*f, numThreads);
    b_.SetInsertPoint(llvm::BasicBlock::Create(*ctx_, "entry", f));
    fn_ = f;
    return f;
  }
  llvm::Value *arg(unsigned i) { return fn_->getArg(i); }
  llvm::BasicBlock *block(const std::string &name) { return llvm::BasicBlock::Create(*ctx_, name, fn_); }

  // Global thread index: blockId(0) * numThreads + threadId.
  llvm::Value *globalId(int numThreads) {
    return b_.CreateAdd(b_.CreateMul(target_.blockId(b_, 0), b_.getInt32(numThreads)), target_.threadId(b_));
  }
  llvm::Value *gep(llvm::Type *t, llvm::Value *p, llvm::Value *i) {
    return b_.CreateGEP(t, p, b_.CreateSExt(i, b_.getInt64Ty()));
  }

  llvm::Value *load(llvm::Type *t, llvm::Value *p, const std::string &loc = "test.tk:1:1", unsigned align = 4) {
    auto *ld = b_.CreateAlignedLoad(t, p, llvm::Align(align));
    tk::lower::setSourceLoc(*ld, loc);
    return ld;
  }
  void store(llvm::Value *v, llvm::Value *p, const std::string &loc = "test.tk:2:1", unsigned align = 4) {
    auto *st = b_.CreateAlignedStore(v, p, llvm::Align(align));
    tk::lower::setSourceLoc(*st, loc);
  }
  // Shared accesses carry !tk.shared, and also !tk.loc when `loc` is given
  // (the lowering may attach both).
  llvm::Value *sharedLoad(llvm::Type *t, llvm::Value *p, unsigned align = 4, const std::string &loc = "") {
    auto *ld = b_.CreateAlignedLoad(t, p, llvm::Align(align));
    markShared(ld, loc);
    return ld;
  }
  void sharedStore(llvm::Value *v, llvm::Value *p, unsigned align = 4, const std::string &loc = "") {
    markShared(b_.CreateAlignedStore(v, p, llvm::Align(align)), loc);
  }
  void markShared(llvm::Instruction *i, const std::string &loc) {
    tk::lower::markShared(*i);
    if (!loc.empty()) tk::lower::setSourceLoc(*i, loc);
  }
  // Attaches !tk.loc to the instruction just built (a barrier or shuffle call).
  void locateLast(const std::string &loc) {
    auto *i = &*std::prev(b_.GetInsertPoint());
    tk::lower::setSourceLoc(*i, loc);
  }

  std::unique_ptr<Program> compile(const ProgramOptions &options = {}) {
    return Program::compile(std::move(m_), std::move(ctx_), options);
  }
  std::string optimizedIR(const ProgramOptions &options = {}) {
    return Program::optimizedIR(std::move(m_), std::move(ctx_), options);
  }

 private:
  SimTarget target_;
  std::unique_ptr<llvm::LLVMContext> ctx_;
  std::unique_ptr<llvm::Module> m_;
  llvm::IRBuilder<> b_;
  llvm::Function *fn_ = nullptr;
};

// A Memory-backed buffer of n values of T, released at scope exit.
template <typename T>
struct Buffer {
  Memory &mem;
  T *p;
  size_t n;
  Buffer(Memory &m, size_t count) : mem(m), p(static_cast<T *>(m.allocate(count * sizeof(T)))), n(count) {}
  ~Buffer() {
    if (p) mem.release(p);
  }
  Buffer(const Buffer &) = delete;
  T &operator[](size_t i) { return p[i]; }
};

// The message of the SimError a launch throws, or "(no error)".
inline std::string launchError(Simulator &sim, Program &p, const std::string &kernel, const LaunchConfig &cfg,
                               std::vector<const void *> args) {
  try {
    sim.launch(p, kernel, cfg, args);
  } catch (const SimError &e) {
    return e.what();
  }
  return "(no error)";
}

// for j in 0..4: smem[t] += 1; barrier; acc += smem[(t + j) % n]; [barrier;]
// then out[t] = acc (= 1 + 2 + 3 + 4 + 5). Own-word read-modify-writes and
// shared reads are fine; without the second barrier, iteration j+1's write
// meets iteration j's read of another thread (a race).
// `early_exit(out)` on 64 threads: thread `quitter` returns at once, the
// others store `shuffle(tid)` (located at `loc` when given), so the shuffle
// misses a lane. Launched, it is the error this returns.
inline std::string exitedLaneShuffleError(
    int quitter, const std::function<llvm::Value *(const SimTarget &, llvm::IRBuilder<> &, llvm::Value *)> &shuffle,
    const std::string &loc = "") {
  const int n = 64;
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("early_exit", {k.ptr()}, n);
  llvm::Value *tid = t.threadId(b);
  auto *go = k.block("go"), *quit = k.block("quit");
  b.CreateCondBr(b.CreateICmpEQ(tid, b.getInt32(quitter)), quit, go);
  b.SetInsertPoint(quit);
  b.CreateRetVoid();
  b.SetInsertPoint(go);
  llvm::Value *v = shuffle(t, b, tid);
  if (!loc.empty()) k.locateLast(loc);
  k.store(v, k.gep(k.i32(), k.arg(0), tid));
  b.CreateRetVoid();
  auto prog = k.compile();
  Simulator sim(1);
  Buffer<int32_t> out(sim.memory(), n);
  void *po = out.p;
  LaunchConfig cfg;
  cfg.grid[0] = 2;
  cfg.blockThreads = n;
  return launchError(sim, *prog, "early_exit", cfg, {&po});
}

inline std::unique_ptr<Program> barrierLoopKernel(int n, bool secondBarrier) {
  KernelBuilder k;
  auto &b = k.b();
  const SimTarget &t = k.target();
  k.kernel("loop", {k.ptr()}, n);
  llvm::Value *tid = t.threadId(b), *smem = t.sharedBase(b);
  k.sharedStore(b.getInt32(0), k.gep(k.i32(), smem, tid), 4, "l.tk:1:1");
  t.barrier(b);
  auto *entry = b.GetInsertBlock();
  auto *loop = k.block("loop"), *exit = k.block("exit");
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  auto *j = b.CreatePHI(k.i32(), 2);
  auto *acc = b.CreatePHI(k.i32(), 2);
  j->addIncoming(b.getInt32(0), entry);
  acc->addIncoming(b.getInt32(0), entry);
  llvm::Value *mine = k.gep(k.i32(), smem, tid);
  k.sharedStore(b.CreateAdd(k.sharedLoad(k.i32(), mine, 4, "l.tk:3:9"), b.getInt32(1)), mine, 4, "l.tk:3:3");
  t.barrier(b);
  llvm::Value *other =
      k.sharedLoad(k.i32(), k.gep(k.i32(), smem, b.CreateURem(b.CreateAdd(tid, j), b.getInt32(n))), 4, "l.tk:5:10");
  llvm::Value *acc2 = b.CreateAdd(acc, other);
  if (secondBarrier) t.barrier(b);
  llvm::Value *j2 = b.CreateAdd(j, b.getInt32(1));
  j->addIncoming(j2, loop);
  acc->addIncoming(acc2, loop);
  b.CreateCondBr(b.CreateICmpSLT(j2, b.getInt32(5)), loop, exit);
  b.SetInsertPoint(exit);
  k.store(acc2, k.gep(k.i32(), k.arg(0), tid));
  b.CreateRetVoid();
  return k.compile();
}

// out[i*stride] = a[i*stride] * 2 for i < n, one element per thread.
inline std::unique_ptr<Program> scaleKernel(int threads, int stride = 1) {
  KernelBuilder k;
  auto &b = k.b();
  k.kernel("scale", {k.ptr(), k.ptr(), k.i32()}, threads);
  llvm::Value *i = k.globalId(threads);
  auto *body = k.block("body"), *done = k.block("done");
  b.CreateCondBr(b.CreateICmpSLT(i, k.arg(2)), body, done);
  b.SetInsertPoint(body);
  llvm::Value *idx = b.CreateMul(i, b.getInt32(stride));
  llvm::Value *v = k.load(k.f32(), k.gep(k.f32(), k.arg(0), idx), "scale.tk:3:9");
  k.store(b.CreateFMul(v, llvm::ConstantFP::get(k.f32(), 2.0)), k.gep(k.f32(), k.arg(1), idx), "scale.tk:4:5");
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return k.compile();
}

}  // namespace tk::sim::test
