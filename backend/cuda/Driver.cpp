// Loading libcuda with dlopen and resolving the Driver API: through
// cuGetProcAddress_v2 when the driver has it (the per-version ABI the driver
// itself picks), else the versioned symbol names of cuda.h.
#include "backend/cuda/Driver.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tk::cuda {

namespace {

// cuda.h's names and descriptions for the codes tk is likely to meet; the
// stub library cannot describe its own errors.
struct ErrorInfo {
  CUresult code;
  const char *name, *text;
};
constexpr ErrorInfo kErrors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER", "CUDA driver version is insufficient for CUDA runtime version"},
    {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", "API call is not supported in the installed CUDA driver"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
    {710, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorInfo *findError(CUresult r) {
  for (const ErrorInfo &e : kErrors)
    if (e.code == r) return &e;
  return nullptr;
}

// The symbol cuda.h maps each name to when it differs ("cuMemAlloc" ->
// "cuMemAlloc_v2"); used when cuGetProcAddress is absent or refuses.
const char *versionedName(const char *name) {
  static const char *const pairs[][2] = {
      {"cuMemGetInfo", "cuMemGetInfo_v2"},
      {"cuMemAlloc", "cuMemAlloc_v2"},
      {"cuMemFree", "cuMemFree_v2"},
      {"cuMemcpyHtoD", "cuMemcpyHtoD_v2"},
      {"cuMemcpyDtoH", "cuMemcpyDtoH_v2"},
      {"cuMemsetD8", "cuMemsetD8_v2"},
      {"cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2"},
      {"cuStreamDestroy", "cuStreamDestroy_v2"},
      {"cuEventDestroy", "cuEventDestroy_v2"},
      {"cuMemsetD16", "cuMemsetD16_v2"},
      {"cuMemsetD32", "cuMemsetD32_v2"},
      {"cuMemsetD2D32", "cuMemsetD2D32_v2"},
      {"cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2"},
      {"cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2"},
  };
  for (const auto &p : pairs)
    if (std::strcmp(p[0], name) == 0) return p[1];
  return name;
}

using GetProcAddress = CUresult (*)(const char *symbol, void **pfn, int cudaVersion, uint64_t flags, int *symbolStatus);

// The CUDA version whose ABI tk's declarations in DriverFunctions.def follow.
constexpr int kApiVersion = 13000;

}  // namespace

std::unique_ptr<Driver> Driver::open(const std::string &path) {
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    std::string what = path == "libcuda.so.1" ? "libcuda.so.1 not found: no NVIDIA driver on this machine"
                                              : "cannot load CUDA driver library '" + path + "'";
    throw Unavailable(what + " (dlopen: " + (why ? why : "unknown error") + ")");
  }
  std::unique_ptr<Driver> d(new Driver());
  d->handle_ = handle;
  d->path_ = path;

  auto sym = [&](const char *name) { return dlsym(handle, name); };
  auto getProc = reinterpret_cast<GetProcAddress>(sym("cuGetProcAddress_v2"));
  auto version = reinterpret_cast<CUresult (*)(int *)>(sym("cuDriverGetVersion"));
  if (version && version(&d->version_) != CUDA_SUCCESS) d->version_ = 0;
  int askVersion = d->version_ > 0 ? std::min(d->version_, kApiVersion) : kApiVersion;
  auto resolve = [&](const char *name) -> void * {
    void *fn = nullptr;
    int status = 0;
    if (getProc && getProc(name, &fn, askVersion, 0, &status) == CUDA_SUCCESS && fn) return fn;
    if ((fn = sym(versionedName(name)))) return fn;
    return sym(name);
  };
#define TK_CUDA_FN(name, ret, args)                              \
  d->name = reinterpret_cast<decltype(d->name)>(resolve(#name)); \
  if (!d->name) throw Unavailable("CUDA driver library '" + path + "' lacks " #name " (driver too old for tk?)");
#define TK_CUDA_OPTIONAL_FN(name, ret, args) d->name = reinterpret_cast<decltype(d->name)>(resolve(#name));
#include "backend/cuda/DriverFunctions.def"

  if (CUresult r = d->cuInit(0); r != CUDA_SUCCESS) {
    std::string hint = r == CUDA_ERROR_STUB_LIBRARY ? " ('" + path + "' is the toolkit's stub, not a driver)"
                       : r == CUDA_ERROR_NO_DEVICE  ? " (no CUDA device)"
                                                    : "";
    throw Unavailable("cuInit failed: " + d->errorName(r) + " (" + std::to_string(r) + "): " + d->errorString(r) +
                      hint);
  }
  if (CUresult r = d->cuDeviceGetCount(&d->deviceCount_); r != CUDA_SUCCESS)
    throw Unavailable("cuDeviceGetCount failed: " + d->errorName(r) + ": " + d->errorString(r));
  if (d->deviceCount_ == 0) throw Unavailable("no CUDA device: the driver at '" + path + "' reports 0 devices");
  return d;
}

Driver &Driver::get() {
  // Loaded once; a failure is remembered and rethrown with the same reason.
  struct Loaded {
    Driver *driver = nullptr;
    std::string error;
  };
  static const Loaded loaded = [] {
    Loaded l;
    const char *env = std::getenv("TK_LIBCUDA");
    try {
      l.driver = open(env && *env ? env : "libcuda.so.1").release();  // never freed: see Driver.h
    } catch (const Unavailable &e) {
      l.error = e.what();
    }
    return l;
  }();
  if (!loaded.driver) throw Unavailable(loaded.error);
  return *loaded.driver;
}

Driver::~Driver() {
  if (handle_) dlclose(handle_);
}

std::string Driver::errorName(CUresult r) const {
  const char *name = nullptr;
  if (cuGetErrorName && cuGetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
  if (const ErrorInfo *e = findError(r)) return e->name;
  return "CUDA_ERROR_" + std::to_string(r);
}

std::string Driver::errorString(CUresult r) const {
  const char *text = nullptr;
  if (cuGetErrorString && cuGetErrorString(r, &text) == CUDA_SUCCESS && text) return text;
  if (const ErrorInfo *e = findError(r)) return e->text;
  return "unrecognized CUDA error";
}

void Driver::check(CUresult r, const std::string &call) const {
  if (r == CUDA_SUCCESS) return;
  throw Error(r, call, call + " failed: " + errorName(r) + " (" + std::to_string(r) + "): " + errorString(r));
}

}  // namespace tk::cuda
