// Generated launchers end to end (tk_add_kernels in tests/unit/aot.cmake):
// linked against tk_runtime and the sim only -- no compiler -- they run the
// stdlib's complex_activation and tests/kernels/aot_rows.tk on the sim
// against double references, pick the variant of the config and of the
// integer values passed, and turn bad input into tk::Status errors that name
// the kernel and the argument.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>

#include "aot_rows.h"
#include "aot_tuned.h"
#include "descriptor_params.h"
#include "elementwise.h"
#include "runtime/ArchSelect.h"
#include "runtime_TestUtil.h"

namespace {

using tk::test::randomFloats;

std::unique_ptr<tk::Device> sim() { return tk::Device::open("sim"); }

double complexActivation(double a, double b) { return std::max(0.0, (std::sin(a) * std::cos(b) + a) * b); }

// Runs complex_activation with `config` at size n and checks every output.
void expectComplexActivation(tk::Device &dev, int32_t n, const complex_activation_config &config) {
  auto x = randomFloats(n, -4, 4), y = randomFloats(n, -4, 4);
  std::vector<float> poison(n, std::numeric_limits<float>::quiet_NaN());
  tk::Buffer bx = dev.upload(x), by = dev.upload(y), bout = dev.upload(poison);
  const tk::Dim3 grid{uint32_t((n + config.BLOCK - 1) / config.BLOCK)};
  tk::Status st = complex_activation(dev, grid, config, tk::pointer<float>(bx), tk::pointer<float>(by),
                                     tk::pointer<float>(bout), n);
  ASSERT_TRUE(st.ok()) << st.message();
  auto out = dev.download<float>(bout, n);
  for (int32_t i = 0; i < n; ++i) {
    const double want = complexActivation(x[i], y[i]);
    ASSERT_NEAR(out[i], want, 1e-5 * (1 + std::fabs(want))) << "n=" << n << " BLOCK=" << config.BLOCK << " at " << i;
  }
}

TEST(Aot, ComplexActivationEveryVariant) {
  auto dev = sim();
  // n = 1 (the == 1 variant), 1024 (% 16), 781 and 98433 (general); both BLOCKs.
  for (int32_t block : {128, 256})
    for (int32_t n : {1, 781, 1024, 98433}) expectComplexActivation(*dev, n, complex_activation_config{block, 4});
}

// The typed launchers take a created stream as they take a device: two
// launches queued on two streams, the second on each reading the first's
// output, checked once each stream is waited for.
TEST(Aot, LaunchesOnCreatedStreams) {
  auto dev = sim();
  const int32_t n[2] = {98433, 781};
  tk::Stream streams[2] = {dev->createStream(), dev->createStream()};
  std::vector<float> x[2], y[2];
  tk::Buffer bx[2], by[2], mid[2], out[2];
  const complex_activation_config config{256, 4};
  for (int s = 0; s < 2; ++s) {
    x[s] = randomFloats(n[s], -3, 3), y[s] = randomFloats(n[s], -3, 3);
    std::vector<float> poison(n[s], std::numeric_limits<float>::quiet_NaN());
    bx[s] = dev->upload(x[s]), by[s] = dev->upload(y[s]), mid[s] = dev->upload(poison), out[s] = dev->upload(poison);
    const tk::Dim3 grid{uint32_t((n[s] + config.BLOCK - 1) / config.BLOCK)};
    tk::Status st = complex_activation(streams[s], grid, config, tk::pointer<float>(bx[s]), tk::pointer<float>(by[s]),
                                       tk::pointer<float>(mid[s]), n[s]);
    ASSERT_TRUE(st.ok()) << st.message();
    st = complex_activation(streams[s], grid, config, tk::pointer<float>(mid[s]), tk::pointer<float>(by[s]),
                            tk::pointer<float>(out[s]), n[s]);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  for (int s = 0; s < 2; ++s) {
    streams[s].synchronize();
    auto got = dev->download<float>(out[s], n[s]);
    for (int32_t i = 0; i < n[s]; ++i) {
      const double want = complexActivation(float(complexActivation(x[s][i], y[s][i])), y[s][i]);
      ASSERT_NEAR(got[i], want, 1e-4 * (1 + std::fabs(want))) << "stream " << s << " at " << i;
    }
  }
  // A stream whose device is gone is an error naming the kernel.
  auto other = sim();
  tk::Stream foreign = other->createStream();
  other.reset();
  tk::Status st = complex_activation(foreign, tk::Dim3{1}, complex_activation_config{256, 4}, tk::pointer<float>(bx[0]),
                                     tk::pointer<float>(by[0]), tk::pointer<float>(out[0]), 16);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), tk::StatusCode::Unavailable);
  EXPECT_EQ(st.message(), "complex_activation: the stream's device has been destroyed");
}

