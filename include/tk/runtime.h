// tk's launcher API: open a device (a CUDA GPU or the sim), move memory, load
// compiled kernels and launch them with checked arguments. See docs/api.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "tk/compiler.h"
#include "tk/error.h"
#include "tk/fp8.h"
#include "tk/half.h"

namespace tk {

class DeviceImpl;
class Device;
class Stream;
struct Allocation;
struct StreamState;
namespace aot {
class Library;  // tk/aot.h: generated launchers load and launch through it
}

// The element type a buffer holds, when it says (Buffer::dtype): the tk
// scalar types. A launch refuses a typed buffer for a pointer parameter of
// another element type; an untyped one (DType::None) goes anywhere.
// Bool, I8, I16, I32, I64, F16, BF16, F32, F64, F8E4M3, F8E5M2 (tk/dtype.def).
enum class DType : uint8_t {
  None,
#define TK_DTYPE(ID, ...) ID,
#include "tk/dtype.def"
};
// "f32", "i32", ... as the .tk language spells them; "untyped" for None.
const char *dtypeName(DType t);
// DType::F32 for float, ... (tk::Half: F16, tk::BFloat16: BF16,
// tk::Float8e4m3 and tk::Float8e5m2 of tk/fp8.h: F8E4M3, F8E5M2); None for
// types no tk scalar is (uint16_t, structs), whose buffers stay untyped.
template <class T>
constexpr DType dtypeOf() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) return DType::Bool;
  else if constexpr (std::is_same_v<U, int8_t>) return DType::I8;
  else if constexpr (std::is_same_v<U, int16_t>) return DType::I16;
  else if constexpr (std::is_same_v<U, int32_t>) return DType::I32;
  else if constexpr (std::is_same_v<U, int64_t>) return DType::I64;
  else if constexpr (std::is_same_v<U, Half>) return DType::F16;
  else if constexpr (std::is_same_v<U, BFloat16>) return DType::BF16;
  else if constexpr (std::is_same_v<U, float>) return DType::F32;
  else if constexpr (std::is_same_v<U, double>) return DType::F64;
  else if constexpr (std::is_same_v<U, Float8e4m3>) return DType::F8E4M3;
  else if constexpr (std::is_same_v<U, Float8e5m2>) return DType::F8E5M2;
  else return DType::None;
}

// Device memory. Copies of a Buffer share the allocation, which is freed
// when the last copy goes. `offset` makes a view into the same allocation.
// A borrowed buffer (Device::borrow) is memory the program owns: tk never
// frees it.
class Buffer {
 public:
  Buffer() = default;
  size_t size() const { return size_; }
  uint64_t address() const;  // the device address (a host address on the sim)
  Buffer offset(size_t bytes) const;
  explicit operator bool() const { return alloc_ != nullptr; }
  // The element type (Device::upload, alloc<T>, borrow with a dtype); None: untyped.
  DType dtype() const { return dtype_; }
  // The same memory seen as `t` (None: untyped), to pass it on purpose for a
  // parameter of another element type.
  Buffer as(DType t) const {
    Buffer b = *this;
    b.dtype_ = t;
    return b;
  }
  bool borrowed() const;  // made by Device::borrow: tk does not own the memory

 private:
  friend class Device;
  friend class aot::Library;
  std::shared_ptr<Allocation> alloc_;
  size_t offset_ = 0, size_ = 0;
  DType dtype_ = DType::None;
};

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  // A persistent kernel's grid: `perSm` programs per multiprocessor of
  // `dev` (its SMs; the sim's workers), along x. Defined with Device below.
  static Dim3 perSm(const Device &dev, uint32_t perSm = 1);
};

