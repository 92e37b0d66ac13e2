// aot::Library (tk/aot.h): the embedded bundles of a generated launcher file,
// parsed and loaded once per device, and the launch path of the typed
// launchers -- a lookup under a mutex and the device's launch, no argument
// vector of variants, no exceptions out.
#include "tk/aot.h"

#include <cstdio>
#include <new>

#include "runtime/Descriptors.h"
#include "runtime/DeviceImpl.h"

namespace tk {

namespace {
constexpr int kCudaErrorOutOfMemory = 2;  // CUresult's CUDA_ERROR_OUT_OF_MEMORY
}  // namespace

const char *statusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::Ok: return "ok";
    case StatusCode::InvalidArgument: return "invalid argument";
    case StatusCode::NoVariant: return "no variant";
    case StatusCode::Unavailable: return "device unavailable";
    case StatusCode::DeviceError: return "device error";
    case StatusCode::LoadFailed: return "load failed";
    case StatusCode::OutOfMemory: return "out of memory";
    case StatusCode::Internal: return "internal error";
  }
  return "unknown status code";
}

StatusCode Status::codeOf(const std::exception &e) {
  if (dynamic_cast<const std::bad_alloc *>(&e)) return StatusCode::OutOfMemory;
  if (dynamic_cast<const CudaUnavailable *>(&e)) return StatusCode::Unavailable;
  if (auto *c = dynamic_cast<const CudaError *>(&e))
    return c->code() == kCudaErrorOutOfMemory ? StatusCode::OutOfMemory : StatusCode::DeviceError;
  if (dynamic_cast<const SimError *>(&e)) return StatusCode::DeviceError;
  if (dynamic_cast<const CompileError *>(&e)) return StatusCode::LoadFailed;  // a JIT of the embedded kernel
  if (dynamic_cast<const InternalError *>(&e)) return StatusCode::Internal;
  if (dynamic_cast<const Error *>(&e)) return StatusCode::InvalidArgument;
  return StatusCode::Internal;
}

Status Status::of(const std::exception &e, const std::string &prefix) {
  return error(codeOf(e), prefix + ": " + e.what());
}

}  // namespace tk

namespace tk::aot {

struct Library::Loaded {
  const DeviceImpl *device = nullptr;
  std::vector<Kernel> kernels;  // one per embedded variant, in order
};

Library::Library(const char *name, uint64_t hash, const EmbeddedBundle *bundles, size_t count)
    : name_(name), hash_(hash), bundles_(bundles), count_(count) {}

Library::~Library() = default;

namespace {
std::string hex(uint64_t v) {
  char s[24];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(v));
  return s;
}
}  // namespace

// The device a stream's work runs on (a created stream keeps its own alive).
const std::shared_ptr<DeviceImpl> &Library::deviceOf(const Stream &s) {
  return s.state_ ? s.state_->device : s.device_->impl_;
}

bool Library::onDevice(const Stream &s, const Buffer &b) { return b.alloc_ && b.alloc_->device == deviceOf(s); }

// An error naming `who` when work cannot be queued on `s`.
Status Library::usable(const Stream &s, const char *who) {
  if (s.state_ && s.state_->device->closed)
    return Status::error(StatusCode::Unavailable, std::string(who) + ": the stream's device has been destroyed");
  return {};
}

Library::Loaded *Library::find(const Stream &s) {
  const DeviceImpl *d = deviceOf(s).get();
  for (auto &l : loaded_)
    if (l->device == d) return l.get();
  return nullptr;
}

// With mutex_ held.
Status Library::loadOn(const Stream &s, uint64_t headerHash, Loaded *&out) {
  if (headerHash != hash_)
    return Status::error(StatusCode::LoadFailed, std::string(name_) + ".h does not match " + name_ + ".cpp (header generated as " +
                         hex(headerHash) + ", sources as " + hex(hash_) +
                         "): the header is stale against the kernels compiled in; regenerate both with `tkc compile "
                         "--emit cpp` (tk_add_kernels does this when a .tk file changes) and rebuild");
  if ((out = find(s))) return {};
  auto l = std::make_unique<Loaded>();
  const std::shared_ptr<DeviceImpl> &device = deviceOf(s);
  l->device = device.get();
  for (size_t i = 0; i < count_; ++i) {
    try {
      Bundle b = Bundle::fromJson(std::string(bundles_[i].json, bundles_[i].size),
                                  std::string(name_) + ".cpp: embedded bundle " + std::to_string(i));
      for (size_t c = 0; c < bundles_[i].cubinCount; ++c) {
        const EmbeddedCubin &cubin = bundles_[i].cubins[c];
        b.cubins[cubin.arch].assign(reinterpret_cast<const char *>(cubin.data), cubin.size);
      }
      Kernel k;
      k.handle_ = device->load(b);
      k.bundle_ = std::move(b);
      k.device_ = device;
      l->kernels.push_back(std::move(k));
    } catch (const std::exception &e) {
      // A device that is not there, or memory, says so; anything else that
      // stops a bundle from loading is the load's failure.
      Status st = Status::of(e, std::string(name_) + ": cannot load on " + l->device->name());
      if (st.code() == StatusCode::Unavailable || st.code() == StatusCode::OutOfMemory) return st;
      return Status::error(StatusCode::LoadFailed, st.message());
    } catch (...) {  // a generated launcher throws nothing
      return Status::error(StatusCode::Internal,
                           std::string(name_) + ": cannot load on " + l->device->name() + ": unknown exception");
    }
  }
  loaded_.push_back(std::move(l));
  out = loaded_.back().get();
  return {};
}

Status Library::load(const Stream &s, uint64_t headerHash) {
  if (Status st = usable(s, name_); !st) return st;
  std::lock_guard<std::mutex> lock(mutex_);
  Loaded *l = nullptr;
  return loadOn(s, headerHash, l);
}

