// A CUDA GPU as a tk device, through the Driver API (backend/cuda). Bundles
// load the cubin of the GPU's own arch when they carry one (generated
// launchers embed them), else the PTX of the best arch they carry, or, when the compiler
// is linked, are lowered from their tile IR for the GPU's own arch when they
// carry none that fits (DeviceImpl.h, registerPtxLowering). No LLVM here:
// this file is part of tk_runtime.
#include <cstdint>
#include <string>
#include <utility>

#include "backend/cuda/Context.h"
#include "backend/cuda/Driver.h"
#include "runtime/ArchSelect.h"
#include "runtime/Descriptors.h"
#include "runtime/DeviceImpl.h"
#include "tk/gpu.h"

namespace tk {

namespace {

// cuTensorMapEncodeTiled's data type for a descriptor's element: the
// accelerator copies bytes, so types it has no name for go as unsigned
// integers of their width. -1 for none.
int tensorMapDataType(const std::string &elem) {
  static const std::pair<const char *, int> table[] = {
      {"f16", cuda::CU_TENSOR_MAP_DATA_TYPE_FLOAT16},  {"bf16", cuda::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16},
      {"f32", cuda::CU_TENSOR_MAP_DATA_TYPE_FLOAT32},  {"f64", cuda::CU_TENSOR_MAP_DATA_TYPE_FLOAT64},
      {"i32", cuda::CU_TENSOR_MAP_DATA_TYPE_INT32},    {"i64", cuda::CU_TENSOR_MAP_DATA_TYPE_INT64},
      {"i8", cuda::CU_TENSOR_MAP_DATA_TYPE_UINT8},     {"f8e4m3", cuda::CU_TENSOR_MAP_DATA_TYPE_UINT8},
      {"f8e5m2", cuda::CU_TENSOR_MAP_DATA_TYPE_UINT8}, {"i16", cuda::CU_TENSOR_MAP_DATA_TYPE_UINT16},
  };
  for (const auto &[name, type] : table)
    if (elem == name) return type;
  return -1;
}

int tensorMapSwizzle(int bytes) {
  switch (bytes) {
    case 32:
      return cuda::CU_TENSOR_MAP_SWIZZLE_32B;
    case 64:
      return cuda::CU_TENSOR_MAP_SWIZZLE_64B;
    case 128:
      return cuda::CU_TENSOR_MAP_SWIZZLE_128B;
    default:
      return cuda::CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

// "[a, b, c]", for messages.
template <class T>
std::string list(const T *v, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Encodes tensor map `s` into `out` (a CUtensorMap) with the driver:
// cuda.h orders every dim innermost first and gives the outer strides in bytes.
void encodeTiled(const cuda::Driver &driver, const detail::TensorMapSpec &s, void *out) {
  if (!driver.cuTensorMapEncodeTiled)
    throw Error("the CUDA driver (version " + std::to_string(driver.driverVersion()) +
                ") lacks cuTensorMapEncodeTiled: tensor maps need a CUDA 12.0 driver or newer");
  const int type = tensorMapDataType(s.elem);
  if (type < 0) throw Error("no tensor map data type for " + s.elem + " elements");
  const size_t rank = s.rank;
  uint64_t dims[detail::kMaxDescriptorRank] = {}, strides[detail::kMaxDescriptorRank] = {};
  unsigned box[detail::kMaxDescriptorRank] = {}, elementStrides[detail::kMaxDescriptorRank] = {};
  for (size_t i = 0; i < rank; ++i) {
    const size_t d = rank - 1 - i;  // tk's dim of the driver's dim i
    dims[i] = uint64_t(s.shape[d]);
    box[i] = unsigned(s.box[d]);
    elementStrides[i] = 1;
    if (i > 0) strides[i - 1] = uint64_t(s.strides[d] * s.elemBytes);
  }
  const cuda::CUresult r = driver.cuTensorMapEncodeTiled(
      out, type, unsigned(rank), reinterpret_cast<void *>(static_cast<uintptr_t>(s.base)), dims, strides, box,
      elementStrides, cuda::CU_TENSOR_MAP_INTERLEAVE_NONE, tensorMapSwizzle(s.swizzle),
      cuda::CU_TENSOR_MAP_L2_PROMOTION_L2_128B, cuda::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != cuda::CUDA_SUCCESS)  // the message is built only on failure
    driver.check(r, "cuTensorMapEncodeTiled(" + s.elem + ", dims " + list(dims, rank) + ", byte strides " +
                        list(strides, rank ? rank - 1 : 0) + ", box " + list(box, rank) + ", swizzle " +
                        std::to_string(s.swizzle) + "; innermost first)");
}

struct LoadedCudaKernel {
  explicit LoadedCudaKernel(cuda::Module m) : module(std::move(m)) {}
  cuda::Module module;
  cuda::Function function;
};

class CudaDevice final : public DeviceImpl {
 public:
  explicit CudaDevice(int ordinal) : ctx_(ordinal) {}

  std::string kind() const override { return "cuda"; }
  int ordinal() const override { return ctx_.ordinal(); }
  std::string arch() const override { return "sm_" + std::to_string(ctx_.computeCapability()); }
  std::string name() const override {
    return ctx_.deviceName() + " (sm_" + std::to_string(ctx_.computeCapability()) + ")";
  }
  DeviceProperties properties() const override {
    DeviceProperties p;
    p.name = ctx_.deviceName();
    p.arch = arch();
    p.multiprocessors = ctx_.attribute(cuda::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    size_t freeBytes = 0, totalBytes = 0;
    ctx_.memInfo(freeBytes, totalBytes);
    p.memoryBytes = totalBytes;
    p.driverVersion = ctx_.driver().driverVersion();
    p.clockKHz = ctx_.attribute(cuda::CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    p.memoryClockKHz = ctx_.attribute(cuda::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    p.memoryBusWidthBits = ctx_.attribute(cuda::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    p.l2Bytes = ctx_.attribute(cuda::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    p.sharedPerBlockOptinBytes = ctx_.attribute(cuda::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    return p;
  }
  uint64_t allocate(size_t bytes) override {
    return ctx_.alloc(bytes);
  }
  void release(uint64_t address) override {
    try {
      ctx_.free(address);
    } catch (const std::exception &) {
      // Freeing runs in destructors: a failure here has nobody to report to.
    }
  }
  void copyToDevice(uint64_t dst, const void *src, size_t bytes) override {
    ctx_.copyToDevice(dst, src, bytes);
  }
  void copyToHost(void *dst, uint64_t src, size_t bytes) override {
    ctx_.copyToHost(dst, src, bytes);
  }
  void fill(uint64_t dst, const void *pattern, size_t patternBytes, size_t count) override {
    ctx_.fill(dst, pattern, patternBytes, count);
  }

  std::shared_ptr<void> load(const Bundle &bundle) override {
    const std::string arch = "sm_" + std::to_string(ctx_.computeCapability());
    const std::string best = bestPtxArch(bundle, arch);
    std::string image;  // a cubin or PTX text: the driver tells them apart
    if (const std::string cubin = bestCubinArch(bundle, arch); !cubin.empty()) {
      // Assembled ahead of time for this very arch: no JIT at load.
      image = bundle.cubins.at(cubin);
    } else if (!best.empty()) {
      image = bundle.ptx.at(best);
    } else if (PtxLowering lower = registeredPtxLowering()) {
      image = lower(bundle, arch);
    } else {
      throw Error(noFittingPtx(bundle, arch));
    }
    auto k = std::make_shared<LoadedCudaKernel>(ctx_.loadModule(image));
    k->function = ctx_.function(k->module, bundle.kernel);
    return k;
  }

  // LaunchOptions other than the stream are the sim's: a GPU always runs the
  // whole grid. On the default stream the launch is timed with events and
  // waited for; on a created stream it is queued and returns at once (time it
  // with Stream::record events), so `ms` stays 0.
  LaunchStats launch(void *loaded, const Bundle &bundle, Dim3 grid, const std::vector<const void *> &args,
                     const LaunchOptions & /*opts*/, void *stream) override {
    auto *k = static_cast<LoadedCudaKernel *>(loaded);
    std::vector<void *> params;
    for (const void *a : args) params.push_back(const_cast<void *>(a));
    LaunchStats s;
    s.blocksRun = s.blocksTotal = uint64_t(grid.x) * grid.y * grid.z;
    const std::array<unsigned, 3> g{grid.x, grid.y, grid.z}, block{unsigned(bundle.threadsPerBlock()), 1, 1};
    const unsigned shared = static_cast<unsigned>(bundle.sharedBytes);
    if (stream) {
      ctx_.launch(k->function, g, block, shared, params.data(), static_cast<const cuda::Stream *>(stream));
      return s;
    }
    cuda::Event start = ctx_.createEvent(), stop = ctx_.createEvent();
    start.record();
    ctx_.launch(k->function, g, block, shared, params.data());
    stop.record();
    stop.synchronize();
    s.ms = cuda::Event::elapsedMs(start, stop);
    return s;
  }

  void encodeTensorMap(const detail::TensorMapSpec &s, void *out128) override { encodeTiled(ctx_.driver(), s, out128); }

  // A stream is a cuda::Stream (cuStreamCreate, flags 0: it synchronizes
  // with the legacy default stream the synchronous calls use); an event a
  // cuda::Event recorded on it (cuEventRecord).
  std::shared_ptr<void> createStream() override {
    return std::make_shared<cuda::Stream>(ctx_.createStream());
  }
  // The program's stream, used as it is: even null (the legacy default
  // stream) is a queued launch here, as a CUDA program expects of stream 0.
  std::shared_ptr<void> borrowStream(void *native) override {
    return std::make_shared<cuda::Stream>(ctx_.borrowStream(static_cast<cuda::CUstream>(native)));
  }
  void *streamHandle(void *stream) override { return static_cast<const cuda::Stream *>(stream)->handle(); }
  void synchronize(void *stream) override {
    if (stream)
      static_cast<const cuda::Stream *>(stream)->synchronize();
    else
      ctx_.synchronize();
  }
  void copyToDeviceAsync(uint64_t dst, const void *src, size_t bytes, void *stream) override {
    ctx_.copyToDeviceAsync(dst, src, bytes, *static_cast<const cuda::Stream *>(stream));
  }
  void copyToHostAsync(void *dst, uint64_t src, size_t bytes, void *stream) override {
    ctx_.copyToHostAsync(dst, src, bytes, *static_cast<const cuda::Stream *>(stream));
  }
  std::shared_ptr<void> recordEvent(void *stream) override {
    auto e = std::make_shared<cuda::Event>(ctx_.createEvent());
    e->record(static_cast<const cuda::Stream *>(stream));
    return e;
  }
  void synchronizeEvent(void *event) override {
    static_cast<const cuda::Event *>(event)->synchronize();
  }
  double elapsedMs(void *start, void *end) override {
    return double(
        cuda::Event::elapsedMs(*static_cast<const cuda::Event *>(start), *static_cast<const cuda::Event *>(end)));
  }

 private:
  cuda::Context ctx_;
};

}  // namespace

std::unique_ptr<DeviceImpl> openCudaDevice(int ordinal) {
  try {
    return std::make_unique<CudaDevice>(ordinal);
  } catch (const Error &e) {  // the same class (CudaUnavailable: no GPU), with the ordinal
    e.rethrowPrefixed("cannot open CUDA device " + std::to_string(ordinal) + ": ");
  }
}

}  // namespace tk
