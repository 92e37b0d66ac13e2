// tk::Device: device selection, buffers, and launches with arguments checked
// against the kernel's signature before anything runs.
#include <cctype>

#include <iterator>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "runtime/Descriptors.h"
#include "runtime/DeviceImpl.h"

namespace tk {

Allocation::~Allocation() {
  if (borrowed) {
    if (device) device->forget(adoptKey);
    return;
  }
  if (device && address) {
    device->release(address);
    device->live -= size;
  }
}

uint64_t Buffer::address() const { return alloc_ ? alloc_->address + offset_ : 0; }
bool Buffer::borrowed() const { return alloc_ && alloc_->borrowed; }

Buffer Buffer::offset(size_t bytes) const {
  if (!alloc_) throw Error("offset of an empty buffer");
  if (bytes > size_)
    throw Error("buffer offset " + std::to_string(bytes) + " is past its end (" + std::to_string(size_) + " bytes)");
  Buffer b = *this;
  b.offset_ += bytes;
  b.size_ -= bytes;
  return b;
}

namespace {
// Registered device kinds (DeviceImpl.h). Function-local statics, so
// registrars running during static initialisation find them constructed.
std::mutex &registryMutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, DeviceOpener> &registry() {
  static std::map<std::string, DeviceOpener> r;
  return r;
}
std::atomic<PtxLowering> &ptxLowering() {
  static std::atomic<PtxLowering> p{nullptr};
  return p;
}

// The opener of `kind`; tk::Error naming what is linked when there is none.
DeviceOpener openerOf(const std::string &kind, const std::string &spec) {
  std::lock_guard<std::mutex> lock(registryMutex());
  auto it = registry().find(kind);
  if (it != registry().end()) return it->second;
  if (kind == "sim")
    throw Error("device '" + spec +
                "': the sim is not linked into this program (link tk::sim, or tk::compiler, "
                "which brings it)");
  throw Error("unknown device '" + spec + "': expected sim, sim:racecheck, sim:overflow, cuda or cuda:N");
}
}  // namespace

void registerDevice(const std::string &kind, DeviceOpener open) {
  std::lock_guard<std::mutex> lock(registryMutex());
  registry()[kind] = open;
}

void registerPtxLowering(PtxLowering lower) { ptxLowering() = lower; }
PtxLowering registeredPtxLowering() { return ptxLowering().load(); }

Device::Device(std::shared_ptr<DeviceImpl> impl) : impl_(std::move(impl)) {}
Device::~Device() { impl_->closed = true; }

namespace {
// Why a buffer or kernel of `owner` cannot be used on `self`, or "".
std::string foreign(const std::shared_ptr<DeviceImpl> &owner, const std::shared_ptr<DeviceImpl> &self,
                    const std::string &what) {
  if (owner == self) return "";
  return what + " belongs to " +
         (owner->closed ? "a device that has been destroyed" : "another device (" + owner->name() + ")") +
         ": buffers and kernels are used on the Device that made them";
}
}  // namespace

std::unique_ptr<Device> Device::open() {
  if (const char *env = std::getenv("TK_DEVICE"); env && *env) return open(std::string(env));
  try {
    return std::unique_ptr<Device>(new Device(openCudaDevice(0)));
  } catch (const Error &gpu) {
    // No GPU: the sim when it is linked, else why there is no GPU.
    {
      std::lock_guard<std::mutex> lock(registryMutex());
      if (!registry().count("sim"))
        gpu.rethrowWithMessage(std::string(gpu.what()) + "; and the sim is not linked into this program (link tk::sim)");
    }
    return open(std::string("sim"));
  }
}

std::unique_ptr<Device> Device::open(const std::string &spec) {
  if (spec.empty()) return open();
  if (spec != "cuda" && spec.rfind("cuda:", 0) != 0) {
    const size_t colon = spec.find(':');
    const std::string kind = spec.substr(0, colon);
    const std::string option = colon == std::string::npos ? "" : spec.substr(colon + 1);
    return std::unique_ptr<Device>(new Device(openerOf(kind, spec)(option)));
  }
  if (spec == "cuda") return std::unique_ptr<Device>(new Device(openCudaDevice(0)));
  const std::string n = spec.substr(5);
  char *end = nullptr;
  long ordinal = std::strtol(n.c_str(), &end, 10);
  if (n.empty() || *end || ordinal < 0 || ordinal > 1024)
    throw Error("bad device '" + spec + "': expected cuda:N with N a device number");
  return std::unique_ptr<Device>(new Device(openCudaDevice(static_cast<int>(ordinal))));
}

std::unique_ptr<Device> Device::open(const std::string &spec, const DeviceOptions &options) {
  if (spec.empty()) {
    const char *env = std::getenv("TK_DEVICE");
    if (env && *env) return open(std::string(env), options);
    std::unique_ptr<Device> dev = open();  // a GPU ignores `workers`; the sim it fell back to takes them
    return options.workers && dev->kind() == "sim" ? open("sim", options) : std::move(dev);
  }
  if (!options.workers || spec == "cuda" || spec.rfind("cuda:", 0) == 0) return open(spec);
  if (spec != "sim" && spec.rfind("sim:", 0) != 0)
    throw Error("bad device '" + spec + "': DeviceOptions::workers is for the sim");
  return open(spec + (spec == "sim" ? ":" : ",") + "workers=" + std::to_string(options.workers));
}

std::string Device::kind() const { return impl_->kind(); }
int Device::ordinal() const { return impl_->ordinal(); }
std::string Device::arch() const { return impl_->arch(); }
void Device::setRaceCheck(bool on) { impl_->setRaceCheck(on); }
void Device::setPrintSink(std::function<void(const std::string &)> sink) { impl_->setPrintSink(std::move(sink)); }
std::string Device::name() const { return impl_->name(); }
DeviceProperties Device::properties() const { return impl_->properties(); }

Dim3 Dim3::perSm(const Device &dev, uint32_t perSm) {
  const int sms = dev.properties().multiprocessors;
  if (sms <= 0 || perSm == 0)
    throw Error("Dim3::perSm: " + dev.properties().name + " reports " + std::to_string(sms) +
                " multiprocessors and " + std::to_string(perSm) + " programs per multiprocessor were asked for");
  return {uint32_t(sms) * perSm, 1, 1};
}
size_t Device::liveBytes() const { return impl_->live; }
size_t Device::peakBytes() const { return impl_->peak; }
void Device::resetPeakBytes() { impl_->peak = impl_->live.load(); }

Buffer Device::alloc(size_t bytes) {
  if (bytes == 0) throw Error("cannot allocate 0 bytes");
  auto a = std::make_shared<Allocation>();
  a->address = impl_->allocate(bytes);
  a->size = bytes;
  a->device = impl_;
  size_t now = impl_->live += bytes;
  size_t peak = impl_->peak;
  while (now > peak && !impl_->peak.compare_exchange_weak(peak, now)) {
  }
  Buffer b;
  b.alloc_ = std::move(a);
  b.size_ = bytes;
  return b;
}

namespace {
void checkCopyTo(const Buffer &dst, const void *src, size_t bytes, const std::string &why) {
  if (!dst) throw Error("copy to an empty buffer");
  if (!src && bytes) throw Error("copy to a buffer from a null host pointer");
  if (!why.empty()) throw Error("copy to a buffer: " + why);
  if (bytes > dst.size())
    throw Error("copy of " + std::to_string(bytes) + " bytes into a buffer of " + std::to_string(dst.size()));
}
void checkCopyFrom(void *dst, const Buffer &src, size_t bytes, const std::string &why) {
  if (!src) throw Error("copy from an empty buffer");
  if (!dst && bytes) throw Error("copy from a buffer to a null host pointer");
  if (!why.empty()) throw Error("copy from a buffer: " + why);
  if (bytes > src.size())
    throw Error("copy of " + std::to_string(bytes) + " bytes out of a buffer of " + std::to_string(src.size()));
}
}  // namespace

void Device::copyToDevice(const Buffer &dst, const void *src, size_t bytes) {
  checkCopyTo(dst, src, bytes, dst ? foreign(dst.alloc_->device, impl_, "the buffer") : "");
  impl_->copyToDevice(dst.address(), src, bytes);
}

void Device::copyToHost(void *dst, const Buffer &src, size_t bytes) {
  checkCopyFrom(dst, src, bytes, src ? foreign(src.alloc_->device, impl_, "the buffer") : "");
  impl_->copyToHost(dst, src.address(), bytes);
}

void Device::copyToDeviceAsync(const Buffer &dst, const void *src, size_t bytes, const Stream &stream) {
  checkCopyTo(dst, src, bytes, dst ? foreign(dst.alloc_->device, impl_, "the buffer") : "");
  void *native = nativeStream(&stream, "copy to a buffer");
  if (!native) return impl_->copyToDevice(dst.address(), src, bytes);
  impl_->copyToDeviceAsync(dst.address(), src, bytes, native);
}

void Device::copyToHostAsync(void *dst, const Buffer &src, size_t bytes, const Stream &stream) {
  checkCopyFrom(dst, src, bytes, src ? foreign(src.alloc_->device, impl_, "the buffer") : "");
  void *native = nativeStream(&stream, "copy from a buffer");
  if (!native) return impl_->copyToHost(dst, src.address(), bytes);
  impl_->copyToHostAsync(dst, src.address(), bytes, native);
}

// ---- streams and events ---------------------------------------------------

Stream Device::createStream() {
  Stream s(*this);
  auto state = std::make_shared<StreamState>();
  state->device = impl_;
  state->native = impl_->createStream();
  s.state_ = std::move(state);
  return s;
}

void Device::synchronize() { impl_->synchronize(nullptr); }

void *Device::nativeStream(const Stream *stream, const std::string &what) const {
  if (!stream) return nullptr;
  const DeviceImpl *owner = stream->state_ ? stream->state_->device.get() : stream->device_->impl_.get();
  if (owner != impl_.get())
    throw Error(what + ": the stream belongs to " +
                (stream->state_ && stream->state_->device->closed ? std::string("a device that has been destroyed")
                                                                  : "another device (" + owner->name() + ")") +
                ", not to this one (" + impl_->name() + "): a stream runs work only on the Device that created it");
  return stream->state_ ? stream->state_->native.get() : nullptr;
}

namespace {
// The device of a created stream, checked to be open.
DeviceImpl &openDevice(const StreamState &state, const char *what) {
  if (state.device->closed) throw Error(std::string(what) + ": the stream's device has been destroyed");
  return *state.device;
}
}  // namespace

Device &Stream::device() const {
  if (!valid()) throw Error("Stream::device: the stream's device has been destroyed");
  return *device_;
}

bool Stream::valid() const { return !state_ || !state_->device->closed; }

void Stream::synchronize() const {
  if (!state_) return device_->impl_->synchronize(nullptr);
  openDevice(*state_, "Stream::synchronize").synchronize(state_->native.get());
}

Event Stream::record() const {
  Event e;
  if (!state_) {
    e.device_ = device_->impl_;
    e.handle_ = e.device_->recordEvent(nullptr);
  } else {
    e.device_ = state_->device;
    e.handle_ = openDevice(*state_, "Stream::record").recordEvent(state_->native.get());
  }
  return e;
}

void Event::synchronize() const {
  if (!handle_) throw Error("Event::synchronize: an event that was never recorded");
  device_->synchronizeEvent(handle_.get());
}

double Event::elapsedMs(const Event &start, const Event &end) {
  if (!start.handle_ || !end.handle_) throw Error("Event::elapsedMs: an event that was never recorded");
  if (start.device_ != end.device_) throw Error("Event::elapsedMs: the two events were recorded on different devices");
  return start.device_->elapsedMs(start.handle_.get(), end.handle_.get());
}

std::shared_ptr<void> DeviceImpl::recordEvent(void * /*stream*/) {
  return std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
}

double DeviceImpl::elapsedMs(void *start, void *end) {
  using T = std::chrono::steady_clock::time_point;
  return std::chrono::duration<double, std::milli>(*static_cast<T *>(end) - *static_cast<T *>(start)).count();
}

void Device::fill(const Buffer &buffer, const Arg &value) {
  if (!buffer) throw Error("fill of an empty buffer");
  if (std::holds_alternative<Buffer>(value)) throw Error("fill takes a scalar value, not a buffer");
  if (std::holds_alternative<TensorDescriptor>(value)) throw Error("fill takes a scalar value, not a tensor descriptor");
  if (auto why = foreign(buffer.alloc_->device, impl_, "the buffer"); !why.empty())
    throw Error("fill of a buffer: " + why);
  const void *pattern = std::visit([](const auto &v) -> const void * { return &v; }, value);
  const size_t bytes = std::visit([](const auto &v) { return sizeof v; }, value);
  if (buffer.size() % bytes != 0)
    throw Error("fill of a buffer of " + std::to_string(buffer.size()) + " bytes with " + std::to_string(bytes) +
                "-byte values: the size must be a multiple of the value's");
  impl_->fill(buffer.address(), pattern, bytes, buffer.size() / bytes);
}

void Device::zero(const Buffer &buffer) {
  if (!buffer) throw Error("zero of an empty buffer");
  if (auto why = foreign(buffer.alloc_->device, impl_, "the buffer"); !why.empty())
    throw Error("zero of a buffer: " + why);
  const uint8_t z = 0;
  impl_->fill(buffer.address(), &z, 1, buffer.size());
}

Kernel Device::load(const Bundle &bundle) {
  Kernel k;
  k.bundle_ = bundle;
  k.device_ = impl_;
  k.handle_ = impl_->load(bundle);
  return k;
}

namespace {
const char *const kArgNames[] = {"a buffer", "bool",  "int8_t", "int16_t",  "int32_t",     "int64_t",
                                 "float",    "double", "tk::Half", "tk::BFloat16", "a tk::TensorDescriptor"};
const char *argKind(const Arg &a) { return kArgNames[a.index()]; }

// The Arg alternative a scalar parameter type takes.
int expectedIndex(const std::string &type) {
  static const std::pair<const char *, int> table[] = {{"bool", 1}, {"i8", 2},  {"i16", 3}, {"i32", 4}, {"i64", 5},
                                                       {"f32", 6},  {"f64", 7}, {"f16", 8}, {"bf16", 9}};
  for (auto &[name, index] : table)
    if (type == name) return index;
  return -1;
}
}  // namespace

const char *dtypeName(DType t) {
  static const char *const names[] = {
      "untyped",
#define TK_DTYPE(ID, IR_ID, NAME, ...) NAME,
#include "tk/dtype.def"
  };
  const size_t i = static_cast<size_t>(t);
  return i < std::size(names) ? names[i] : "unknown";
}

namespace {
// Why a typed buffer cannot go to pointer parameter `name` of type `type`
// ("*f32"), or "". A `**T` parameter takes a buffer of addresses, which no
// DType names: only an untyped one or an i64 one (addresses as integers) fits.
std::string elementMismatch(const Buffer &b, const std::string &type, const std::string &name) {
  if (b.dtype() == DType::None) return "";
  const std::string elem = type.substr(1);
  const std::string have = dtypeName(b.dtype());
  if (elem == have || (elem[0] == '*' && b.dtype() == DType::I64)) return "";
  if (elem[0] == '*')
    return "a buffer of " + have + " for a pointer to " + elem +
           "; pass a buffer of addresses (untyped, or i64), or reinterpret this one on purpose: "
           "buffer.as(tk::DType::None)";
  std::string enumerator = elem == "bool" ? "Bool" : elem;
  for (char &c : enumerator) c = char(std::toupper(static_cast<unsigned char>(c)));
  return "a buffer of " + have + " for a pointer to " + elem + "; pass a buffer of " + elem +
         ", or reinterpret this one on purpose: buffer.as(tk::DType::" + enumerator + ")";
}
}  // namespace

LaunchStats Device::launch(const Kernel &kernel, Dim3 grid, const std::vector<Arg> &args) {
  return launch(kernel, grid, args, LaunchOptions{});
}

LaunchStats Device::launch(const Kernel &kernel, Dim3 grid, const std::vector<Arg> &args, const LaunchOptions &opts) {
  const Bundle &b = kernel.bundle();
  if (!kernel.handle_) throw Error("kernel '" + b.kernel + "' is not loaded on a device");
  if (auto why = foreign(kernel.device_, impl_, "the kernel '" + b.kernel + "'"); !why.empty()) throw Error(why);
  const std::vector<KernelParam> params = b.launchParams();
  const std::string who = "launch of '" + b.kernel + "'";
  void *stream = nativeStream(opts.stream, who);
  if (args.size() != params.size())
    throw Error(who + ": expected " + std::to_string(params.size()) + " arguments, got " + std::to_string(args.size()));
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) throw Error(who + ": grid has a zero dimension");
  if (grid.y > 65535 || grid.z > 65535) throw Error(who + ": grid y and z are limited to 65535");

