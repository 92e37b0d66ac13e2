// tk-demo's similarity seed: out[i, j] = #{s : |x[s, i] - y[s, j]| < 1}, the
// fused kernel (stdlib/similarity.tk) beside the op-by-op pipeline an eager
// framework runs, with its [n_samples, n_dim, n_dim] intermediates.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "demo.h"
#include "tk/runtime.h"

namespace {

// similarity: out[i, j] = #{s : |x[s, i] - y[s, j]| < 1} for x, y of shape
// [n_samples, n_dim]. The reference takes the kernel's f32 steps, so counts
// must match exactly. About 3 s at the seed's shape here.
std::vector<int32_t> similarityReference(const std::vector<float> &x, const std::vector<float> &y, int nSamples,
                                         int nDim) {
  std::vector<int32_t> ref(size_t(nDim) * nDim);
  for (int i = 0; i < nDim; ++i) {
    int32_t *row = &ref[size_t(i) * nDim];
    for (int s = 0; s < nSamples; ++s) {
      const float xi = x[size_t(s) * nDim + i], *ys = &y[size_t(s) * nDim];
      for (int j = 0; j < nDim; ++j) row[j] += std::fabs(xi - ys[j]) < 1.0f;
    }
  }
  return ref;
}

// Counts that differ from the reference, and the relative error (0 when
// every count matches).
struct SimilarityCheck {
  uint64_t mismatches = 0;
  double relErr = 0;
};

SimilarityCheck checkSimilarity(const std::vector<int32_t> &got, const std::vector<int32_t> &ref) {
  SimilarityCheck c;
  double err = 0, norm = 0;
  for (size_t e = 0; e < ref.size(); ++e) {
    const double g = got[e], r = ref[e];
    c.mismatches += g != r;
    err += (g - r) * (g - r);
    norm += r * r;
  }
  c.relErr = norm > 0 ? std::sqrt(err / norm) : std::sqrt(err);
  return c;
}

struct SimilarityInput {
  int nSamples, nDim;
  std::vector<float> x, y;
};

SimilarityInput similarityInput(int nSamples, int nDim) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> dist(-2, 2);  // 7/16 of pairs within 1: counts spread
  SimilarityInput in{nSamples, nDim, std::vector<float>(size_t(nSamples) * nDim),
                     std::vector<float>(size_t(nSamples) * nDim)};
  for (float &f : in.x) f = dist(rng);
  for (float &f : in.y) f = dist(rng);
  return in;
}

struct SimilarityRun {
  explicit SimilarityRun(std::string n) : name(std::move(n)) {}
  std::string name;
  std::vector<int32_t> out;
  uint64_t bytes = 0, sectorBytes = 0, loadRequests = 0, loadSectors = 0;
  int launches = 0;
  bool counted = true;  // false on a GPU, where nothing counts bytes
  size_t peak = 0;
  double ms = 0;
  void add(const tk::LaunchStats &s) {
    counted &= s.counted;
    bytes += s.bytesMoved();
    sectorBytes += (s.loadSectors + s.storeSectors) * 32;
    loadRequests += s.loadRequests;
    loadSectors += s.loadSectors;
    launches += 1;
  }
};

// stdlib/similarity.tk: one launch over the 2-D grid of 64 x 64 output tiles;
// device memory holds the inputs and the [n_dim, n_dim] counts only.
SimilarityRun similarityFused(tk::Device &dev, const SimilarityInput &in) {
  SimilarityRun run{"similarity_fused"};
  tk::Kernel k = dev.load(tk::Compiler::compileFile(TK_STDLIB_DIR "/similarity.tk", "similarity"));
  const int64_t bi = k.bundle().constInt("BLOCK_I"), bj = k.bundle().constInt("BLOCK_J");
  dev.resetPeakBytes();
  const size_t before = dev.liveBytes();
  auto t0 = std::chrono::steady_clock::now();
  tk::Buffer dx = dev.upload(in.x), dy = dev.upload(in.y);
  tk::Buffer out = dev.upload(std::vector<int32_t>(size_t(in.nDim) * in.nDim, -1));
  run.add(dev(k, {uint32_t((in.nDim + bi - 1) / bi), uint32_t((in.nDim + bj - 1) / bj)}, dx, dy, out,
              int32_t(in.nSamples), int32_t(in.nDim)));
  run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  run.out = dev.download<int32_t>(out, size_t(in.nDim) * in.nDim);
  run.peak = dev.peakBytes() - before;
  return run;
}

