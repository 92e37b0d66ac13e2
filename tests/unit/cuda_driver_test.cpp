// The CUDA Driver API wrapper: clear reasons where no driver is usable, and,
// on a machine with a GPU, memory, modules, launches and events for real.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <vector>

#include "backend/cuda/Context.h"
#include "tk/error.h"

using namespace tk::cuda;

namespace {

bool contains(const std::string &s, const std::string &what) { return s.find(what) != std::string::npos; }

// The reason this machine has no usable driver, or nullopt when it has one.
std::optional<std::string> unavailableReason() {
  try {
    Driver::get();
    return std::nullopt;
  } catch (const Unavailable &e) {
    return std::string(e.what());
  }
}

TEST(CudaDriver, UnavailableSaysWhy) {
  auto reason = unavailableReason();
  if (!reason) GTEST_SKIP() << "a CUDA driver and device are present";
  std::printf("[reason] %s\n", reason->c_str());  // read by EnvironmentPicksTheLibrary
  EXPECT_TRUE(contains(*reason, "libcuda") || contains(*reason, "cuInit failed") ||
              contains(*reason, "no CUDA device"))
      << *reason;
  // Asking again gives the same reason, and a Context cannot be made.
  EXPECT_EQ(unavailableReason(), reason);
  try {
    Context ctx(0);
    FAIL() << "Context made without a driver";
  } catch (const Unavailable &e) {
    EXPECT_EQ(std::string(e.what()), *reason);
  }
}

TEST(CudaDriver, NoDriverLibraryIsReported) {
  if (!std::getenv("TK_LIBCUDA") && unavailableReason()) {
    // On a driverless machine the default library name is the one reported.
    EXPECT_TRUE(contains(*unavailableReason(), "libcuda.so.1 not found: no NVIDIA driver on this machine (dlopen:") ||
                !contains(*unavailableReason(), "dlopen"))
        << *unavailableReason();
  }
  try {
    Driver::open("/nonexistent/libcuda.so.1");
    FAIL() << "a missing library loaded";
  } catch (const Unavailable &e) {
    EXPECT_TRUE(contains(e.what(), "cannot load CUDA driver library '/nonexistent/libcuda.so.1' (dlopen:"))
        << e.what();
  }
}

TEST(CudaDriver, StubLibraryIsReportedClearly) {
  const char *home = std::getenv("CUDA_HOME");
  std::filesystem::path stub = std::filesystem::path(home ? home : "/usr/local/cuda") / "lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no stub library at " << stub;
  try {
    Driver::open(stub.string());
    FAIL() << "the stub library passed cuInit";
  } catch (const Unavailable &e) {
    EXPECT_TRUE(contains(e.what(), "cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)")) << e.what();
    EXPECT_TRUE(contains(e.what(), "is the toolkit's stub, not a driver")) << e.what();
  }
}

// $TK_LIBCUDA replaces libcuda.so.1. Driver::get() loads once per process,
// so this runs the test binary again with the variable set.
TEST(CudaDriver, EnvironmentPicksTheLibrary) {
  const char *home = std::getenv("CUDA_HOME");
  std::filesystem::path stub = std::filesystem::path(home ? home : "/usr/local/cuda") / "lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no stub library at " << stub;
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string cmd = "TK_LIBCUDA='" + stub.string() + "' '" + self + "' --gtest_filter=CudaDriver.UnavailableSaysWhy 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << out;
  EXPECT_TRUE(contains(out, "[reason] cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)")) << out;
}

// ---- with a GPU ------------------------------------------------------------

// out[i] = in[i] + 1 for i < n; PTX for any device (JIT-compiled by the driver).
const char *kAddOnePtx = R"(
.version 7.0
.target sm_52
.address_size 64
.visible .entry add_one(.param .u64 in, .param .u64 out, .param .u32 n) {
  .reg .pred %p<2>; .reg .b32 %r<6>; .reg .f32 %f<3>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.s32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.s32 %rd5, %r5, 4;
  add.s64 %rd6, %rd3, %rd5;
  add.s64 %rd7, %rd4, %rd5;
  ld.global.f32 %f1, [%rd6];
  add.f32 %f2, %f1, 0f3F800000;
  st.global.f32 [%rd7], %f2;
DONE:
  ret;
}
)";

class CudaGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = unavailableReason()) GTEST_SKIP() << "no CUDA device: " << *reason;
    ctx.emplace(0);
  }
  std::optional<Context> ctx;
};

TEST_F(CudaGpu, DeviceInfo) {
  EXPECT_FALSE(ctx->deviceName().empty());
  EXPECT_GE(ctx->computeCapability(), 50);
  size_t freeBytes = 0, total = 0;
  ctx->memInfo(freeBytes, total);
  EXPECT_GT(total, 0u);
  EXPECT_LE(freeBytes, total);
  EXPECT_THROW(Context(ctx->driver().deviceCount()), tk::Error);
}