TEST(Aot, SelectedConfigAndGridOf) {
  auto dev = sim();
  const int32_t n = 1023;
  EXPECT_EQ(complex_activation_select(n).BLOCK, 128);  // the first -D value: no tuning table
  auto x = randomFloats(n, -1, 1), y = randomFloats(n, -1, 1);
  std::vector<float> poison(n, std::numeric_limits<float>::quiet_NaN());
  tk::Buffer bx = dev->upload(x), by = dev->upload(y), bout = dev->upload(poison);
  tk::Status st = complex_activation(
      *dev, [&](const complex_activation_config &c) { return tk::Dim3{uint32_t((n + c.BLOCK - 1) / c.BLOCK)}; },
      tk::pointer<float>(bx), tk::pointer<float>(by), tk::pointer<float>(bout), n);
  ASSERT_TRUE(st.ok()) << st.message();
  auto out = dev->download<float>(bout, n);
  for (int32_t i = 0; i < n; ++i) ASSERT_NEAR(out[i], complexActivation(x[i], y[i]), 1e-5 * (1 + std::fabs(out[i])));
}

// silu over `rows` rows of `cols` values `stride` apart.
void expectSiluRows(tk::Device &dev, uint32_t rows, int32_t cols, int32_t stride) {
  const size_t size = size_t(rows - 1) * stride + cols;
  auto x = randomFloats(size, -6, 6);
  std::vector<float> poison(size, std::numeric_limits<float>::quiet_NaN());
  tk::Buffer bx = dev.upload(x), bout = dev.upload(poison);
  tk::Status st = silu_rows(dev, tk::Dim3{rows}, silu_rows_config{256, 4}, tk::pointer<float>(bx),
                            tk::pointer<float>(bout), cols, stride);
  ASSERT_TRUE(st.ok()) << st.message();
  auto out = dev.download<float>(bout, size);
  for (uint32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < cols; ++c) {
      const double v = x[r * stride + c], want = v / (1 + std::exp(-v));
      ASSERT_NEAR(out[r * stride + c], want, 1e-5 * (1 + std::fabs(want)))
          << "cols=" << cols << " stride=" << stride << " at " << r << "," << c;
    }
}

TEST(Aot, IntegerSpecialisationsChosenByValue) {
  auto dev = sim();
  expectSiluRows(*dev, 3, 16, 32);    // both % 16
  expectSiluRows(*dev, 4, 1, 16);     // cols == 1
  expectSiluRows(*dev, 1, 48, 1);     // stride == 1
  expectSiluRows(*dev, 5, 100, 103);  // neither: the general variant
}

