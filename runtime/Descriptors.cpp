// Tensor descriptor arguments (Descriptors.h): parsing the parameter type a
// bundle records, its ABI expansion, and the launch-time checks, each error
// naming the rule it enforces. The rules are the tensor-memory accelerator's
// (cuTensorMapEncodeTiled's), so a launch that passes here passes there too,
// plus one of tk's own: every element the descriptor describes lies inside
// its buffer, since no hardware check would catch a read past it.
#include "runtime/Descriptors.h"

#include <cctype>
#include <climits>
#include <cstdio>

#include "runtime/DeviceImpl.h"

namespace tk::detail {

namespace {
constexpr int64_t kMaxBlock = 256;
constexpr int64_t kStrideBytes = 16;
constexpr int64_t kBaseAlign = 16;

int64_t elemBytesOf(const std::string &name) {
  static const std::pair<const char *, int64_t> table[] = {
#define TK_DTYPE(ID, IR_ID, NAME, IR_NAME, BYTES, ...) {NAME, BYTES},
#include "tk/dtype.def"
  };
  for (const auto &[n, bytes] : table)
    if (name == n && name != "bool") return bytes;
  return 0;
}

std::string list(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string hex(uint64_t v) {
  char s[32];
  std::snprintf(s, sizeof s, "0x%llx", static_cast<unsigned long long>(v));
  return s;
}
}  // namespace

std::optional<DescriptorType> parseDescriptorType(const std::string &type) {
  const std::string open = "desc<";
  if (type.rfind(open, 0) != 0 || type.size() < open.size() + 4 || type.compare(type.size() - 2, 2, "]>") != 0)
    return std::nullopt;
  const size_t comma = type.find(",[", open.size());
  if (comma == std::string::npos) return std::nullopt;
  DescriptorType t;
  t.elem = type.substr(open.size(), comma - open.size());
  t.elemBytes = elemBytesOf(t.elem);
  if (!t.elemBytes) return std::nullopt;
  const std::string dims = type.substr(comma + 2, type.size() - 2 - (comma + 2));
  size_t start = 0;
  while (start <= dims.size()) {
    size_t end = dims.find(',', start);
    if (end == std::string::npos) end = dims.size();
    const std::string d = dims.substr(start, end - start);
    if (d.empty() || d.size() > 3 || d.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    const int64_t b = std::stoll(d);
    if (b < 1 || b > kMaxBlock || std::to_string(b) != d) return std::nullopt;
    t.block.push_back(b);
    start = end + 1;
  }
  if (t.block.empty() || t.block.size() > kMaxDescriptorRank) return std::nullopt;
  return t;
}

std::optional<std::vector<std::pair<std::string, std::string>>> abiParams(const KernelParam &p) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!isDescriptorType(p.type)) {
    out.push_back({p.name, p.type});
    return out;
  }
  auto t = parseDescriptorType(p.type);
  if (!t) return std::nullopt;
  out.push_back({p.name, "*" + t->elem});
  for (size_t i = 0; i < t->block.size(); ++i) out.push_back({p.name + ".shape" + std::to_string(i), "i32"});
  for (size_t i = 0; i + 1 < t->block.size(); ++i) out.push_back({p.name + ".stride" + std::to_string(i), "i64"});
  return out;
}

bool takesVariantBlock(const TensorDescriptor &d, const DescriptorType &t) {
  return d.blockShape.empty() || d.blockShape.size() == t.block.size();
}

size_t descriptorValues(const TensorDescriptor &d, const DescriptorType &t, BlockRule rule, uint64_t *out) {
  const size_t rank = t.block.size();
  const bool variants = rule == BlockRule::Variants && takesVariantBlock(d, t);
  const std::vector<int64_t> &block = d.blockShape.empty() || variants ? t.block : d.blockShape;
  if (d.shape.size() != rank || d.strides.size() != rank || block.size() != rank)
    throw Error("the descriptor has " + std::to_string(d.shape.size()) + " sizes, " +
                std::to_string(d.strides.size()) + " strides and a block of " + std::to_string(block.size()) +
                " dims; the kernel's desc<" + t.elem + ", " + list(t.block) + "> wants " + std::to_string(rank) + " of each");
  if (block != t.block)
    throw Error("block shape " + list(block) + " is not the kernel's " + list(t.block) +
                " (the kernel was compiled for its block: build the descriptor with that one)");
  const uint64_t base = d.base.address();
  if (base % kBaseAlign != 0)
    throw Error("base address " + hex(base) + " is not " + std::to_string(kBaseAlign) +
                "-byte aligned (a descriptor's base must be, as the tensor-memory accelerator requires)");
  for (size_t i = 0; i < rank; ++i)
    if (d.shape[i] < 1 || d.shape[i] > INT32_MAX)
      throw Error("shape[" + std::to_string(i) + "] = " + std::to_string(d.shape[i]) +
                  " is not in [1, 2^31 - 1] (every size of a descriptor is at least 1)");
  if (d.strides[rank - 1] != 1)
    throw Error("strides[" + std::to_string(rank - 1) + "] = " + std::to_string(d.strides[rank - 1]) +
                " must be 1: a descriptor's inner dim is contiguous (the tensor-memory accelerator's rule)");
  for (size_t i = 0; i + 1 < rank; ++i) {
    const int64_t s = d.strides[i];
    if (s < 1 || s >= (int64_t{1} << 40) / t.elemBytes || (s * t.elemBytes) % kStrideBytes != 0)
      throw Error("strides[" + std::to_string(i) + "] = " + std::to_string(s) + " (" + t.elem +
                  " elements) must be positive, under 2^40 bytes and span a multiple of " +
                  std::to_string(kStrideBytes) + " bytes (the tensor-memory accelerator's rule): " +
                  std::to_string(kStrideBytes / t.elemBytes > 1 ? kStrideBytes / t.elemBytes : 1) +
                  " elements or a multiple of it");
  }
  // The last element the descriptor reaches, in elements from the base: up
  // to 5 products of a size under 2^31 and a stride under 2^40, so 128 bits
  // hold the sum without wrapping.
  unsigned __int128 last = 0;
  for (size_t i = 0; i < rank; ++i) last += static_cast<unsigned __int128>(d.shape[i] - 1) * uint64_t(d.strides[i]);
  const uint64_t held = d.base.size() / uint64_t(t.elemBytes);
  if (last >= held)
    throw Error("shape " + list(d.shape) + " with strides " + list(d.strides) +
                " reaches past its buffer: the last element is at offset " +
                (last > UINT64_MAX ? std::string("over 2^64") : std::to_string(static_cast<uint64_t>(last))) +
                ", and the buffer holds " + std::to_string(held) + " " + t.elem + " elements");
  size_t n = 0;
  out[n++] = base;
  for (size_t i = 0; i < rank; ++i) out[n++] = uint64_t(d.shape[i]);
  for (size_t i = 0; i + 1 < rank; ++i) out[n++] = uint64_t(d.strides[i]);
  return n;
}

std::vector<Arg> withKernelBlocks(const Bundle &b, std::vector<Arg> args) {
  const std::vector<KernelParam> params = b.launchParams();
  for (size_t i = 0; i < args.size() && i < params.size(); ++i)
    if (auto *d = std::get_if<TensorDescriptor>(&args[i]))
      if (auto t = parseDescriptorType(params[i].type); t && takesVariantBlock(*d, *t)) d->blockShape = t->block;
  return args;
}

namespace {
bool validSwizzle(int s) { return s == 0 || s == 32 || s == 64 || s == 128; }
}  // namespace

TensorMapSource tensorMapSource(const Bundle &b, const TensorMapParam &m) {
  TensorMapSource src;
  for (const KernelParam &p : b.params) {
    if (p.name == m.param) {
      src.param = &p;
      break;
    }
    if (p.isConst) continue;
    ++src.argument;
    auto abi = isDescriptorType(p.type) ? parseDescriptorType(p.type) : std::nullopt;
    src.firstSlot += abi ? 2 * abi->block.size() : 1;
  }
  if (!src.param) throw Error("the kernel has no parameter '" + m.param + "'");
  const KernelParam &p = *src.param;
  auto t = parseDescriptorType(p.type);
  if (!t) throw Error("parameter '" + p.name + "' (" + p.type + ") is not a desc<..> parameter");
  if (p.isConst) throw Error("parameter '" + p.name + "' is const, not a launch argument");
  src.type = std::move(*t);
  const std::vector<int64_t> &box = m.box;
  const size_t rank = src.type.block.size();
  if (box.size() != rank)
    throw Error("box " + list(box) + " has " + std::to_string(box.size()) + " dims; its parameter '" + p.name + "' (" +
                p.type + ") has " + std::to_string(rank));
  for (size_t i = 0; i < rank; ++i)
    if (box[i] < 1 || box[i] > kMaxBlock)
      throw Error("box[" + std::to_string(i) + "] = " + std::to_string(box[i]) + " is not in [1, " +
                  std::to_string(kMaxBlock) + "] (the tensor-memory accelerator's rule)");
  if (!validSwizzle(m.swizzle))
    throw Error("swizzle " + std::to_string(m.swizzle) + " is not 0, 32, 64 or 128 (bytes)");
  const int64_t innerBytes = box[rank - 1] * src.type.elemBytes;
  if (innerBytes % kStrideBytes != 0)
    throw Error("box " + list(box) + " of " + src.type.elem + " has an inner dim of " + std::to_string(innerBytes) +
                " bytes, not a multiple of " + std::to_string(kStrideBytes) +
                " (the tensor-memory accelerator's rule)");
  if (m.swizzle && innerBytes > m.swizzle)
    throw Error("box " + list(box) + " of " + src.type.elem + " has an inner dim of " + std::to_string(innerBytes) +
                " bytes, more than its swizzle of " + std::to_string(m.swizzle) +
                " (the tensor-memory accelerator's rule: a swizzled box row spans at most the swizzle)");
  return src;
}

void appendTensorMaps(DeviceImpl &device, const Bundle &b, const std::string &who, std::vector<const void *> &values,
                      std::vector<TensorMapBlob> &maps) {
  if (b.tensorMaps.empty()) return;
  const size_t ordinary = values.size();
  maps.resize(b.tensorMaps.size());  // before any pointer into it is taken
  for (size_t i = 0; i < b.tensorMaps.size(); ++i) {
    const TensorMapParam &m = b.tensorMaps[i];
    // Messages are built only on failure.
    auto which = [&] {
      return (who.empty() ? "" : who + ": ") + "tensor map " + std::to_string(i) + " (of '" + m.param + "')";
    };
    TensorMapSource src;
    try {
      src = tensorMapSource(b, m);
    } catch (const Error &e) {
      e.rethrowPrefixed(which() + ": ");
    }
    const size_t rank = src.type.block.size();
    if (src.firstSlot + 2 * rank > ordinary)
      throw InternalError(which() + ": the launch passes " + std::to_string(ordinary) +
                          " ABI values, too few for the descriptor it reads");
    // The values descriptorValues wrote: the base, the sizes, the outer strides.
    auto slot = [&](size_t j) { return *static_cast<const uint64_t *>(values[src.firstSlot + j]); };
    TensorMapSpec s;
    s.base = slot(0);
    s.elem = src.type.elem;
    s.elemBytes = src.type.elemBytes;
    s.rank = rank;
    for (size_t d = 0; d < rank; ++d) {
      s.shape[d] = int64_t(slot(1 + d));
      s.strides[d] = d + 1 < rank ? int64_t(slot(1 + rank + d)) : 1;
      s.box[d] = m.box[d];
    }
    s.swizzle = m.swizzle;
    try {
      device.encodeTensorMap(s, maps[i].bytes);
    } catch (const Error &e) {
      e.rethrowPrefixed(which() + ", argument " + std::to_string(src.argument) + " ('" + src.param->name + "', " +
                        src.param->type + "): ");
    }
    values.push_back(maps[i].bytes);
  }
}

}  // namespace tk::detail

namespace tk {

TensorDescriptor TensorDescriptor::contiguous(Buffer base, std::vector<int64_t> shape, std::vector<int64_t> blockShape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] < 1 || (i > 0 && strides[i] > INT64_MAX / shape[i]))
      throw Error("TensorDescriptor::contiguous: shape " + detail::list(shape) + " has a size under 1 or too many elements");
    if (i > 0) strides[i - 1] = strides[i] * shape[i];
  }
  return TensorDescriptor{std::move(base), std::move(shape), std::move(strides), std::move(blockShape)};
}

}  // namespace tk
