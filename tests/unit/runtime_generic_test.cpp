// Type and string consts end to end (tests/kernels/generic.tk): one kernel
// specialised for f16, bf16 and f32 and three epilogues, checked on the sim
// against a double reference; their signatures, bundles and errors. Also the
// launcher's f16/bf16 scalar arguments, Device::fill/zero and the sim's
// LaunchStats::ms.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime_TestUtil.h"
#include "tk/half.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/generic.tk";
const int kSizes[] = {1, 781, 1023, 98433};

// Element bits of `v` in dtype `t` (2 or 4 bytes), and back.
std::vector<uint8_t> encode(const std::vector<float> &v, const std::string &t) {
  std::vector<uint8_t> out;
  for (float f : v) {
    uint32_t bits = t == "f32" ? std::bit_cast<uint32_t>(f) : t == "f16" ? tk::floatToHalfBits(f) : tk::floatToBf16Bits(f);
    for (size_t b = 0; b < (t == "f32" ? 4u : 2u); ++b) out.push_back(uint8_t(bits >> (8 * b)));
  }
  return out;
}
float decode(const std::vector<uint8_t> &bytes, size_t i, const std::string &t) {
  if (t == "f32") return std::bit_cast<float>(uint32_t(bytes[4 * i]) | uint32_t(bytes[4 * i + 1]) << 8 |
                                              uint32_t(bytes[4 * i + 2]) << 16 | uint32_t(bytes[4 * i + 3]) << 24);
  uint16_t h = uint16_t(bytes[2 * i] | bytes[2 * i + 1] << 8);
  return t == "f16" ? tk::halfBitsToFloat(h) : tk::bf16BitsToFloat(h);
}

TEST(GenericKernels, EveryDtypeAndEpilogueMatchesTheReference) {
  auto dev = tk::Device::open("sim");
  for (std::string t : {"f16", "bf16", "f32"}) {
    for (std::string act : {"none", "relu", "gelu"}) {
      tk::CompileOptions o;
      o.defines = {{"T", t}, {"ACT", act}};
      tk::Bundle b = tk::Compiler::compileFile(kFile, "scale_act", o);
      EXPECT_EQ(b.params[0].type, "*" + t);
      tk::Kernel k = dev->load(b);
      // One rounding to the dtype of an f32 result, plus the input's.
      const double tol = t == "f32" ? 1e-6 : t == "f16" ? 2.2 * 0x1p-11 : 2.2 * 0x1p-8;
      const double alpha = 1.25;  // exact in every dtype
      tk::Arg a = t == "f32" ? tk::Arg(float(alpha)) : t == "f16" ? tk::Arg(tk::Half(alpha)) : tk::Arg(tk::BFloat16(alpha));
      for (int n : kSizes) {
        auto x = tk::test::randomFloats(n, -3, 3);
        auto xb = encode(x, t);
        tk::Buffer dx = dev->upload(xb), out = dev->alloc(xb.size());
        dev->fill(out, int8_t(-1));  // poisoned: all-ones bits are NaN in every dtype
        dev->launch(k, {uint32_t((n + 255) / 256)}, {dx, out, int32_t(n), a});
        auto got = dev->download<uint8_t>(out, xb.size());
        for (int i = 0; i < n; ++i) {
          double v = double(decode(xb, i, t)) * alpha;
          double want = act == "relu" ? std::max(v, 0.0) : act == "gelu" ? 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))) : v;
          ASSERT_LE(std::abs(decode(got, i, t) - want), tol * std::max(1.0, std::abs(want)))
              << t << " " << act << " n=" << n << " i=" << i << " x=" << v;
        }
      }
    }
  }
}

