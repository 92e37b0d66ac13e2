// Tensor descriptors built on the host (tk::TensorDescriptor) for
// `desc<T, [..]>` parameters (tests/kernels/descriptor_params.tk): numerics on
// the sim against references computed here, over pitched buffers whose
// padding holds NaN (a read outside the shape shows in the result) and whose
// every byte past the shape must come back untouched; the launch's checks,
// one per rule; and the signature and bundle a descriptor parameter makes.
#include <algorithm>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "runtime_TestUtil.h"
#include "tk/runtime.h"
#include "tk/tune.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/descriptor_params.tk";

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// A [m, k] @ B [k, n] of exact halves (every product and sum exact in
// f32; exact in bf16 too), uploaded as f16 (or bf16) with rows pitched to the descriptors' 16-byte rule
// and NaN in the pitch, their descriptors (empty blocks: the kernel's), and
// C [m, n] f32 pitched to 4 and filled with `fill`.
struct PitchedProduct {
  int64_t m, n, k, pc;
  std::vector<float> a, b;
  tk::Buffer dc;
  tk::TensorDescriptor ta, tb, tc;

  PitchedProduct(tk::Device &dev, int64_t m_, int64_t n_, int64_t k_, float fill, bool bf16 = false)
      : m(m_), n(n_), k(k_) {
    const int64_t pa = roundUp(k, 8), pb = roundUp(n, 8);
    pc = roundUp(n, 4);
    a = tk::test::exactHalfInputs(size_t(m * k)), b = tk::test::exactHalfInputs(size_t(k * n));
    std::vector<float> ap(size_t(m * pa), NAN), bp(size_t(k * pb), NAN);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t q = 0; q < k; ++q) ap[size_t(i * pa + q)] = a[size_t(i * k + q)];
    for (int64_t q = 0; q < k; ++q)
      for (int64_t j = 0; j < n; ++j) bp[size_t(q * pb + j)] = b[size_t(q * n + j)];
    dc = dev.upload(std::vector<float>(size_t(m * pc), fill));
    auto bits = [&](const std::vector<float> &v) {
      if (!bf16) return tk::test::f16Values(v);
      std::vector<uint16_t> out;
      for (float f : v) out.push_back(tk::floatToBf16Bits(f));
      return out;
    };
    ta = {dev.upload(bits(ap)), {m, k}, {pa, 1}, {}};
    tb = {dev.upload(bits(bp)), {k, n}, {pb, 1}, {}};
    tc = {dc, {m, n}, {pc, 1}, {}};
  }
  double want(int64_t i, int64_t j) const {
    double sum = 0;
    for (int64_t q = 0; q < k; ++q) sum += double(a[size_t(i * k + q)]) * b[size_t(q * n + j)];
    return sum;
  }
};