  // One 8-byte slot per ABI scalar a buffer or a descriptor becomes (an i32
  // in its low bytes); reserved whole so `values` may point into it.
  size_t abiCount = 0;
  for (const KernelParam &p : params) abiCount += detail::isDescriptorType(p.type) ? detail::kMaxDescriptorValues : 1;
  std::vector<uint64_t> slots;
  slots.reserve(abiCount);
  std::vector<const void *> values;
  values.reserve(abiCount);
  auto pass = [&](uint64_t v) {
    slots.push_back(v);
    values.push_back(&slots.back());
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelParam &p = params[i];
    const std::string where = who + ": argument " + std::to_string(i) + " ('" + p.name + "', " + p.type + ")";
    // A pointer parameter's buffer, or a descriptor's base.
    auto checkBuffer = [&](const Buffer &buf, const std::string &type, int64_t align) {
      if (!buf) throw Error(where + " is an empty buffer");
      if (auto why = foreign(buf.alloc_->device, impl_, "the buffer"); !why.empty()) throw Error(where + ": " + why);
      if (buf.borrowed() && buf.size() == 0)
        throw Error(where + " is a borrowed buffer of 0 bytes (Device::borrow): there is nothing a kernel could access");
      if (std::string why = elementMismatch(buf, type, p.name); !why.empty()) throw Error(where + ": " + why);
      if (align > 1 && buf.address() % align != 0)
        throw Error(where + ": address 0x" +
                    [&] {
                      char s[32];
                      std::snprintf(s, sizeof s, "%llx", static_cast<unsigned long long>(buf.address()));
                      return std::string(s);
                    }() +
                    " is not " + std::to_string(align) +
                    "-byte aligned as the kernel assumes (declare the parameter `" + p.name + ": " + p.type +
                    " align(N)` to accept less)");
    };
    if (detail::isDescriptorType(p.type)) {
      auto desc = detail::parseDescriptorType(p.type);
      if (!desc) throw Error(where + ": a parameter of unknown type " + p.type);
      const TensorDescriptor *d = std::get_if<TensorDescriptor>(&args[i]);
      if (!d) throw Error(where + " needs a tk::TensorDescriptor, got " + argKind(args[i]));
      checkBuffer(d->base, "*" + desc->elem, 0);
      uint64_t abi[detail::kMaxDescriptorValues];
      size_t n = 0;
      try {
        n = detail::descriptorValues(*d, *desc, detail::BlockRule::Exact, abi);
      } catch (const Error &e) {
        throw Error(where + ": " + e.what());
      }
      for (size_t j = 0; j < n; ++j) pass(abi[j]);
      continue;
    }
    if (p.type[0] == '*') {
      const Buffer *buf = std::get_if<Buffer>(&args[i]);
      if (!buf) throw Error(where + " needs a buffer, got " + argKind(args[i]));
      checkBuffer(*buf, p.type, p.align);
      pass(buf->address());
      continue;
    }
    int want = expectedIndex(p.type);
    if (want < 0) throw Error(where + ": a parameter of unknown type " + p.type);
    if (static_cast<int>(args[i].index()) != want)
      throw Error(where + " needs " + kArgNames[want] + ", got " + argKind(args[i]));
    values.push_back(std::visit([](const auto &v) -> const void * { return &v; }, args[i]));
    // A variant specialised on an integer's value runs only where the fact holds.
    if (auto fact = b.assumed.find(p.name); fact != b.assumed.end()) {
      const int64_t v = std::visit(
          [](const auto &x) -> int64_t {
            if constexpr (std::is_integral_v<std::decay_t<decltype(x)>>)
              return int64_t(x);
            else
              return 0;
          },
          args[i]);
      if (p.multipleOf && v % p.multipleOf != 0)
        throw Error(where + " = " + std::to_string(v) + " is not a multiple of " + std::to_string(p.multipleOf) +
                    ", as the kernel declares (@multiple_of(" + std::to_string(p.multipleOf) + "))");
      if (!factHolds(fact->second, v))
        throw Error(where + " = " + std::to_string(v) + " breaks what this variant was compiled to assume (" + p.name +
                    (fact->second == "1" ? " == 1" : " % " + fact->second + " == 0") +
                    "): launch a variant compiled without that assumption (CompileOptions::assume, tkc --assume)");
    }
  }
  // Tensor maps follow every other value, each encoded from its descriptor's.
  std::vector<detail::TensorMapBlob> maps;
  detail::appendTensorMaps(*impl_, b, who, values, maps);
  return impl_->launch(kernel.handle_.get(), b, grid, values, opts, stream);
}

}  // namespace tk
