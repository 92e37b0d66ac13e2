// The whole pipeline, front end to PTX and to the sim's JIT, for both
// targets, in the order it runs; every stage `tkc compile --emit` can stop
// after is marked [stage]:
//
//   .tk source
//     lang::Frontend: lex, parse                                   [tokens] [ast]
//     frontEnd: lang::Frontend::lowerKernel (semantic analysis,
//       specialisation -> tile IR), then num_stages, wgmma          [tir-raw]
//   tile IR
//     tilePasses (the registry below, verifier between passes,
//     --print-after PASS after each):
//       expand-descriptor-loads, pad-tiles, emulate-fp8, canonicalize, reassociate-pointer-offsets, cse,
//       licm, cse, dce, canonicalize, dce,
//       specialize-warps, pipeline-dot-operands, sink-loads, assign-layouts, cse, dce   [tir]
//   tile IR with layouts
//     NVPTX: lowerForNvptx (lower/ through NvptxTarget)            [llvm]
//            libdevice link, store predicates, O3                  [llvm-opt]
//            NVPTX code generator                                  [ptx]
//            ptxas                                                 [cubin]
//     sim:   lowerForSim (lower/ through SimTarget)                [sim-llvm]
//            instrument, trampoline, O2 (sim::Program)             [sim-llvm-opt]
//            ORC JIT, one fiber per GPU thread (when a device loads it)
//
// tk::Compiler (Compiler.cpp) drives it for bundles and --emit; tk-opt runs
// any registered pass and either lowering.
#include "driver/Pipeline.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <stdexcept>

#include "backend/nvptx/NvptxTarget.h"
#include "backend/nvptx/Ptxas.h"
#include "backend/sim/SimTarget.h"
#include "backend/sim/Simulator.h"
#include "lang/Frontend.h"
#include "lower/AssignLayouts.h"
#include "lower/PipelineDotOperands.h"
#include "lower/SpecializeWarps.h"
#include "lower/Target.h"

