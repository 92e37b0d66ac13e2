// The sim's tensor map: what a kernel's by-value tensor-map parameter holds on
// the sim, in place of the driver's opaque CUtensorMap. The host fills it at
// launch (runtime/SimDevice.cpp); cp.async.bulk.tensor reads it (TensorCopy.cpp).
#pragma once

#include <cstdint>

namespace tk::sim {

// "TKMP": a blob without it was not made by the host side, and the sim refuses it.
inline constexpr uint32_t kTensorMapMagic = 0x544b4d50;
inline constexpr uint32_t kTensorMapMaxRank = 5;

// 128 bytes, like a CUtensorMap, and passed like one (byval, 64-byte aligned).
// Every array is innermost dimension first, as PTX orders coordinates.
struct TensorMap {
  uint64_t base;                        // global address of element (0, .., 0)
  uint32_t rank, elemBytes;             // rank 1..5; elemBytes 1, 2, 4 or 8
  uint32_t swizzle, reserved;           // swizzle: 0, 32, 64 or 128 bytes
  uint64_t dims[kTensorMapMaxRank];     // elements
  uint64_t strides[kTensorMapMaxRank];  // bytes; strides[0] = elemBytes
  uint32_t box[kTensorMapMaxRank];      // elements per copy, 1..256 each
  uint32_t magic;                       // kTensorMapMagic
};
static_assert(sizeof(TensorMap) == 128, "a tensor map is 128 bytes, as CUtensorMap");

}  // namespace tk::sim
