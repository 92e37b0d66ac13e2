// CUDA toolkit discovery: a hint, $CUDA_HOME, then /usr/local/cuda.
#include "backend/nvptx/Toolkit.h"

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

namespace tk::nvptx {

namespace fs = std::filesystem;

static bool isFile(const fs::path &p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

Toolkit Toolkit::at(const std::string &root) {
  Toolkit t;
  if (root.empty()) return t;
  fs::path r(root);
  fs::path lib = r / "nvvm" / "libdevice" / "libdevice.10.bc";
  fs::path ptxas = r / "bin" / "ptxas";
  if (isFile(lib)) t.libdevice = lib.string();
  if (isFile(ptxas) && access(ptxas.c_str(), X_OK) == 0) t.ptxas = ptxas.string();
  if (t.hasLibdevice() || t.hasPtxas()) t.root = root;
  return t;
}

Toolkit Toolkit::find(const std::string &hint) {
  const char *env = std::getenv("CUDA_HOME");
  for (const std::string &root : {hint, std::string(env ? env : ""), std::string("/usr/local/cuda")}) {
    Toolkit t = at(root);
    if (!t.root.empty()) return t;
  }
  return {};
}

}  // namespace tk::nvptx