TEST(Aot, TuningTablesChooseByNearestKey) {
  EXPECT_EQ(axpy_select(1.5f, 1024).BLOCK, 128);
  EXPECT_EQ(axpy_select(1.5f, 1024).num_warps, 1);
  EXPECT_EQ(axpy_select(1.5f, 1).BLOCK, 128);
  EXPECT_EQ(axpy_select(1.5f, 20000).BLOCK, 128);   // log2 14.3: nearer 10 (n = 1024) than 20 (n = 2^20)
  EXPECT_EQ(axpy_select(1.5f, 40000).BLOCK, 2048);  // log2 15.3: nearer 20
  EXPECT_EQ(axpy_select(1.5f, 40000000).BLOCK, 2048);
  EXPECT_EQ(axpy_select(1.5f, 1048576).num_warps, 8);
  auto dev = sim();
  for (int32_t n : {781, 65537}) {
    auto x = randomFloats(n, -2, 2), y = randomFloats(n, -2, 2);
    std::vector<float> poison(n, std::numeric_limits<float>::quiet_NaN());
    tk::Buffer bx = dev->upload(x), by = dev->upload(y), bout = dev->upload(poison);
    tk::Status st = axpy(
        *dev, [&](const axpy_config &c) { return tk::Dim3{uint32_t((n + c.BLOCK - 1) / c.BLOCK)}; },
        tk::pointer<float>(bx), tk::pointer<float>(by), tk::pointer<float>(bout), 1.5f, n);
    ASSERT_TRUE(st.ok()) << st.message();
    auto out = dev->download<float>(bout, n);
    for (int32_t i = 0; i < n; ++i) ASSERT_NEAR(out[i], 1.5 * x[i] + y[i], 1e-5) << "n=" << n << " at " << i;
  }
}

TEST(Aot, BadInputIsAStatusNamingKernelAndArgument) {
  auto dev = sim();
  tk::Buffer b = dev->alloc(4096);
  float *p = tk::pointer<float>(b);
  const complex_activation_config cfg{128, 4};

  tk::Status st = complex_activation(*dev, tk::Dim3{1}, cfg, nullptr, p, p, 16);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), tk::StatusCode::InvalidArgument);
  EXPECT_EQ(st.message(), "complex_activation: argument 'x' (*f32) is a null pointer");

  st = complex_activation(*dev, tk::Dim3{1}, cfg, p, p + 1, p, 16);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), tk::StatusCode::InvalidArgument);
  EXPECT_NE(st.message().find("complex_activation: argument 'y' (*f32) = 0x"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("is not 16-byte aligned as the kernel assumes"), std::string::npos) << st.message();

  st = complex_activation(*dev, tk::Dim3{0}, cfg, p, p, p, 16);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), tk::StatusCode::InvalidArgument);
  EXPECT_EQ(st.message(), "complex_activation: argument 'grid' (0, 1, 1) has a zero dimension: nothing to launch");

  st = complex_activation(*dev, tk::Dim3{1}, complex_activation_config{512, 4}, p, p, p, 16);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), tk::StatusCode::NoVariant);
  EXPECT_EQ(st.message(),
            "complex_activation: no variant compiled for BLOCK=512, num_warps=4 (compiled: BLOCK=128, num_warps=4; "
            "BLOCK=256, num_warps=4); add it to the -D sets given to tkc (tk_add_kernels DEFINES)");
}

// The device failing the work (here the sim catching reads past the end of
// a 4 KiB buffer) is a DeviceError, not the caller's argument error.
TEST(Aot, FailedWorkIsADeviceError) {
  auto dev = sim();
  tk::Buffer b = dev->alloc(4096);
  float *p = tk::pointer<float>(b);
  tk::Status st = complex_activation(*dev, tk::Dim3{64}, complex_activation_config{128, 4}, p, p, p, 64 * 128);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), tk::StatusCode::DeviceError) << st.message();
  EXPECT_EQ(st.message().rfind("complex_activation: ", 0), 0u) << st.message();
}

// Each class of tk/error.h maps to the code a caller would branch on.
TEST(Aot, StatusCodeOfEachErrorClass) {
  using tk::StatusCode;
  EXPECT_EQ(tk::Status::codeOf(tk::Error("x")), StatusCode::InvalidArgument);
  EXPECT_EQ(tk::Status::codeOf(tk::CudaUnavailable("no driver")), StatusCode::Unavailable);
  EXPECT_EQ(tk::Status::codeOf(tk::CudaError(700, "cuLaunchKernel", "illegal address")), StatusCode::DeviceError);
  EXPECT_EQ(tk::Status::codeOf(tk::CudaError(2, "cuMemAlloc", "out of memory")), StatusCode::OutOfMemory);
  EXPECT_EQ(tk::Status::codeOf(tk::SimError("out of bounds")), StatusCode::DeviceError);
  EXPECT_EQ(tk::Status::codeOf(tk::CompileError("bad ptx")), StatusCode::LoadFailed);
  EXPECT_EQ(tk::Status::codeOf(tk::InternalError("bug")), StatusCode::Internal);
  EXPECT_EQ(tk::Status::codeOf(std::bad_alloc()), StatusCode::OutOfMemory);
  EXPECT_EQ(tk::Status::codeOf(std::runtime_error("?")), StatusCode::Internal);
  tk::Status st = tk::Status::of(tk::SimError("race"), "k");
  EXPECT_EQ(st.code(), StatusCode::DeviceError);
  EXPECT_EQ(st.message(), "k: race");
  EXPECT_STREQ(tk::statusCodeName(StatusCode::NoVariant), "no variant");
  // An error is never Ok, whatever code it is given.
  EXPECT_FALSE(tk::Status::error(StatusCode::Ok, "?").ok());
}

