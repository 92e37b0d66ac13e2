// Where the optional CUDA toolkit lives: libdevice (precise math) and ptxas
// (PTX -> cubin, register and spill counts). tk builds and runs without it.
#pragma once

#include <string>

namespace tk::nvptx {

struct Toolkit {
  std::string root;       // toolkit root, empty when none was found
  std::string libdevice;  // <root>/nvvm/libdevice/libdevice.10.bc, empty when absent
  std::string ptxas;      // <root>/bin/ptxas, empty when absent

  // Looks in `hint`, then $CUDA_HOME, then /usr/local/cuda; the first root
  // that holds libdevice or ptxas wins. Never throws: a missing toolkit gives
  // a Toolkit with empty paths.
  static Toolkit find(const std::string &hint = "");
  // The toolkit rooted at exactly `root` (fields empty where files are missing).
  static Toolkit at(const std::string &root);

  bool hasLibdevice() const { return !libdevice.empty(); }
  bool hasPtxas() const { return !ptxas.empty(); }
};

}  // namespace tk::nvptx
