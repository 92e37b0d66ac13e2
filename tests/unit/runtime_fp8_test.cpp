// The 8-bit floats on the sim (tests/kernels/fp8.tk) against include/tk/fp8.h:
// f32 -> fp8 on a sweep of every code's value, the ties between neighbours
// and a step either side of them, subnormals, zeros, infinities, NaN and
// values past the largest; every code back to f32, f16 and bf16; arithmetic
// rounded per op; and the PTX through ptxas for sm_80 and sm_90a.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "runtime_TestUtil.h"
#include "tk/fp8.h"
#include "tk/jit.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/fp8.tk";

tk::Bundle compile(const std::string &kernel) { return tk::test::compileForSim(kFile, kernel, 4); }

// Values that exercise every rounding case of both formats.
std::vector<float> sweep() {
  std::vector<float> v = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e30f, -1e30f, 448.0f, 464.0f, 465.0f,
                          57344.0f, 61440.0f, 61441.0f, 1e-30f, std::ldexp(1.0f, -126), std::ldexp(1.0f, -149)};
  for (const tk::Fp8Format *f : {&tk::kE4M3, &tk::kE5M2})
    for (int c = 0; c < 255; ++c) {
      const float a = tk::fp8BitsToFloat(uint8_t(c), *f), b = tk::fp8BitsToFloat(uint8_t(c + 1), *f);
      if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b) || (c & 0x80) != ((c + 1) & 0x80)) continue;
      const float mid = (a + b) / 2;  // exact: fp8 neighbours are far apart in f32
      for (float x : {a, mid, std::nextafter(mid, -INFINITY), std::nextafter(mid, INFINITY)}) {
        v.push_back(x);
        v.push_back(-x);
      }
    }
  for (float x : tk::test::randomFloats(2000, -600, 600)) v.push_back(x);
  for (float x : tk::test::randomFloats(2000, -0.02f, 0.02f)) v.push_back(x);
  return v;
}

uint16_t halfBits(float f) { return tk::floatToHalfBits(f); }

}  // namespace

TEST(Fp8, FromF32AndF16RoundToNearestEvenAndSaturate) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(compile("to_fp8"));
  const std::vector<float> x = sweep();
  const int n = int(x.size());
  std::vector<uint16_t> h;
  for (float f : x) h.push_back(halfBits(f));
  tk::Buffer dx = dev->upload(x), dh = dev->upload(h), q4 = dev->upload(std::vector<uint8_t>(n, 0xaa)),
             q5 = dev->upload(std::vector<uint8_t>(n, 0xaa)), h5 = dev->upload(std::vector<uint8_t>(n, 0xaa));
  (*dev)(k, {tk::test::cdiv(n, 256)}, dx, dh, q4, q5, h5, int32_t(n));
  auto g4 = dev->download<uint8_t>(q4, n), g5 = dev->download<uint8_t>(q5, n), gh = dev->download<uint8_t>(h5, n);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(int(g4[i]), int(tk::floatToFp8Bits(x[i], tk::kE4M3))) << "e4m3 of " << x[i];
    ASSERT_EQ(int(g5[i]), int(tk::floatToFp8Bits(x[i], tk::kE5M2))) << "e5m2 of " << x[i];
    const float hv = std::isnan(x[i]) ? NAN : tk::halfBitsToFloat(h[i]);
    ASSERT_EQ(int(gh[i]), int(tk::floatToFp8Bits(hv, tk::kE5M2))) << "e5m2 of the f16 " << hv;
  }
  // The cases PTX's cvt.rn.satfinite defines, spelled out.
  EXPECT_EQ(tk::floatToFp8Bits(INFINITY, tk::kE4M3), 0x7e);    // 448
  EXPECT_EQ(tk::floatToFp8Bits(-INFINITY, tk::kE5M2), 0xfb);   // -57344
  EXPECT_EQ(tk::floatToFp8Bits(NAN, tk::kE5M2), 0x7f);
  EXPECT_EQ(tk::floatToFp8Bits(std::ldexp(1.0f, -10), tk::kE4M3), 0x00);  // half the smallest subnormal: to even
  EXPECT_EQ(tk::floatToFp8Bits(3 * std::ldexp(1.0f, -10), tk::kE4M3), 0x02);
  EXPECT_EQ(tk::floatToFp8Bits(240.0f, tk::kE5M2), 0x5c);  // between 224 and 256: to the even 256
}

