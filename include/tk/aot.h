// What the launchers `tkc compile --emit cpp` generates stand on: tk::Status,
// aot::Library, which loads a generated file's embedded
// bundles on each device on first use. Part of tk::runtime: no LLVM, and a
// generated launcher throws nothing. See docs/aot.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tk/runtime.h"

struct tk_device;  // tk/aot_c.h
struct tk_tensor_descriptor;
struct tk_stream;

namespace tk {

// What kind of failure a Status reports, for a caller that reacts to it (a
// fallback when there is no GPU, a retry with other arguments), as CUresult
// does; the numbers are the C interface's return values (TK_ERROR_* in
// tk/aot_c.h) and do not change.
enum class StatusCode : int {
  Ok = 0,
  InvalidArgument = 1,  // a null, misaligned or mistyped argument, a grid with a zero dimension, a null handle
  NoVariant = 2,        // no variant was compiled for these const values
  Unavailable = 3,      // no usable device: no CUDA driver or GPU (tk::CudaUnavailable), or a destroyed one
  DeviceError = 4,      // the device failed the work: tk::CudaError, or tk::SimError (an out-of-bounds access, a race)
  LoadFailed = 5,       // the embedded kernels do not load: a stale header, a corrupted bundle, a failed JIT
  OutOfMemory = 6,      // host or device memory ran out
  Internal = 7,         // a bug in tk (tk::InternalError, an unknown exception): please report it
};
// "ok", "invalid argument", "no variant", ...
const char *statusCodeName(StatusCode code);

// What a generated launcher returns: ok, or an error with its code and a
// message that names the kernel and, where one is at fault, the argument.
// Success allocates nothing.
class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status error(StatusCode code, std::string message) {
    Status s;
    s.code_ = code == StatusCode::Ok ? StatusCode::Internal : code;
    s.message_ = std::move(message);
    return s;
  }
  // The code a thrown exception maps to (tk/error.h's classes; a plain
  // tk::Error is a misused argument; std::bad_alloc is OutOfMemory), and
  // the Status of it with "`prefix`: " before its message.
  static StatusCode codeOf(const std::exception &e);
  static Status of(const std::exception &e, const std::string &prefix);
  bool ok() const { return code_ == StatusCode::Ok; }
  explicit operator bool() const { return ok(); }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::Ok;
  std::string message_;
};

// Generated launchers take a tk::Stream (tk/runtime.h): pass a Device for
// its default stream (the launch returns when the kernel has finished, as
// Device::launch does), or a stream from Device::createStream or
// Device::borrowStream to queue the launch there and return at once. Each
// also has an overload taking (tk::Device &, void *stream): a CUstream or
// cudaStream_t the program owns, borrowed for the launch.

// A buffer's device address as the typed pointer generated launchers take.
template <class T>
T *pointer(const Buffer &b) {
  return reinterpret_cast<T *>(static_cast<uintptr_t>(b.address()));
}

namespace aot {

// A cubin a generated file embeds for one arch of a variant.
struct EmbeddedCubin {
  const char *arch;  // "sm_90a"
  const unsigned char *data;
  size_t size;
};

// One compiled variant a generated file embeds: its bundle as JSON
// (Bundle::toJson: tile IR for the sim, PTX per arch, signature), and the
// cubins of its archs when tkc found ptxas (Bundle::cubins).
struct EmbeddedBundle {
  const char *json;
  size_t size;
  const EmbeddedCubin *cubins = nullptr;
  size_t cubinCount = 0;
};

// The variants of one generated file. Each device loads all of them on the
// first launch (or load()) there; unload() drops them from one device.
// Thread-safe, except that unload() must not race a launch on that device.
class Library {
 public:
  // `name`: the generated file's name; `hash`: a hash of the sources and
  // options it was generated from, which the header passes back to catch a
  // header stale against its .cpp.
  Library(const char *name, uint64_t hash, const EmbeddedBundle *bundles, size_t count);
  ~Library();
  Library(const Library &) = delete;
  Library &operator=(const Library &) = delete;

  Status load(const Stream &s, uint64_t headerHash);
  void unload(const Stream &s);
  // Launches variant `variant` of kernel `kernel` with `args[i]` pointing at
  // launch parameter i's value (a uint64_t address for a pointer): the
  // generated launcher has checked types, null and alignment already. Checks
  // the grid and the header's hash; every failure is a Status.
  Status launch(const Stream &s, uint64_t headerHash, const char *kernel, size_t variant, Dim3 grid,
                const void *const *args, size_t count);
  // The bundle of variant `variant` as loaded on the stream's device (to
  // inspect num_warps, consts, ...); null with `status` set on failure.
  const Bundle *bundle(const Stream &s, size_t variant, Status &status);
  // Whether `b` is memory of the device `s` queues on (a descriptor's base
  // must be: a generated launcher's pointers are the caller's to vouch for).
  static bool onDevice(const Stream &s, const Buffer &b);

 private:
  struct Loaded;
  Loaded *find(const Stream &s);
  static const std::shared_ptr<DeviceImpl> &deviceOf(const Stream &s);
  static Status usable(const Stream &s, const char *who);
  Status loadOn(const Stream &s, uint64_t headerHash, Loaded *&out);

  const char *name_;
  uint64_t hash_;
  const EmbeddedBundle *bundles_;
  size_t count_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Loaded>> loaded_;
};

// The messages generated launchers return (cold paths, kept out of the
// generated code): "KERNEL: argument 'x' (*f32) is a null pointer", "...
// 0x1004 is not 16-byte aligned as the kernel assumes", "... no variant
// compiled for BLOCK=512 (compiled: BLOCK=256, BLOCK=1024)".
Status nullPointer(const char *kernel, const char *arg, const char *type);
Status misaligned(const char *kernel, const char *arg, const char *type, const void *address, int64_t align);
Status noVariant(const char *kernel, const std::string &wanted, const char *compiled);
// A tensor descriptor argument (a `desc<T, [..]>` parameter) of variant
// `variant`, checked as Device::launch checks one (docs/api.md, "Tensor
// descriptors") and written as its 2N ABI scalars into `slots`. Its block
// shape is taken to be the variant's: the launcher chose the variant, as the
// tuner does. An InvalidArgument Status names the kernel, the argument and
// the rule it breaks.
Status descriptorArgs(Library &library, const Stream &s, size_t variant, const char *kernel, const char *arg,
                      const TensorDescriptor &d, uint64_t *slots);
// For the generated launchers taking a CUstream: `device`'s stream over the
// program's `native` one (Device::borrowStream) in `out`, or why not.
Status borrowStream(Device &device, void *native, Stream &out);
// "WHO: a null tk_device" (InvalidArgument), for the C launchers.
Status nullHandle(const char *who, const char *handle);

// For the C launchers (tk/aot_c.h): the device behind a tk_device, and a
// Status as the C convention (0, or its code with *error set).
Device &deviceOf(tk_device *device);
// A C launcher's descriptor argument as a tk::TensorDescriptor in `out` (an
// empty block shape: the variant's), or why not (a null one, a null base, a
// rank outside 1..5), naming kernel and argument.
Status descriptorOf(const tk_tensor_descriptor *d, const char *kernel, const char *arg, TensorDescriptor &out);
Stream &streamOf(tk_stream *stream);
int cStatus(const Status &status, const char **error);

}  // namespace aot
}  // namespace tk
