// Kernel lookup and declared tuning spaces (KernelLookup.h).
#include "runtime/KernelLookup.h"

namespace tk::detail {

lang::KernelSig findKernel(const std::vector<lang::KernelSig> &kernels, const std::string &path,
                           const std::string &kernel) {
  std::string names;
  for (const lang::KernelSig &k : kernels) {
    if (k.name == kernel) return k;
    names += (names.empty() ? "" : ", ") + k.name;
  }
  throw Error(path + ": no kernel named '" + kernel + "'" +
              (names.empty() ? " (the file defines none)" : " (kernels: " + names + ")"));
}

TuneSpace declaredSpace(const lang::KernelSig &sig) {
  TuneSpace s;
  if (!sig.tune) return s;
  for (const lang::TuneConfigSig &c : sig.tune->configs) s.configs.push_back(TuneConfig{c.consts, c.numWarps, c.numStages});
  s.key = sig.tune->key;
  s.prune = sig.tune->prune;
  return s;
}

}  // namespace tk::detail