TEST(Fp8, EveryCodeConvertsExactly) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(compile("from_fp8"));
  std::vector<uint8_t> codes(256);
  for (int c = 0; c < 256; ++c) codes[c] = uint8_t(c);
  tk::Buffer q4 = dev->upload(codes), q5 = dev->upload(codes), x4 = dev->upload(std::vector<float>(256, 7.0f)),
             x5 = dev->upload(std::vector<float>(256, 7.0f)), h4 = dev->upload(std::vector<uint16_t>(256, 0x1234)),
             b5 = dev->upload(std::vector<uint16_t>(256, 0x1234)), q45 = dev->upload(std::vector<uint8_t>(256, 0xaa));
  (*dev)(k, {1}, q4, q5, x4, x5, h4, b5, q45);
  auto g4 = dev->download<float>(x4, 256), g5 = dev->download<float>(x5, 256);
  auto gh = dev->download<uint16_t>(h4, 256), gb = dev->download<uint16_t>(b5, 256);
  auto g45 = dev->download<uint8_t>(q45, 256);
  for (int c = 0; c < 256; ++c) {
    const float w4 = tk::fp8BitsToFloat(uint8_t(c), tk::kE4M3), w5 = tk::fp8BitsToFloat(uint8_t(c), tk::kE5M2);
    if (std::isnan(w4)) {
      EXPECT_TRUE(std::isnan(g4[c])) << c;
      EXPECT_EQ(int(g45[c]), 0x7f) << c;
    } else {
      EXPECT_EQ(std::memcmp(&g4[c], &w4, 4), 0) << "e4m3 code " << c << ": " << g4[c] << " != " << w4;
      EXPECT_EQ(gh[c], halfBits(w4)) << "e4m3 code " << c << " as f16";
      EXPECT_EQ(int(g45[c]), int(tk::floatToFp8Bits(w4, tk::kE5M2))) << "e4m3 code " << c << " as e5m2";
    }
    if (std::isnan(w5))
      EXPECT_TRUE(std::isnan(g5[c])) << c;
    else {
      EXPECT_EQ(std::memcmp(&g5[c], &w5, 4), 0) << "e5m2 code " << c << ": " << g5[c] << " != " << w5;
      EXPECT_EQ(gb[c], tk::floatToBf16Bits(w5)) << "e5m2 code " << c << " as bf16";
    }
  }
  // 0x7f and 0xff are e4m3's NaNs; e5m2's 0x7c is inf.
  EXPECT_TRUE(std::isinf(g5[0x7c]) && g5[0x7c] > 0);
  EXPECT_TRUE(std::isnan(g4[0xff]));
}

TEST(Fp8, ArithmeticRoundsEachResultAndSumsInF32) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(compile("fp8_math"));
  std::vector<uint8_t> a(256), b(256);
  for (int i = 0; i < 256; ++i) {
    a[i] = tk::floatToFp8Bits(tk::test::randomFloats(1, -20, 20)[0], tk::kE4M3);
    b[i] = tk::floatToFp8Bits(tk::test::randomFloats(1, -20, 20)[0], tk::kE4M3);
  }
  tk::Buffer da = dev->upload(a), db = dev->upload(b), s = dev->upload(std::vector<uint8_t>(256, 0xaa)),
             p = dev->upload(std::vector<float>(256, NAN)), mx = dev->upload(std::vector<uint8_t>(256, 0xaa)),
             total = dev->upload(std::vector<float>(1, NAN)), c = dev->upload(std::vector<uint8_t>(256, 0xaa));
  (*dev)(k, {1}, da, db, s, p, mx, total, c);
  auto gs = dev->download<uint8_t>(s, 256), gm = dev->download<uint8_t>(mx, 256), gc = dev->download<uint8_t>(c, 256);
  auto gp = dev->download<float>(p, 256);
  double want = 0;
  for (int i = 0; i < 256; ++i) {
    const float x = tk::fp8BitsToFloat(a[i], tk::kE4M3), y = tk::fp8BitsToFloat(b[i], tk::kE4M3);
    want += x;
    ASSERT_EQ(int(gs[i]), int(tk::floatToFp8Bits(x + y, tk::kE4M3))) << x << " + " << y;
    ASSERT_EQ(gp[i], tk::fp8BitsToFloat(tk::floatToFp8Bits(x * y, tk::kE4M3), tk::kE4M3)) << x << " * " << y;
    ASSERT_EQ(int(gm[i]), int(tk::floatToFp8Bits(std::fmax(x, y), tk::kE4M3)));
    // 1.3 rounds to e5m2 once (1.25), i to e5m2, their sum to e5m2.
    const float one3 = tk::fp8BitsToFloat(tk::doubleToFp8Bits(1.3, tk::kE5M2), tk::kE5M2);
    const float fi = tk::fp8BitsToFloat(tk::floatToFp8Bits(float(i), tk::kE5M2), tk::kE5M2);
    ASSERT_EQ(int(gc[i]), int(tk::floatToFp8Bits(one3 + fi, tk::kE5M2))) << i;
  }
  // Every e4m3 value is exact in f32 and their sum is short: exact.
  EXPECT_EQ(dev->download<float>(total, 1)[0], float(want));
}

