// Lowering of the tensor-memory-accelerator ops (ir/Ops.def: tma_*) that
// pipeline-dot-operands makes of host-descriptor loads on sm_90a, and the
// Target's defaults for a machine without TMA.
#include "lower/FunctionLowering.h"
#include "tk/error.h"

namespace tk::lower {

namespace {
[[noreturn]] void noTma(const char *what) {
  throw tk::InternalError(std::string("Target::") + what + ": this target has no tensor memory accelerator");
}
}  // namespace

void Target::markTensorMapParam(llvm::Function &, unsigned) const { noTma("markTensorMapParam"); }
void Target::mbarrierInit(llvm::IRBuilderBase &, llvm::Value *, int) const { noTma("mbarrierInit"); }
void Target::mbarrierInval(llvm::IRBuilderBase &, llvm::Value *) const { noTma("mbarrierInval"); }
void Target::mbarrierArriveExpectTx(llvm::IRBuilderBase &, llvm::Value *, int) const {
  noTma("mbarrierArriveExpectTx");
}
void Target::mbarrierWait(llvm::IRBuilderBase &, llvm::Value *, llvm::Value *) const { noTma("mbarrierWait"); }
void Target::tmaLoad(llvm::IRBuilderBase &, llvm::Value *, llvm::Value *, const std::vector<llvm::Value *> &,
                     llvm::Value *) const {
  noTma("tmaLoad");
}

}  // namespace tk::lower