// What a device is (Device::properties): on a GPU, the Driver API's
// attributes; on the sim, its name and worker count, the rest 0.
struct DeviceProperties {
  std::string name;              // "NVIDIA H100 80GB HBM3"; "tk sim (2 workers)"
  std::string arch;              // "sm_90" (compute capability 9.0); "" on the sim
  int multiprocessors = 0;       // SMs; the sim's worker threads
  uint64_t memoryBytes = 0;      // total device memory (0 on the sim)
  int driverVersion = 0;         // the CUDA driver's, as cuDriverGetVersion gives it (13000: 13.0); 0 on the sim
  int clockKHz = 0;              // SM clock
  int memoryClockKHz = 0;        // peak memory clock
  int memoryBusWidthBits = 0;
  int l2Bytes = 0;
  int sharedPerBlockOptinBytes = 0;  // the most shared memory one block can opt in to
  // Peak DRAM bandwidth from the memory clock and bus width (double data
  // rate), bytes per second; 0 when unknown.
  double peakBytesPerSecond() const { return 2.0 * memoryClockKHz * 1e3 * memoryBusWidthBits / 8; }
};

// A tensor in device memory that a kernel reads and writes a block at a
// time through a `desc<T, [B0, ..]>` parameter (docs/api.md, "Tensor
// descriptors"), as Triton's host-side TensorDescriptor: the base buffer,
// the sizes and strides in elements, outermost dim first, and the block
// shape the kernel was compiled with (empty: whatever the launched kernel's
// is). A launch checks it against the
// parameter and against the tensor-memory accelerator's rules (base 16-byte
// aligned, inner stride 1, the other strides multiples of 16 bytes, every
// size at least 1), and that every element it describes lies inside `base`.
struct TensorDescriptor {
  Buffer base;
  std::vector<int64_t> shape, strides, blockShape;
  // A row-major tensor of `shape` from the start of `base`: strides from the
  // shape (Triton's TensorDescriptor.from_tensor of a contiguous tensor).
  static TensorDescriptor contiguous(Buffer base, std::vector<int64_t> shape, std::vector<int64_t> blockShape);
};

// One kernel argument: a buffer for a pointer parameter, a tensor
// descriptor for a `desc` one, or a scalar of the parameter's exact type
// (tk::Half for f16, tk::BFloat16 for bf16).
using Arg = std::variant<Buffer, bool, int8_t, int16_t, int32_t, int64_t, float, double, Half, BFloat16,
                         TensorDescriptor>;

namespace detail {
template <class T>
inline constexpr bool isArgType =
    std::is_same_v<T, Arg> || std::is_same_v<T, Buffer> || std::is_same_v<T, bool> || std::is_same_v<T, int8_t> ||
    std::is_same_v<T, int16_t> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ||
    std::is_same_v<T, TensorDescriptor>;
template <class T>
inline constexpr bool alwaysFalse = false;
// One argument of a variadic launch as an Arg. A type Arg does not hold
// exactly (size_t, unsigned, long long, a pointer) is one static_assert
// here instead of std::variant's page of overload candidates: converting it
// would pick a parameter type silently or not compile at all.
template <class T>
Arg toArg(T &&v) {
  using D = std::remove_cv_t<std::remove_reference_t<T>>;
  if constexpr (isArgType<D>) {
    return Arg(std::forward<T>(v));
  } else {
    static_assert(alwaysFalse<D>,
                  "tk: a kernel argument must be a tk::Buffer, a tk::TensorDescriptor or a scalar of its parameter's "
                  "exact type: bool, "
                  "int8_t, int16_t, int32_t, int64_t, float, double, tk::Half or tk::BFloat16; cast others, e.g. "
                  "int32_t(n) for an i32 parameter (size_t, unsigned and long long are not accepted)");
    return Arg();
  }
}
}  // namespace detail

// How a launch runs. `stream` is read by every device; the other fields only
// by the sim (a CUDA device ignores them).
struct LaunchOptions {
  // Where the launch runs: null, the device's default stream (the launch
  // returns when the kernel has finished); else a stream of this device made
  // by Device::createStream (the launch returns once the work is queued; see
  // Stream). A stream of another device is a tk::Error.
  const Stream *stream = nullptr;
  uint64_t sampleBlocks = 0;  // sim: run only this many blocks spread over the grid and scale the counters (0: all)
  bool perSite = false;       // sim: also count each memory instruction (LaunchStats::sites); off costs nothing
};