TEST(Aot, StaleHeaderIsRefusedAtLoad) {
  auto dev = sim();
  EXPECT_TRUE(elementwise_load(*dev).ok());
  // A header generated from other sources passes another hash.
  tk::Status st = elementwise_detail::load(*dev, elementwise_hash ^ 1);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), tk::StatusCode::LoadFailed);
  EXPECT_NE(st.message().find("elementwise.h does not match elementwise.cpp"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("the header is stale"), std::string::npos) << st.message();
  elementwise_unload(*dev);
  EXPECT_TRUE(elementwise_load(*dev).ok());  // loads again after an unload
}

TEST(Aot, PtxForAnotherArchNamesBoth) {
  tk::Bundle b;
  b.kernel = "complex_activation";
  b.ptx = {{"sm_90a", "."}, {"sm_89", "."}};
  EXPECT_EQ(tk::bestPtxArch(b, "sm_90"), "sm_90a");
  EXPECT_EQ(tk::bestPtxArch(b, "sm_89"), "sm_89");
  EXPECT_EQ(tk::bestPtxArch(b, "sm_80"), "");
  const std::string message = tk::noFittingPtx(b, "sm_80");
  EXPECT_EQ(message.rfind("bundle for 'complex_activation' carries PTX for sm_89, sm_90a but this GPU is sm_80, which "
                          "runs PTX of its own arch or older ones only",
                          0),
            0u)
      << message;
}

TEST(Aot, CubinOfTheDevicesOwnArchIsLoadedElsePtx) {
  tk::Bundle b;
  b.kernel = "k";
  b.ptx = {{"sm_80", "."}, {"sm_90", "."}, {"sm_90a", "."}};
  b.cubins = {{"sm_80",
               "\x7f"
               "ELF80"},
              {"sm_90",
               "\x7f"
               "ELF90"}};
  // Exactly the device's arch: the cubin of the PTX bestPtxArch picks.
  EXPECT_EQ(tk::bestCubinArch(b, "sm_80"), "sm_80");
  EXPECT_EQ(tk::bestCubinArch(b, "sm_90"), tk::bestPtxArch(b, "sm_90"));
  EXPECT_FALSE(tk::bestCubinArch(b, "sm_90").empty());
  // An older arch's cubin is not loaded on a newer GPU: its PTX is JIT-compiled.
  EXPECT_EQ(tk::bestPtxArch(b, "sm_86"), "sm_80");
  EXPECT_EQ(tk::bestCubinArch(b, "sm_86"), "");
  // Nothing fits, or no cubin embedded: PTX (or the error) as before.
  EXPECT_EQ(tk::bestCubinArch(b, "sm_75"), "");
  b.cubins.clear();
  EXPECT_EQ(tk::bestCubinArch(b, "sm_80"), "");
  // An arch-specific cubin runs on its own arch only.
  tk::Bundle a;
  a.ptx = {{"sm_90a", "."}};
  a.cubins = {{"sm_90a",
               "\x7f"
               "ELF"}};
  EXPECT_EQ(tk::bestCubinArch(a, "sm_90"), "sm_90a");
  EXPECT_EQ(tk::bestCubinArch(a, "sm_100"), "");
}

