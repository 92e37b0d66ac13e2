// Internal to tune/: the @tune space a kernel declares, as a tk::TuneSpace
// (for TuneSpace::fromFile and the tuner).
#pragma once

#include "lang/Frontend.h"
#include "tk/tune.h"

namespace tk::detail {

// The space `sig`'s @tune declares (empty when it has none).
TuneSpace declaredSpace(const lang::KernelSig &sig);

}  // namespace tk::detail