// stdlib/quantize.tk against the same f32 steps on the host, code for code:
// rows read once (D <= BLOCK_D) and in chunks, f32 and f16 input, an
// all-zero row (the scale's floor).
TEST(Fp8, StdlibQuantizeRowsMatchesTheHostStepForStep) {
  auto dev = tk::Device::open("sim");
  for (const char *type : {"f32", "f16"})
    for (int block : {256, 1024})
      for (int d : {1, 97, 781, 1000}) {
        const std::string what = std::string(type) + " BLOCK_D " + std::to_string(block) + " D " + std::to_string(d);
        tk::Kernel k = dev->load(tk::test::compileForSim(TK_SOURCE_DIR + "/stdlib/quantize.tk", "quantize_fp8_rows", 4,
                                                         {{"T", type}, {"BLOCK_D", std::to_string(block)}}));
        const int rows = 5;
        std::vector<float> x = tk::test::randomFloats(size_t(rows) * d, -30, 30);
        std::fill(x.begin() + d, x.begin() + 2 * d, 0.0f);
        std::vector<uint16_t> h;
        if (std::string(type) == "f16")
          for (float &f : x) {
            h.push_back(halfBits(f));
            f = tk::halfBitsToFloat(h.back());
          }
        tk::Buffer dx = h.empty() ? dev->upload(x) : dev->upload(h),
                   out = dev->upload(std::vector<uint8_t>(x.size(), 0xff)), scale = dev->upload(std::vector<float>(rows, NAN));
        (*dev)(k, {uint32_t(rows)}, dx, out, scale, int32_t(rows), int32_t(d));
        auto got = dev->download<uint8_t>(out, x.size());
        auto gotScale = dev->download<float>(scale, rows);
        for (int r = 0; r < rows; ++r) {
          float top = 0;
          for (int c = 0; c < d; ++c) top = std::max(top, std::fabs(x[size_t(r) * d + c]));
          const float s = std::max(top / 448.0f, float(1.0 / (448.0 * 512.0)));
          ASSERT_EQ(gotScale[r], s) << what << " row " << r;
          for (int c = 0; c < d; ++c)
            ASSERT_EQ(int(got[size_t(r) * d + c]), int(tk::floatToFp8Bits(x[size_t(r) * d + c] / s, tk::kE4M3)))
                << what << " row " << r << " col " << c;
        }
      }
}

// c [m, n] against (A [m, k] @ B) * sa[:, None] * sb[None, :] in double, B
// element (kk, j) at kk * sbk + j * sbn, both operands codes of `f`: exact
// products, so within f32 accumulation of the scaled sum of |a b|.
void expectScaledFp8Product(const std::vector<float> &c, const std::vector<uint8_t> &a, const std::vector<uint8_t> &b,
                            const std::vector<float> &sa, const std::vector<float> &sb, int m, int n, int k, int sbk,
                            int sbn, const tk::Fp8Format &f, const std::string &what) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double want = 0, mag = 0;
      for (int kk = 0; kk < k; ++kk) {
        const double p =
            double(tk::fp8BitsToFloat(a[size_t(i) * k + kk], f)) * tk::fp8BitsToFloat(b[size_t(kk) * sbk + size_t(j) * sbn], f);
        want += p;
        mag += std::fabs(p);
      }
      const double scale = double(sa[i]) * sb[j];
      ASSERT_NEAR(c[size_t(i) * n + j], want * scale, 1e-5 * (mag * scale + 1)) << what << " at " << i << "," << j;
    }
}

