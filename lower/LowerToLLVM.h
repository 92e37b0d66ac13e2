// Tile IR (with layouts assigned) -> per-thread LLVM IR through a Target.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "tk/compiler.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tk::lower {

class Target;

struct LoweredKernel {
  std::unique_ptr<llvm::Module> module;
  int numThreads = 0;   // threads per block: num_warps' and the producer's
  int producerWarps = 0;  // a warp_specialize kernel's producer warps, after num_warps (else 0)
  int sharedBytes = 0;  // dynamic shared memory the kernel needs
  // The tensor maps the kernel takes after its IR parameters (by value, 128
  // bytes each), in order: what Bundle::tensorMaps lists.
  std::vector<tk::TensorMapParam> tensorMaps;
};

// Emits one LLVM function named like `fn` whose body is the code one GPU
// thread runs. Global accesses carry `!tk.loc` ("file:line:col"), shared ones
// `!tk.shared`, so the sim can name source lines and count traffic.
// The producer warps a warp_specialize op at the kernel's top level adds
// after its num_warps (specialize-warps), or 0.
int producerWarpsOf(const ir::Function &fn);

LoweredKernel lowerToLLVM(ir::Function &fn, const Target &target, llvm::LLVMContext &ctx);

}  // namespace tk::lower