// Each arch's tensor core (mma.sync, wgmma), ragged sizes, rows pitched to
// the descriptor's 16-byte stride rule with NaN in the pitch.
TEST(DescriptorParams, MatmulThroughHostDescriptors) {
  auto dev = tk::Device::open("sim");
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  for (const char *arch : {"sm_80", "sm_90a"}) {
    tk::CompileOptions opts;
    opts.archs = {arch};
    tk::Bundle bundle = tk::Compiler::compileFile(kFile, "matmul_host_desc", opts);
    if (toolkit.hasPtxas()) {
      tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(bundle.ptx.at(arch), arch, toolkit);
      EXPECT_TRUE(info.ran) << info.log;
      EXPECT_EQ(info.spillStoreBytes, 0) << arch << "\n" << info.log;
    }
    // The descriptors' facts (16-byte base and strides, unit inner stride)
    // make the operand loads cp.async copies with no --assume; on sm_90a the
    // tensor memory accelerator moves them instead, from tensor maps the
    // launch encodes, and no thread copies an operand itself.
    const std::string &ptx = bundle.ptx.at(arch);
    if (std::string(arch) == "sm_90a") {
      EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"),
                std::string::npos);
      EXPECT_NE(ptx.find("mbarrier.try_wait.parity.shared::cta.b64"), std::string::npos);
      EXPECT_EQ(ptx.find("cp.async.cg.shared.global"), std::string::npos);
      // C goes out through shared memory by bulk tensor stores, which drop
      // what lies past the tensor's edge (the pitch below stays -7).
      EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d.global.shared::cta"), std::string::npos);
      ASSERT_EQ(bundle.tensorMaps.size(), 3u);
      EXPECT_EQ(bundle.tensorMaps[2].param, "c");
      EXPECT_EQ(bundle.tensorMaps[2].box, (std::vector<int64_t>{64, 32}));  // all rows, 128 bytes of columns
      EXPECT_EQ(bundle.tensorMaps[0].param, "a");
      EXPECT_EQ(bundle.tensorMaps[0].box, (std::vector<int64_t>{8, 32}));  // wgmma's A: 8 rows at a time
      EXPECT_EQ(bundle.tensorMaps[1].box, (std::vector<int64_t>{32, 64}));  // B: one 128-byte slab
    } else {
      EXPECT_NE(ptx.find("cp.async.cg.shared.global"), std::string::npos) << arch;
      EXPECT_TRUE(bundle.tensorMaps.empty());
    }
    tk::Kernel k = dev->load(bundle);
    for (auto [m, n, kk] : {std::tuple{1, 1, 1}, std::tuple{64, 64, 32}, std::tuple{130, 67, 100}}) {
      const std::string what =
          std::string(arch) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(kk);
      PitchedProduct p(*dev, m, n, kk, -7.0f);
      p.ta.blockShape = {64, 32}, p.tb.blockShape = {32, 64}, p.tc.blockShape = {64, 64};  // as Triton's are given
      (*dev)(k, {tk::test::cdiv(m, 64), tk::test::cdiv(n, 64)}, p.ta, p.tb, p.tc, int32_t(kk));
      auto c = dev->download<float>(p.dc, size_t(m * p.pc));
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < p.pc; ++j) {
          if (j >= n) {
            ASSERT_EQ(c[size_t(i * p.pc + j)], -7.0f) << what << ": the store wrote the pitch at " << i << "," << j;
            continue;
          }
          ASSERT_EQ(c[size_t(i * p.pc + j)], p.want(i, j)) << what << " at " << i << "," << j;
        }
    }
  }
}

// stdlib matmul_desc at its default and its largest tuned tiles, on each
// arch's tensor core, ragged sizes (rows pitched), no integer facts: exact
// against double. Its PTX has no spill where the pointer matmul without
// facts spills (docs/perf.md, "Descriptors from the host"). The same for
// matmul_desc_ws, persistent on two programs (warp-specialised on sm_90a);
// bf16 operands (const T) at the largest tiles.
void checkStdlibMatmulDesc(const char *kernel, bool persistent) {
  auto dev = tk::Device::open("sim");
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  for (const char *arch : {"sm_80", "sm_90a"})
    for (int64_t bm : {64, 128}) {
      tk::CompileOptions opts;
      opts.archs = {arch};
      opts.numStages = bm == 128 ? 4 : 3;
      const bool bf16 = bm == 128;
      opts.defines = {{"BLOCK_M", std::to_string(bm)}, {"BLOCK_N", std::to_string(bm)}, {"T", bf16 ? "bf16" : "f16"}};
      tk::Bundle bundle = tk::Compiler::compileFile(TK_SOURCE_DIR + "/stdlib/matmul.tk", kernel, opts);
      EXPECT_EQ(bundle.producerWarps, persistent && std::string(arch) == "sm_90a" ? 4 : 0) << arch;
      if (toolkit.hasPtxas()) {
        tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(bundle.ptx.at(arch), arch, toolkit);
        EXPECT_EQ(info.spillStoreBytes, 0) << arch << " " << bm << "\n" << info.log;
      }
      tk::Kernel k = dev->load(bundle);
      for (auto [m, n, kk] : {std::tuple{1, 1, 1}, std::tuple{130, 67, 100}}) {
        PitchedProduct p(*dev, m, n, kk, NAN, bf16);
        const uint32_t tiles = tk::test::cdiv(m, bm) * tk::test::cdiv(n, bm);
        (*dev)(k, {persistent ? std::min(2u, tiles) : tiles}, p.ta, p.tb, p.tc, int32_t(m), int32_t(n), int32_t(kk));
        auto c = dev->download<float>(p.dc, size_t(m * p.pc));
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < p.pc; ++j) {
            const std::string what = std::string(kernel) + " " + arch + " " + std::to_string(bm) + " " +
                                     std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(kk);
            if (j >= n)
              ASSERT_TRUE(std::isnan(c[size_t(i * p.pc + j)])) << what << ": the store wrote the pitch at " << i << "," << j;
            else
              ASSERT_EQ(c[size_t(i * p.pc + j)], p.want(i, j)) << what << " at " << i << "," << j;
          }
      }
    }
}