// What one memory instruction of the kernel cost over a launch
// (LaunchOptions::perSite): the accesses the sim saw at one source position,
// of one kind and width. docs/api.md.
struct SiteStats {
  std::string loc;           // "file:line:col" of the .tk operation; "" where the lowering gave none
  std::string kind;          // "global load", "global store", "global atomic", "shared load", "shared store",
                             // "shared atomic", "ldmatrix" or "wgmma" (a warpgroup's core-matrix reads)
  uint32_t accessBytes = 0;  // bytes one lane moves per access: the vector width (16 for a v4.f32)
  uint64_t requests = 0;     // warp-level instructions
  uint64_t bytes = 0;        // bytes of the active elements (ldmatrix: 128 per 8x8 matrix)
  uint64_t sectors = 0;      // global: distinct 32-byte sectors per request, summed (0 for shared)
  uint64_t wavefronts = 0;   // shared and ldmatrix: wavefronts per request, summed (0 for global)
};

// What a launch cost. The sim counts every field; a CUDA device fills `ms`
// and the block counts. Of a sampled sim launch (LaunchOptions::sampleBlocks)
// the counts are scaled to the whole grid (docs/api.md).
struct LaunchStats {
  bool counted = false;  // true on the sim
  double ms = 0;         // CUDA: event-timed kernel time; sim: the launch's wall time on the host (sim time)
  uint64_t globalLoadBytes = 0, globalStoreBytes = 0;
  uint64_t loadRequests = 0, loadSectors = 0, storeRequests = 0, storeSectors = 0;
  uint64_t sharedRequests = 0, sharedWavefronts = 0, barriers = 0;
  // Executed instructions (docs/sim.md, "Instruction counts"): summed over
  // threads; issued by warps (each basic block as often as the warp's busiest
  // lane ran it); of the thread count, floating-point arithmetic, and
  // special-function math (sin, exp, sqrt, tanh, ...).
  uint64_t threadInstructions = 0, warpInstructions = 0, fpInstructions = 0, specialInstructions = 0;
  uint64_t blocksRun = 0, blocksTotal = 0;  // blocks that ran, of the grid's (fewer when sampled)
  // With LaunchOptions::perSite on the sim: one entry per (loc, kind,
  // accessBytes), sorted by source position; empty otherwise. Summed over
  // the global loads they give loadRequests and loadSectors, over global
  // stores and atomics storeRequests and storeSectors, over shared accesses
  // and ldmatrix sharedRequests and sharedWavefronts; and the global bytes
  // globalLoadBytes and globalStoreBytes.
  std::vector<SiteStats> sites;
  uint64_t bytesMoved() const { return globalLoadBytes + globalStoreBytes; }
};

// A kernel loaded on a device.
class Kernel {
 public:
  const Bundle &bundle() const { return bundle_; }
  const std::string &name() const { return bundle_.kernel; }

 private:
  friend class Device;
  friend class aot::Library;
  Bundle bundle_;
  std::shared_ptr<DeviceImpl> device_;  // kept alive while the kernel is
  std::shared_ptr<void> handle_;        // the device's loaded form
};

// A point in a stream's work (Stream::record): it completes when all work
// queued on the stream before it has finished. Copies share the event.
class Event {
 public:
  // Waits until the event has completed.
  void synchronize() const;
  // Milliseconds between two events recorded on streams of one device, once
  // `end` has completed (waits for it). On a GPU, device time (CUDA events);
  // on the sim, host time between the two records.
  static double elapsedMs(const Event &start, const Event &end);

 private:
  friend class Stream;
  std::shared_ptr<DeviceImpl> device_;
  std::shared_ptr<void> handle_;
};

// An ordered queue of work on one device. A Device converts to its default
// stream (work on it is synchronous: a launch or copy returns when it is
// done). Device::createStream makes a new one: on a GPU a CUDA stream
// (cuStreamCreate), whose launches and async copies return once queued and
// run in submission order, overlapping work on other streams; the sim runs
// each piece of work when it is submitted, which is one valid order of the
// same program. A created stream is destroyed when its last copy goes (work
// still queued finishes first); it keeps its device's resources alive, but
// using it after its Device is destroyed is a tk::Error.
class Stream {
 public:
  Stream(Device &device) : device_(&device) {}  // implicit: a Device is its default stream
  // The stream's Device; a tk::Error once a created stream's Device has been
  // destroyed (never a dangling reference).
  Device &device() const;
  // False once the Device that created this stream is destroyed: work on it
  // then fails with a tk::Error. (A Device's default stream is the Device
  // itself: it lives exactly as long.)
  bool valid() const;
  bool isDefault() const { return !state_; }
  // The CUstream this stream queues on, to order the program's own work
  // with tk's (cuBLAS, cudaMemcpyAsync): a created stream's own, a borrowed
  // one's (Device::borrowStream); null for the default stream, which is
  // CUDA's legacy default stream. On the sim: the value given to
  // borrowStream, else null.
  void *native() const;
  bool borrowed() const;  // made by Device::borrowStream
  // Waits until every piece of work queued on this stream has finished.
  void synchronize() const;
  // Queues an event: it completes when the work queued before it has.
  Event record() const;

