// Internal to runtime/: which of a bundle's PTX a GPU of a given arch runs,
// and the message when none fits. Apart from CudaDevice so it is testable
// without a GPU.
#pragma once

#include <string>

#include "tk/compiler.h"

namespace tk {

// The arch of the newest PTX in `bundle` that a GPU of arch `device`
// ("sm_86") can JIT: not newer than the device, and an arch-specific one
// ("sm_90a") only on that very arch. "" when none fits.
std::string bestPtxArch(const Bundle &bundle, const std::string &device);

// The arch of the cubin in `bundle` a GPU of arch `device` loads instead of
// JIT-compiling PTX: the one bestPtxArch picks when the bundle carries its
// cubin and it is the device's own arch ("sm_90" or "sm_90a" on sm_90); ""
// otherwise (no cubin, or only older archs': their PTX is JIT-compiled).
std::string bestCubinArch(const Bundle &bundle, const std::string &device);

// "bundle for 'K' carries PTX for sm_90a, sm_100 but this GPU is sm_86 ...":
// what a load says when bestPtxArch finds nothing and no compiler is linked.
std::string noFittingPtx(const Bundle &bundle, const std::string &device);

}  // namespace tk
