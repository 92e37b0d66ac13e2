// tests/kernels/atomics.tk on the sim: atomics happen once per element, old
// values come back, colliding updates from many programs all land.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "tk/runtime.h"
#include "TestSeed.h"

namespace {
const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/atomics.tk";
}

TEST(Atomics, HistogramCountsEveryElementOnce) {
  auto dev = tk::Device::open("sim");
  tk::Bundle b = tk::Compiler::compileFile(kFile, "histogram");
  tk::Kernel k = dev->load(b);
  std::mt19937 rng(tk::test::testSeed());
  for (int n : {1, 781, 98433}) {
    const int nbins = 37;
    std::vector<int32_t> x(n);
    for (auto &v : x) v = int32_t(rng() % nbins);
    tk::Buffer dx = dev->upload(x), bins = dev->upload(std::vector<int32_t>(nbins, 0)),
               olds = dev->upload(std::vector<int32_t>(n, -1));
    (*dev)(k, {uint32_t((n + 255) / 256)}, dx, bins, olds, int32_t(n));
    auto got = dev->download<int32_t>(bins, nbins);
    auto old = dev->download<int32_t>(olds, n);
    std::vector<int32_t> want(nbins, 0);
    for (int32_t v : x) want[v]++;
    EXPECT_EQ(got, want) << n;
    // The old values of one bin are exactly 0, 1, ..., count - 1.
    std::vector<std::vector<int32_t>> perBin(nbins);
    for (int i = 0; i < n; ++i) perBin[x[i]].push_back(old[i]);
    for (int bin = 0; bin < nbins; ++bin) {
      std::sort(perBin[bin].begin(), perBin[bin].end());
      for (size_t j = 0; j < perBin[bin].size(); ++j) ASSERT_EQ(perBin[bin][j], int32_t(j)) << "bin " << bin;
    }
  }
}

TEST(Atomics, ScalarAndReplicatedUpdatesHappenOnce) {
  auto dev = tk::Device::open("sim");
  tk::Bundle b = tk::Compiler::compileFile(kFile, "total_and_max");
  tk::Kernel k = dev->load(b);
  std::mt19937 rng(tk::test::testSeed());
  std::uniform_real_distribution<float> d(-1, 1);
  for (int n : {1, 781, 1023, 98433}) {
    std::vector<float> x(n);
    std::vector<int32_t> v(n);
    for (float &f : x) f = d(rng);
    for (auto &i : v) i = int32_t(rng() % 2000000) - 1000000;
    tk::Buffer dx = dev->upload(x), dv = dev->upload(v), total = dev->upload(std::vector<float>{0.0f}),
               best = dev->upload(std::vector<int32_t>{-2147483647});
    (*dev)(k, {uint32_t((n + 511) / 512)}, dx, dv, total, best, int32_t(n));
    double ref = 0, mag = 0;
    for (float f : x) ref += f, mag += std::fabs(f);
    EXPECT_NEAR(dev->download<float>(total, 1)[0], ref, 1e-5 * mag + 1e-6) << n;
    EXPECT_EQ(dev->download<int32_t>(best, 1)[0], *std::max_element(v.begin(), v.end())) << n;
  }
}

TEST(Atomics, CompareAndSwapClaimsEachSlotOnce) {
  auto dev = tk::Device::open("sim");
  tk::Bundle b = tk::Compiler::compileFile(kFile, "claim");
  tk::Kernel k = dev->load(b);
  const int programs = 200, nslots = 16;
  tk::Buffer slots = dev->upload(std::vector<int32_t>(nslots, 0)), seen = dev->upload(std::vector<int32_t>(programs, -1));
  (*dev)(k, {programs}, slots, seen, int32_t(nslots));
  auto s = dev->download<int32_t>(slots, nslots);
  auto w = dev->download<int32_t>(seen, programs);
  for (int slot = 0; slot < nslots; ++slot) {
    ASSERT_GT(s[slot], 0);
    ASSERT_EQ((s[slot] - 1) % nslots, slot);  // claimed by a program that maps to it
    int winners = 0;
    for (int p = slot; p < programs; p += nslots) {
      if (w[p] == 0) {
        ++winners;
        EXPECT_EQ(s[slot], p + 1);
      } else {
        EXPECT_EQ(w[p], s[slot]);  // every loser saw the winner
      }
    }
    EXPECT_EQ(winners, 1) << slot;
  }
}

// Scalar atomics are made once per program: a grid's max and min of f32 and
// f64 (mixed signs) and an xchg chain through one word, whose olds are every
// program's id but one, plus the initial 0.
template <class T>
void scalarOps(tk::Device &dev, std::mt19937 &rng) {
  tk::CompileOptions o;
  o.defines = {{"T", std::is_same_v<T, float> ? "f32" : "f64"}};
  tk::Kernel k = dev.load(tk::Compiler::compileFile(kFile, "scalar_ops", o));
  std::uniform_real_distribution<double> d(-100, 100);
  for (int n : {1, 781, 1023, 98433}) {
    std::vector<T> x(n);
    for (T &v : x) v = T(d(rng));
    const int programs = (n + 127) / 128;
    tk::Buffer dx = dev.upload(x), best = dev.upload(std::vector<T>{-std::numeric_limits<T>::infinity()}),
               worst = dev.upload(std::vector<T>{std::numeric_limits<T>::infinity()}),
               chain = dev.upload(std::vector<int32_t>{0}), olds = dev.upload(std::vector<int32_t>(programs, -1));
    dev(k, {uint32_t(programs)}, dx, best, worst, chain, olds, int32_t(n));
    EXPECT_EQ(dev.download<T>(best, 1)[0], *std::max_element(x.begin(), x.end())) << n;
    EXPECT_EQ(dev.download<T>(worst, 1)[0], *std::min_element(x.begin(), x.end())) << n;
    std::vector<int32_t> seen = dev.download<int32_t>(olds, programs);
    seen.push_back(dev.download<int32_t>(chain, 1)[0]);
    std::sort(seen.begin(), seen.end());
    for (int i = 0; i <= programs; ++i) ASSERT_EQ(seen[i], i) << n;  // 0 (the start), then each program once
  }
}

TEST(Atomics, ScalarFloatMaxMinAndXchgChain) {
  auto dev = tk::Device::open("sim");
  std::mt19937 rng(tk::test::testSeed());
  scalarOps<float>(*dev, rng);
  scalarOps<double>(*dev, rng);
}

// A spin lock with Triton's defaults: the lock's acquire and release keep
// each program's plain load and store of `counter` inside it, though the
// sim's workers run programs concurrently on the host.
TEST(Atomics, SpinLockSerialisesPlainReadModifyWrite) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "locked_increment"));
  const int programs = 300;
  tk::Buffer lock = dev->upload(std::vector<int32_t>{0}), counter = dev->upload(std::vector<int32_t>(64, 0));
  (*dev)(k, {programs}, lock, counter);
  EXPECT_EQ(dev->download<int32_t>(counter, 64), std::vector<int32_t>(64, programs));
  EXPECT_EQ(dev->download<int32_t>(lock, 1)[0], 0);
}
