// cuda::Context: the primary context of one device and the objects that live
// in it. Each call binds the context first, so any thread may use it.
#include "backend/cuda/Context.h"
#include "tk/error.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

namespace tk::cuda {

static std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

Context::Context(int ordinal) : driver_(&Driver::get()), ordinal_(ordinal) {
  if (ordinal < 0 || ordinal >= driver_->deviceCount())
    throw tk::Error("CUDA device " + std::to_string(ordinal) + " does not exist (" +
                                std::to_string(driver_->deviceCount()) + " device(s))");
  check(driver_->cuDeviceGet(&device_, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")");
  check(driver_->cuDevicePrimaryCtxRetain(&ctx_, device_), "cuDevicePrimaryCtxRetain");
  bind();
}

Context::~Context() {
  if (ctx_) driver_->cuDevicePrimaryCtxRelease(device_);
}

void Context::bind() const { check(driver_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent"); }

std::string Context::deviceName() const {
  char name[256] = {};
  check(driver_->cuDeviceGetName(name, sizeof name - 1, device_), "cuDeviceGetName");
  return name;
}

int Context::attribute(int attr) const {
  int v = 0;
  check(driver_->cuDeviceGetAttribute(&v, attr, device_), "cuDeviceGetAttribute(" + std::to_string(attr) + ")");
  return v;
}

int Context::computeCapability() const {
  return attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
         attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
}

void Context::memInfo(size_t &freeBytes, size_t &totalBytes) const {
  bind();
  check(driver_->cuMemGetInfo(&freeBytes, &totalBytes), "cuMemGetInfo");
}

uint64_t Context::alloc(size_t bytes) const {
  bind();
  CUdeviceptr p = 0;
  check(driver_->cuMemAlloc(&p, bytes), "cuMemAlloc(" + std::to_string(bytes) + " bytes)");
  return p;
}

void Context::free(uint64_t ptr) const {
  bind();
  check(driver_->cuMemFree(ptr), "cuMemFree(" + hex(ptr) + ")");
}

void Context::copyToDevice(uint64_t dst, const void *src, size_t bytes) const {
  bind();
  check(driver_->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD(" + hex(dst) + ", " + std::to_string(bytes) + " bytes)");
}

void Context::copyToHost(void *dst, uint64_t src, size_t bytes) const {
  bind();
  check(driver_->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH(" + hex(src) + ", " + std::to_string(bytes) + " bytes)");
}

void Context::copyToDeviceAsync(uint64_t dst, const void *src, size_t bytes, const Stream &stream) const {
  bind();
  check(driver_->cuMemcpyHtoDAsync(dst, src, bytes, stream.handle()),
        "cuMemcpyHtoDAsync(" + hex(dst) + ", " + std::to_string(bytes) + " bytes)");
}

void Context::copyToHostAsync(void *dst, uint64_t src, size_t bytes, const Stream &stream) const {
  bind();
  check(driver_->cuMemcpyDtoHAsync(dst, src, bytes, stream.handle()),
        "cuMemcpyDtoHAsync(" + hex(src) + ", " + std::to_string(bytes) + " bytes)");
}

void Context::memset(uint64_t dst, unsigned char value, size_t bytes) const {
  bind();
  check(driver_->cuMemsetD8(dst, value, bytes), "cuMemsetD8(" + hex(dst) + ", " + std::to_string(bytes) + " bytes)");
}

// cuMemsetD8/D16/D32 take one element of 1, 2 or 4 bytes. An 8-byte pattern
// whose halves differ is two strided passes of cuMemsetD2D32, one per half:
// rows of one 32-bit word, 8 bytes apart.
void Context::fill(uint64_t dst, const void *pattern, size_t patternBytes, size_t count) const {
  bind();
  const std::string what = "(" + hex(dst) + ", " + std::to_string(count) + " elements)";
  uint8_t p8 = 0;
  uint16_t p16 = 0;
  uint32_t p32[2] = {0, 0};
  switch (patternBytes) {
    case 1:
      std::memcpy(&p8, pattern, 1);
      return check(driver_->cuMemsetD8(dst, p8, count), "cuMemsetD8" + what);
    case 2:
      std::memcpy(&p16, pattern, 2);
      return check(driver_->cuMemsetD16(dst, p16, count), "cuMemsetD16" + what);
    case 4:
      std::memcpy(p32, pattern, 4);
      return check(driver_->cuMemsetD32(dst, p32[0], count), "cuMemsetD32" + what);
    case 8:
      std::memcpy(p32, pattern, 8);
      if (p32[0] == p32[1]) return check(driver_->cuMemsetD32(dst, p32[0], 2 * count), "cuMemsetD32" + what);
      for (int half = 0; half < 2; ++half)
        check(driver_->cuMemsetD2D32(dst + 4 * half, 8, p32[half], 1, count), "cuMemsetD2D32" + what);
      return;
    default:
      throw tk::Error("Context::fill: a pattern of " + std::to_string(patternBytes) +
                                  " bytes (1, 2, 4 or 8 only)");
  }
}

Module Context::loadModule(const std::string &image) const {
  if (image.empty()) throw tk::Error("loadModule: empty PTX/cubin image");
  bind();
  std::vector<char> errorLog(16384, '\0'), infoLog(16384, '\0');
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                   CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  void *values[] = {errorLog.data(), reinterpret_cast<void *>(errorLog.size() - 1), infoLog.data(),
                    reinterpret_cast<void *>(infoLog.size() - 1), reinterpret_cast<void *>(uintptr_t{1})};
  CUmodule m = nullptr;
  // PTX must be NUL-terminated: std::string's c_str() is.
  CUresult r = driver_->cuModuleLoadDataEx(&m, image.c_str(), 5, options, values);
  if (r != CUDA_SUCCESS) {
    std::string log(errorLog.data());
    throw Error(r, "cuModuleLoadDataEx",
                "cuModuleLoadDataEx failed: " + driver_->errorName(r) + " (" + std::to_string(r) +
                    "): " + driver_->errorString(r) + (log.empty() ? "" : "\nJIT log:\n" + log));
  }
  return Module(this, m, infoLog.data());
}

Function Context::function(const Module &m, const std::string &name) const {
  bind();
  CUfunction f = nullptr;
  check(driver_->cuModuleGetFunction(&f, m.handle(), name.c_str()), "cuModuleGetFunction(\"" + name + "\")");
  return {f, name};
}

int Context::registers(const Function &f) const {
  int v = 0;
  check(driver_->cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f.handle), "cuFuncGetAttribute(" + f.name + ")");
  return v;
}

void Context::launch(const Function &f, std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                     unsigned sharedBytes, void **args, const Stream *stream) const {
  bind();
  if (sharedBytes > 48 * 1024)
    check(driver_->cuFuncSetAttribute(f.handle, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(sharedBytes)),
          "cuFuncSetAttribute(" + f.name + ", max dynamic shared = " + std::to_string(sharedBytes) + ")");
  auto dims = [](std::array<unsigned, 3> d) {
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
  };
  check(driver_->cuLaunchKernel(f.handle, grid[0], grid[1], grid[2], block[0], block[1], block[2], sharedBytes,
                                stream ? stream->handle() : nullptr, args, nullptr),
        "cuLaunchKernel(" + f.name + ", grid " + dims(grid) + ", block " + dims(block) + ", " +
            std::to_string(sharedBytes) + " bytes shared)");
}

void Context::synchronize() const {
  bind();
  check(driver_->cuCtxSynchronize(), "cuCtxSynchronize");
}

Stream Context::createStream() const {
  bind();
  CUstream s = nullptr;
  check(driver_->cuStreamCreate(&s, 0), "cuStreamCreate");
  return Stream(this, s, true);
}

Event Context::createEvent() const {
  bind();
  CUevent e = nullptr;
  check(driver_->cuEventCreate(&e, 0), "cuEventCreate");
  return Event(this, e);
}

// ---- Module, Stream, Event ----------------------------------------------

Module::Module(Module &&o) noexcept
    : ctx_(o.ctx_), handle_(std::exchange(o.handle_, nullptr)), infoLog_(std::move(o.infoLog_)) {}

Module &Module::operator=(Module &&o) noexcept {
  if (this != &o) {
    reset();
    ctx_ = o.ctx_;
    handle_ = std::exchange(o.handle_, nullptr);
    infoLog_ = std::move(o.infoLog_);
  }
  return *this;
}

// Destructors cannot throw: unload errors (e.g. after a sticky launch
// failure) are dropped.
void Module::reset() {
  if (!handle_) return;
  try {
    ctx_->bind();
    ctx_->driver().cuModuleUnload(handle_);
  } catch (const Error &) {
  }
  handle_ = nullptr;
}

Module::~Module() { reset(); }

Stream::~Stream() {
  if (!handle_ || !owned_) return;
  try {
    ctx_->bind();
    ctx_->driver().cuStreamDestroy(handle_);
  } catch (const Error &) {
  }
}

void Stream::synchronize() const {
  ctx_->bind();
  ctx_->check(ctx_->driver().cuStreamSynchronize(handle_), "cuStreamSynchronize");
}

Event::~Event() {
  if (!handle_) return;
  try {
    ctx_->bind();
    ctx_->driver().cuEventDestroy(handle_);
  } catch (const Error &) {
  }
}

void Event::record(const Stream *stream) const {
  ctx_->bind();
  ctx_->check(ctx_->driver().cuEventRecord(handle_, stream ? stream->handle() : nullptr), "cuEventRecord");
}

void Event::synchronize() const {
  ctx_->bind();
  ctx_->check(ctx_->driver().cuEventSynchronize(handle_), "cuEventSynchronize");
}

float Event::elapsedMs(const Event &start, const Event &end) {
  end.synchronize();
  float ms = 0;
  end.ctx_->check(end.ctx_->driver().cuEventElapsedTime(&ms, start.handle_, end.handle_), "cuEventElapsedTime");
  return ms;
}

}  // namespace tk::cuda
