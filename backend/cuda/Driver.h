// The CUDA Driver API, loaded at run time with dlopen("libcuda.so.1"): tk
// builds and runs where no NVIDIA driver is installed, and says why it cannot
// use a GPU instead of failing to start. No CUDA header is needed; the few
// handle types and enums used are declared here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "tk/error.h"

namespace tk::cuda {

// The Driver API's handle types (opaque pointers and ints, ABI-identical).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

// The enum values tk passes (from cuda.h).
enum : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_NO_DEVICE = 100,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_LOG_VERBOSE = 12,
};

// cuTensorMapEncodeTiled's enums (cuda.h's CUtensorMapDataType,
// CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
// CUtensorMapFloatOOBfill), the values tk passes.
enum : int {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
  CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
  CU_TENSOR_MAP_DATA_TYPE_INT64 = 5,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
  CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B = 1,
  CU_TENSOR_MAP_SWIZZLE_64B = 2,
  CU_TENSOR_MAP_SWIZZLE_128B = 3,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,  // out-of-bounds elements read as zeros
};

// No usable driver or device (tk::CudaUnavailable), and a failed Driver API
// call (tk::CudaError: code(), call(), what() "<call> failed: <NAME> (<code>):
// <text>"): the public classes of tk/error.h under the names this wrapper uses.
using Unavailable = tk::CudaUnavailable;
using Error = tk::CudaError;

// The loaded libcuda and its entry points, named as in cuda.h (the versioned
// _v2 symbols where cuda.h maps to them).
class Driver {
 public:
  // The process-wide driver, loaded and cuInit'ed once (thread-safe) from
  // $TK_LIBCUDA if set, else "libcuda.so.1". Throws Unavailable, the same
  // reason each time. Never unloaded, so contexts may outlive main().
  static Driver &get();
  // Loads `path` and runs cuInit; throws Unavailable. For tests and tools
  // that need a specific library (e.g. the toolkit's stub).
  static std::unique_ptr<Driver> open(const std::string &path);

  ~Driver();
  Driver(const Driver &) = delete;
  Driver &operator=(const Driver &) = delete;

  const std::string &path() const { return path_; }
  int driverVersion() const { return version_; }  // e.g. 13000
  int deviceCount() const { return deviceCount_; }

  // "CUDA_ERROR_OUT_OF_MEMORY", and the driver's description of `r`; both
  // work with a stub library too (tk keeps its own table).
  std::string errorName(CUresult r) const;
  std::string errorString(CUresult r) const;
  // Throws Error naming `call` unless r == CUDA_SUCCESS.
  void check(CUresult r, const std::string &call) const;

  // Every entry point is set after open(), but a TK_CUDA_OPTIONAL_FN one
  // (DriverFunctions.def) may be null: the driver predates it.
#define TK_CUDA_FN(name, ret, args) ret(*name) args = nullptr;
#include "backend/cuda/DriverFunctions.def"

 private:
  Driver() = default;
  void *handle_ = nullptr;
  std::string path_;
  int version_ = 0;
  int deviceCount_ = 0;
};

}  // namespace tk::cuda
