// LLVM IR -> PTX for one NVPTX architecture: libdevice link, the O3
// pipeline, then the NVPTX code generator.
#pragma once

#include <string>
#include <vector>

#include "backend/nvptx/Toolkit.h"

namespace llvm {
class Module;
}

namespace tk::nvptx {

struct CodegenOptions {
  std::string arch = "sm_80";  // one of validArches()
  // Math through libdevice's __nv_* (precise). Without it, or when the toolkit
  // has no libdevice, NvptxTarget emits PTX approx instructions instead.
  bool useLibdevice = true;
  Toolkit toolkit = Toolkit::find();
  int optLevel = 3;  // 0..3, the LLVM pipeline level

  // True when math goes through libdevice: asked for and found.
  bool libdeviceEnabled() const { return useLibdevice && toolkit.hasLibdevice(); }
};

// A module flag (an integer, merged by Max) naming the PTX ISA version a
// module needs past the 8.0 tk emits, as 84 for 8.4: set by the Target call
// that emits such an instruction (fp8 mma), read by the code generator.
inline constexpr const char *kMinPtxFlag = "tk.min_ptx";

// The architectures LLVM 19's NVPTX backend and tk support.
const std::vector<std::string> &validArches();
// Throws tk::Error naming the valid ones when `arch` is not one.
void checkArch(const std::string &arch);

// Wall time of emitPtx's phases, for `tkc --time` and benchmarks.
struct CodegenTimes {
  double linkMs = 0;      // libdevice parse + link (0 when not needed)
  double optimizeMs = 0;  // the O3 (or optLevel) pipeline
  double codegenMs = 0;   // NVPTX instruction selection to PTX text
};

// Optimises `m` in place (links libdevice when it calls __nv_* functions) and
// returns its PTX. Throws tk::Error for a bad arch or optLevel, when
// libdevice is needed but cannot be loaded or the module fails to compile;
// tk::InternalError when the module fails to verify.
std::string emitPtx(llvm::Module &m, const CodegenOptions &o, CodegenTimes *times = nullptr);
// emitPtx's steps before code generation (checks, target, libdevice link,
// the optimisation pipeline) on `m` in place: the IR the NVPTX code
// generator reads (`tkc compile --emit llvm-opt`). Throws as emitPtx does.
void optimizeModule(llvm::Module &m, const CodegenOptions &o);

}  // namespace tk::nvptx