// A matmul_fp8 problem on `dev`: A [m, k] and B [k, n] (stored [n, k] with
// transB) of random codes of `f` within +-range, scales in [0.5, 2], C
// poisoned; `args` are the kernel's, unit strides but B's.
struct Fp8Gemm {
  Fp8Gemm(tk::Device &dev, int m, int n, int k, bool transB, const tk::Fp8Format &f, float range)
      : m(m), n(n), k(k), sbk(transB ? 1 : n), sbn(transB ? k : 1), f(f) {
    for (float v : tk::test::randomFloats(size_t(m) * k, -range, range)) a.push_back(tk::floatToFp8Bits(v, f));
    for (float v : tk::test::randomFloats(size_t(k) * n, -range, range)) b.push_back(tk::floatToFp8Bits(v, f));
    sa = tk::test::randomFloats(m, 0.5f, 2), sb = tk::test::randomFloats(n, 0.5f, 2);
    c = dev.upload(std::vector<float>(size_t(m) * n, NAN));
    args = {dev.upload(a), dev.upload(b), c, dev.upload(sa), dev.upload(sb), int32_t(m), int32_t(n), int32_t(k),
            int32_t(k), int32_t(1), int32_t(sbk), int32_t(sbn), int32_t(n), int32_t(1)};
  }
  void expectResult(tk::Device &dev, const std::string &what) const {
    expectScaledFp8Product(dev.download<float>(c, size_t(m) * n), a, b, sa, sb, m, n, k, sbk, sbn, f, what);
  }
  int m, n, k, sbk, sbn;
  const tk::Fp8Format &f;
  std::vector<uint8_t> a, b;
  std::vector<float> sa, sb;
  tk::Buffer c;
  std::vector<tk::Arg> args;
};

// stdlib matmul_fp8: the products of fp8 values are exact, so the result is
// within f32 accumulation of a double reference; ragged sizes, B transposed
// through its strides, both formats.
TEST(Fp8, StdlibMatmulFp8AgainstDouble) {
  auto dev = tk::Device::open("sim");
  struct Size {
    int m, n, k;
    bool transB;
  };
  // sm_80 multiplies the f16 values on m16n8k16; sm_89 the codes on the fp8
  // m16n8k32 (lower/Target.h, archUsesFp8Mma), where K is whole k32 steps;
  // sm_90a on wgmma's m64nNk32 fp8 form (lower/Wgmma.h), B staged K-major.
  for (const char *arch : {"sm_80", "sm_89", "sm_90a"})
  for (const char *type : {"f8e4m3", "f8e5m2"})
    for (Size sz : {Size{1, 1, 1, false}, Size{130, 67, 100, false}, Size{33, 70, 64, true}}) {
      const tk::Fp8Format &f = std::string(type) == "f8e4m3" ? tk::kE4M3 : tk::kE5M2;
      const std::string what = std::string(arch) + " " + type + " " + std::to_string(sz.m) + "x" +
                               std::to_string(sz.n) + "x" + std::to_string(sz.k) + (sz.transB ? " B^T" : "");
      tk::CompileOptions opts;
      opts.archs = {arch};
      opts.emitPtx = false;
      opts.defines = {{"T", type}};
      tk::Kernel kern = dev->load(tk::Compiler::compileFile(TK_SOURCE_DIR + "/stdlib/matmul.tk", "matmul_fp8", opts));
      std::vector<uint8_t> a, b;
      for (float v : tk::test::randomFloats(size_t(sz.m) * sz.k, -8, 8)) a.push_back(tk::floatToFp8Bits(v, f));
      for (float v : tk::test::randomFloats(size_t(sz.k) * sz.n, -8, 8)) b.push_back(tk::floatToFp8Bits(v, f));
      const auto sa = tk::test::randomFloats(sz.m, 0.5f, 2), sb = tk::test::randomFloats(sz.n, 0.5f, 2);
      // B is [K, N]; transposed, it is stored [N, K].
      const int sbk = sz.transB ? 1 : sz.n, sbn = sz.transB ? sz.k : 1;
      tk::Buffer da = dev->upload(a), db = dev->upload(b), dc = dev->upload(std::vector<float>(size_t(sz.m) * sz.n, NAN)),
                 dsa = dev->upload(sa), dsb = dev->upload(sb);
      const uint32_t grid = tk::test::cdiv(sz.m, 64) * tk::test::cdiv(sz.n, 64);
      (*dev)(kern, {grid}, da, db, dc, dsa, dsb, int32_t(sz.m), int32_t(sz.n), int32_t(sz.k), int32_t(sz.k), int32_t(1),
             int32_t(sbk), int32_t(sbn), int32_t(sz.n), int32_t(1));
      expectScaledFp8Product(dev->download<float>(dc, size_t(sz.m) * sz.n), a, b, sa, sb, sz.m, sz.n, sz.k, sbk, sbn,
                             f, what);
    }
}

