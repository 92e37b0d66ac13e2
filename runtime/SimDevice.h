// The sim device's encoding of a tensor map (Bundle::tensorMaps), for the
// sim's DeviceImpl and for tests that check it field by field.
#pragma once

#include "backend/sim/TensorMap.h"
#include "runtime/Descriptors.h"

namespace tk::sim {

// The sim's tensor map for `s`: every dim innermost first, strides in bytes,
// unused dims zero, and the magic the sim checks.
TensorMap encodeTensorMap(const detail::TensorMapSpec &s);

}  // namespace tk::sim