TEST(DescriptorParams, StdlibMatmulDesc) { checkStdlibMatmulDesc("matmul_desc", false); }
TEST(DescriptorParams, StdlibMatmulDescWarpSpecialized) { checkStdlibMatmulDesc("matmul_desc_ws", true); }

// Rank 1 at sizes that exercise the block's mask, built with contiguous().
TEST(DescriptorParams, AffineOverRankOneDescriptors) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::test::compileForSim(kFile, "affine_1d", 4));
  for (int64_t n : {1, 781, 1023, 98433}) {
    auto x = tk::test::randomFloats(size_t(n), -8, 8);
    tk::Buffer dx = dev->upload(x), dy = dev->upload(std::vector<float>(size_t(n), NAN));
    (*dev)(k, {tk::test::cdiv(n, 256)}, tk::TensorDescriptor::contiguous(dx, {n}, {256}),
           tk::TensorDescriptor::contiguous(dy, {n}, {256}));
    auto y = dev->download<float>(dy, size_t(n));
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[size_t(i)], float(double(x[size_t(i)]) * 2 + 1)) << n << " at " << i;
  }
}

// Rank 3 over a strided view (every other plane of a bigger tensor), the
// element type a const (f32 and f16), blocks partly outside on every side.
TEST(DescriptorParams, StridedRankThreeWindow) {
  auto dev = tk::Device::open("sim");
  const int64_t D0 = 3, D1 = 5, D2 = 12, pitch = 16, plane = 2 * D1 * pitch;
  for (const char *t : {"f32", "f16"}) {
    tk::Kernel k = dev->load(tk::test::compileForSim(kFile, "window_3d", 4, {{"T", t}}));
    const bool half = std::string(t) == "f16";
    for (auto [o0, o1, o2] : {std::tuple{0, 0, 0}, std::tuple{-1, -2, -3}, std::tuple{2, 3, 8}, std::tuple{1, 1, 1}}) {
      const std::string what = std::string(t) + " at " + std::to_string(o0) + "," + std::to_string(o1) + "," +
                               std::to_string(o2);
      auto x = tk::test::exactHalfInputs(size_t(D0 * plane));
      tk::Buffer dx = half ? dev->upload(tk::test::f16Values(x)) : dev->upload(x);
      tk::Buffer out = half ? dev->upload(std::vector<uint16_t>(64, 0x7e00)) : dev->upload(std::vector<float>(64, NAN));
      (*dev)(k, {1}, tk::TensorDescriptor{dx, {D0, D1, D2}, {plane, pitch, 1}, {2, 4, 8}}, out, int32_t(o0),
             int32_t(o1), int32_t(o2));
      std::vector<float> got;
      if (half)
        for (uint16_t h : dev->download<uint16_t>(out, 64)) got.push_back(tk::halfBitsToFloat(h));
      else
        got = dev->download<float>(out, 64);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 4; ++j)
          for (int l = 0; l < 8; ++l) {
            const int64_t a = o0 + i, b = o1 + j, c = o2 + l;
            const bool inside = a >= 0 && a < D0 && b >= 0 && b < D1 && c >= 0 && c < D2;
            const float want = inside ? x[size_t(a * plane + b * pitch + c)] : 0.0f;
            ASSERT_EQ(got[size_t(i * 32 + j * 8 + l)], want) << what << " element " << i << "," << j << "," << l;
          }
    }
  }
}