namespace tk::pipeline {

// ---- the front end ---------------------------------------------------------

std::unique_ptr<ir::Function> frontEnd(lang::Frontend &fe, const std::string &kernel, const CompileOptions &opts,
                                       lang::KernelSig &sig) {
  std::unique_ptr<ir::Function> fn = fe.lowerKernel(kernel, opts.defines, opts.numWarps, &sig, opts.assume);
  if (!fn || fe.diags().hasErrors()) throw CompileError(fe.diags().render());
  // The tile pipeline reads it (pipeline-dot-operands); the IR's text keeps it.
  fn->attrs["num_stages"] = int64_t{opts.numStages};
  // A target fact the tile passes read: assign-layouts lays dots out for
  // wgmma when an arch runs it (the others then run mma.sync in that
  // layout, lower/Layouts.h tensorCoreLayout).
  if (std::any_of(opts.archs.begin(), opts.archs.end(), lower::archHasWgmma)) fn->setFlag("wgmma", true);
  // Tensor-memory-accelerator copies have no form on other archs: only a
  // bundle for TMA archs alone takes them (one PTX per arch, one tile IR).
  if (!opts.archs.empty() && std::all_of(opts.archs.begin(), opts.archs.end(), lower::archHasTma))
    fn->setFlag("tma", true);
  return fn;
}

// ---- the passes ------------------------------------------------------------

const std::vector<ir::PassInfo> &passes() {
  static const std::vector<ir::PassInfo> all = {
      {"expand-descriptor-loads",
       "turn host-descriptor loads into masked loads, but those the tensor memory accelerator may take",
       lower::expandDescriptorLoads},
      {"pad-tiles", "pad tile dims to powers of two; mask the padding where an op could see it", ir::padTiles},
      {"emulate-fp8", "compute on f32 where ops compute on fp8 values (casts around them); moves keep the bytes",
       ir::emulateFp8},
      {"canonicalize", "fold constants, apply algebraic identities, simplify shape ops of splats", ir::canonicalize},
      {"reassociate-pointer-offsets", "split p + (u + w), u a row's start, into (p + u) + w",
       ir::reassociatePointerOffsets},
      {"cse", "replace pure ops by identical earlier ones", ir::eliminateCommonSubexpressions},
      {"licm", "move loop-invariant pure ops out of for bodies", ir::loopInvariantCodeMotion},
      {"dce", "erase pure ops whose results are unused", ir::eliminateDeadCode},
      {"specialize-warps",
       "split a warp_specialize loop's kernel between a TMA producer warpgroup and the warps that run its dots",
       lower::specializeWarps},
      {"pipeline-dot-operands",
       "turn the operand loads of tensor-core dots in loops into cp.async rings of num_stages slots",
       lower::pipelineDotOperands},
      {"sink-loads", "outside loops, move each load down to its first use, past pure arithmetic only", ir::sinkLoads},
      {"assign-layouts", "give every tile a distributed layout; anchors loads/stores, vector widths",
       lower::assignLayouts},
  };
  return all;
}

const ir::PassInfo *findPass(const std::string &name) {
  for (const ir::PassInfo &p : passes())
    if (name == p.flag) return &p;
  return nullptr;
}

void addPass(ir::PassPipeline &pipeline, const std::string &name) {
  const ir::PassInfo *p = findPass(name);
  if (!p) {
    std::string known;
    for (const ir::PassInfo &q : passes()) known += std::string(known.empty() ? "" : ", ") + q.flag;
    throw Error("unknown pass '" + name + "' (known: " + known + ")");
  }
  pipeline.add(p->flag, p->run);
}

ir::PassPipeline optimizationPasses() {
  ir::PassPipeline p;
  addPass(p, "expand-descriptor-loads");  // first: later passes see their index arithmetic
  addPass(p, "pad-tiles");                // every later pass and the lowering see powers of two
  addPass(p, "emulate-fp8");  // next: every later pass sees fp8 only where bytes move
  addPass(p, "canonicalize");
  addPass(p, "reassociate-pointer-offsets");  // before licm: a row's start is often loop-invariant
  addPass(p, "cse");
  addPass(p, "licm");
  addPass(p, "cse");  // hoisted values meet their twins outside the loop
  addPass(p, "dce");
  addPass(p, "canonicalize");  // CSE exposes more folds (x - x once both sides are one value)
  addPass(p, "dce");
  return p;
}

ir::PassPipeline tilePasses() {
  ir::PassPipeline p = optimizationPasses();
  // Before layouts: the rings it makes get shared layouts of their own.
  addPass(p, "specialize-warps");  // before the pipeliner, which leaves its loops alone
  addPass(p, "pipeline-dot-operands");
  addPass(p, "sink-loads");  // ptxas schedules from the PTX's order: a load where it is used
  addPass(p, "assign-layouts");
  // Layout assignment recomputes values per layout; merge and drop what repeats.
  addPass(p, "cse");
  addPass(p, "dce");
  return p;
}

void runTilePasses(ir::Module &module, const std::string &kernel, const CompileOptions &opts) {
  ir::PipelineOptions po;
  po.verifyEach = opts.verifyEachPass;
  po.dump = opts.dump;
  for (const std::string &p : opts.printAfter) {
    if (p == "all")
      po.printAfterAll = true;
    else
      po.printAfter.insert(p);
  }
  try {
    tilePasses().run(module, po);
  } catch (const Error &e) {
    e.rethrowPrefixed("internal compiler error in kernel '" + kernel + "': ");
  } catch (const std::runtime_error &e) {  // not tk's: a bug as well
    throw InternalError(std::string("internal compiler error in kernel '") + kernel + "': " + e.what());
  }
}

// ---- lowering to LLVM IR ---------------------------------------------------

Llvm::Llvm() : ctx(std::make_unique<llvm::LLVMContext>()) {}
Llvm::~Llvm() {
  lowered.module.reset();  // before its context
}
Llvm::Llvm(Llvm &&) noexcept = default;

namespace {
Llvm lowerThrough(ir::Function &fn, const lower::Target &target, const char *forWhat) {
  Llvm out;
  const std::string context = "internal compiler error while lowering '" + fn.name + "'" + forWhat + ": ";
  try {
    out.lowered = lower::lowerToLLVM(fn, target, *out.ctx);
  } catch (const Error &e) {  // InternalError: lowering and the Targets throw nothing else
    e.rethrowPrefixed(context);
  } catch (const std::logic_error &e) {  // not tk's (a map's at()): a bug as well
    throw InternalError(context + e.what());
  }
  return out;
}

std::string printLlvm(const llvm::Module &m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  return os.str();
}
}  // namespace

Llvm lowerForNvptx(ir::Function &fn, const nvptx::CodegenOptions &cg) {
  nvptx::NvptxTarget target(cg);
  return lowerThrough(fn, target, "");
}

Llvm lowerForSim(ir::Function &fn, const std::string &arch) {
  Llvm out;
  try {
    out.lowered = sim::lowerForSim(fn, arch, *out.ctx);  // the road the sim device takes too
  } catch (const Error &e) {
    e.rethrowPrefixed("internal compiler error while lowering '" + fn.name + "' for the sim: ");
  }
  return out;
}

// ---- the back half, stage by stage -----------------------------------------

std::string compileTo(ir::Function &fn, Stage stage, const nvptx::CodegenOptions &cg) {
  if (stage == Stage::SimLlvm || stage == Stage::SimLlvmOpt) {
    Llvm x = lowerForSim(fn, cg.arch);
    if (stage == Stage::SimLlvm) return printLlvm(*x.lowered.module);
    return sim::Program::optimizedIR(std::move(x.lowered.module), std::move(x.ctx));
  }

  Llvm x = lowerForNvptx(fn, cg);
  if (stage == Stage::Llvm) return printLlvm(*x.lowered.module);
  if (stage == Stage::LlvmOpt) {
    try {
      nvptx::optimizeModule(*x.lowered.module, cg);
    } catch (const Error &e) {
      e.rethrowPrefixed("optimising the LLVM IR for " + cg.arch + " failed: ");
    }
    return printLlvm(*x.lowered.module);
  }
  std::string ptx = nvptx::emitPtx(*x.lowered.module, cg);  // optimises, then generates code
  if (stage == Stage::Ptx) return ptx;
  if (stage != Stage::Cubin) throw Error("pipeline::compileTo: not a stage after the tile IR");
  if (!cg.toolkit.hasPtxas())
    throw Error("a cubin needs ptxas from the CUDA toolkit, and none was found (set CUDA_HOME)");
  try {
    nvptx::PtxasInfo info = nvptx::runPtxas(ptx, cg.arch, cg.toolkit);
    return std::string(info.cubin.begin(), info.cubin.end());
  } catch (const Error &e) {
    e.rethrowPrefixed("ptxas failed: ");
  }
}

}  // namespace tk::pipeline
