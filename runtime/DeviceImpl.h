// Internal to runtime/: what a device backend provides to tk::Device.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "tk/runtime.h"

namespace tk::detail {
struct TensorMapSpec;  // runtime/Descriptors.h
}

namespace tk {

class DeviceImpl {
 public:
  virtual ~DeviceImpl() = default;
  virtual std::string kind() const = 0;
  virtual std::string name() const = 0;
  virtual std::string arch() const { return ""; }  // "sm_XX" of a GPU; "" for the sim
  virtual int ordinal() const { return 0; }
  // The sim's: its name, the rest unknown (SimDevice adds its workers).
  virtual DeviceProperties properties() const {
    DeviceProperties p;
    p.name = name();
    p.arch = arch();
    return p;
  }
  virtual uint64_t allocate(size_t bytes) = 0;
  virtual void release(uint64_t address) = 0;
  // Memory the program owns (Device::borrow): what the device must know of
  // it, and the key forget() takes when the last Buffer over it goes. A GPU
  // needs nothing; the sim adds the range to its memory table.
  virtual uint64_t adopt(uint64_t /*address*/, size_t /*bytes*/) { return 0; }
  virtual void forget(uint64_t /*key*/) {}
  virtual void copyToDevice(uint64_t dst, const void *src, size_t bytes) = 0;
  virtual void copyToHost(void *dst, uint64_t src, size_t bytes) = 0;
  // `count` copies of a 1, 2, 4 or 8-byte `pattern` from `dst` on.
  virtual void fill(uint64_t dst, const void *pattern, size_t patternBytes, size_t count) = 0;
  // The device's loaded form of a bundle.
  virtual std::shared_ptr<void> load(const Bundle &bundle) = 0;
  // args[i] points at the value of launch parameter i (a uint64_t address
  // for pointers). `stream`: the device's handle of the stream to queue on
  // (createStream), null for the default stream; opts.stream is ignored here.
  virtual LaunchStats launch(void *loaded, const Bundle &bundle, Dim3 grid, const std::vector<const void *> &args,
                             const LaunchOptions &opts, void *stream) = 0;
  // The 128 bytes a kernel takes by value for tensor map `s` (Bundle::tensorMaps):
  // a CUtensorMap on a GPU, a tk::sim::TensorMap on the sim. `out128` is
  // 64-byte aligned. Throws a tk::Error the caller prefixes with the argument.
  virtual void encodeTensorMap(const detail::TensorMapSpec & /*s*/, void * /*out128*/) {
    throw Error(name() + " does not take tensor maps");
  }

  // Streams and events (tk::Stream, tk::Event). The defaults are the sim's:
  // work runs when it is submitted, so a stream is only a token, its copies
  // are the synchronous ones, and an event is the host time it was recorded
  // at (all work before it is already done).
  virtual std::shared_ptr<void> createStream() { return std::make_shared<int>(0); }
  // A stream the program owns (Device::borrowStream): the device's handle of
  // it, which never destroys `native`.
  virtual std::shared_ptr<void> borrowStream(void * /*native*/) { return createStream(); }
  // The CUstream behind a handle createStream or borrowStream gave; null on the sim.
  virtual void *streamHandle(void * /*stream*/) { return nullptr; }
  virtual void synchronize(void * /*stream, null: the whole device*/) {}
  virtual void copyToDeviceAsync(uint64_t dst, const void *src, size_t bytes, void * /*stream*/) {
    copyToDevice(dst, src, bytes);
  }
  virtual void copyToHostAsync(void *dst, uint64_t src, size_t bytes, void * /*stream*/) {
    copyToHost(dst, src, bytes);
  }
  virtual std::shared_ptr<void> recordEvent(void *stream);
  virtual void synchronizeEvent(void * /*event*/) {}
  virtual double elapsedMs(void *start, void *end);
  virtual void setRaceCheck(bool on) {
    if (on) throw Error("the race check is a feature of the sim, not of " + name());
  }
  virtual void setPrintSink(std::function<void(const std::string &)> sink) {
    if (sink) throw Error("device print output of " + name() + " goes to stdout; only the sim can redirect it");
  }

  std::atomic<size_t> live{0}, peak{0};
  // Set when its Device is destroyed; buffers and kernels may outlive it.
  std::atomic<bool> closed{false};
};

// What a created tk::Stream shares among its copies. `native` is declared
// after `device`, so it is destroyed first, while the device still lives.
struct StreamState {
  std::shared_ptr<DeviceImpl> device;
  std::shared_ptr<void> native;
  bool borrowed = false;
  void *borrowedHandle = nullptr;  // what borrowStream was given
};

// Memory a Buffer refers to; freed with the last Buffer that shares it.
struct Allocation {
  std::shared_ptr<DeviceImpl> device;
  uint64_t address = 0;
  size_t size = 0;
  bool borrowed = false;   // Device::borrow: never released, not counted as live
  uint64_t adoptKey = 0;   // DeviceImpl::adopt's key, for forget()
  ~Allocation();
};

// Throws tk::Error when no CUDA driver or device is available.
std::unique_ptr<DeviceImpl> openCudaDevice(int ordinal);

// Devices other than CUDA live in optional libraries (the sim JITs with LLVM,
// which tk_runtime must not carry): each registers how to open it from a
// static initializer, so `Device::open("sim")` finds it exactly when it is
// linked. `spec` is the device spec's kind ("sim"); `option` the text after a
// ':' ("racecheck"), empty when none. Registering a kind again replaces it.
using DeviceOpener = std::unique_ptr<DeviceImpl> (*)(const std::string &option);
void registerDevice(const std::string &kind, DeviceOpener open);

// How a GPU that no embedded PTX fits gets code: the compiler library
// registers a lowering of the bundle's tile IR for `arch` ("sm_86"); without
// it (a program linking tk::runtime only) such a load is an error listing the
// archs the bundle carries and the device's.
using PtxLowering = std::string (*)(const Bundle &bundle, const std::string &arch);
void registerPtxLowering(PtxLowering lower);
PtxLowering registeredPtxLowering();

}  // namespace tk
