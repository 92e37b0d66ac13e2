// Memory and streams the program owns, used by tk (Device::borrow,
// Device::borrowStream): tk records them and never frees them, so a CUDA
// program's cudaMalloc memory and its stream order tk's work with its own.
#include "runtime/DeviceImpl.h"

namespace tk {

Buffer Device::borrow(void *address, size_t bytes, DType dtype) {
  if (!address && bytes)
    throw Error("Device::borrow: a null address with " + std::to_string(bytes) +
                " bytes; borrow an allocation the program owns");
  const uint64_t a = reinterpret_cast<uintptr_t>(address);
  if (a + bytes < a) throw Error("Device::borrow: " + std::to_string(bytes) + " bytes past the address wrap around");
  auto alloc = std::make_shared<Allocation>();
  alloc->address = a;
  alloc->size = bytes;
  alloc->borrowed = true;
  // Adopted before the device is set: a failure (a range overlapping memory
  // the sim already knows) leaves nothing to forget.
  alloc->adoptKey = impl_->adopt(a, bytes);
  alloc->device = impl_;
  Buffer b;
  b.alloc_ = std::move(alloc);
  b.size_ = bytes;
  b.dtype_ = dtype;
  return b;
}

Stream Device::borrowStream(void *native) {
  Stream s(*this);
  auto state = std::make_shared<StreamState>();
  state->device = impl_;
  state->native = impl_->borrowStream(native);
  state->borrowed = true;
  state->borrowedHandle = native;
  s.state_ = std::move(state);
  return s;
}

void *Stream::native() const {
  if (!state_) return nullptr;
  if (state_->borrowed) return state_->borrowedHandle;
  return state_->device->streamHandle(state_->native.get());
}

bool Stream::borrowed() const { return state_ && state_->borrowed; }

}  // namespace tk