// Every rule the launch checks, each named in its error.
TEST(DescriptorParams, LaunchRefusesEveryBrokenRule) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::test::compileForSim(kFile, "affine_1d", 4));
  tk::Kernel w = dev->load(tk::test::compileForSim(kFile, "window_3d", 4));
  tk::Buffer x = dev->alloc<float>(1024), y = dev->alloc<float>(1024), out = dev->alloc<float>(64);
  tk::Buffer big = dev->alloc<float>(4096);
  const tk::TensorDescriptor good = tk::TensorDescriptor::contiguous(y, {1024}, {256});
  auto launch1 = [&](tk::Arg a) {
    return tk::test::errorOf([&] { dev->launch(k, {4}, {a, good}); });
  };
  auto launch3 = [&](tk::TensorDescriptor d) {
    return tk::test::errorOf([&] { (*dev)(w, {1}, d, out, int32_t(0), int32_t(0), int32_t(0)); });
  };
  EXPECT_EQ(launch1(tk::TensorDescriptor::contiguous(x, {1024}, {256})), "");
  EXPECT_NE(launch1(x).find("needs a tk::TensorDescriptor, got a buffer"), std::string::npos) << launch1(x);
  auto has = [](const std::string &msg, const std::string &part) {
    return msg.find(part) != std::string::npos ? ::testing::AssertionSuccess()
                                               : ::testing::AssertionFailure() << "'" << msg << "' lacks '" << part << "'";
  };
  EXPECT_TRUE(has(launch1(tk::TensorDescriptor::contiguous(x, {1024}, {128})), "block shape [128] is not the kernel's [256]"));
  EXPECT_TRUE(has(launch1(tk::TensorDescriptor{x, {32, 32}, {32, 1}, {256, 1}}), "wants 1 of each"));
  EXPECT_TRUE(has(launch1(tk::TensorDescriptor::contiguous(x.offset(4), {1000}, {256})), "is not 16-byte aligned"));
  EXPECT_TRUE(has(launch1(tk::TensorDescriptor{x, {0}, {1}, {256}}), "shape[0] = 0 is not in [1, 2^31 - 1]"));
  EXPECT_TRUE(has(launch1(tk::TensorDescriptor{x, {512}, {2}, {256}}), "strides[0] = 2 must be 1"));
  EXPECT_TRUE(has(launch1(tk::TensorDescriptor::contiguous(x, {1025}, {256})),
                  "the last element is at offset 1024, and the buffer holds 1024 f32 elements"));
  EXPECT_TRUE(has(launch1(tk::TensorDescriptor::contiguous(dev->alloc<int32_t>(1024), {1024}, {256})),
                  "a buffer of i32 for a pointer to f32"));
  EXPECT_TRUE(has(launch1(tk::TensorDescriptor::contiguous(tk::Buffer(), {1024}, {256})), "is an empty buffer"));
  EXPECT_EQ(launch3({big, {4, 4, 16}, {256, 16, 1}, {2, 4, 8}}), "");
  EXPECT_TRUE(has(launch3({big, {4, 4, 16}, {256, 18, 1}, {2, 4, 8}}),
                  "strides[1] = 18 (f32 elements) must be positive, under 2^40 bytes and span a multiple of 16 bytes"));
  EXPECT_TRUE(has(launch3({big, {4, 4, 16}, {-256, 16, 1}, {2, 4, 8}}), "strides[0] = -256"));
  EXPECT_TRUE(has(launch3({big, {17, 4, 16}, {256, 16, 1}, {2, 4, 8}}), "reaches past its buffer"));
  EXPECT_TRUE(has(launch3({big, {int64_t{1} << 31, 4, 16}, {256, 16, 1}, {2, 4, 8}}), "is not in [1, 2^31 - 1]"));
  EXPECT_TRUE(has(launch3({big, {2, 2, 2}, {int64_t{1} << 38, 4, 1}, {2, 4, 8}}), "under 2^40 bytes"));
  EXPECT_THROW(tk::TensorDescriptor::contiguous(x, {0, 4}, {1, 4}), tk::Error);
  EXPECT_TRUE(has(tk::test::errorOf([&] { dev->fill(x, good); }), "not a tensor descriptor"));
}

