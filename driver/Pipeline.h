// The whole compiler pipeline in one place (Pipeline.cpp): the registry of
// tile-IR passes (the one tkc --print-after/--list-passes, tk-opt --pass and
// docs/ir.md are checked against), the order they run in, and every stage
// from the front end's tile IR to PTX, a cubin, and the sim's JIT input.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/nvptx/Codegen.h"
#include "ir/passes/Passes.h"
#include "lower/LowerToLLVM.h"
#include "tk/compiler.h"

namespace llvm {
class LLVMContext;
}

namespace tk::lang {
class Frontend;
struct KernelSig;
}  // namespace tk::lang

namespace tk::pipeline {

// Kernel `kernel` of the file `fe` loaded, specialised on opts' defines,
// num_warps and assumed integer facts, as tile IR without layouts, with the
// attributes the tile passes read (num_stages, wgmma); `sig` receives
// its signature. Throws CompileError with every diagnostic.
std::unique_ptr<ir::Function> frontEnd(lang::Frontend &fe, const std::string &kernel, const CompileOptions &opts,
                                       lang::KernelSig &sig);

// Every tile-IR pass by name, in a fixed order; nothing else names passes.
const std::vector<ir::PassInfo> &passes();
// The pass called `name`, or null.
const ir::PassInfo *findPass(const std::string &name);
// Appends the pass called `name`; throws tk::Error listing the
// known ones for another name.
void addPass(ir::PassPipeline &pipeline, const std::string &name);

// The optimisation passes alone (tk-opt -O).
ir::PassPipeline optimizationPasses();
// What the compiler runs on a kernel's tile IR: optimisation, dot operand
// pipelining, layouts, and a tidy-up.
ir::PassPipeline tilePasses();

// Runs tilePasses() on `module` with the verifier and opts.printAfter
// dumps; a failure is an internal compiler error naming `kernel`.
void runTilePasses(ir::Module &module, const std::string &kernel, const CompileOptions &opts);

// Tile IR with layouts lowered to per-thread LLVM IR.
struct Llvm {
  std::unique_ptr<llvm::LLVMContext> ctx;
  lower::LoweredKernel lowered;
  Llvm();
  ~Llvm();
  Llvm(Llvm &&) noexcept;
};
Llvm lowerForNvptx(ir::Function &fn, const nvptx::CodegenOptions &cg);
// For the sim emulating `arch` (what the sim device loads).
Llvm lowerForSim(ir::Function &fn, const std::string &arch);

// Tile IR (after tilePasses) to the text of `stage`, one of Llvm, LlvmOpt,
// Ptx, Cubin (NVPTX, for cg.arch) or SimLlvm, SimLlvmOpt (the sim emulating
// cg.arch): the back half of `tkc compile --emit`.
std::string compileTo(ir::Function &fn, Stage stage, const nvptx::CodegenOptions &cg);

}  // namespace tk::pipeline
