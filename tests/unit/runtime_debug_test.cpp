// Device print and assert (tests/kernels/debug.tk): on the sim the printed
// text is captured through Device::setPrintSink and checked line for line
// against text formatted here from the same random inputs; a failed assert
// fails the launch naming the kernel, line, block, thread and message; the
// PTX of both passes ptxas.
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdio>
#include <random>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "tk/runtime.h"
#include "TestSeed.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/debug.tk";

std::string format(const char *fmt, ...) {
  char buf[256];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

// A sim device whose print output lands in `out` (one string per launch).
struct Captured {
  std::unique_ptr<tk::Device> dev = tk::Device::open("sim");
  std::vector<std::string> out;
  Captured() {
    dev->setPrintSink([this](const std::string &text) { out.push_back(text); });
  }
  tk::Kernel load(const std::string &kernel) { return dev->load(tk::Compiler::compileFile(kFile, kernel)); }
};

std::string launchError(tk::Device &dev, const tk::Kernel &k, tk::Dim3 grid, const std::vector<tk::Arg> &args) {
  try {
    dev.launch(k, grid, args);
  } catch (const tk::Error &e) {
    return e.what();
  }
  return "";
}

}  // namespace

// Replicated 8-element tiles (128 threads) print each element once, by block,
// then by printed value, then element; scalars once per program.
TEST(DevicePrint, TilesAndScalarsOncePerElement) {
  Captured c;
  tk::Kernel k = c.load("print_1d");
  std::mt19937 rng(tk::test::testSeed());
  for (int n : {5, 11}) {
    const int blocks = (n + 7) / 8;
    std::vector<int32_t> x(n);
    std::vector<float> y(n);
    for (auto &v : x) v = int32_t(rng() % 2001) - 1000;
    for (auto &v : y) v = float(int(rng() % 4001) - 2000) / 64.0f;  // exact in %f
    c.out.clear();
    (*c.dev)(k, {uint32_t(blocks)}, c.dev->upload(x), c.dev->upload(y), int32_t(n));
    std::string want;
    for (int p = 0; p < blocks; ++p) {
      auto line = [&](const char *rest) { return format("pid (%d, 0, 0) ", p) + rest; };
      for (int i = 0; i < 8; ++i) {
        int o = p * 8 + i;
        want += line(format("idx (%d) a = %d\n", i, o < n ? x[o] : -1).c_str());
      }
      for (int i = 0; i < 8; ++i) {
        int o = p * 8 + i;
        want += line(format("idx (%d) b %f\n", i, o < n ? double(y[o]) : 0.5).c_str());
      }
      for (int i = 0; i < 8; ++i) {
        int o = p * 8 + i;
        want += line(format("idx (%d) %d\n", i, o < n && x[o] > 20 ? 1 : 0).c_str());
      }
      want += line(format("n = %d\n", n).c_str());
      want += line(format("scalars (operand 0) %d\n", n).c_str());
      want += line("scalars (operand 1) 2.500000\n");
    }
    ASSERT_EQ(c.out.size(), 1u) << "one sink call per launch";
    EXPECT_EQ(c.out[0], want) << "n = " << n;
  }
}

TEST(DevicePrint, TwoDimensionalTileRowMajor) {
  Captured c;
  tk::Kernel k = c.load("print_2d");
  std::vector<float> x = [] {
    std::mt19937 rng(tk::test::testSeed());
    std::vector<float> v(32);
    for (float &f : v) f = float(int(rng() % 2001) - 1000) / 8.0f;
    return v;
  }();
  (*c.dev)(k, {1}, c.dev->upload(x));
  std::string want;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) want += format("pid (0, 0, 0) idx (%d, %d) v %f\n", i, j, double(x[i * 8 + j]));
  ASSERT_EQ(c.out.size(), 1u);
  EXPECT_EQ(c.out[0], want);
}

TEST(DevicePrint, SeveralValuesAndABarePrefix) {
  Captured c;
  tk::Kernel k = c.load("print_many");
  std::vector<int32_t> x = {7, -3, 12, 40};
  (*c.dev)(k, {2, 1, 1}, c.dev->upload(x));
  std::string want;
  for (int p = 0; p < 2; ++p) {
    for (int i = 0; i < 4; ++i) want += format("pid (%d, 0, 0) idx (%d) pair (operand 0) %d\n", p, i, x[i]);
    for (int i = 0; i < 4; ++i) want += format("pid (%d, 0, 0) idx (%d) pair (operand 1) %d\n", p, i, i * i);
    want += format("pid (%d, 0, 0) done 100%%\n", p);
  }
  ASSERT_EQ(c.out.size(), 1u);
  EXPECT_EQ(c.out[0], want);
}

TEST(DevicePrint, WideTileInRowMajorOrder) {
  Captured c;
  tk::Kernel k = c.load("print_wide");
  std::mt19937 rng(tk::test::testSeed());
  std::vector<int32_t> x(2048);
  for (auto &v : x) v = int32_t(rng());
  tk::Buffer dx = c.dev->upload(x);
  (*c.dev)(k, {1}, dx);
  std::string want;
  for (int i = 0; i < 2048; ++i) want += format("pid (0, 0, 0) idx (%d) w %d\n", i, x[i]);
  ASSERT_EQ(c.out.size(), 1u);
  EXPECT_EQ(c.out[0], want);
  EXPECT_EQ(c.dev->download<int32_t>(dx, 1)[0], int32_t(uint32_t(x[0]) + 1u));
}

