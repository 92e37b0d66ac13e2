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

// Whether a parameter type names a descriptor ("desc<..."), well formed or not.
inline bool isDescriptorType(const std::string &type) { return type.rfind("desc<", 0) == 0; }

// At most 2 * 5 ABI scalars per descriptor.
constexpr size_t kMaxDescriptorValues = 10;

// Whose block shape a launch takes. Exact (Device::launch): the
// descriptor's, which must be the kernel's, or none. Variant's (the tuner
// and generated launchers, which choose the variant themselves): the
// kernel's replaces any of the same rank, and none.
enum class BlockRule { Exact, Variants };
bool takesVariantBlock(const TensorDescriptor &d, const DescriptorType &t);

// Writes the ABI values of descriptor `d` passed for a parameter of type
// `t` into `out` (room for kMaxDescriptorValues), the base first (its buffer
// is checked by the caller), and returns how many. Throws a tk::Error naming
// the rule `d` breaks, for the caller to prefix with the argument.
size_t descriptorValues(const TensorDescriptor &d, const DescriptorType &t, BlockRule rule, uint64_t *out);

// `args` with each tensor descriptor's block shape the one its parameter in
// `b` was compiled with, by BlockRule::Variants: the tuner passes one set
// of arguments to variants of several block sizes, as Triton's autotuner
// sets it in a pre-hook.
std::vector<Arg> withKernelBlocks(const Bundle &b, std::vector<Arg> args);

}  // namespace tk::detail