 private:
  friend class Device;
  friend class aot::Library;
  Device *device_;
  std::shared_ptr<StreamState> state_;  // null: the default stream
};

// What Device::open(spec, options) adds to the spec.
struct DeviceOptions {
  unsigned workers = 0;  // the sim's worker threads (0: one per core); ignored by a GPU
};

class Device {
 public:
  // A CUDA GPU when a driver and a GPU are present, else the sim.
  // TK_DEVICE=sim[:OPTIONS]|cuda|cuda:N overrides.
  static std::unique_ptr<Device> open();
  // "sim", "sim:racecheck" (the sim with its race check on: shared memory,
  // and global memory within a block), "sim:overflow" (the sim reports an
  // i32 index computation that wraps before it reaches an address),
  // "sim:workers=N" (N worker threads; options combine:
  // "sim:racecheck,overflow,workers=2"), "cuda", "cuda:N"; "" is
  // open()'s choice. Throws tk::Error when the device cannot be opened.
  static std::unique_ptr<Device> open(const std::string &spec);
  // The same with options: Device::open("sim", {.workers = 2}); an empty
  // spec is open()'s choice (the sim it falls back to takes the options).
  static std::unique_ptr<Device> open(const std::string &spec, const DeviceOptions &options);
  ~Device();

  std::string kind() const;  // "sim" or "cuda"
  int ordinal() const;       // the CUDA device number (cuda:N); 0 on the sim
  // The sim's race check: launches fail on two threads of a block touching a
  // shared or global byte between barriers, one of them writing (atomics
  // excepted; docs/sim.md). tk::Error on a GPU.
  void setRaceCheck(bool on);
  // Where the text of device `print` goes. The sim hands `sink` each
  // launch's lines (ordered by block, then thread) in one call once the
  // launch is over, failed or not; an empty sink means stdout again. tk::Error
  // on a GPU, whose printf output the driver writes to stdout.
  void setPrintSink(std::function<void(const std::string &)> sink);
  std::string name() const;  // e.g. "tk sim (2 workers)", "NVIDIA H100 (sm_90)"
  // The arch a GPU runs ("sm_90" for compute capability 9.0); "" on the sim.
  std::string arch() const;
  DeviceProperties properties() const;