TEST(Fp8, TritonDotKeywordsAsWritten) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(compile("dot_keywords"));
  std::vector<uint8_t> a, b;
  for (float v : tk::test::randomFloats(32 * 32, -4, 4)) a.push_back(tk::floatToFp8Bits(v, tk::kE4M3));
  for (float v : tk::test::randomFloats(32 * 32, -4, 4)) b.push_back(tk::floatToFp8Bits(v, tk::kE4M3));
  tk::Buffer da = dev->upload(a), db = dev->upload(b), dc = dev->upload(std::vector<float>(32 * 32, NAN)),
             dd = dev->upload(std::vector<uint8_t>(32 * 32, 0xff));
  (*dev)(k, {1}, da, db, dc, dd);
  auto c = dev->download<float>(dc, 32 * 32);
  auto d = dev->download<uint8_t>(dd, 32 * 32);
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) {
      double want = 0, mag = 0;
      for (int kk = 0; kk < 32; ++kk) {
        const double p = double(tk::fp8BitsToFloat(a[i * 32 + kk], tk::kE4M3)) * tk::fp8BitsToFloat(b[kk * 32 + j], tk::kE4M3);
        want += p;
        mag += std::fabs(p);
      }
      ASSERT_NEAR(c[i * 32 + j], want, 1e-6 * (mag + 1)) << i << "," << j;
      ASSERT_EQ(int(d[i * 32 + j]), int(tk::floatToFp8Bits(c[i * 32 + j], tk::kE5M2))) << i << "," << j;
    }
}

// Two warpgroups (128x128x64 tiles, 8 warps) on wgmma's fp8 form: each
// warpgroup's A region lies M/2 rows of codes past the last; ragged sizes
// (K not a multiple of BLOCK_K), unit strides known (the gpu kit's config),
// B either way, e5m2.
TEST(Fp8, StdlibMatmulFp8TwoWarpgroupsOnWgmma) {
  auto dev = tk::Device::open("sim:racecheck");
  const std::string file = TK_SOURCE_DIR + "/stdlib/matmul.tk";
  const int m = 130, n = 67, k = 100;
  for (bool transB : {false, true}) {
    const std::string what = transB ? "B^T" : "B";
    Fp8Gemm g(*dev, m, n, k, transB, tk::kE5M2, 100);
    tk::CompileOptions o;
    o.archs = {"sm_90a"};
    o.numWarps = 8;
    o.numStages = 3;
    o.defines = {{"T", "f8e5m2"}, {"BLOCK_M", "128"}, {"BLOCK_N", "128"}, {"BLOCK_K", "64"}};
    o.assume = tk::launchSpecialisation(tk::Compiler::signature(file, "matmul_fp8", o.defines), g.args);
    tk::Bundle bundle = tk::Compiler::compileFile(file, "matmul_fp8", o);
    EXPECT_NE(bundle.ptx.at("sm_90a").find("wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2"), std::string::npos)
        << what;
    dev->launch(dev->load(bundle), {uint32_t(tk::test::cdiv(m, 128) * tk::test::cdiv(n, 128))}, g.args);
    g.expectResult(*dev, what);
  }
}

