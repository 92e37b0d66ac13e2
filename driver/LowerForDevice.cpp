// The compiler's answer to a GPU that none of a bundle's PTX fits: its tile IR
// lowered through NvptxTarget for the GPU's own arch. Registered with
// tk_runtime (DeviceImpl.h) when tk_compiler is linked, so the runtime
// itself carries no LLVM.
#include "backend/nvptx/Codegen.h"
#include "driver/Pipeline.h"
#include "ir/Verifier.h"
#include "runtime/ArchSelect.h"
#include "runtime/DeviceImpl.h"

namespace tk {

namespace {
std::string lowerForDevice(const Bundle &bundle, const std::string &arch) {
  try {
    nvptx::checkArch(arch);
  } catch (const Error &) {
    throw Error(noFittingPtx(bundle, arch) + "; tk cannot generate code for " + arch);
  }
  std::string error;
  // A bundle may come from a file or a cache: its IR is checked before lowering trusts it.
  auto module = ir::parseVerifiedModule(bundle.tir, bundle.kernel + ".tir", error);
  if (!module || !module->lookup(bundle.kernel)) throw Error("bundle for '" + bundle.kernel + "': bad tile IR: " + error);
  nvptx::CodegenOptions cg;
  cg.arch = arch;
  // The same road to PTX as a compile's (driver/Pipeline.cpp).
  return pipeline::compileTo(*module->lookup(bundle.kernel), Stage::Ptx, cg);
}

const bool registered = (registerPtxLowering(&lowerForDevice), true);
}  // namespace

}  // namespace tk

// Named by tk_compiler's link options (-u) so the registrar is linked in.
extern "C" {
extern const int tk_compiler_anchor;
const int tk_compiler_anchor = tk::registered ? 1 : 0;
}