// docs/triton.md's softmax port, in each dtype, against a double softmax.
TEST(GenericKernels, TritonSoftmaxPort) {
  auto dev = tk::Device::open("sim");
  for (std::string t : {"f16", "bf16", "f32"}) {
    tk::CompileOptions o;
    o.defines = {{"T", t}};
    o.emitPtx = false;
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "softmax_kernel", o));
    const double tol = t == "f32" ? 1e-6 : t == "f16" ? 1.1 * 0x1p-11 : 1.1 * 0x1p-8;
    for (auto [rows, cols] : std::vector<std::pair<int, int>>{{1, 1}, {37, 781}, {5, 1023}, {3, 1024}}) {
      const int stride = cols + 3;  // rows apart in memory
      auto x = tk::test::randomFloats(size_t(rows) * stride, -5, 5);
      auto xb = encode(x, t);
      tk::Buffer dx = dev->upload(xb), out = dev->alloc(xb.size());
      dev->fill(out, int8_t(-1));
      dev->launch(k, {uint32_t(rows)}, {out, dx, int32_t(stride), int32_t(stride), int32_t(rows), int32_t(cols)});
      auto got = dev->download<uint8_t>(out, xb.size());
      for (int r = 0; r < rows; ++r) {
        double mx = -INFINITY, total = 0;
        for (int c = 0; c < cols; ++c) mx = std::max<double>(mx, decode(xb, size_t(r) * stride + c, t));
        for (int c = 0; c < cols; ++c) total += std::exp(decode(xb, size_t(r) * stride + c, t) - mx);
        for (int c = 0; c < cols; ++c) {
          double want = std::exp(decode(xb, size_t(r) * stride + c, t) - mx) / total;
          ASSERT_LE(std::abs(decode(got, size_t(r) * stride + c, t) - want), tol * want + 1e-7)
              << t << " row " << r << " col " << c << " of " << cols;
        }
      }
    }
  }
}

// One generic fn at two element types: the f16 call rounds in f16 (products
// and sums of these k/64 inputs are exact in f16 up to 2^11/64), so both
// results are exact.
TEST(GenericKernels, GenericFnAtTwoElementTypes) {
  auto dev = tk::Device::open("sim");
  tk::CompileOptions o;
  o.emitPtx = false;
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "axpy_both", o));
  for (int n : kSizes) {
    auto x = tk::test::exactHalfInputs(n), y = tk::test::exactHalfInputs(n);
    tk::Buffer xh = dev->upload(tk::test::f16Values(x)), yh = dev->upload(tk::test::f16Values(y));
    tk::Buffer xf = dev->upload(x), yf = dev->upload(y), oh = dev->alloc(2 * n), of = dev->alloc(4 * n);
    dev->fill(oh, int8_t(-1));
    dev->fill(of, int8_t(-1));
    (*dev)(k, {uint32_t((n + 255) / 256)}, xh, yh, xf, yf, oh, of, int32_t(n));
    auto gh = dev->download<uint16_t>(oh, n);
    auto gf = dev->download<float>(of, n);
    for (int i = 0; i < n; ++i) {
      double want = 0.5 * x[i] + y[i];
      ASSERT_EQ(tk::halfBitsToFloat(gh[i]), want) << "f16 i=" << i;
      ASSERT_EQ(gf[i], want) << "f32 i=" << i;
    }
  }
}

TEST(GenericKernels, SignaturesShowTheSpecialisedTypes) {
  auto all = tk::Compiler::kernels(kFile);
  ASSERT_EQ(all.size(), 3u);
  const auto &def = all[0].second;
  EXPECT_EQ(def[0].type, "*f32");  // T's default
  EXPECT_EQ(def[3].type, "f32");
  EXPECT_EQ(def[4].type, "type");
  EXPECT_EQ(def[4].value, "f32");
  EXPECT_EQ(def[5].type, "str");
  EXPECT_EQ(def[5].value, "none");
  auto sig = tk::Compiler::signature(kFile, "scale_act", {{"T", "bf16"}, {"ACT", "\"gelu\""}});
  EXPECT_EQ(sig[0].type, "*bf16");
  EXPECT_EQ(sig[1].type, "*bf16");
  EXPECT_EQ(sig[3].type, "bf16");
  EXPECT_EQ(sig[4].value, "bf16");
  EXPECT_EQ(sig[5].value, "gelu");
  // A bundle keeps them through JSON.
  tk::CompileOptions o;
  o.defines = {{"T", "f16"}};
  o.emitPtx = false;
  tk::Bundle b = tk::Compiler::compileFile(kFile, "scale_act", o);
  tk::Bundle back = tk::Bundle::fromJson(b.toJson());
  EXPECT_EQ(back.params[4].value, "f16");
  EXPECT_EQ(back.params[0].type, "*f16");
  EXPECT_NE(b.tir.find("\"f16\""), std::string::npos) << b.tir;  // const.T = "f16"
  // Another type is another variant (the compile cache keys on the defines).
  o.defines = {{"T", "bf16"}};
  EXPECT_NE(tk::Compiler::compileFile(kFile, "scale_act", o).tir, b.tir);
}

