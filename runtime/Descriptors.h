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

namespace tk {
class DeviceImpl;
}

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

// Descriptors have rank 1 to 5, so at most 2 * 5 ABI scalars.
constexpr size_t kMaxDescriptorRank = 5;
constexpr size_t kMaxDescriptorValues = 2 * kMaxDescriptorRank;

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

// ---- Tensor maps (Bundle::tensorMaps, docs/api.md "Tensor maps") ----------

// What a device encodes one tensor map from (DeviceImpl::encodeTensorMap):
// the descriptor passed for its parameter, as descriptorValues checked it,
// and the bundle's box and swizzle. Dims outermost first, as a
// TensorDescriptor's, in elements; strides[rank - 1] is 1. Fixed arrays: a
// warm launch allocates nothing for it.
struct TensorMapSpec {
  uint64_t base = 0;  // 16-byte aligned
  std::string elem;   // "f16"
  int64_t elemBytes = 0;
  size_t rank = 0;  // 1..kMaxDescriptorRank
  int64_t shape[kMaxDescriptorRank] = {}, strides[kMaxDescriptorRank] = {}, box[kMaxDescriptorRank] = {};
  int swizzle = 0;  // bytes: 0, 32, 64 or 128
};

// One tensor map as the ABI passes it: by value, 128 bytes aligned to 64,
// as CUtensorMap.
struct alignas(64) TensorMapBlob {
  unsigned char bytes[128];
};

// Where tensor map `m` of `b` comes from: its parameter (a launch
// parameter: `argument` is its index among them), the ABI slot of the
// descriptor's base and the descriptor's type. Throws a tk::Error naming the
// rule `m` breaks, for the caller to prefix: the parameter is a non-const
// desc<..> one; the box has its rank, each dim in [1, 256], its inner dim a
// multiple of 16 bytes and, swizzled, at most the swizzle's bytes; the
// swizzle is 0, 32, 64 or 128. Bundle::fromJson checks every map with it.
struct TensorMapSource {
  const KernelParam *param = nullptr;
  size_t argument = 0;
  size_t firstSlot = 0;
  DescriptorType type;
};
TensorMapSource tensorMapSource(const Bundle &b, const TensorMapParam &m);

// Appends to `values` -- the ABI values of a launch of `b` as
// DeviceImpl::launch takes them, each descriptor's written by
// descriptorValues into uint64_t slots -- one value per b.tensorMaps entry:
// the map `device` encodes from its descriptor's values, held in `maps`
// (resized here; it must live until the launch returns). Errors name the
// map and its argument after `who` ("launch of 'k'"; empty: no prefix).
// Device::launch and generated launchers (aot::Library::launch) both pass
// their tensor maps through it.
void appendTensorMaps(DeviceImpl &device, const Bundle &b, const std::string &who, std::vector<const void *> &values,
                      std::vector<TensorMapBlob> &maps);

}  // namespace tk::detail