TEST(DevicePrint, PointersAndWideTypes) {
  Captured c;
  tk::Kernel k = c.load("print_types");
  tk::Buffer dx = c.dev->alloc(64);
  (*c.dev)(k, {1}, dx);
  const unsigned long long a = dx.address();
  std::string want = format("pid (0, 0, 0) x 0x%llx\n", a);
  for (int i = 0; i < 2; ++i) want += format("pid (0, 0, 0) idx (%d) x + i 0x%llx\n", i, a + 4 * i);
  for (int i = 0; i < 2; ++i) want += format("pid (0, 0, 0) idx (%d) wide (operand 0) %lld\n", i, i * 3000000000ll);
  for (int i = 0; i < 2; ++i) want += format("pid (0, 0, 0) idx (%d) wide (operand 1) %f\n", i, i / 3.0);
  ASSERT_EQ(c.out.size(), 1u);
  EXPECT_EQ(c.out[0], want);
}

TEST(DevicePrint, GoesToStdoutByDefault) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "print_many"));
  std::vector<int32_t> x = {1, 2, 3, 4};
  tk::Buffer dx = dev->upload(x);
  testing::internal::CaptureStdout();
  (*dev)(k, {1}, dx);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out.substr(0, 40), "pid (0, 0, 0) idx (0) pair (operand 0) 1");
  EXPECT_NE(out.find("pid (0, 0, 0) done 100%\n"), std::string::npos);
  // An empty sink is stdout again.
  dev->setPrintSink([](const std::string &) {});
  dev->setPrintSink({});
  testing::internal::CaptureStdout();
  (*dev)(k, {1}, dx);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), out);
}

TEST(DeviceAssert, PassingAssertsLetTheKernelRun) {
  Captured c;
  tk::Kernel k = c.load("check_positive");
  std::mt19937 rng(tk::test::testSeed());
  for (int n : {1, 781, 1023}) {
    std::vector<int32_t> x(n);
    for (auto &v : x) v = int32_t(rng() % 1000) + 1;
    tk::Buffer dx = c.dev->upload(x);
    (*c.dev)(k, {uint32_t((n + 127) / 128)}, dx, int32_t(n));
    std::vector<int32_t> got = c.dev->download<int32_t>(dx, n);
    for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], 2 * x[i]) << i;
  }
  tk::Kernel s = c.load("check_scalar");
  (*c.dev)(s, {3}, int32_t(99));
  EXPECT_TRUE(c.out.empty());
}

// The failing element's owner names itself: element 200 is in block 1 and,
// with one element per thread, thread 72 holds it.
TEST(DeviceAssert, FailingAssertNamesLineBlockThreadAndMessage) {
  Captured c;
  tk::Kernel k = c.load("check_positive");
  const int n = 300;
  std::vector<int32_t> x(n, 5);
  x[200] = -7;
  tk::Buffer dx = c.dev->upload(x);
  std::string err = launchError(*c.dev, k, {3}, {dx, int32_t(n)});
  EXPECT_EQ(err,
            "kernel check_positive: assertion failed (" + kFile + ":46:5), block (1,0,0), thread 72: x must be positive");

  tk::Kernel s = c.load("check_scalar");
  err = launchError(*c.dev, s, {2, 2}, {int32_t(100)});
  EXPECT_EQ(err.substr(0, err.find(" (")), "kernel check_scalar: assertion failed");
  EXPECT_NE(err.find("debug.tk:52:5), block ("), std::string::npos) << err;
  EXPECT_NE(err.find("), thread 0: n is small"), std::string::npos) << err;

  // The device is still usable: the same kernel runs on good data.
  x[200] = 3;
  c.dev->copyToDevice(dx, x.data(), x.size() * sizeof(int32_t));
  (*c.dev)(k, {3}, dx, int32_t(n));
  EXPECT_EQ(c.dev->download<int32_t>(dx, n)[200], 6);
}

TEST(DeviceAssert, LinesPrintedBeforeAFailureAreKept) {
  Captured c;
  tk::Kernel k = c.load("print_then_fail");
  std::string err = launchError(*c.dev, k, {1}, {int32_t(3)});
  EXPECT_EQ(err, "kernel print_then_fail: assertion failed (" + kFile + ":58:5), block (0,0,0), thread 0");
  ASSERT_EQ(c.out.size(), 1u);
  EXPECT_EQ(c.out[0], "pid (0, 0, 0) n = 3\n");
}

TEST(DebugPtx, PrintAndAssertPassPtxas) {
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "no ptxas: the CUDA toolkit was not found (CUDA_HOME, /usr/local/cuda)";
  for (const char *kernel : {"print_1d", "print_2d", "print_many", "print_wide", "print_then_fail", "print_types", "check_positive", "check_scalar"}) {
    tk::CompileOptions opts;
    opts.archs = {"sm_80", "sm_90"};
    tk::Bundle b = tk::Compiler::compileFile(kFile, kernel, opts);
    for (const std::string &arch : opts.archs) {
      const std::string &ptx = b.ptx.at(arch);
      const bool asserts = std::string(kernel).rfind("check_", 0) == 0;
      EXPECT_NE(ptx.find(asserts ? "\t__assertfail, " : "\tvprintf, "), std::string::npos) << kernel << "\n" << ptx;
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(ptx, arch, toolkit);
      ASSERT_TRUE(info.ran) << kernel << " " << arch << "\n" << info.log;
      EXPECT_FALSE(info.cubin.empty()) << kernel << " " << arch << "\n" << info.log;
    }
  }
}