TEST(GenericKernels, WrongDtypesAndEpiloguesAreCompileErrors) {
  auto fails = [](const std::map<std::string, std::string> &defines) -> std::string {
    tk::CompileOptions o;
    o.defines = defines;
    o.emitPtx = false;
    try {
      tk::Compiler::compileFile(kFile, "scale_act", o);
    } catch (const tk::CompileError &e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(fails({{"T", "i32"}}).find("error: static assertion failed: scale_act takes f16, bf16 or f32"),
            std::string::npos)
      << fails({{"T", "i32"}});
  EXPECT_NE(fails({{"T", "f17"}}).find("invalid value 'f17' for type const 'T'"), std::string::npos);
  EXPECT_NE(fails({{"ACT", "swish"}}).find("static assertion failed: ACT is none, relu or gelu"), std::string::npos);
}

TEST(LaunchApi, HalfScalarsFillZeroAndSimTime) {
  auto dev = tk::Device::open("sim");
  tk::CompileOptions o;
  o.defines = {{"T", "f16"}};
  o.emitPtx = false;
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "scale_act", o));
  const int n = 1000;
  tk::Buffer x = dev->alloc(2 * n), out = dev->alloc(2 * n);
  dev->fill(x, tk::Half(0.75));
  dev->zero(out);
  EXPECT_EQ(dev->download<uint16_t>(out, n), std::vector<uint16_t>(n, 0));
  try {
    dev->launch(k, {4}, {x, out, int32_t(n), 2.0f});
    FAIL() << "a float for an f16 parameter launched";
  } catch (const tk::Error &e) {
    EXPECT_NE(std::string(e.what()).find("('alpha', f16) needs tk::Half, got float"), std::string::npos) << e.what();
  }
  tk::LaunchStats s = dev->launch(k, {4}, {x, out, int32_t(n), tk::Half(2.0)});
  EXPECT_GT(s.ms, 0.0);  // the sim's wall time
  EXPECT_EQ(dev->download<uint16_t>(out, n), std::vector<uint16_t>(n, tk::floatToHalfBits(1.5f)));

  // fill: the value's type sets the element size; the buffer must hold whole elements.
  tk::Buffer w = dev->alloc(24);
  dev->fill(w, int64_t(0x0102030405060708));
  EXPECT_EQ(dev->download<int64_t>(w, 3), std::vector<int64_t>(3, 0x0102030405060708));
  dev->fill(w, -2.5f);
  EXPECT_EQ(dev->download<float>(w, 6), std::vector<float>(6, -2.5f));
  dev->fill(w.offset(8), tk::BFloat16(1.0));
  auto half = dev->download<uint16_t>(w, 12);
  EXPECT_EQ(half[4], 0x3f80);
  EXPECT_EQ(half[11], 0x3f80);
  EXPECT_EQ(dev->download<float>(w, 1)[0], -2.5f);  // before the offset: untouched
  EXPECT_THROW(dev->fill(dev->alloc(6), 1.0f), tk::Error);
  EXPECT_THROW(dev->fill(w, w), tk::Error);
  EXPECT_THROW(dev->zero(tk::Buffer()), tk::Error);
}

}  // namespace