// stdlib matmul_fp8_desc_ws: A [m, k] and B^T [n, k] of codes through host
// descriptors (rows pitched to 16 bytes, the pitch a code that would show),
// C f32 through one, persistent grids smaller and larger than the tile
// count. On sm_90a the tensor memory accelerator moves the codes for a
// producer warpgroup and wgmma multiplies them in place (one and two
// consumer warpgroups, under racecheck); sm_89 and sm_80 run the same
// source on cp.async and mma.sync.
TEST(Fp8, StdlibMatmulFp8DescriptorsWarpSpecialized) {
  auto dev = tk::Device::open("sim:racecheck");
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  struct Config {
    const char *arch, *type;
    int warps, stages, bm, bn, bk;
  };
  for (Config cfg : {Config{"sm_90a", "f8e4m3", 4, 3, 128, 64, 64}, Config{"sm_90a", "f8e5m2", 8, 4, 128, 128, 128},
                     Config{"sm_90a", "f8e4m3", 4, 2, 64, 32, 32},
                     Config{"sm_89", "f8e4m3", 4, 3, 128, 64, 64}, Config{"sm_80", "f8e5m2", 4, 3, 128, 64, 64}}) {
    const tk::Fp8Format &f = std::string(cfg.type) == "f8e4m3" ? tk::kE4M3 : tk::kE5M2;
    const bool hopper = std::string(cfg.arch) == "sm_90a";
    tk::CompileOptions o;
    o.archs = {cfg.arch};
    o.numWarps = cfg.warps;
    o.numStages = cfg.stages;
    o.defines = {{"T", cfg.type},
                 {"BLOCK_M", std::to_string(cfg.bm)},
                 {"BLOCK_N", std::to_string(cfg.bn)},
                 {"BLOCK_K", std::to_string(cfg.bk)}};
    tk::Bundle bundle = tk::Compiler::compileFile(TK_SOURCE_DIR + "/stdlib/matmul.tk", "matmul_fp8_desc_ws", o);
    const std::string &ptx = bundle.ptx.at(cfg.arch), tag = std::string(cfg.arch) + " " + cfg.type;
    EXPECT_EQ(bundle.producerWarps, hopper ? 4 : 0) << tag;
    if (hopper) {
      EXPECT_NE(ptx.find(std::string("wgmma.mma_async.sync.aligned.m64n") + std::to_string(cfg.bn) + "k32.f32." +
                         (f.manBits == 3 ? "e4m3.e4m3" : "e5m2.e5m2")),
                std::string::npos) << tag;
      EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d"), std::string::npos) << tag;
      EXPECT_EQ(ptx.find("cp.async.cg.shared.global"), std::string::npos) << tag << ": a thread copies an operand";
      ASSERT_EQ(bundle.tensorMaps.size(), 3u) << tag;  // A, B^T, and C's bulk tensor stores
      EXPECT_EQ(bundle.tensorMaps[0].box, (std::vector<int64_t>{8, cfg.bk})) << tag;        // A: 8 rows of codes
      EXPECT_EQ(bundle.tensorMaps[1].box, (std::vector<int64_t>{cfg.bn, cfg.bk})) << tag;  // B^T: K-major
    }
    if (toolkit.hasPtxas()) {
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(ptx, cfg.arch, toolkit);
      EXPECT_TRUE(info.ran) << info.log;
      EXPECT_EQ(info.spillStoreBytes, 0) << tag << "\n" << info.log;
    }
    tk::Kernel kern = dev->load(bundle);
    for (auto [m, n, k] : {std::tuple{1, 1, 1}, std::tuple{130, 67, 100}}) {
      const int pk = (k + 15) / 16 * 16, pc = (n + 3) / 4 * 4;
      std::vector<uint8_t> a, bt, ap(size_t(m) * pk, 0x7e), bp(size_t(n) * pk, 0x7e);  // 0x7e: 448 or a NaN
      for (float v : tk::test::randomFloats(size_t(m) * k, -16, 16)) a.push_back(tk::floatToFp8Bits(v, f));
      for (float v : tk::test::randomFloats(size_t(n) * k, -16, 16)) bt.push_back(tk::floatToFp8Bits(v, f));
      for (int i = 0; i < m; ++i) std::copy_n(&a[size_t(i) * k], k, &ap[size_t(i) * pk]);
      for (int j = 0; j < n; ++j) std::copy_n(&bt[size_t(j) * k], k, &bp[size_t(j) * pk]);
      const auto sa = tk::test::randomFloats(m, 0.5f, 2), sb = tk::test::randomFloats(n, 0.5f, 2);
      const uint32_t tiles = tk::test::cdiv(m, cfg.bm) * tk::test::cdiv(n, cfg.bn);
      for (uint32_t grid : {std::min(2u, tiles), tiles + 1}) {
        tk::Buffer dc = dev->upload(std::vector<float>(size_t(m) * pc, NAN));
        tk::TensorDescriptor ta{dev->upload(ap), {m, k}, {pk, 1}, {}}, tb{dev->upload(bp), {n, k}, {pk, 1}, {}},
            tc{dc, {m, n}, {pc, 1}, {}};
        (*dev)(kern, {grid}, ta, tb, tc, dev->upload(sa), dev->upload(sb), int32_t(m), int32_t(n), int32_t(k));
        const auto out = dev->download<float>(dc, size_t(m) * pc);
        std::vector<float> c(size_t(m) * n);
        for (int i = 0; i < m; ++i) std::copy_n(&out[size_t(i) * pc], n, &c[size_t(i) * n]);
        for (int i = 0; i < m; ++i)
          for (int j = n; j < pc; ++j) ASSERT_TRUE(std::isnan(out[size_t(i) * pc + j])) << tag << ": C's pitch written";
        expectScaledFp8Product(c, a, bt, sa, sb, m, n, k, 1, k, f,
                               tag + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                                   " grid " + std::to_string(grid));
      }
    }
  }
}

