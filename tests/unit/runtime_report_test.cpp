// The sim's per-site counters through the public API (LaunchOptions::perSite,
// LaunchStats::sites): a coalesced load, a strided load and a store on known
// lines, counted by hand; per-site sums equal to the totals, shared memory
// and masks included; nothing per site when it is off.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime_TestUtil.h"
#include "tk/runtime.h"

namespace {

// Line numbers matter: the source starts with a newline, so `kernel` is line 2.
const char *kSource = R"(
kernel sites(x: *f32, y: *f32, out: *f32) {
    let i = program_id(0) * 512 + arange(512);
    let a = load(x + i);
    let b = load(y + i * 8);
    store(out + i, a + b);
}

kernel rowsum(x: *f32, out: *f32, n: i32) {
    let i = arange(1024);
    let m = program_id(0) * 1024 + i < n;
    let v = load(x + program_id(0) * 1024 + i, mask: m, other: 0.0);
    store(out + program_id(0), sum(v, axis: 0));
}
)";

constexpr uint32_t kBlocks = 6;
constexpr int kN = 512 * kBlocks;

struct Sites {
  std::unique_ptr<tk::Device> dev = tk::Device::open("sim");
  tk::Kernel kernel;
  explicit Sites(const char *name) {
    tk::CompileOptions opts;
    opts.emitPtx = false;
    opts.cache = false;
    kernel = dev->load(tk::Compiler::compileSource(kSource, "sites.tk", name, opts));
  }
};

const tk::SiteStats *find(const std::vector<tk::SiteStats> &sites, const std::string &loc, const std::string &kind) {
  for (const tk::SiteStats &s : sites)
    if (s.loc == loc && s.kind == kind && s.requests > 0) return &s;
  return nullptr;
}

// Per kind, the sums of the sites equal the launch's totals.
void expectSumsMatchTotals(const tk::LaunchStats &s) {
  uint64_t loadReq = 0, loadSec = 0, loadBytes = 0, storeReq = 0, storeSec = 0, storeBytes = 0, shReq = 0, shWf = 0;
  for (const tk::SiteStats &site : s.sites) {
    if (site.kind == "global load") {
      loadReq += site.requests, loadSec += site.sectors, loadBytes += site.bytes;
      EXPECT_EQ(site.wavefronts, 0u) << site.loc;
    } else if (site.kind == "global store" || site.kind == "global atomic") {
      storeReq += site.requests, storeSec += site.sectors, storeBytes += site.bytes;
    } else {
      shReq += site.requests, shWf += site.wavefronts;
      EXPECT_EQ(site.sectors, 0u) << site.loc;
    }
  }
  EXPECT_EQ(loadReq, s.loadRequests);
  EXPECT_EQ(loadSec, s.loadSectors);
  EXPECT_EQ(loadBytes, s.globalLoadBytes);
  EXPECT_EQ(storeReq, s.storeRequests);
  EXPECT_EQ(storeSec, s.storeSectors);
  EXPECT_EQ(storeBytes, s.globalStoreBytes);
  EXPECT_EQ(shReq, s.sharedRequests);
  EXPECT_EQ(shWf, s.sharedWavefronts);
}

