// Generated launchers on memory and streams the program owns (tk_add_kernels
// in tests/unit/runtime_interop.cmake; tk_runtime and the sim only): the
// CUstream overloads next to the tk::Stream ones, on borrowed host memory,
// against double references; a pointer the program never borrowed is the
// sim's precise fault, not a silent access.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "elementwise.h"
#include "runtime_TestUtil.h"

namespace {

using tk::test::randomFloats;

double complexActivation(double a, double b) { return std::max(0.0, (std::sin(a) * std::cos(b) + a) * b); }

void expectOut(const std::vector<float> &x, const std::vector<float> &y, const std::vector<float> &out) {
  for (size_t i = 0; i < out.size(); ++i) {
    const double want = complexActivation(x[i], y[i]);
    ASSERT_NEAR(out[i], want, 1e-5 * (1 + std::fabs(want))) << "n=" << out.size() << " at " << i;
  }
}

TEST(AotInterop, CudaStreamOverloadsOnBorrowedMemory) {
  auto dev = tk::Device::open("sim");
  // What a CUDA program holds: its own stream handle and its own memory
  // (host memory on the sim, borrowed so the sim knows and checks it).
  void *const theirStream = reinterpret_cast<void *>(uintptr_t(0x7e57));
  for (int32_t n : {1, 781, 98433}) {
    std::vector<float> x = randomFloats(n, -4, 4), y = randomFloats(n, -4, 4);
    std::vector<float> out(n, std::numeric_limits<float>::quiet_NaN());
    const size_t bytes = n * sizeof(float);
    tk::Buffer bx = dev->borrow(x.data(), bytes), by = dev->borrow(y.data(), bytes), bout = dev->borrow(out.data(), bytes);
    const tk::Dim3 grid{uint32_t((n + 255) / 256)};  // the one -D set: BLOCK=256
    tk::Status st = complex_activation(*dev, theirStream, grid, x.data(), y.data(), out.data(), n);
    ASSERT_TRUE(st.ok()) << st.message();
    expectOut(x, y, out);
    std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
    st = complex_activation(*dev, nullptr, grid, complex_activation_config{256, 4}, x.data(), y.data(), out.data(), n);
    ASSERT_TRUE(st.ok()) << st.message();
    expectOut(x, y, out);
  }
}

TEST(AotInterop, BorrowedStreamAsATkStream) {
  auto dev = tk::Device::open("sim");
  const int32_t n = 781;
  std::vector<float> x = randomFloats(n, -4, 4), y = randomFloats(n, -4, 4), out(n, NAN);
  tk::Buffer b = dev->borrow(x.data(), n * 4), c = dev->borrow(y.data(), n * 4), d = dev->borrow(out.data(), n * 4);
  tk::Stream s = dev->borrowStream(nullptr);
  tk::Status st = complex_activation(s, tk::Dim3{4}, x.data(), y.data(), out.data(), n);
  ASSERT_TRUE(st.ok()) << st.message();
  s.synchronize();
  expectOut(x, y, out);
}

TEST(AotInterop, MemoryTheSimWasNotToldOfIsAFault) {
  auto dev = tk::Device::open("sim");
  std::vector<float> x(256, 1.0f), y(256, 1.0f), out(256);
  tk::Status st = complex_activation(*dev, nullptr, tk::Dim3{1}, x.data(), y.data(), out.data(), 256);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), tk::StatusCode::DeviceError) << st.message();
  EXPECT_NE(st.message().find("not in any allocation"), std::string::npos) << st.message();
}

}  // namespace