// e4m3 by e5m2: the f16 mma on sm_80, the mixed fp8 forms of mma.sync on
// sm_89 and of wgmma on sm_90a (ptxas accepts both); exact up to f32
// accumulation at ragged sizes, K masked inside the tile.
TEST(Fp8, MixedFormatDotAgainstDouble) {
  auto dev = tk::Device::open("sim");
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  for (const char *arch : {"sm_80", "sm_89", "sm_90a"}) {
    tk::CompileOptions opts;
    opts.archs = {arch};
    tk::Bundle bundle = tk::Compiler::compileFile(kFile, "dot_mixed", opts);
    const std::string &ptx = bundle.ptx.at(arch);
    EXPECT_EQ(ptx.find("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32") != std::string::npos,
              std::string(arch) == "sm_89");
    EXPECT_EQ(ptx.find("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2") != std::string::npos,
              std::string(arch) == "sm_90a");
    if (toolkit.hasPtxas()) {
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(ptx, arch, toolkit);
      EXPECT_TRUE(info.ran) << arch << "\n" << info.log;
      EXPECT_EQ(info.spillStoreBytes, 0) << arch << "\n" << info.log;
    }
    for (auto [m, n, k] : {std::tuple{64, 64, 64}, std::tuple{1, 1, 1}, std::tuple{37, 50, 45}}) {
      const std::string what = std::string(arch) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                               std::to_string(k);
      std::vector<uint8_t> a, b;
      for (float v : tk::test::randomFloats(size_t(m) * k, -300, 300)) a.push_back(tk::floatToFp8Bits(v, tk::kE4M3));
      for (float v : tk::test::randomFloats(size_t(k) * n, -3000, 3000)) b.push_back(tk::floatToFp8Bits(v, tk::kE5M2));
      tk::Buffer da = dev->upload(a), db = dev->upload(b), dc = dev->upload(std::vector<float>(size_t(m) * n, NAN));
      (*dev)(dev->load(bundle), {1}, da, db, dc, int32_t(m), int32_t(n), int32_t(k));
      auto c = dev->download<float>(dc, size_t(m) * n);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double want = 0, mag = 0;
          for (int kk = 0; kk < k; ++kk) {
            const double p = double(tk::fp8BitsToFloat(a[size_t(i) * k + kk], tk::kE4M3)) *
                             tk::fp8BitsToFloat(b[size_t(kk) * n + j], tk::kE5M2);
            want += p;
            mag += std::fabs(p);
          }
          ASSERT_NEAR(c[size_t(i) * n + j], want, 1e-6 * (mag + 1)) << what << " at " << i << "," << j;
        }
    }
  }
}

