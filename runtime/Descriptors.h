// Tensor descriptor parameters at the launch ABI (docs/api.md, "Tensor
// descriptors"): a kernel's `desc<T, [B0, ..]>` parameter is 2N scalars --
// the base address, N sizes (i32) and the strides of the outer N-1 dims (i64,
// in elements; the inner stride is 1) -- which tk::Device::launch fills from a
// tk::TensorDescriptor after checking it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tk/runtime.h"

namespace tk::detail {

struct DescriptorType {
  std::string elem;            // "f16"
  int64_t elemBytes = 0;       // 2
  std::vector<int64_t> block;  // {64, 32}
};

// "desc<f16,[64,32]>" as the front end writes it; nullopt for anything else
// (another type, a malformed or out-of-range one from a hand-made bundle).
std::optional<DescriptorType> parseDescriptorType(const std::string &type);

// The scalar parameters a kernel parameter is at the ABI, as (name, type)
// with types as KernelParam spells them ("*f16", "i32", "i64"): itself for
// every parameter but a descriptor. Nullopt for a malformed descriptor type.
std::optional<std::vector<std::pair<std::string, std::string>>> abiParams(const KernelParam &p);

// The ABI values of descriptor `d` passed for a parameter of type `t`, the
// base first (its buffer is checked by the caller). Throws a tk::Error that
// starts with `where` and names the rule `d` breaks.
std::vector<uint64_t> descriptorValues(const TensorDescriptor &d, const DescriptorType &t, const std::string &where);

// `args` with each tensor descriptor's block shape set to the one its
// parameter in `b` was compiled with: the tuner passes one set of arguments
// to variants of several block sizes (Triton's autotuner does it in a
// pre-hook); an empty block shape takes the variant's too. Other arguments,
// and descriptors of another rank, as given.
std::vector<Arg> withKernelBlocks(const Bundle &b, std::vector<Arg> args);

}  // namespace tk::detail