  Buffer alloc(size_t bytes);
  // `count` elements of T: a buffer typed dtypeOf<T>().
  template <class T>
  Buffer alloc(size_t count) {
    return alloc(count * sizeof(T)).as(dtypeOf<T>());
  }
  // Memory the program owns, as a Buffer usable wherever tk's own are: on a
  // GPU a device address of this device's context (cuMemAlloc, cudaMalloc,
  // a PyTorch tensor's data_ptr(): the CUDA runtime shares the primary
  // context tk uses), on the sim a host pointer. tk never frees it; the
  // program keeps it alive until the work that uses it is done. `bytes` may
  // be 0 (an empty tensor's view) but such a buffer cannot be launched with;
  // a null address with bytes > 0 is a tk::Error. On the sim the range joins
  // the sim's memory table, so accesses out of it are reported as for any
  // buffer, until the last copy of the Buffer goes. docs/api.md, "Borrowed
  // memory and streams".
  Buffer borrow(void *address, size_t bytes, DType dtype = DType::None);
  // The same: memory tk wraps and never frees.
  Buffer wrap(void *address, size_t bytes, DType dtype = DType::None) { return borrow(address, bytes, dtype); }
  // A CUDA stream the program owns (a CUstream or cudaStream_t) as a
  // tk::Stream: launches and async copies on it are queued there, ordered
  // with the program's own work on it, and return at once. Null, or
  // CU_STREAM_LEGACY (0x1), is CUDA's legacy default stream; CU_STREAM_PER_THREAD
  // (0x2) the calling thread's per-thread default stream. tk never destroys
  // it; it must belong to this device's primary context (the CUDA runtime's)
  // and outlive the work queued on it. On the sim any value is accepted and
  // work runs when submitted, as on every sim stream.
  Stream borrowStream(void *native);
  // The same: a stream the program owns, adopted for tk's launches (never destroyed by tk).
  Stream adoptStream(void *native) { return borrowStream(native); }
  void copyToDevice(const Buffer &dst, const void *src, size_t bytes);
  void copyToHost(void *dst, const Buffer &src, size_t bytes);
  // The same queued on `stream` (a stream of this device): on a GPU they
  // return before the copy is done (cuMemcpyHtoDAsync/DtoHAsync), so `src`
  // must stay unchanged, and `dst` unread, until the stream has reached it
  // (Stream::synchronize). On the default stream and on the sim they are the
  // synchronous copies.
  void copyToDeviceAsync(const Buffer &dst, const void *src, size_t bytes, const Stream &stream);
  void copyToHostAsync(void *dst, const Buffer &src, size_t bytes, const Stream &stream);

  // A new stream on this device (see Stream); on a GPU it synchronizes with
  // the default stream like any CUDA stream created without flags, so the
  // synchronous calls (copies, fill, launches without a stream) still see
  // its finished work and wait for its queued work.
  Stream createStream();
  // Waits until all work on every stream of this device has finished.
  void synchronize();
  // A buffer holding `v`, typed dtypeOf<T>() (untyped for a T no tk scalar is).
  template <class T>
  Buffer upload(const std::vector<T> &v) {
    Buffer b = alloc(v.size() * sizeof(T)).as(dtypeOf<T>());
    copyToDevice(b, v.data(), v.size() * sizeof(T));
    return b;
  }
  template <class T>
  std::vector<T> download(const Buffer &b, size_t count) {
    std::vector<T> v(count);
    copyToHost(v.data(), b, count * sizeof(T));
    return v;
  }
  // Sets every element of `buffer` to `value`, a scalar whose type gives the
  // element size (1, 2, 4 or 8 bytes): fill(out, 0.0f), fill(idx, int32_t(-1)),
  // fill(h, tk::Half(1.0)). The buffer's size must be a multiple of it.
  void fill(const Buffer &buffer, const Arg &value);
  // Sets every byte of `buffer` to 0 (kernels that accumulate with atomics
  // need a zeroed output).
  void zero(const Buffer &buffer);
  // Bytes of device memory in use now, and the most at any time so far.
  size_t liveBytes() const;
  size_t peakBytes() const;
  // Starts a new peak from what is live now (to measure one phase).
  void resetPeakBytes();

  Kernel load(const Bundle &bundle);
  // Checks `args` against the kernel's signature (count, types, pointer
  // alignment) and throws tk::Error before launching anything on a mismatch.
  LaunchStats launch(const Kernel &kernel, Dim3 grid, const std::vector<Arg> &args);
  // The same with options. A sampled sim launch runs only some blocks: the
  // outputs of the others are not written.
  LaunchStats launch(const Kernel &kernel, Dim3 grid, const std::vector<Arg> &args, const LaunchOptions &opts);
  template <class... A>
  LaunchStats operator()(const Kernel &kernel, Dim3 grid, A &&...args) {
    return launch(kernel, grid, std::vector<Arg>{detail::toArg(std::forward<A>(args))...});
  }

 private:
  friend class aot::Library;
  friend class Stream;
  explicit Device(std::shared_ptr<DeviceImpl> impl);
  // The device's handle of `stream`: null for the default stream. tk::Error
  // naming `what` when the stream belongs to another device or its device is
  // gone.
  void *nativeStream(const Stream *stream, const std::string &what) const;
  // Shared with every Buffer and Kernel made here, so they may outlive the
  // Device object itself.
  std::shared_ptr<DeviceImpl> impl_;
};

}  // namespace tk
