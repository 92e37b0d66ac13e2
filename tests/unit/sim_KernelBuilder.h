// Test helper: builds sim kernels by hand with IRBuilder and SimTarget's hooks,
// marking global and shared accesses the way the lowering does.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>

#include "backend/sim/SimTarget.h"
#include "backend/sim/Simulator.h"

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
    ld->setMetadata("tk.loc", llvm::MDNode::get(*ctx_, llvm::MDString::get(*ctx_, loc)));
    return ld;
  }
  void store(llvm::Value *v, llvm::Value *p, const std::string &loc = "test.tk:2:1", unsigned align = 4) {
    auto *st = b_.CreateAlignedStore(v, p, llvm::Align(align));
    st->setMetadata("tk.loc", llvm::MDNode::get(*ctx_, llvm::MDString::get(*ctx_, loc)));
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
    i->setMetadata("tk.shared", llvm::MDNode::get(*ctx_, {}));
    if (!loc.empty()) i->setMetadata("tk.loc", llvm::MDNode::get(*ctx_, llvm::MDString::get(*ctx_, loc)));
  }
  // Attaches !tk.loc to the instruction just built (a barrier or shuffle call).
  void locateLast(const std::string &loc) {
    auto *i = &*std::prev(b_.GetInsertPoint());
    i->setMetadata("tk.loc", llvm::MDNode::get(*ctx_, llvm::MDString::get(*ctx_, loc)));
  }

  std::unique_ptr<Program> compile() { return Program::compile(std::move(m_), std::move(ctx_)); }

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

}  // namespace tk::sim::test