// One set of descriptors tunes variants of several block shapes: each
// variant gets them with its own block (Triton's autotuner sets it in a
// pre-hook), every config runs and computes the product.
TEST(DescriptorParams, TunerGivesEachVariantItsBlock) {
  auto dev = tk::Device::open("sim");
  const std::string dir = ::testing::TempDir() + "tk_desc_tune_" + std::to_string(tk::test::testSeed());
  std::filesystem::remove_all(dir);
  tk::TuneSpace space;
  for (const char *c : {"BM=64,BN=64,BK=32", "BM=32,BN=32,BK=16", "BM=16,BN=64,BK=64,num_warps=2"})
    space.configs.push_back(tk::TuneConfig::parse(c));
  space.key = {"K"};
  tk::TuneOptions o;
  o.cacheDir = o.compile.cacheDir = dir;
  o.jobs = 2;
  tk::CompileOptions co;
  co.archs = {"sm_80"};
  o.compile = co;
  o.compile.cacheDir = dir;
  tk::Tuner tuner(*dev, kFile, "matmul_host_desc", space, o);
  const int m = 70, n = 40, kk = 48;
  auto a = tk::test::exactHalfInputs(size_t(m) * kk), b = tk::test::exactHalfInputs(size_t(kk) * n);
  tk::Buffer da = dev->upload(tk::test::f16Values(a)), db = dev->upload(tk::test::f16Values(b)),
             dc = dev->upload(std::vector<float>(size_t(m) * n, NAN));
  // Built with the first config's block; the tuner refits it per variant.
  std::vector<tk::Arg> args = {tk::TensorDescriptor::contiguous(da, {m, kk}, {64, 32}),
                               tk::TensorDescriptor::contiguous(db, {kk, n}, {32, 64}),
                               tk::TensorDescriptor::contiguous(dc, {m, n}, {64, 64}), int32_t(kk)};
  auto grid = [&](const tk::Bundle &bundle) {
    return tk::Dim3{tk::test::cdiv(m, bundle.constInt("BM")), tk::test::cdiv(n, bundle.constInt("BN"))};
  };
  tk::TuneReport r = tuner.tune(grid, args);
  for (const tk::TuneResult &x : r.results) EXPECT_EQ(x.status, "ok") << x.config.str() << ": " << x.reason;
  dev->fill(dc, tk::Arg(float(NAN)));
  tuner.launch(grid, args);
  auto c = dev->download<float>(dc, size_t(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int q = 0; q < kk; ++q) want += double(a[size_t(i) * kk + q]) * b[size_t(q) * n + j];
      ASSERT_EQ(c[size_t(i) * n + j], want) << r.bestResult().config.str() << " at " << i << "," << j;
    }
  space.key = {"a"};
  EXPECT_NE(tk::test::errorOf([&] { tk::Tuner(*dev, kFile, "matmul_host_desc", space, o); }).find("is a tensor descriptor"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

// The signature names the specialised block shape; the bundle checks its
// descriptor parameters against the tile IR's 2N scalars.
TEST(DescriptorParams, SignatureAndBundle) {
  auto sig = tk::Compiler::signature(kFile, "matmul_host_desc", {{"BM", "128"}});
  ASSERT_GE(sig.size(), 3u);
  EXPECT_EQ(sig[0].type, "desc<f16,[128,32]>");
  EXPECT_EQ(sig[2].type, "desc<f32,[128,64]>");
  tk::Bundle b = tk::test::compileForSim(kFile, "window_3d", 4, {{"T", "f16"}});
  EXPECT_EQ(b.params[0].type, "desc<f16,[2,4,8]>");
  EXPECT_EQ(tk::Bundle::fromJson(b.toJson()).params[0].type, "desc<f16,[2,4,8]>");
  std::string json = b.toJson();
  // (A block edited within the rules stays a launch's contract: the
  // kernel's accesses are masked by the descriptor's shape either way.)
  for (const char *bad : {"desc<f16,[2,4,257]>", "desc<f16,[2,4]>", "desc<f17,[2,4,8]>", "desc<f16,[2,4,8]", "*f16"}) {
    tk::Bundle edited = b;
    edited.params[0].type = bad;
    EXPECT_THROW(tk::Bundle::fromJson(edited.toJson()), tk::Error) << bad;
  }
}

}  // namespace
