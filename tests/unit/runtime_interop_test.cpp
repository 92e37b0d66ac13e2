// Memory and streams the program owns (Device::borrow, Device::borrowStream)
// and typed buffers: a kernel on borrowed host memory on the sim against a
// double reference, the sim's bounds check over a borrowed range, the
// errors of a null, empty, misaligned or mistyped buffer, and the same on a
// GPU when there is one.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime_TestUtil.h"
#include "tk/runtime.h"
#ifdef TK_HAVE_DLPACK
#include "tk/dlpack.h"
#endif

namespace {

using tk::test::errorOf;
using tk::test::randomFloats;

const std::string kStdlib = TK_SOURCE_DIR + "/stdlib/elementwise.tk";

double complexActivation(double a, double b) { return std::max(0.0, (std::sin(a) * std::cos(b) + a) * b); }

tk::Kernel loadComplexActivation(tk::Device &dev) {
  return dev.load(tk::Compiler::compileFile(kStdlib, "complex_activation"));
}

// complex_activation over memory the program owns, on `stream` (null: the
// device's default stream); `x`, `y`, `out` are the program's addresses.
void runBorrowed(tk::Device &dev, const tk::Stream *stream, void *x, void *y, void *out, int32_t n) {
  const tk::Kernel k = loadComplexActivation(dev);
  const size_t bytes = n * sizeof(float);
  tk::LaunchOptions on;
  on.stream = stream;
  dev.launch(k, {uint32_t((n + 1023) / 1024)},
             {dev.borrow(x, bytes, tk::DType::F32), dev.borrow(y, bytes), dev.borrow(out, bytes), n}, on);
  if (stream) stream->synchronize();
}

TEST(Borrow, HostMemoryRunsOnTheSim) {
  auto dev = tk::Device::open("sim");
  for (int32_t n : {1, 781, 98433}) {
    std::vector<float> x = randomFloats(n, -3, 3), y = randomFloats(n, -3, 3);
    std::vector<float> out(n, std::numeric_limits<float>::quiet_NaN());
    runBorrowed(*dev, nullptr, x.data(), y.data(), out.data(), n);
    for (int32_t i = 0; i < n; ++i)
      ASSERT_NEAR(out[i], complexActivation(x[i], y[i]), 1e-5 * (1 + std::fabs(out[i]))) << "n=" << n << " at " << i;
  }
  EXPECT_EQ(dev->liveBytes(), 0u);  // borrowed memory is the program's, not the device's
}

// wrap and adoptStream are borrow and borrowStream under the names a CUDA
// or PyTorch user looks for.
TEST(Borrow, WrapAndAdoptStreamAreBorrowsToo) {
  auto dev = tk::Device::open("sim");
  std::vector<float> host(16, 1.0f);
  tk::Buffer b = dev->wrap(host.data(), host.size() * 4, tk::DType::F32);
  EXPECT_TRUE(b.borrowed());
  EXPECT_EQ(b.dtype(), tk::DType::F32);
  tk::Stream s = dev->adoptStream(nullptr);
  EXPECT_TRUE(s.borrowed());
  dev->fill(b, 2.5f);
  s.synchronize();
  EXPECT_EQ(host[3], 2.5f);
  EXPECT_EQ(dev->liveBytes(), 0u);
}

TEST(Borrow, BorrowedBuffersCopyFillAndTellTheyAreBorrowed) {
  auto dev = tk::Device::open("sim");
  std::vector<float> mine(64, 1.0f);
  tk::Buffer b = dev->borrow(mine.data(), mine.size() * sizeof(float));
  EXPECT_TRUE(b.borrowed());
  EXPECT_FALSE(dev->alloc(16).borrowed());
  EXPECT_EQ(b.address(), reinterpret_cast<uintptr_t>(mine.data()));
  dev->fill(b.offset(8 * sizeof(float)), 2.5f);
  EXPECT_EQ(mine[7], 1.0f);
  EXPECT_EQ(mine[8], 2.5f);
  const float three[2] = {3, 3};
  dev->copyToDevice(b, three, sizeof three);
  EXPECT_EQ(mine[0], 3.0f);
}

// The sim checks a borrowed range like its own allocations: x borrowed
// shorter than the n elements the kernel reads faults at x's load (line 12),
// though the memory behind it is the program's and readable.
TEST(Borrow, TheSimChecksTheBorrowedRange) {
  auto dev = tk::Device::open("sim");
  const int32_t n = 1024;
  std::vector<float> x(n, 1.0f), y(n, 2.0f), out(n);
  const tk::Kernel k = loadComplexActivation(*dev);
  const std::string msg = errorOf([&] {
    (*dev)(k, {1}, dev->borrow(x.data(), 100 * sizeof(float)), dev->borrow(y.data(), n * sizeof(float)),
           dev->borrow(out.data(), n * sizeof(float)), n);
  });
  EXPECT_NE(msg.find("out-of-bounds"), std::string::npos) << msg;
  EXPECT_NE(msg.find("elementwise.tk:12:"), std::string::npos) << msg;
}

// Views of one array may overlap (q, k and v of a fused qkv tensor): the sim
// checks against their union while any of them lives. A range partly over
// one of the sim's own allocations is refused.
TEST(Borrow, OverlappingViewsAreCheckedAsTheirUnion) {
  auto dev = tk::Device::open("sim");
  const tk::Kernel k = loadComplexActivation(*dev);
  std::vector<float> mine(256, 1.0f);
  tk::Buffer low = dev->borrow(mine.data(), 160 * sizeof(float));
  tk::Buffer high = dev->borrow(mine.data() + 96, 160 * sizeof(float));
  tk::Buffer inner = dev->borrow(mine.data() + 32, 32 * sizeof(float));
  // 256 elements from the start: only the union of `low` and `high` holds them.
  EXPECT_EQ(errorOf([&] { (*dev)(k, {1}, low, low, low, int32_t(256)); }), "");
  high = tk::Buffer();
  std::string msg = errorOf([&] { (*dev)(k, {1}, low, low, low, int32_t(256)); });
  EXPECT_NE(msg.find("out-of-bounds"), std::string::npos) << msg;
  EXPECT_EQ(errorOf([&] { (*dev)(k, {1}, inner, inner, inner, int32_t(32)); }), "");
  // Inside an allocation of the sim: its lifetime governs. Partly over one: refused.
  tk::Buffer own = dev->alloc(1024);
  EXPECT_EQ(errorOf([&] { dev->borrow(reinterpret_cast<void *>(own.address() + 64), 128); }), "");
  msg = errorOf([&] { dev->borrow(reinterpret_cast<void *>(own.address() + 512), 1024); });
  EXPECT_NE(msg.find("partly overlaps the sim's own allocation"), std::string::npos) << msg;
}

TEST(Borrow, NullEmptyAndMisalignedBuffersArePreciseErrors) {
  auto dev = tk::Device::open("sim");
  const tk::Kernel k = loadComplexActivation(*dev);
  std::vector<float> mine(64);
  tk::Buffer ok = dev->borrow(mine.data(), 64 * sizeof(float));
  std::string msg = errorOf([&] { dev->borrow(nullptr, 256); });
  EXPECT_NE(msg.find("Device::borrow: a null address with 256 bytes"), std::string::npos) << msg;
  // An empty tensor's view is a Buffer, but nothing a kernel can be given.
  tk::Buffer empty = dev->borrow(nullptr, 0);
  msg = errorOf([&] { (*dev)(k, {1}, empty, ok, ok, int32_t(0)); });
  EXPECT_NE(msg.find("argument 0 ('x', *f32) is a borrowed buffer of 0 bytes"), std::string::npos) << msg;
  tk::Buffer shifted = dev->borrow(reinterpret_cast<char *>(mine.data()) + 4, 32 * sizeof(float));
  msg = errorOf([&] { (*dev)(k, {1}, ok, shifted, ok, int32_t(16)); });
  EXPECT_NE(msg.find("argument 1 ('y', *f32): address 0x"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is not 16-byte aligned as the kernel assumes"), std::string::npos) << msg;
}

TEST(Borrow, AProgramsStreamOnTheSimIsRecordedAndRunsWhenSubmitted) {
  auto dev = tk::Device::open("sim");
  void *const theirs = reinterpret_cast<void *>(uintptr_t(0x5150));
  tk::Stream s = dev->borrowStream(theirs);
  EXPECT_TRUE(s.borrowed());
  EXPECT_FALSE(s.isDefault());
  EXPECT_EQ(s.native(), theirs);
  EXPECT_EQ(tk::Stream(*dev).native(), nullptr);
  EXPECT_FALSE(dev->createStream().borrowed());
  EXPECT_TRUE(dev->borrowStream(nullptr).borrowed());  // CUDA's legacy default stream
  const int32_t n = 781;
  std::vector<float> x = randomFloats(n, -3, 3), y = randomFloats(n, -3, 3), out(n, NAN);
  runBorrowed(*dev, &s, x.data(), y.data(), out.data(), n);
  for (int32_t i = 0; i < n; ++i) ASSERT_NEAR(out[i], complexActivation(x[i], y[i]), 1e-5 * (1 + std::fabs(out[i])));
  // A borrowed stream belongs to the device that borrowed it.
  auto other = tk::Device::open("sim");
  tk::LaunchOptions on;
  on.stream = &s;
  const tk::Kernel k = loadComplexActivation(*other);
  tk::Buffer b = other->alloc(64);
  EXPECT_NE(errorOf([&] { other->launch(k, {1}, {b, b, b, int32_t(16)}, on); }).find("the stream belongs to another device"),
            std::string::npos);
}

TEST(TypedBuffer, UploadAndAllocRecordTheElementType) {
  auto dev = tk::Device::open("sim");
  EXPECT_EQ(dev->upload(std::vector<float>{1}).dtype(), tk::DType::F32);
  EXPECT_EQ(dev->upload(std::vector<int32_t>{1}).dtype(), tk::DType::I32);
  EXPECT_EQ(dev->upload(std::vector<uint16_t>{1}).dtype(), tk::DType::None);  // f16 bits: no tk scalar says which
  EXPECT_EQ(dev->alloc<tk::Half>(4).dtype(), tk::DType::F16);
  EXPECT_EQ(dev->alloc<tk::Half>(4).size(), 8u);
  EXPECT_EQ(dev->alloc(16).dtype(), tk::DType::None);
  EXPECT_EQ(dev->alloc<double>(2).offset(8).dtype(), tk::DType::F64);
  EXPECT_STREQ(tk::dtypeName(tk::DType::BF16), "bf16");
  EXPECT_EQ(dev->alloc<tk::Float8e4m3>(4).dtype(), tk::DType::F8E4M3);
  EXPECT_EQ(dev->alloc<tk::Float8e5m2>(4).size(), 4u);
  EXPECT_STREQ(tk::dtypeName(tk::DType::F8E5M2), "f8e5m2");
}

TEST(TypedBuffer, AMistypedBufferIsRefusedNamingTheParameter) {
  auto dev = tk::Device::open("sim");
  const tk::Kernel k = loadComplexActivation(*dev);
  const int32_t n = 256;
  tk::Buffer x = dev->upload(randomFloats(n, -1, 1)), ints = dev->upload(std::vector<int32_t>(n, 1));
  tk::Buffer out = dev->alloc<float>(n);
  std::string msg = errorOf([&] { (*dev)(k, {1}, x, ints, out, n); });
  EXPECT_NE(msg.find("launch of 'complex_activation': argument 1 ('y', *f32): a buffer of i32 for a pointer to f32; "
                     "pass a buffer of f32, or reinterpret this one on purpose: buffer.as(tk::DType::F32)"),
            std::string::npos)
      << msg;
  std::vector<double> host(n);
  msg = errorOf([&] { (*dev)(k, {1}, x, x, dev->borrow(host.data(), n * sizeof(double), tk::DType::F64), n); });
  EXPECT_NE(msg.find("argument 2 ('out', *f32): a buffer of f64 for a pointer to f32"), std::string::npos) << msg;
  // On purpose, and untyped, it runs.
  EXPECT_EQ(errorOf([&] { (*dev)(k, {1}, x, ints.as(tk::DType::F32), out, n); }), "");
  EXPECT_EQ(errorOf([&] { (*dev)(k, {1}, x, ints.as(tk::DType::None), dev->alloc(n * 4), n); }), "");
}

#ifdef TK_HAVE_DLPACK
// A host tensor as NumPy's __dlpack__ would hand it over: `shape`,
// `strides` (empty: none given, compact row-major), float32 unless said.
struct HostTensor {
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
  HostTensor(void *data, std::vector<int64_t> sh, std::vector<int64_t> st = {}, DLDataType dtype = {kDLFloat, 32, 1})
      : shape(std::move(sh)), strides(std::move(st)) {
    DLTensor &t = managed.dl_tensor;
    t.data = data;
    t.device = {kDLCPU, 0};
    t.ndim = int32_t(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
  }
};

TEST(DLPack, HostTensorsRunOnTheSim) {
  auto dev = tk::Device::open("sim");
  const int64_t rows = 3, cols = 781, n = rows * cols;
  std::vector<float> x = randomFloats(n, -3, 3), y = randomFloats(n, -3, 3), out(n, NAN);
  HostTensor tx(x.data(), {rows, cols}), ty(y.data(), {rows, cols}), tout(out.data(), {rows, cols});
  tk::TensorView vx = tk::fromDLPack(*dev, &tx.managed), vy = tk::fromDLPack(*dev, &ty.managed),
                 vout = tk::fromDLPack(*dev, &tout.managed);
  EXPECT_EQ(vx.dtype, tk::DType::F32);
  EXPECT_EQ(vx.buffer.dtype(), tk::DType::F32);
  EXPECT_TRUE(vx.buffer.borrowed());
  EXPECT_EQ(vx.shape, (std::vector<int64_t>{rows, cols}));
  EXPECT_EQ(vx.strides, (std::vector<int64_t>{cols, 1}));
  EXPECT_TRUE(vx.rowMajor());
  EXPECT_EQ(vx.elements(), n);
  EXPECT_EQ(vx.buffer.size(), size_t(n) * 4);
  const tk::Kernel k = loadComplexActivation(*dev);
  (*dev)(k, {uint32_t((n + 1023) / 1024)}, vx.buffer, vy.buffer, vout.buffer, int32_t(n));
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(out[i], complexActivation(x[i], y[i]), 1e-5 * (1 + std::fabs(out[i])));
  // Its dtype is checked against the kernel's parameter like any typed buffer.
  std::vector<int32_t> ints(n);
  HostTensor ti(ints.data(), {n}, {}, {kDLInt, 32, 1});
  const std::string msg = errorOf([&] { (*dev)(k, {1}, vx.buffer, tk::fromDLPack(*dev, &ti.managed).buffer, vout.buffer, int32_t(n)); });
  EXPECT_NE(msg.find("argument 1 ('y', *f32): a buffer of i32 for a pointer to f32"), std::string::npos) << msg;
}

// torch.float8_e4m3fn and float8_e5m2 travel as DLPack 1.1's codes 10 and 12,
// and come back out with them.
TEST(DLPack, Fp8TensorsKeepTheirFormat) {
  auto dev = tk::Device::open("sim");
  std::vector<uint8_t> bytes(64, 0x38);  // 1.0 in e4m3
  HostTensor t4(bytes.data(), {64}, {}, {10, 8, 1}), t5(bytes.data(), {64}, {}, {12, 8, 1});
  tk::TensorView v4 = tk::fromDLPack(*dev, &t4.managed), v5 = tk::fromDLPack(*dev, &t5.managed);
  EXPECT_EQ(v4.dtype, tk::DType::F8E4M3);
  EXPECT_EQ(v5.buffer.dtype(), tk::DType::F8E5M2);
  EXPECT_EQ(v4.buffer.size(), 64u);
  DLManagedTensor *m = tk::toDLPack(*dev, dev->alloc<tk::Float8e4m3>(16), {16});
  EXPECT_EQ(m->dl_tensor.dtype.code, 10);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 8);
  m->deleter(m);
}

TEST(DLPack, StridedViewsCoverWhatTheirStridesReach) {
  auto dev = tk::Device::open("sim");
  std::vector<float> mem(64);
  HostTensor t(mem.data(), {4, 8}, {16, 1});  // every other row of a 4 x 16 array
  tk::TensorView v = tk::fromDLPack(*dev, &t.managed);
  EXPECT_FALSE(v.rowMajor());
  EXPECT_EQ(v.buffer.size(), (3 * 16 + 7 + 1) * sizeof(float));
  HostTensor shifted(mem.data(), {3, 8}, {16, 1});
  shifted.managed.dl_tensor.byte_offset = 16 * sizeof(float);
  EXPECT_EQ(tk::fromDLPack(*dev, &shifted.managed).buffer.address(), reinterpret_cast<uintptr_t>(mem.data() + 16));
  HostTensor empty(nullptr, {0, 8});
  EXPECT_EQ(tk::fromDLPack(*dev, &empty.managed).buffer.size(), 0u);
}

TEST(DLPack, WhatALaunchCannotUseIsAPreciseError) {
  auto dev = tk::Device::open("sim");
  std::vector<float> mem(64);
  HostTensor gpu(mem.data(), {64});
  gpu.managed.dl_tensor.device = {kDLCUDA, 0};
  std::string msg = errorOf([&] { tk::fromDLPack(*dev, &gpu.managed); });
  EXPECT_NE(msg.find("fromDLPack: a tensor on kDLCUDA (device_type 2) cannot be used on tk sim"), std::string::npos) << msg;
  HostTensor u32(mem.data(), {64}, {}, {kDLUInt, 32, 1});
  msg = errorOf([&] { tk::fromDLPack(*dev, &u32.managed); });
  EXPECT_NE(msg.find("fromDLPack: a tensor of uint32: tk takes one lane of"), std::string::npos) << msg;
  HostTensor lanes(mem.data(), {16}, {}, {kDLFloat, 32, 4});
  EXPECT_NE(errorOf([&] { tk::fromDLPack(*dev, &lanes.managed); }).find("of float32x4"), std::string::npos);
  HostTensor flipped(mem.data() + 63, {64}, {-1});
  msg = errorOf([&] { tk::fromDLPack(*dev, &flipped.managed); });
  EXPECT_NE(msg.find("with a negative stride in dimension 0"), std::string::npos) << msg;
  EXPECT_NE(errorOf([&] { tk::fromDLPack(*dev, nullptr); }).find("a null DLManagedTensor"), std::string::npos);
}

TEST(DLPack, ToDLPackRoundTripsAndOwnsItsBuffer) {
  auto dev = tk::Device::open("sim");
  std::vector<float> values = randomFloats(96, -1, 1);
  tk::Buffer b = dev->upload(values);
  DLManagedTensor *m = tk::toDLPack(*dev, b, {8, 12});
  b = tk::Buffer();  // the tensor keeps the memory alive
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 32);
  tk::TensorView v = tk::fromDLPack(*dev, m);
  EXPECT_EQ(v.shape, (std::vector<int64_t>{8, 12}));
  EXPECT_TRUE(v.rowMajor());
  EXPECT_EQ(dev->download<float>(v.buffer, 96), values);
  v = tk::TensorView();
  EXPECT_GT(dev->liveBytes(), 0u);
  m->deleter(m);
  EXPECT_EQ(dev->liveBytes(), 0u);
  std::string msg = errorOf([&] { tk::toDLPack(*dev, dev->alloc(64), {16}); });
  EXPECT_NE(msg.find("toDLPack: an untyped buffer"), std::string::npos) << msg;
  msg = errorOf([&] { tk::toDLPack(*dev, dev->alloc<float>(16), {4, 5}); });
  EXPECT_NE(msg.find("a shape of 20 f32 elements needs 80 bytes; the buffer has 64"), std::string::npos) << msg;
}
#else
TEST(DLPack, NeedsTheHeader) { GTEST_SKIP() << "tk was built without dlpack/dlpack.h (libdlpack-dev)"; }
#endif

// On a GPU: memory and a stream the program made (here through tk, as a
// cudaMalloc and cudaStreamCreate would), borrowed by address and CUstream.
TEST(CudaBorrow, DeviceMemoryAndAStreamOfTheProgram) {
  std::unique_ptr<tk::Device> gpu;
  try {
    gpu = tk::Device::open("cuda");
  } catch (const tk::Error &e) {
    GTEST_SKIP() << "no CUDA device: " << e.what();
  }
  const int32_t n = 98433;
  std::vector<float> x = randomFloats(n, -3, 3), y = randomFloats(n, -3, 3), out(n);
  tk::Buffer bx = gpu->upload(x), by = gpu->upload(y), bout = gpu->alloc<float>(n);
  gpu->fill(bout, std::numeric_limits<float>::quiet_NaN());
  tk::Stream theirs = gpu->createStream();
  ASSERT_NE(theirs.native(), nullptr);
  for (void *native : {theirs.native(), static_cast<void *>(nullptr), reinterpret_cast<void *>(uintptr_t(2))}) {
    tk::Stream s = gpu->borrowStream(native);
    EXPECT_EQ(s.native(), native);
    runBorrowed(*gpu, &s, reinterpret_cast<void *>(bx.address()), reinterpret_cast<void *>(by.address()),
                reinterpret_cast<void *>(bout.address()), n);
    gpu->copyToHost(out.data(), bout, n * sizeof(float));
    for (int32_t i = 0; i < n; ++i)
      ASSERT_NEAR(out[i], complexActivation(x[i], y[i]), 1e-4 * (1 + std::fabs(out[i]))) << "at " << i;
  }
}

}  // namespace