void Library::unload(const Stream &s) {
  std::lock_guard<std::mutex> lock(mutex_);
  const DeviceImpl *d = deviceOf(s).get();
  for (auto it = loaded_.begin(); it != loaded_.end(); ++it)
    if ((*it)->device == d) {
      loaded_.erase(it);
      return;
    }
}

const Bundle *Library::bundle(const Stream &s, size_t variant, Status &status) {
  if (!(status = usable(s, name_))) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  Loaded *l = find(s);
  if (!l && !(status = loadOn(s, hash_, l))) return nullptr;
  if (variant >= l->kernels.size()) {
    status = Status::error(StatusCode::NoVariant, std::string(name_) + ": no variant " + std::to_string(variant));
    return nullptr;
  }
  return &l->kernels[variant].bundle();
}

Status Library::launch(const Stream &s, uint64_t headerHash, const char *kernel, size_t variant, Dim3 grid,
                       const void *const *args, size_t count) {
  if (Status st = usable(s, kernel); !st) return st;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0)
    return Status::error(StatusCode::InvalidArgument, std::string(kernel) + ": argument 'grid' (" + std::to_string(grid.x) + ", " +
                         std::to_string(grid.y) + ", " + std::to_string(grid.z) +
                         ") has a zero dimension: nothing to launch");
  if (grid.y > 65535 || grid.z > 65535)
    return Status::error(StatusCode::InvalidArgument,
                         std::string(kernel) + ": argument 'grid': y and z are limited to 65535");
  Loaded *l = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (headerHash != hash_ || !(l = find(s)))
      if (Status st = loadOn(s, headerHash, l); !st) return st;
  }
  if (variant >= l->kernels.size())
    return Status::error(StatusCode::NoVariant, std::string(kernel) + ": no variant " + std::to_string(variant));
  const Kernel &k = l->kernels[variant];
  // The device takes its arguments as a vector; one per thread, reused, so a
  // launch allocates nothing once warm. The variant's tensor maps follow the
  // values the launcher packed, encoded from its descriptors' as
  // Device::launch encodes them.
  thread_local std::vector<const void *> values;
  thread_local std::vector<detail::TensorMapBlob> maps;
  values.assign(args, args + count);
  try {
    detail::appendTensorMaps(*k.device_, k.bundle_, "", values, maps);
    k.device_->launch(k.handle_.get(), k.bundle_, grid, values, LaunchOptions{},
                      s.state_ ? s.state_->native.get() : nullptr);
  } catch (const std::exception &e) {
    return Status::of(e, kernel);
  } catch (...) {  // a generated launcher throws nothing
    return Status::error(StatusCode::Internal, std::string(kernel) + ": unknown exception");
  }
  return {};
}

Status descriptorArgs(Library &library, const Stream &s, size_t variant, const char *kernel, const char *arg,
                      const TensorDescriptor &d, uint64_t *slots) {
  Status status;
  const Bundle *b = library.bundle(s, variant, status);
  if (!b) return status;
  const KernelParam *p = nullptr;
  for (const KernelParam &q : b->params)
    if (q.name == arg) p = &q;
  auto t = p ? detail::parseDescriptorType(p->type) : std::nullopt;
  if (!t)
    return Status::error(StatusCode::LoadFailed, std::string(kernel) + ": its variant " + std::to_string(variant) +
                                                     " has no descriptor parameter '" + arg + "': a stale header");
  // Messages are built only on failure: a warm launch allocates nothing.
  auto invalid = [&](const std::string &why) {
    return Status::error(StatusCode::InvalidArgument,
                         std::string(kernel) + ": argument '" + arg + "' (" + p->type + ")" + why);
  };
  if (!d.base) return invalid(" has an empty base buffer");
  if (!Library::onDevice(s, d.base))
    return invalid(" has a base buffer of another device (or of one destroyed): buffers are used on the Device that "
                   "made them");
  if (d.base.dtype() != DType::None && dtypeName(d.base.dtype()) != t->elem)
    return invalid(std::string(" has a base buffer of ") + dtypeName(d.base.dtype()) + ", not " + t->elem);
  try {
    detail::descriptorValues(d, *t, detail::BlockRule::Variants, slots);
  } catch (const std::exception &e) {
    return invalid(std::string(": ") + e.what());
  }
  return {};
}

Status nullPointer(const char *kernel, const char *arg, const char *type) {
  return Status::error(StatusCode::InvalidArgument,
                       std::string(kernel) + ": argument '" + arg + "' (" + type + ") is a null pointer");
}

Status misaligned(const char *kernel, const char *arg, const char *type, const void *address, int64_t align) {
  char a[32];
  std::snprintf(a, sizeof a, "%p", address);
  return Status::error(StatusCode::InvalidArgument,
                       std::string(kernel) + ": argument '" + arg + "' (" + type + ") = " + a + " is not " +
                       std::to_string(align) + "-byte aligned as the kernel assumes (declare the parameter `" + arg +
                       ": " + type + " align(N)` to accept less)");
}

Status noVariant(const char *kernel, const std::string &wanted, const char *compiled) {
  return Status::error(StatusCode::NoVariant, std::string(kernel) + ": no variant compiled for " + wanted + " (compiled: " + compiled +
                       "); add it to the -D sets given to tkc (tk_add_kernels DEFINES)");
}

Status borrowStream(Device &device, void *native, Stream &out) {
  try {
    out = device.borrowStream(native);
  } catch (const std::exception &e) {
    return Status::of(e, "borrowing the stream");
  }
  return {};
}

Status nullHandle(const char *who, const char *handle) {
  return Status::error(StatusCode::InvalidArgument, std::string(who) + ": a null " + handle);
}

}  // namespace tk::aot
