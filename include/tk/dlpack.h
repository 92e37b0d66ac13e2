// DLPack interop (docs/api.md, "DLPack"): a DLManagedTensor from PyTorch,
// CuPy, JAX or NumPy as a borrowed, typed tk::Buffer with its shape and
// strides, and a tk::Buffer as a DLManagedTensor for them. Needs
// <dlpack/dlpack.h> (Debian's libdlpack-dev); tk_runtime has these functions
// when it was built with that header (TK_HAVE_DLPACK).
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <vector>

#include "tk/runtime.h"

namespace tk {

// A tensor as tk sees it: `buffer` borrows its memory (Device::borrow) from
// its first element up to the last one its strides reach, typed `dtype`.
struct TensorView {
  Buffer buffer;
  DType dtype = DType::None;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements, as DLPack counts them; a compact row-major tensor's when DLPack gave none
  int64_t elements() const;      // the product of the shape
  bool rowMajor() const;         // compact and row-major: element i at buffer offset i * size
};

// Borrows `tensor`'s memory on `device`: the tensor must live where the
// device computes (kDLCUDA or kDLCUDAManaged of this GPU; kDLCPU on the
// sim), with one lane of a tk scalar type (int8..64, float16/32/64,
// bfloat16, bool) and no negative stride; anything else is a tk::Error
// saying which. tk neither calls the tensor's deleter nor keeps it: the
// caller keeps it alive while tk uses the buffer, then deletes it.
TensorView fromDLPack(Device &device, const DLManagedTensor *tensor);

// `buffer` as a row-major tensor of `shape` (its dtype, which must be set,
// and its device: kDLCUDA with the GPU's ordinal, or kDLCPU on the sim).
// The DLManagedTensor holds a copy of the Buffer, so the memory lives until
// the consumer calls its deleter; its bytes must fit in the buffer.
DLManagedTensor *toDLPack(Device &device, const Buffer &buffer, const std::vector<int64_t> &shape);

}  // namespace tk