// sm_90 and sm_90a convert with cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 and
// cvt.rn.f16x2.{e4m3x2,e5m2x2} (NvptxTarget::floatToFp8 / fp8ToFloat), the
// older archs and sm_89 (whose cvt needs PTX ISA 8.1) with lower/Fp8.h's
// integer form, which the sim runs and the tests above check bit for bit.
TEST(Fp8, PtxAssemblesWithPtxas) {
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  auto count = [](const std::string &ptx, const std::string &what) {
    size_t n = 0;
    for (size_t at = ptx.find(what); at != std::string::npos; at = ptx.find(what, at + 1)) ++n;
    return n;
  };
  for (const char *kernel : {"to_fp8", "from_fp8", "fp8_math", "matmul_fp8"}) {
    tk::CompileOptions opts;
    opts.archs = {"sm_80", "sm_89", "sm_90", "sm_90a"};
    const std::string file = std::string(kernel) == "matmul_fp8" ? TK_SOURCE_DIR + "/stdlib/matmul.tk" : kFile;
    tk::Bundle b = tk::Compiler::compileFile(file, kernel, opts);
    for (const std::string &arch : opts.archs) {
      const size_t cvts = count(b.ptx.at(arch), "cvt.rn.satfinite.e4m3x2.f32") +
                          count(b.ptx.at(arch), "cvt.rn.satfinite.e5m2x2.f32") +
                          count(b.ptx.at(arch), "cvt.rn.f16x2.e4m3x2") + count(b.ptx.at(arch), "cvt.rn.f16x2.e5m2x2");
      // The fp8 mma (sm_89: lower/Target.h, archUsesFp8Mma) takes
      // matmul_fp8's codes as they are, and needs PTX ISA 8.4, in that module
      // alone; so does sm_90a's fp8 wgmma, in PTX ISA 8.0.
      const bool matmul = std::string(kernel) == "matmul_fp8";
      const bool fp8Mma = matmul && arch == "sm_89", fp8Wgmma = matmul && arch == "sm_90a";
      EXPECT_EQ(count(b.ptx.at(arch), "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3") > 0, fp8Wgmma)
          << kernel << " " << arch;
      if ((arch == "sm_90" || arch == "sm_90a") && !fp8Mma && !fp8Wgmma) {
        EXPECT_GT(cvts, 0u) << kernel << " " << arch;
      } else {
        EXPECT_EQ(cvts, 0u) << kernel << " " << arch;
      }
      EXPECT_EQ(count(b.ptx.at(arch), "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32") > 0, fp8Mma)
          << kernel << " " << arch;
      EXPECT_NE(b.ptx.at(arch).find(fp8Mma ? ".version 8.4" : ".version 8.0"), std::string::npos) << kernel << " " << arch;
      if (!toolkit.hasPtxas()) continue;
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(b.ptx.at(arch), arch, toolkit);
      ASSERT_TRUE(info.ran) << info.log;
      EXPECT_FALSE(info.cubin.empty()) << kernel << " " << arch;
      EXPECT_EQ(info.spillStoreBytes, 0) << kernel << " " << arch << "\n" << info.log;
    }
  }
}

// With a launch's facts (sizes and strides multiples of 16, unit inner
// strides) matmul_fp8's operand loads go through cp.async rings although a
// cast to f16 stands between each load and the dot (the ring holds the
// fp8 bytes; the cast reads the slot): exact as above, race-free, on
// mma.sync f16 (sm_80), fp8 (sm_89) and wgmma's fp8 form (sm_90a), which
// reads both rings in place when B is stored [N, K] (K-major, as fp8 GEMMs
// take it: no st.shared at all) and stages a row-major B K-major.
TEST(Fp8, StdlibMatmulFp8PipelinedWithFacts) {
  auto dev = tk::Device::open("sim:racecheck");
  const std::string file = TK_SOURCE_DIR + "/stdlib/matmul.tk";
  const int m = 128, n = 64, k = 96;
  for (bool transB : {false, true})
  for (const char *arch : {"sm_80", "sm_89", "sm_90a"}) {
    const std::string what = std::string(arch) + (transB ? " B^T" : "");
    Fp8Gemm g(*dev, m, n, k, transB, tk::kE4M3, 8);
    tk::CompileOptions o;
    o.archs = {arch};
    o.numStages = 3;
    o.assume = tk::launchSpecialisation(tk::Compiler::signature(file, "matmul_fp8", {}), g.args);
    tk::Bundle bundle = tk::Compiler::compileFile(file, "matmul_fp8", o);
    const std::string &ptx = bundle.ptx.at(arch);
    EXPECT_NE(ptx.find("cp.async"), std::string::npos) << what;
    if (std::string(arch) == "sm_90a") {
      EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3"), std::string::npos) << what;
      EXPECT_EQ(ptx.find("st.shared") == std::string::npos, transB) << what;
    }
    dev->launch(dev->load(bundle), {uint32_t((m / 64) * (n / 64))}, g.args);
    g.expectResult(*dev, what);
  }
}