TEST(RuntimeReport, PerSiteCountsByHand) {
  Sites k("sites");
  std::vector<float> x = tk::test::randomFloats(kN, -1, 1), y = tk::test::randomFloats(size_t(kN) * 8, -1, 1);
  tk::Buffer dx = k.dev->upload(x), dy = k.dev->upload(y), dout = k.dev->upload(std::vector<float>(kN, NAN));
  tk::LaunchOptions opts;
  opts.perSite = true;
  tk::LaunchStats s = k.dev->launch(k.kernel, {kBlocks}, {dx, dy, dout}, opts);
  std::vector<float> out = k.dev->download<float>(dout, kN);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(out[size_t(i)], x[size_t(i)] + y[size_t(i) * 8]) << i;

  // 512 elements over 128 threads: 4 consecutive f32 per thread.
  // x + i: one <4 x float> per thread, a warp's request covers 512 contiguous
  // bytes = 16 sectors; 4 warps, so 4 requests per block.
  const tk::SiteStats *a = find(s.sites, "sites.tk:4:13", "global load");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->accessBytes, 16u);
  EXPECT_EQ(a->requests, 4u * kBlocks);
  EXPECT_EQ(a->sectors, 16u * 4 * kBlocks);
  EXPECT_EQ(a->bytes, uint64_t(kN) * 4);
  // y + 8 i: 4 scalar loads per thread, lanes 32 bytes apart: each request
  // touches 32 sectors; 4 requests per warp.
  const tk::SiteStats *b = find(s.sites, "sites.tk:5:13", "global load");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->accessBytes, 4u);
  EXPECT_EQ(b->requests, 16u * kBlocks);
  EXPECT_EQ(b->sectors, 32u * 16 * kBlocks);
  EXPECT_EQ(b->bytes, uint64_t(kN) * 4);
  // out + i: as x + i.
  const tk::SiteStats *st = find(s.sites, "sites.tk:6:5", "global store");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->accessBytes, 16u);
  EXPECT_EQ(st->requests, 4u * kBlocks);
  EXPECT_EQ(st->sectors, 16u * 4 * kBlocks);
  EXPECT_EQ(st->bytes, uint64_t(kN) * 4);
  expectSumsMatchTotals(s);

  // Sorted by source position: line 4 before 5 before 6. (The strided
  // load's layout is converted to the store's through shared memory, and
  // that traffic is charged to the `a + b` that demands it, 6:22.)
  std::vector<std::string> order;
  for (const tk::SiteStats &site : s.sites)
    if (site.requests > 0 && (order.empty() || order.back() != site.loc)) order.push_back(site.loc);
  EXPECT_EQ(order, (std::vector<std::string>{"sites.tk:4:13", "sites.tk:5:13", "sites.tk:6:5", "sites.tk:6:22"}));

  // Off (the default): the same totals, no sites.
  tk::LaunchStats off = k.dev->launch(k.kernel, {kBlocks}, {dx, dy, dout});
  EXPECT_TRUE(off.sites.empty());
  EXPECT_EQ(off.loadSectors, s.loadSectors);
  EXPECT_EQ(off.storeSectors, s.storeSectors);
  EXPECT_EQ(off.globalLoadBytes, s.globalLoadBytes);
}

// A masked tail and a cross-warp reduction through shared memory: the sites
// still add up to the totals, and the reduction's shared accesses appear at
// the sum's line.
TEST(RuntimeReport, PerSiteSumsWithMasksAndShared) {
  Sites k("rowsum");
  const int n = 1024 * 3 - 123;
  std::vector<float> x = tk::test::randomFloats(size_t(n), -1, 1);
  tk::Buffer dx = k.dev->upload(x), dout = k.dev->upload(std::vector<float>(3, NAN));
  tk::LaunchOptions opts;
  opts.perSite = true;
  tk::LaunchStats s = k.dev->launch(k.kernel, {3}, {dx, dout, int32_t(n)}, opts);
  std::vector<float> out = k.dev->download<float>(dout, 3);
  for (int blk = 0; blk < 3; ++blk) {
    double want = 0;
    for (int i = blk * 1024; i < std::min(n, (blk + 1) * 1024); ++i) want += x[size_t(i)];
    EXPECT_NEAR(out[size_t(blk)], want, 1e-3) << blk;
  }
  expectSumsMatchTotals(s);
  EXPECT_GT(s.sharedRequests, 0u);
  const tk::SiteStats *load = find(s.sites, "sites.tk:12:13", "global load");
  ASSERT_NE(load, nullptr);
  uint64_t loadBytes = 0;
  for (const tk::SiteStats &site : s.sites)
    if (site.loc == "sites.tk:12:13") loadBytes += site.bytes;
  EXPECT_EQ(loadBytes, uint64_t(n) * 4);  // only the active elements
  bool sharedAtSum = false;
  for (const tk::SiteStats &site : s.sites)
    sharedAtSum |= site.kind.rfind("shared", 0) == 0 && site.requests > 0 && site.loc.rfind("sites.tk:13:", 0) == 0;
  EXPECT_TRUE(sharedAtSum);
}

