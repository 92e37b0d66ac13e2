// One CUDA device through its primary context: device memory, modules
// (PTX or cubin, with the JIT log on failure), launches, streams and events.
// Every failing Driver API call throws cuda::Error naming the call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "backend/cuda/Driver.h"

namespace tk::cuda {

class Context;

// A loaded PTX or cubin image; unloaded when destroyed. Must not outlive its
// Context.
class Module {
 public:
  Module(Module &&o) noexcept;
  Module &operator=(Module &&o) noexcept;
  ~Module();
  CUmodule handle() const { return handle_; }
  const std::string &infoLog() const { return infoLog_; }  // the JIT's info log (PTX only)

 private:
  friend class Context;
  Module(const Context *ctx, CUmodule h, std::string log) : ctx_(ctx), handle_(h), infoLog_(std::move(log)) {}
  void reset();
  const Context *ctx_ = nullptr;
  CUmodule handle_ = nullptr;
  std::string infoLog_;
};

// A kernel in a loaded Module (valid while the Module lives).
struct Function {
  CUfunction handle = nullptr;
  std::string name;
};

// A stream; the default (legacy) stream is a null `const Stream *`. A
// borrowed one (Context::borrowStream) is the program's: never destroyed here.
class Stream {
 public:
  Stream(Stream &&o) noexcept : ctx_(o.ctx_), handle_(o.handle_), owned_(o.owned_) { o.handle_ = nullptr; }
  Stream &operator=(Stream &&) = delete;
  ~Stream();
  CUstream handle() const { return handle_; }
  void synchronize() const;

 private:
  friend class Context;
  Stream(const Context *ctx, CUstream h, bool owned) : ctx_(ctx), handle_(h), owned_(owned) {}
  const Context *ctx_;
  CUstream handle_;
  bool owned_;
};

class Event {
 public:
  Event(Event &&o) noexcept : ctx_(o.ctx_), handle_(o.handle_) { o.handle_ = nullptr; }
  Event &operator=(Event &&) = delete;
  ~Event();
  CUevent handle() const { return handle_; }
  void record(const Stream *stream = nullptr) const;
  void synchronize() const;
  // Milliseconds between two recorded events (synchronizes on `end`).
  static float elapsedMs(const Event &start, const Event &end);

 private:
  friend class Context;
  Event(const Context *ctx, CUevent h) : ctx_(ctx), handle_(h) {}
  const Context *ctx_;
  CUevent handle_;
};

class Context {
 public:
  // Retains device `ordinal`'s primary context. Throws Unavailable without a
  // driver, tk::Error for an ordinal past deviceCount().
  explicit Context(int ordinal = 0);
  ~Context();  // releases the primary context
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  const Driver &driver() const { return *driver_; }
  int ordinal() const { return ordinal_; }
  std::string deviceName() const;
  int computeCapability() const;  // major * 10 + minor: 80, 86, 90
  int attribute(int cuDeviceAttribute) const;
  void memInfo(size_t &freeBytes, size_t &totalBytes) const;

  uint64_t alloc(size_t bytes) const;
  void free(uint64_t ptr) const;
  void copyToDevice(uint64_t dst, const void *src, size_t bytes) const;
  void copyToHost(void *dst, uint64_t src, size_t bytes) const;
  // Queued on `stream`: return before the copy is done.
  void copyToDeviceAsync(uint64_t dst, const void *src, size_t bytes, const Stream &stream) const;
  void copyToHostAsync(void *dst, uint64_t src, size_t bytes, const Stream &stream) const;
  void memset(uint64_t dst, unsigned char value, size_t bytes) const;
  // Writes `count` copies of a 1, 2, 4 or 8-byte `pattern` from `dst` on.
  void fill(uint64_t dst, const void *pattern, size_t patternBytes, size_t count) const;

  // Loads PTX text (JIT-compiled by the driver) or a cubin/fatbin image.
  // Failure throws Error whose message holds the JIT error log.
  Module loadModule(const std::string &ptxOrCubinImage) const;
  // Throws Error (CUDA_ERROR_NOT_FOUND) naming the kernel if it is absent.
  Function function(const Module &m, const std::string &name) const;
  int registers(const Function &f) const;  // registers per thread
  // Launches `f`; args[i] points at the i-th kernel parameter's value. More
  // than 48 KiB of dynamic shared memory is opted into automatically.
  void launch(const Function &f, std::array<unsigned, 3> grid, std::array<unsigned, 3> block, unsigned sharedBytes,
              void **args, const Stream *stream = nullptr) const;
  void synchronize() const;

  Stream createStream() const;
  // A stream the program created (or CU_STREAM_LEGACY / CU_STREAM_PER_THREAD,
  // or null for the legacy default stream), used as is and never destroyed.
  Stream borrowStream(CUstream handle) const { return Stream(this, handle, false); }
  Event createEvent() const;

  // Makes this context current on the calling thread (each call does it, so
  // a Context may be used from any thread).
  void bind() const;
  void check(CUresult r, const std::string &call) const { driver_->check(r, call); }

 private:
  const Driver *driver_;
  int ordinal_;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
};

}  // namespace tk::cuda