TEST(Aot, RuntimeWithoutCompilerOpensTheLinkedSim) {
  // This test links tk_runtime and tk_sim_device only: the sim registered
  // itself, and a device kind nobody linked is named as such.
  EXPECT_EQ(tk::Device::open("sim")->kind(), "sim");
  EXPECT_THROW(tk::Device::open("sim:fast"), tk::Error);
  EXPECT_THROW(tk::Device::open("tpu"), tk::Error);
}

// A generated launcher with tensor descriptor parameters: both BM variants
// compute the product with one set of descriptors (each gets its block), an
// empty block shape takes the variant's, and a broken rule is a Status
// naming the kernel and the argument.
TEST(Aot, DescriptorParametersTakeEachVariantsBlock) {
  auto dev = sim();
  const int m = 70, n = 40, kk = 48;
  auto a = tk::test::exactHalfInputs(size_t(m) * kk), b = tk::test::exactHalfInputs(size_t(kk) * n);
  tk::Buffer da = dev->upload(tk::test::f16Values(a)), db = dev->upload(tk::test::f16Values(b));
  for (int32_t bm : {32, 64}) {
    tk::Buffer dc = dev->upload(std::vector<float>(size_t(m) * n, std::numeric_limits<float>::quiet_NaN()));
    tk::TensorDescriptor ta = tk::TensorDescriptor::contiguous(da, {m, kk}, {64, 32}),
                         tb = tk::TensorDescriptor::contiguous(db, {kk, n}, {}),
                         tc = tk::TensorDescriptor::contiguous(dc, {m, n}, {64, 64});
    const tk::Dim3 grid{uint32_t((m + bm - 1) / bm), uint32_t((n + 63) / 64)};
    tk::Status st = matmul_host_desc(*dev, grid, matmul_host_desc_config{bm, 64, 32, 4}, ta, tb, tc, int32_t(kk));
    ASSERT_TRUE(st.ok()) << st.message();
    auto c = dev->download<float>(dc, size_t(m) * n);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double want = 0;
        for (int q = 0; q < kk; ++q) want += double(a[size_t(i) * kk + q]) * b[size_t(q) * n + j];
        ASSERT_EQ(c[size_t(i) * n + j], want) << "BM=" << bm << " at " << i << "," << j;
      }
  }
  tk::Buffer dc = dev->alloc<float>(size_t(m) * n);
  tk::TensorDescriptor bad{da, {m, kk}, {kk + 1, 1}, {}};
  tk::Status st = matmul_host_desc(*dev, {3, 1}, matmul_host_desc_config{32, 64, 32, 4}, bad,
                                   tk::TensorDescriptor::contiguous(db, {kk, n}, {}),
                                   tk::TensorDescriptor::contiguous(dc, {m, n}, {}), int32_t(kk));
  EXPECT_EQ(st.code(), tk::StatusCode::InvalidArgument);
  EXPECT_NE(st.message().find("matmul_host_desc: argument 'a' (desc<f16,[32,32]>): strides[0] = 49"), std::string::npos)
      << st.message();
  st = matmul_host_desc(*dev, {3, 1}, matmul_host_desc_config{32, 64, 32, 4},
                        tk::TensorDescriptor::contiguous(dev->alloc<float>(size_t(m) * kk), {m, kk}, {}),
                        tk::TensorDescriptor::contiguous(db, {kk, n}, {}),
                        tk::TensorDescriptor::contiguous(dc, {m, n}, {}), int32_t(kk));
  EXPECT_NE(st.message().find("has a base buffer of f32, not f16"), std::string::npos) << st.message();
  auto other = sim();
  st = matmul_host_desc(*dev, {3, 1}, matmul_host_desc_config{32, 64, 32, 4},
                        tk::TensorDescriptor::contiguous(other->alloc<uint16_t>(size_t(m) * kk), {m, kk}, {}),
                        tk::TensorDescriptor::contiguous(db, {kk, n}, {}),
                        tk::TensorDescriptor::contiguous(dc, {m, n}, {}), int32_t(kk));
  EXPECT_NE(st.message().find("has a base buffer of another device"), std::string::npos) << st.message();
}

}  // namespace
