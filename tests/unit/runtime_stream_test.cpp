// Streams (tk::Stream, Device::createStream): launches and async copies on
// two streams, chained through a buffer, checked against double references;
// events timed on a stream; a stream used with another device or after its
// device is gone is a precise error. The same on a GPU when there is one.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime_TestUtil.h"
#include "tk/runtime.h"

namespace {

using tk::test::randomFloats;

const std::string kStdlib = TK_SOURCE_DIR + "/stdlib/elementwise.tk";

double complexActivation(double a, double b) { return std::max(0.0, (std::sin(a) * std::cos(b) + a) * b); }

using tk::test::errorOf;

// On each of two created streams: copy inputs in, run complex_activation
// twice (the second reads the first's output: stream order), copy the result
// out, all queued before either stream is waited for. Checks both results and
// that events recorded around the work measure a time.
void runTwoStreams(tk::Device &dev) {
  tk::Kernel k = dev.load(tk::Compiler::compileFile(kStdlib, "complex_activation"));
  const int32_t n[2] = {98433, 781};  // sizes that end in a partial block
  std::vector<float> x[2], y[2], out[2];
  tk::Buffer bx[2], by[2], mid[2], bout[2];
  tk::Stream streams[2] = {dev.createStream(), dev.createStream()};
  tk::Event start[2] = {streams[0].record(), streams[1].record()};
  for (int s = 0; s < 2; ++s) {
    x[s] = randomFloats(n[s], -3, 3);
    y[s] = randomFloats(n[s], -3, 3);
    out[s].assign(n[s], std::numeric_limits<float>::quiet_NaN());
    const size_t bytes = n[s] * sizeof(float);
    bx[s] = dev.alloc(bytes), by[s] = dev.alloc(bytes), mid[s] = dev.alloc(bytes), bout[s] = dev.alloc(bytes);
    dev.fill(mid[s], std::numeric_limits<float>::quiet_NaN());
    dev.fill(bout[s], std::numeric_limits<float>::quiet_NaN());
    dev.copyToDeviceAsync(bx[s], x[s].data(), bytes, streams[s]);
    dev.copyToDeviceAsync(by[s], y[s].data(), bytes, streams[s]);
    tk::LaunchOptions on;
    on.stream = &streams[s];
    const tk::Dim3 grid{uint32_t((n[s] + 1023) / 1024)};
    dev.launch(k, grid, {bx[s], by[s], mid[s], n[s]}, on);
    dev.launch(k, grid, {mid[s], by[s], bout[s], n[s]}, on);
    dev.copyToHostAsync(out[s].data(), bout[s], bytes, streams[s]);
  }
  tk::Event stop[2] = {streams[0].record(), streams[1].record()};
  for (int s = 0; s < 2; ++s) {
    streams[s].synchronize();
    EXPECT_GE(tk::Event::elapsedMs(start[s], stop[s]), 0.0);
    for (int32_t i = 0; i < n[s]; ++i) {
      const double first = complexActivation(x[s][i], y[s][i]);
      const double want = complexActivation(float(first), y[s][i]);
      ASSERT_NEAR(out[s][i], want, 1e-4 * (1 + std::fabs(want))) << "stream " << s << " at " << i;
    }
  }
}

TEST(Stream, TwoStreamsRunInSubmissionOrderOnTheSim) {
  auto dev = tk::Device::open("sim");
  runTwoStreams(*dev);
}

TEST(Stream, DefaultStreamIsTheDevice) {
  auto dev = tk::Device::open("sim");
  tk::Stream s = *dev;
  EXPECT_TRUE(s.isDefault());
  EXPECT_EQ(&s.device(), dev.get());
  EXPECT_FALSE(dev->createStream().isDefault());
  // Events on the default stream time the work between them.
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kStdlib, "complex_activation"));
  const int32_t n = 4097;
  auto x = randomFloats(n, -2, 2), y = randomFloats(n, -2, 2);
  tk::Buffer bx = dev->upload(x), by = dev->upload(y), bout = dev->alloc(n * 4);
  tk::Event a = s.record();
  tk::LaunchOptions on;
  on.stream = &s;
  dev->launch(k, {uint32_t((n + 1023) / 1024)}, {bx, by, bout, n}, on);
  tk::Event b = s.record();
  b.synchronize();
  EXPECT_GT(tk::Event::elapsedMs(a, b), 0.0);
  std::vector<float> got(n);
  dev->copyToHostAsync(got.data(), bout, n * 4, s);  // the default stream: synchronous
  for (int32_t i = 0; i < n; ++i) ASSERT_NEAR(got[i], complexActivation(x[i], y[i]), 1e-5 * (1 + std::fabs(got[i])));
}

TEST(Stream, AStreamOfAnotherDeviceIsRefused) {
  auto a = tk::Device::open("sim"), b = tk::Device::open("sim");
  tk::Kernel k = b->load(tk::Compiler::compileFile(kStdlib, "complex_activation"));
  tk::Buffer x = b->alloc(64), out = b->alloc(64);
  tk::Stream foreign = a->createStream();
  tk::LaunchOptions on;
  on.stream = &foreign;
  std::string msg = errorOf([&] { b->launch(k, {1}, {x, x, out, int32_t(16)}, on); });
  EXPECT_NE(msg.find("launch of 'complex_activation': the stream belongs to another device (tk sim"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("a stream runs work only on the Device that created it"), std::string::npos) << msg;
  float host[16] = {};
  msg = errorOf([&] { b->copyToDeviceAsync(x, host, sizeof host, foreign); });
  EXPECT_NE(msg.find("copy to a buffer: the stream belongs to another device"), std::string::npos) << msg;
  msg = errorOf([&] { b->copyToHostAsync(host, x, sizeof host, tk::Stream(*a)); });
  EXPECT_NE(msg.find("copy from a buffer: the stream belongs to another device"), std::string::npos) << msg;
  // Events of two devices do not compare.
  msg = errorOf([&] { tk::Event::elapsedMs(foreign.record(), b->createStream().record()); });
  EXPECT_NE(msg.find("recorded on different devices"), std::string::npos) << msg;
  EXPECT_NE(errorOf([] { tk::Event().synchronize(); }).find("never recorded"), std::string::npos);
}

TEST(Stream, AStreamWhoseDeviceIsGoneSaysSo) {
  auto dev = tk::Device::open("sim");
  tk::Stream s = dev->createStream();
  dev.reset();
  EXPECT_NE(errorOf([&] { s.synchronize(); }).find("Stream::synchronize: the stream's device has been destroyed"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { s.record(); }).find("the stream's device has been destroyed"), std::string::npos);
  // device() itself: a tk::Error, not a reference to the freed Device.
  EXPECT_FALSE(s.valid());
  EXPECT_NE(errorOf([&] { s.device().name(); }).find("Stream::device: the stream's device has been destroyed"),
            std::string::npos);
}

// The same two streams on a GPU (cuStreamCreate, async copies and launches).
TEST(CudaStream, TwoStreamsRunInSubmissionOrder) {
  std::unique_ptr<tk::Device> gpu;
  try {
    gpu = tk::Device::open("cuda");
  } catch (const tk::Error &e) {
    GTEST_SKIP() << "no CUDA device: " << e.what();
  }
  runTwoStreams(*gpu);
  gpu->synchronize();
}

}  // namespace