// ldmatrix through the tensor-core dot: each one is a shared-memory request
// of 8 rows x 16 bytes per matrix, at the line of its dot, and the shared
// totals still equal the sum over the sites.
TEST(RuntimeReport, PerSiteLdmatrix) {
  std::unique_ptr<tk::Device> dev = tk::Device::open("sim");
  tk::CompileOptions o;
  o.emitPtx = false;
  tk::Kernel kernel = dev->load(tk::Compiler::compileFile(TK_SOURCE_DIR + "/tests/kernels/dot.tk", "matmul_f16", o));
  const int M = 64, N = 64, K = 64;                              // the kernel's default K, 32 x 32 blocks
  std::vector<uint16_t> ones(size_t(M) * K, 0x3c00);           // 1.0 in f16
  tk::Buffer a = dev->upload(ones), b = dev->upload(ones), c = dev->upload(std::vector<float>(size_t(M) * N, NAN));
  tk::LaunchOptions opts;
  opts.perSite = true;
  tk::LaunchStats s = dev->launch(kernel, {2, 2}, {a, b, c, int32_t(M), int32_t(N)}, opts);
  for (float v : dev->download<float>(c, size_t(M) * N)) ASSERT_EQ(v, float(K));
  expectSumsMatchTotals(s);
  uint64_t ldmatrix = 0;
  for (const tk::SiteStats &site : s.sites) {
    if (site.kind != "ldmatrix" || site.requests == 0) continue;
    ldmatrix += site.requests;
    EXPECT_EQ(site.accessBytes, 16u);
    // Whole 8 x 16-byte matrices, 1 to 4 per request (.x1, .x2, .x4; a's
    // and b's of one dot share its line).
    EXPECT_EQ(site.bytes % 128, 0u) << site.loc;
    EXPECT_GE(site.bytes, 128 * site.requests) << site.loc;
    EXPECT_LE(site.bytes, 512 * site.requests) << site.loc;
    EXPECT_GE(site.wavefronts, site.bytes / 128) << site.loc;       // at least one wavefront per matrix
    EXPECT_NE(site.loc.find("dot.tk:"), std::string::npos) << site.loc;
  }
  EXPECT_GT(ldmatrix, 0u);
}

}  // namespace

// A tiled transpose as a user writes it: the layout conversion between the
// row-major load and the column-major store is charged to the `trans` on
// line 4, and its padded rows keep both of its shared accesses at one
// wavefront a request (unpadded, the column reads took 32).
TEST(RuntimeReport, TransposeConversionIsConflictFreeAtItsTrans) {
  const char *src = R"(
kernel transpose(x: *f16, y: *f16, M: i32, N: i32, const B: i32 = 64) {
    let rm = program_id(0) * B + arange(B);
    let rn = program_id(1) * B + arange(B);
    let m = (rm[:, None] < M) && (rn[None, :] < N);
    let t = load(x + rm[:, None] * N + rn[None, :], mask: m);
    store(y + rn[:, None] * M + rm[None, :], trans(t), mask: trans(m));
}
)";
  auto dev = tk::Device::open("sim");
  tk::CompileOptions copts;
  copts.emitPtx = false;
  copts.cache = false;
  tk::Kernel k = dev->load(tk::Compiler::compileSource(src, "t.tk", "transpose", copts));
  const int M = 130, N = 67;
  std::vector<uint16_t> x(size_t(M) * N);
  for (size_t i = 0; i < x.size(); ++i) x[i] = uint16_t(i * 2654435761u >> 16);
  tk::Buffer dx = dev->upload(x), dy = dev->upload(std::vector<uint16_t>(x.size(), 0xffff));
  tk::LaunchOptions opts;
  opts.perSite = true;
  tk::LaunchStats s =
      dev->launch(k, {uint32_t((M + 63) / 64), uint32_t((N + 63) / 64)}, {dx, dy, int32_t(M), int32_t(N)}, opts);
  std::vector<uint16_t> y = dev->download<uint16_t>(dy, x.size());
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) ASSERT_EQ(y[size_t(c) * M + r], x[size_t(r) * N + c]) << r << "," << c;
  expectSumsMatchTotals(s);
  int sharedSites = 0;
  for (const tk::SiteStats &site : s.sites) {
    if (site.kind.rfind("shared", 0) != 0 || site.requests == 0) continue;
    ++sharedSites;
    EXPECT_EQ(site.loc, "t.tk:7:46") << site.kind;  // trans(t)
    EXPECT_LE(double(site.wavefronts) / double(site.requests), 1.1) << site.kind << " at " << site.loc;
  }
  EXPECT_EQ(sharedSites, 2);  // the conversion's store and load
}