// What an eager framework runs for `(abs(x[:, :, None] - y[:, None, :]) < 1).sum(0)`:
// four launches of examples/similarity_ops.tk, each writing a new buffer, and
// each temporary freed once the next op has consumed it (as a reference count
// drops), so the peak holds two [n_samples, n_dim, n_dim] buffers at once.
SimilarityRun similarityOpByOp(tk::Device &dev, const SimilarityInput &in) {
  SimilarityRun run{"similarity_op_by_op"};
  const std::string ops = TK_EXAMPLES_DIR "/similarity_ops.tk";
  tk::Kernel sub = dev.load(tk::Compiler::compileFile(ops, "broadcast_sub"));
  tk::Kernel absK = dev.load(tk::Compiler::compileFile(ops, "abs_op"));
  tk::Kernel less = dev.load(tk::Compiler::compileFile(ops, "less_than_op"));
  tk::Kernel sum = dev.load(tk::Compiler::compileFile(ops, "sum_axis0_i8"));
  const int32_t d = in.nDim, pairs = d * d, elems = in.nSamples * pairs;
  const uint32_t elemBlocks = uint32_t((int64_t(elems) + 1023) / 1024);
  const int64_t bi = sub.bundle().constInt("BLOCK_I"), bj = sub.bundle().constInt("BLOCK_J");
  dev.resetPeakBytes();
  const size_t before = dev.liveBytes();
  auto t0 = std::chrono::steady_clock::now();
  tk::Buffer dx = dev.upload(in.x), dy = dev.upload(in.y);
  tk::Buffer diff = dev.alloc(size_t(elems) * 4);
  run.add(dev(sub, {uint32_t((d + bi - 1) / bi), uint32_t((d + bj - 1) / bj), uint32_t(in.nSamples)}, dx, dy, diff,
              d));
  tk::Buffer absDiff = dev.alloc(size_t(elems) * 4);
  run.add(dev(absK, {elemBlocks}, diff, absDiff, elems));
  diff = tk::Buffer();
  tk::Buffer flags = dev.alloc(size_t(elems));
  run.add(dev(less, {elemBlocks}, absDiff, flags, elems, 1.0f));
  absDiff = tk::Buffer();
  tk::Buffer out = dev.upload(std::vector<int32_t>(size_t(pairs), -1));
  run.add(dev(sum, {uint32_t((pairs + 1023) / 1024)}, flags, out, int32_t(in.nSamples), pairs));
  flags = tk::Buffer();
  run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  run.out = dev.download<int32_t>(out, size_t(pairs));
  run.peak = dev.peakBytes() - before;
  return run;
}

// Prints and reports similarity runs at one shape; true when every run matches
// the reference exactly (and, given two runs, each other everywhere).
bool reportSimilarity(tk::Device &dev, nlohmann::json &report, const SimilarityInput &in,
                      const std::vector<SimilarityRun> &runs) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<int32_t> ref = similarityReference(in.x, in.y, in.nSamples, in.nDim);
  const double refMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t ideal = (2 * uint64_t(in.nSamples) * in.nDim + uint64_t(in.nDim) * in.nDim) * 4;
  const uint64_t intermediate = uint64_t(in.nSamples) * in.nDim * in.nDim * 4;
  std::printf("\nsimilarity, n_samples %d x n_dim %d (one f32 [n, d, d] intermediate: %llu bytes)\n", in.nSamples,
              in.nDim, static_cast<unsigned long long>(intermediate));
  std::printf("%-22s %9s %11s %14s %8s %14s %8s %10s %14s %9s\n", "pipeline", "launches", "mismatches",
              "bytes_moved", "x ideal", "sector_bytes", "x ideal", "ld sec/req", "peak_bytes", "ms");
  bool ok = true;
  for (const SimilarityRun &run : runs) {
    const SimilarityCheck c = checkSimilarity(run.out, ref);
    ok &= c.mismatches == 0;
    const double sec = run.loadRequests ? double(run.loadSectors) / run.loadRequests : 0;
    std::printf("%-22s %9d %11llu %14llu %8.2f %14llu %8.2f %10.2f %14zu %9.1f%s\n", run.name.c_str(), run.launches,
                static_cast<unsigned long long>(c.mismatches), static_cast<unsigned long long>(run.bytes),
                double(run.bytes) / ideal, static_cast<unsigned long long>(run.sectorBytes),
                double(run.sectorBytes) / ideal, sec, run.peak, run.ms, c.mismatches ? "  <-- FAILED" : "");
    report.push_back({{"kernel", run.name},
                      {"device", dev.name()},
                      {"n_samples", in.nSamples},
                      {"n_dim", in.nDim},
                      {"rel_err", c.relErr},
                      {"mismatches", c.mismatches},
                      {"bytes_moved", run.bytes},
                      {"sector_bytes", run.sectorBytes},
                      {"bytes_counted", run.counted},
                      {"ideal_bytes", ideal},
                      {"load_sectors_per_request", sec},
                      {"launches", run.launches},
                      {"peak_device_bytes", run.peak},
                      {"ms", run.ms},
                      {"ok", c.mismatches == 0}});
  }
  std::printf("counts compared exactly with a CPU reference (%.0f ms); ideal = x, y and the output once\n", refMs);
  if (runs.size() == 2) {
    const bool same = runs[0].out == runs[1].out;
    ok &= same;
    std::printf("the two outputs %s everywhere; op by op moves %.1fx the bytes, peak memory %.1fx\n",
                same ? "agree exactly" : "DIFFER", double(runs[1].bytes) / runs[0].bytes,
                double(runs[1].peak) / runs[0].peak);
    report.back()["outputs_equal_to_fused"] = same;
  }
  return ok;
}

// The fused kernel at n_dim 2000 with `samples` samples (the seed's shape,
// 256, takes 30-60 s on the 2-core sim here; --similarity-samples 128 halves
// it), then both pipelines at 256 x 250, where the [n, d, d] intermediates fit
// (64 MB each). `full` false: small shapes for the quick test.
}  // namespace

bool demoSimilarity(tk::Device &dev, nlohmann::json &report, bool full, int samples) {
  bool ok = true;
  {
    SimilarityInput in = similarityInput(full ? samples : 16, full ? 2000 : 130);
    std::vector<SimilarityRun> runs{similarityFused(dev, in)};
    ok &= reportSimilarity(dev, report, in, runs);
    if (full && samples != 256)
      report.back()["note"] = "n_samples " + std::to_string(samples) +
                              " instead of the seed's 256 (--similarity-samples)";
  }
  {  // both pipelines where the [n, d, d] intermediates fit
    SimilarityInput in = similarityInput(full ? 256 : 8, full ? 250 : 70);
    std::vector<SimilarityRun> runs{similarityFused(dev, in), similarityOpByOp(dev, in)};
    ok &= reportSimilarity(dev, report, in, runs);
  }
  return ok;
}
