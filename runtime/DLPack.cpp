// tk/dlpack.h: DLPack tensors as borrowed, typed buffers and back. Only
// what a launch can use is accepted: one lane of a tk scalar type, memory
// of the device that launches, no negative strides (a Buffer starts at the
// lowest address a kernel reads).
#include "tk/dlpack.h"

#include <iterator>

#include "runtime/DeviceImpl.h"

namespace tk {

namespace {

// Each DType's DLDataType: tk/dtype.def's code, 8 bits a byte. Its codes
// include DLPack 0.8's kDLBool (6) and DLPack 1.1's float8_e4m3fn (10) and
// float8_e5m2 (12), which Debian's dlpack.h (0.6) predates.
struct DLInfo {
  uint8_t code, bits;
};
constexpr DLInfo kDLInfo[] = {
    {0, 0},  // DType::None
#define TK_DTYPE(ID, IR_ID, NAME, IR_NAME, BYTES, CLASS, NPY_DESCR, NPY_NAME, CPP_TYPE, DLPACK_CODE) \
  {DLPACK_CODE, 8 * (BYTES)},
#include "tk/dtype.def"
};

std::string dlDtypeName(const DLDataType &t) {
  static const char *const codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  std::string s = t.code < 7 ? codes[t.code] : "code " + std::to_string(t.code);
  s += std::to_string(t.bits);
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

DType dtypeOfDL(const DLDataType &t) {
  if (t.lanes != 1) return DType::None;
  for (size_t i = 1; i < std::size(kDLInfo); ++i)
    if (kDLInfo[i].code == t.code && kDLInfo[i].bits == t.bits) return static_cast<DType>(i);
  return DType::None;
}

size_t bytesOf(DType t) { return kDLInfo[static_cast<size_t>(t)].bits / 8; }

DLDataType dlDtypeOf(DType t) {
  DLDataType d{};
  d.lanes = 1;
  d.code = kDLInfo[static_cast<size_t>(t)].code;
  d.bits = kDLInfo[static_cast<size_t>(t)].bits;
  return d;
}

const char *deviceTypeName(int t) {
  switch (t) {
    case kDLCPU: return "kDLCPU";
    case kDLCUDA: return "kDLCUDA";
    case kDLCUDAHost: return "kDLCUDAHost";
    case kDLCUDAManaged: return "kDLCUDAManaged";
    case kDLROCM: return "kDLROCM";
    default: return "another DLPack device type";
  }
}

}  // namespace

int64_t TensorView::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool TensorView::rowMajor() const {
  int64_t want = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != want) return false;
    want *= shape[i];
  }
  return true;
}

TensorView fromDLPack(Device &device, const DLManagedTensor *tensor) {
  if (!tensor) throw Error("fromDLPack: a null DLManagedTensor");
  const DLTensor &t = tensor->dl_tensor;
  const std::string who = "fromDLPack: a tensor ";
  const bool sim = device.kind() == "sim";
  const int type = t.device.device_type;
  if (sim ? type != kDLCPU : (type != kDLCUDA && type != kDLCUDAManaged))
    throw Error(who + "on " + deviceTypeName(type) + " (device_type " + std::to_string(type) + ") cannot be used on " +
                device.name() + ", which takes " + (sim ? "kDLCPU (host) tensors" : "kDLCUDA tensors"));
  if (!sim && t.device.device_id != device.ordinal())
    throw Error(who + "of CUDA device " + std::to_string(t.device.device_id) + " cannot be used on CUDA device " +
                std::to_string(device.ordinal()));
  TensorView v;
  v.dtype = dtypeOfDL(t.dtype);
  if (v.dtype == DType::None)
    throw Error(who + "of " + dlDtypeName(t.dtype) +
                ": tk takes one lane of int8/16/32/64, float16/32/64, bfloat16, bool, float8_e4m3fn or float8_e5m2");
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape)) throw Error(who + "with no shape");
  v.shape.assign(t.shape, t.shape + t.ndim);
  v.strides.resize(t.ndim);
  int64_t compact = 1;
  for (int i = t.ndim; i-- > 0;) {
    if (v.shape[i] < 0) throw Error(who + "with a negative extent in dimension " + std::to_string(i));
    v.strides[i] = t.strides ? t.strides[i] : compact;  // null strides: compact row-major (DLPack's rule)
    compact *= v.shape[i];
  }
  // The elements the strides reach: from the first to 1 + the furthest offset.
  int64_t last = 0;
  for (int i = 0; i < t.ndim; ++i) {
    if (v.shape[i] == 0) last = -1;
    if (last < 0) break;
    if (v.strides[i] < 0)
      throw Error(who + "with a negative stride in dimension " + std::to_string(i) +
                  ": a tk buffer starts at its lowest address; make it contiguous first");
    last += (v.shape[i] - 1) * v.strides[i];
  }
  const size_t bytes = last < 0 ? 0 : size_t(last + 1) * bytesOf(v.dtype);
  char *data = static_cast<char *>(t.data);
  if (data) data += t.byte_offset;
  v.buffer = device.borrow(data, bytes, v.dtype);
  return v;
}

namespace {
// What a DLManagedTensor from toDLPack owns: the buffer and the arrays.
struct Exported {
  Buffer buffer;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
};
}  // namespace

DLManagedTensor *toDLPack(Device &device, const Buffer &buffer, const std::vector<int64_t> &shape) {
  if (!buffer) throw Error("toDLPack: an empty buffer");
  if (buffer.dtype() == DType::None)
    throw Error("toDLPack: an untyped buffer; say what it holds with buffer.as(tk::DType::F32) (or the type it holds)");
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("toDLPack: a negative extent in the shape");
    n *= d;
  }
  if (size_t(n) * bytesOf(buffer.dtype()) > buffer.size())
    throw Error("toDLPack: a shape of " + std::to_string(n) + " " + dtypeName(buffer.dtype()) + " elements needs " +
                std::to_string(size_t(n) * bytesOf(buffer.dtype())) + " bytes; the buffer has " +
                std::to_string(buffer.size()));
  auto e = std::make_unique<Exported>();
  e->buffer = buffer;
  e->shape = shape;
  e->strides.resize(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    e->strides[i] = stride;
    stride *= shape[i];
  }
  DLTensor &t = e->managed.dl_tensor;
  t.data = reinterpret_cast<void *>(uintptr_t(buffer.address()));
  t.device.device_type = device.kind() == "sim" ? kDLCPU : kDLCUDA;
  t.device.device_id = device.kind() == "sim" ? 0 : device.ordinal();
  t.ndim = int32_t(shape.size());
  t.dtype = dlDtypeOf(buffer.dtype());
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  t.byte_offset = 0;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = [](DLManagedTensor *self) { delete static_cast<Exported *>(self->manager_ctx); };
  return &e.release()->managed;
}

}  // namespace tk
