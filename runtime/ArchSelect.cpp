// PTX selection for a GPU's arch (ArchSelect.h).
#include "runtime/ArchSelect.h"

namespace tk {

namespace {
// sm_XX -> XX, with sm_90a counted as 90; -1 for what is not an arch.
int archNumber(const std::string &arch) {
  if (arch.rfind("sm_", 0) != 0) return -1;
  try {
    return std::stoi(arch.substr(3));
  } catch (const std::exception &) {
    return -1;
  }
}
}  // namespace

std::string bestPtxArch(const Bundle &bundle, const std::string &device) {
  const int cc = archNumber(device);
  std::string best;
  for (const auto &[arch, ptx] : bundle.ptx) {
    const int a = archNumber(arch);
    const bool fits = a >= 0 && a <= cc && (arch.back() != 'a' || arch == device || a == cc);
    if (fits && (best.empty() || a > archNumber(best))) best = arch;
  }
  return best;
}

std::string bestCubinArch(const Bundle &bundle, const std::string &device) {
  const std::string arch = bestPtxArch(bundle, device);
  if (arch.empty() || archNumber(arch) != archNumber(device) || !bundle.cubins.count(arch)) return "";
  return arch;
}

std::string noFittingPtx(const Bundle &bundle, const std::string &device) {
  std::string archs;
  for (const auto &[arch, ptx] : bundle.ptx) archs += (archs.empty() ? "" : ", ") + arch;
  return "bundle for '" + bundle.kernel + "' carries PTX for " + (archs.empty() ? "no arch" : archs) +
         " but this GPU is " + device +
         ", which runs PTX of its own arch or older ones only: compile for " + device +
         " too (tkc --arch " + device + ", tk_add_kernels ARCHS), or link tk::compiler to lower it at load time";
}

}  // namespace tk
