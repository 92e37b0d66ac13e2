// The sim's tensor map: the 128 bytes a launch passes by value for a kernel's
// tensor map parameter (what CUtensorMap is on a GPU), filled by the sim
// device from a descriptor (runtime/SimDevice.cpp) and read by the sim's
// emulation of cp.async.bulk.tensor. Its layout is the sim's own.
#pragma once

#include <cstdint>

namespace tk::sim {

struct TensorMap {
  static constexpr uint32_t kMagic = 0x544b4d50;  // "TKMP": the sim refuses a blob without it
  uint64_t base;                                  // global address
  uint32_t rank, elemBytes;
  uint32_t swizzle, reserved;  // swizzle in bytes: 0, 32, 64 or 128
  uint64_t dims[5];            // innermost first
  uint64_t strides[5];         // bytes, innermost first (strides[0] = elemBytes)
  uint32_t box[5];             // innermost first
  uint32_t magic;
};
static_assert(sizeof(TensorMap) == 128, "a tensor map is as large as a CUtensorMap");

}  // namespace tk::sim
