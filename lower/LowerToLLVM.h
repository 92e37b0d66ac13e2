// Tile IR (with layouts assigned) -> per-thread LLVM IR through a Target.
#pragma once

#include <memory>

#include "ir/IR.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tk::lower {

class Target;

struct LoweredKernel {
  std::unique_ptr<llvm::Module> module;
  int numThreads = 0;   // threads per block
  int sharedBytes = 0;  // dynamic shared memory the kernel needs
};

// Emits one LLVM function named like `fn` whose body is the code one GPU
// thread runs. Global accesses carry `!tk.loc` ("file:line:col"), shared ones
// `!tk.shared`, so the sim can name source lines and count traffic.
LoweredKernel lowerToLLVM(ir::Function &fn, const Target &target, llvm::LLVMContext &ctx);

}  // namespace tk::lower