TEST_F(CudaGpu, MemoryRoundTrip) {
  const size_t n = 98433;
  uint64_t d = ctx->alloc(n);
  ctx->memset(d, 0xAB, n);
  std::vector<unsigned char> back(n, 0);
  ctx->copyToHost(back.data(), d, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], 0xAB) << i;
  std::vector<unsigned char> src(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  ctx->copyToDevice(d, src.data(), n);
  ctx->copyToHost(back.data(), d, n);
  EXPECT_EQ(back, src);
  ctx->free(d);
}

// Context::fill, behind Device::fill: 1, 2, 4 and 8-byte patterns, the last
// both with equal halves (one cuMemsetD32) and with different ones (two
// strided cuMemsetD2D32 passes).
TEST_F(CudaGpu, FillWritesEveryPatternSize) {
  const size_t n = 98433;
  uint64_t d = ctx->alloc(n * 8);
  auto check = [&](const void *pattern, size_t bytes) {
    ctx->memset(d, 0xEE, n * 8);
    ctx->fill(d, pattern, bytes, n);
    std::vector<unsigned char> back(n * 8);
    ctx->copyToHost(back.data(), d, n * 8);
    for (size_t i = 0; i < n * bytes; ++i)
      ASSERT_EQ(back[i], static_cast<const unsigned char *>(pattern)[i % bytes]) << bytes << "-byte pattern, byte " << i;
    for (size_t i = n * bytes; i < n * 8; ++i) ASSERT_EQ(back[i], 0xEE) << "past the fill, byte " << i;
  };
  uint8_t b = 0x5A;
  uint16_t h = 0x3C00;
  float f = -2.5f;
  uint64_t same = 0x1234567812345678ull, diff = 0x0102030405060708ull;
  check(&b, 1);
  check(&h, 2);
  check(&f, 4);
  check(&same, 8);
  check(&diff, 8);
  EXPECT_THROW(ctx->fill(d, &b, 3, 1), tk::Error);
  ctx->free(d);
}

TEST_F(CudaGpu, LoadsPtxLaunchesAndTimes) {
  Module m = ctx->loadModule(kAddOnePtx);
  Function f = ctx->function(m, "add_one");
  EXPECT_GT(ctx->registers(f), 0);
  for (int n : {1, 781, 1023, 98433}) {
    std::vector<float> in(n), out(n, -1.0f);
    for (int i = 0; i < n; ++i) in[i] = std::sin(float(i)) * 100.0f;
    uint64_t din = ctx->alloc(n * 4), dout = ctx->alloc(n * 4 + 4);
    ctx->copyToDevice(din, in.data(), n * 4);
    ctx->memset(dout, 0xFF, n * 4 + 4);  // poisoned: NaNs
    void *args[] = {&din, &dout, &n};
    Stream s = ctx->createStream();
    Event start = ctx->createEvent(), end = ctx->createEvent();
    start.record(&s);
    ctx->launch(f, {unsigned((n + 255) / 256), 1, 1}, {256, 1, 1}, 0, args, &s);
    end.record(&s);
    s.synchronize();
    EXPECT_GE(Event::elapsedMs(start, end), 0.0f);
    std::vector<float> got(n + 1);
    ctx->copyToHost(got.data(), dout, n * 4 + 4);
    for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], in[i] + 1.0f) << "n=" << n << " i=" << i;
    EXPECT_TRUE(std::isnan(got[n])) << "wrote past n";
    ctx->free(din);
    ctx->free(dout);
  }
}

TEST_F(CudaGpu, BadPtxShowsTheJitLog) {
  try {
    ctx->loadModule(".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry k() { bogus.op; ret; }\n");
    FAIL() << "bad PTX loaded";
  } catch (const Error &e) {
    EXPECT_EQ(e.call(), "cuModuleLoadDataEx");
    EXPECT_TRUE(contains(e.what(), "CUDA_ERROR_INVALID_PTX")) << e.what();
    EXPECT_TRUE(contains(e.what(), "JIT log")) << e.what();
  }
  EXPECT_THROW(ctx->loadModule(""), tk::Error);
}

TEST_F(CudaGpu, MissingKernelIsNamed) {
  Module m = ctx->loadModule(kAddOnePtx);
  try {
    ctx->function(m, "no_such_kernel");
    FAIL() << "found a kernel that does not exist";
  } catch (const Error &e) {
    EXPECT_TRUE(contains(e.what(), "cuModuleGetFunction(\"no_such_kernel\")")) << e.what();
    EXPECT_TRUE(contains(e.what(), "CUDA_ERROR_NOT_FOUND")) << e.what();
  }
}

}  // namespace
