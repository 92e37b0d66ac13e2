// tk-demo: compiles the stdlib's kernels, runs them on the default device at
// a realistic size, checks each against a CPU reference and reports traffic,
// and sets the fused kernels (complex_activation, the Puzzler, similarity)
// beside the op-by-op pipelines an eager framework would launch. `make demo`
// runs it; it writes build/demo-report.json.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "demo.h"
#include "tk/runtime.h"
#include "tk/tune.h"

namespace {

struct Case {
  std::string kernel;
  int inputs;                                        // f32 input arrays, then one f32 output
  std::function<double(double, double)> reference;  // of x (and y)
};

double gelu(double x) { return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

double sincosChain(double x, int chain) {
  for (int i = 0; i < chain; ++i) x = (i % 2 == 0) ? std::sin(x) : std::cos(x);
  return x;
}

// The Puzzler at the seed's size: 16 features x batch 1024 x dim 256. The
// fused kernel against the op-by-op pipeline of `split_stack` (per feature
// layernorm and tanh, then stack, linear and relu, each its own launch).
bool puzzler(tk::Device &dev, nlohmann::json &report, int features, int batch, int dim) {
  const int rows = features * batch;
  const size_t n = size_t(rows) * dim;
  const float eps = 1e-5f, bias = 0.1f;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-2, 2);
  std::vector<float> x(n), w(dim);
  for (float &f : x) f = dist(rng);
  for (float &f : w) f = dist(rng) * 0.1f;

  // Reference in double.
  std::vector<double> ref(rows);
  for (int r = 0; r < rows; ++r) {
    const float *row = &x[size_t(r) * dim];
    double mean = 0, var = 0;
    for (int c = 0; c < dim; ++c) mean += row[c];
    mean /= dim;
    for (int c = 0; c < dim; ++c) var += (row[c] - mean) * (row[c] - mean);
    double rstd = 1 / std::sqrt(var / dim + eps), y = bias;
    for (int c = 0; c < dim; ++c) y += std::tanh((row[c] - mean) * rstd) * w[c];
    ref[r] = std::max(0.0, y);
  }
  auto relErr = [&](const std::vector<float> &got) {
    double err = 0, norm = 0;
    for (int r = 0; r < rows; ++r) err += (got[r] - ref[r]) * (got[r] - ref[r]), norm += ref[r] * ref[r];
    return std::sqrt(err / norm);
  };
  tk::CompileOptions rowOpts;
  rowOpts.defines = {{"BLOCK_D", std::to_string(dim)}};
  auto programs = [](int rows, const tk::Kernel &k) {
    const int64_t br = k.bundle().constInt("BLOCK_R");
    return uint32_t((rows + br - 1) / br);
  };

  struct Run {
    Run(std::string n) : name(std::move(n)) {}
    std::string name;
    std::vector<float> out;
    uint64_t bytes = 0;
    int launches = 0;
    size_t peak = 0;
    double ms = 0;
  };
  auto add = [](Run &run, const tk::LaunchStats &s) {
    run.bytes += s.bytesMoved();
    run.launches += 1;
  };
  std::vector<Run> runs;

  {  // fused: one launch
    Run run{"puzzler_fused"};
    tk::Kernel k = dev.load(tk::Compiler::compileFile(TK_STDLIB_DIR "/normalization.tk", "layernorm_tanh_linear_relu", rowOpts));
    dev.resetPeakBytes();
    size_t before = dev.liveBytes();
    auto t0 = std::chrono::steady_clock::now();
    tk::Buffer dx = dev.upload(x), dw = dev.upload(w), out = dev.upload(std::vector<float>(rows, NAN));
    add(run, dev(k, {programs(rows, k)}, dx, dw, bias, out, int32_t(rows), int32_t(dim), eps));
    run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    run.out = dev.download<float>(out, rows);
    run.peak = dev.peakBytes() - before;
    runs.push_back(std::move(run));
  }
  {  // op by op
    Run run{"puzzler_op_by_op"};
    const std::string ops = TK_EXAMPLES_DIR "/split_stack.tk";
    tk::Kernel layernorm = dev.load(tk::Compiler::compileFile(ops, "layernorm_rows", rowOpts));
    tk::Kernel tanhK = dev.load(tk::Compiler::compileFile(ops, "tanh_op"));
    tk::Kernel copy = dev.load(tk::Compiler::compileFile(ops, "copy_op"));
    tk::Kernel linear = dev.load(tk::Compiler::compileFile(ops, "linear_rows", rowOpts));
    tk::Kernel relu = dev.load(tk::Compiler::compileFile(ops, "relu_op"));
    dev.resetPeakBytes();
    size_t before = dev.liveBytes();
    auto t0 = std::chrono::steady_clock::now();
    const size_t featureElems = size_t(batch) * dim;
    const uint32_t featureBlocks = uint32_t((featureElems + 1023) / 1024);
    tk::Buffer dx = dev.upload(x), dw = dev.upload(w);
    std::vector<tk::Buffer> normed, activated;
    for (int f = 0; f < features; ++f) {
      tk::Buffer xf = dx.offset(size_t(f) * featureElems * 4);
      normed.push_back(dev.alloc(featureElems * 4));
      add(run, dev(layernorm, {programs(batch, layernorm)}, xf, normed.back(), int32_t(batch), int32_t(dim), eps));
      activated.push_back(dev.alloc(featureElems * 4));
      add(run, dev(tanhK, {featureBlocks}, normed.back(), activated.back(), int32_t(featureElems)));
    }
    tk::Buffer stacked = dev.alloc(n * 4);
    for (int f = 0; f < features; ++f)
      add(run, dev(copy, {featureBlocks}, activated[f], stacked.offset(size_t(f) * featureElems * 4),
                   int32_t(featureElems)));
    tk::Buffer y = dev.alloc(size_t(rows) * 4), out = dev.upload(std::vector<float>(rows, NAN));
    add(run, dev(linear, {programs(rows, linear)}, stacked, dw, bias, y, int32_t(rows), int32_t(dim)));
    add(run, dev(relu, {uint32_t((rows + 1023) / 1024)}, y, out, int32_t(rows)));
    run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    run.out = dev.download<float>(out, rows);
    run.peak = dev.peakBytes() - before;
    runs.push_back(std::move(run));
  }

  double agree = 0;
  for (int r = 0; r < rows; ++r) agree = std::max(agree, double(std::fabs(runs[0].out[r] - runs[1].out[r])));
  const uint64_t ideal = uint64_t(n + dim + rows) * 4;  // x, w and the output once
  std::printf("\nthe Puzzler (per feature layernorm -> tanh, then stack -> linear -> relu: the pipeline an A100 ran\n"
              "8-10x faster fused), %d features x batch %d x dim %d (%d rows), fused against op by op\n",
              features, batch, dim, rows);
  std::printf("%-20s %9s %10s %14s %8s %14s %9s\n", "pipeline", "launches", "rel_err", "bytes_moved", "x ideal",
              "peak_bytes", "ms");
  bool ok = true;
  for (const Run &run : runs) {
    double rel = relErr(run.out);
    ok &= rel < 1e-5;
    std::printf("%-20s %9d %10.2e %14llu %8.2f %14zu %9.1f\n", run.name.c_str(), run.launches, rel,
                static_cast<unsigned long long>(run.bytes), double(run.bytes) / ideal, run.peak, run.ms);
    report.push_back({{"kernel", run.name},
                      {"device", dev.name()},
                      {"rel_err", rel},
                      {"bytes_moved", run.bytes},
                      {"ideal_bytes", ideal},
                      {"launches", run.launches},
                      {"peak_device_bytes", run.peak},
                      {"ms", run.ms},
                      {"ok", rel < 1e-5}});
  }
  std::printf("the two outputs agree to %.2e (max abs difference); op by op moves %.1fx the bytes in %dx the launches\n",
              agree, double(runs[1].bytes) / runs[0].bytes, runs[1].launches / runs[0].launches);
  report.back()["max_abs_diff_vs_fused"] = agree;
  return ok && agree < 1e-4;
}

// complex_activation fused (one launch) against six single-op kernels.
bool complexActivationOpByOp(tk::Device &dev, nlohmann::json &report, int n) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-4, 4);
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = dist(rng), y[i] = dist(rng);
  const std::string ops = TK_EXAMPLES_DIR "/split_stack.tk";
  tk::Kernel sinK = dev.load(tk::Compiler::compileFile(ops, "sin_op"));
  tk::Kernel cosK = dev.load(tk::Compiler::compileFile(ops, "cos_op"));
  tk::Kernel mul = dev.load(tk::Compiler::compileFile(ops, "mul_op"));
  tk::Kernel add = dev.load(tk::Compiler::compileFile(ops, "add_op"));
  tk::Kernel relu = dev.load(tk::Compiler::compileFile(ops, "relu_op"));
  tk::Kernel fused = dev.load(tk::Compiler::compileFile(TK_STDLIB_DIR "/elementwise.tk", "complex_activation"));
  const uint32_t grid = uint32_t((n + 1023) / 1024);
  const int32_t nn = n;

  dev.resetPeakBytes();
  size_t before = dev.liveBytes();
  tk::Buffer dx = dev.upload(x), dy = dev.upload(y), out = dev.alloc(size_t(n) * 4);
  tk::LaunchStats f = dev(fused, {grid}, dx, dy, out, nn);
  std::vector<float> fusedOut = dev.download<float>(out, n);
  size_t fusedPeak = dev.peakBytes() - before;

  dev.resetPeakBytes();
  before = dev.liveBytes();
  uint64_t bytes = 0;
  int launches = 0;
  auto run = [&](const tk::LaunchStats &s) {
    bytes += s.bytesMoved();
    ++launches;
  };
  tk::Buffer s = dev.alloc(size_t(n) * 4), c = dev.alloc(size_t(n) * 4), t = dev.alloc(size_t(n) * 4);
  run(dev(sinK, {grid}, dx, s, nn));
  run(dev(cosK, {grid}, dy, c, nn));
  run(dev(mul, {grid}, s, c, t, nn));   // t = sin(x) cos(y)
  run(dev(add, {grid}, t, dx, s, nn));  // s = t + x
  run(dev(mul, {grid}, s, dy, c, nn));  // c = s * y
  run(dev(relu, {grid}, c, t, nn));
  std::vector<float> opOut = dev.download<float>(t, n);
  // The inputs were uploaded before this phase: count them too.
  size_t opPeak = dev.peakBytes() - before + 2 * size_t(n) * 4;

  double agree = 0;
  for (int i = 0; i < n; ++i) agree = std::max(agree, double(std::fabs(fusedOut[i] - opOut[i])));
  const uint64_t ideal = uint64_t(n) * 12;
  std::printf("\ncomplex_activation, n = %d, fused against six single-op kernels\n", n);
  std::printf("%-28s %9s %14s %8s %14s\n", "pipeline", "launches", "bytes_moved", "x ideal", "peak_bytes");
  std::printf("%-28s %9d %14llu %8.2f %14zu\n", "complex_activation_fused", 1,
              static_cast<unsigned long long>(f.bytesMoved()), double(f.bytesMoved()) / ideal, fusedPeak);
  std::printf("%-28s %9d %14llu %8.2f %14zu\n", "complex_activation_op_by_op", launches,
              static_cast<unsigned long long>(bytes), double(bytes) / ideal, opPeak);
  std::printf("the two outputs agree to %.2e (max abs difference)\n", agree);
  report.push_back({{"kernel", "complex_activation_op_by_op"},
                    {"device", dev.name()},
                    {"bytes_moved", bytes},
                    {"ideal_bytes", ideal},
                    {"launches", launches},
                    {"peak_device_bytes", opPeak},
                    {"max_abs_diff_vs_fused", agree},
                    {"ok", agree < 1e-5}});
  return agree < 1e-5;
}

// The autotuner on the default device: complex_activation at n and softmax at
// 1823 x 781, each over the @tune space its stdlib file declares, then run
// through Tuner::launch (the tuned config, as @triton.autotune would pick
// it) and checked against a CPU reference in double.
bool autotune(tk::Device &dev, nlohmann::json &report, int n) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  bool allOk = true;
  auto record = [&](const tk::TuneReport &r, double relErr, bool ok) {
    std::printf("%s", r.table().c_str());
    std::printf("tuned launch: rel_err %.2e%s\n\n", relErr, ok ? "" : "  <-- FAILED");
    const tk::TuneResult &best = r.bestResult();
    report.push_back({{"kernel", r.kernel},
                      {"tuned", true},
                      {"device", r.device},
                      {"measure", r.measure},
                      {"gpu", r.gpu},
                      {"key", r.key},
                      {"best", {{"consts", best.config.consts}, {"num_warps", best.config.numWarps},
                                {"num_stages", best.config.numStages}}},
                      {"best_ms", best.ms},
                      {"configs", r.results.size()},
                      {"compiled", r.compiled},
                      {"timed", r.timed},
                      {"cache_hits", r.cacheHits},
                      {"rel_err", relErr},
                      {"ok", ok}});
    allOk &= ok;
  };

  std::printf("\nautotuning (tkc tune does the same from the command line)\n");
  {
    std::vector<float> x(n), y(n);
    for (float &f : x) f = dist(rng);
    for (float &f : y) f = dist(rng);
    tk::Buffer bx = dev.upload(x), by = dev.upload(y), out = dev.upload(std::vector<float>(n, NAN));
    std::vector<tk::Arg> args = {bx, by, out, int32_t(n)};
    auto grid = [n](const tk::Bundle &b) { return tk::Dim3{uint32_t((n + b.constInt("BLOCK") - 1) / b.constInt("BLOCK"))}; };
    tk::Tuner tuner(dev, TK_STDLIB_DIR "/elementwise.tk", "complex_activation");
    tk::TuneReport r = tuner.tune(grid, args);
    dev.copyToDevice(out, std::vector<float>(n, NAN).data(), size_t(n) * 4);
    tuner.launch(grid, args);
    std::vector<float> got = dev.download<float>(out, n);
    double err = 0, norm = 0;
    for (int i = 0; i < n; ++i) {
      double ref = std::max(0.0, (std::sin(double(x[i])) * std::cos(double(y[i])) + x[i]) * y[i]);
      err += (got[i] - ref) * (got[i] - ref);
      norm += ref * ref;
    }
    const double rel = std::sqrt(err / norm);
    record(r, rel, rel < 1e-5);
  }
  {
    const int rows = 1823, cols = 781;
    std::vector<float> x(size_t(rows) * cols);
    for (float &f : x) f = dist(rng);
    tk::Buffer bx = dev.upload(x), out = dev.upload(std::vector<float>(x.size(), NAN));
    std::vector<tk::Arg> args = {bx, out, int32_t(rows), int32_t(cols)};
    auto grid = [](const tk::Bundle &b) {
      return tk::Dim3{uint32_t((1823 + b.constInt("BLOCK_R") - 1) / b.constInt("BLOCK_R"))};
    };
    tk::Tuner tuner(dev, TK_STDLIB_DIR "/normalization.tk", "softmax");
    tk::TuneReport r = tuner.tune(grid, args);
    dev.copyToDevice(out, std::vector<float>(x.size(), NAN).data(), x.size() * 4);
    tuner.launch(grid, args);
    std::vector<float> got = dev.download<float>(out, x.size());
    double worst = 0;
    for (int row = 0; row < rows; ++row) {
      const float *v = &x[size_t(row) * cols];
      double m = *std::max_element(v, v + cols), sum = 0;
      for (int c = 0; c < cols; ++c) sum += std::exp(v[c] - m);
      for (int c = 0; c < cols; ++c) {
        double ref = std::exp(v[c] - m) / sum;
        double g = got[size_t(row) * cols + c];
        worst = std::max(worst, std::isnan(g) ? 1.0 : std::abs(g - ref) / std::max(ref, 1e-30));
      }
    }
    record(r, worst, worst < 1e-5);
  }
  return allOk;
}

}  // namespace

int main(int argc, char **argv) {
  std::string reportPath;
  int log2n = 22, similaritySamples = 256;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--report" && i + 1 < argc) reportPath = argv[++i];
    else if (a == "--log2n" && i + 1 < argc) log2n = std::atoi(argv[++i]);
    else if (a == "--similarity-samples" && i + 1 < argc) similaritySamples = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: tk-demo [--report FILE] [--log2n K] [--similarity-samples N]\n");
      return 1;
    }
  }
  if (log2n < 0 || log2n > 28) {
    std::fprintf(stderr, "tk-demo: --log2n must be in [0, 28]\n");
    return 1;
  }
  if (similaritySamples < 1 || similaritySamples > 4096) {
    std::fprintf(stderr, "tk-demo: --similarity-samples must be in [1, 4096]\n");
    return 1;
  }
  const int n = 1 << log2n;

  try {
    auto dev = tk::Device::open();
    std::printf("tk demo on %s, n = %d (2^%d) f32 elements\n", dev->name().c_str(), n, log2n);
    std::printf("(ms columns: wall time of the launches on this device%s)\n\n",
                dev->kind() == "sim" ? "; on the sim the host's time simulating them, not a GPU's" : "");

    const int chain = 4;
    std::vector<Case> cases = {
        {"complex_activation", 2,
         [](double x, double y) { return std::max(0.0, (std::sin(x) * std::cos(y) + x) * y); }},
        {"sincos_chain", 1, [&](double x, double) { return sincosChain(x, chain); }},
        {"gelu", 1, [](double x, double) { return gelu(x); }},
    };

    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    nlohmann::json report = nlohmann::json::array();
    bool allOk = true;

    std::printf("%-20s %10s %14s %14s %8s %10s %10s %9s\n", "kernel", "rel_err", "bytes_moved", "ideal_bytes",
                "ratio", "ld sec/req", "st sec/req", "ms");
    for (const Case &c : cases) {
      tk::CompileOptions opts;
      tk::Bundle bundle = tk::Compiler::compileFile(TK_STDLIB_DIR "/elementwise.tk", c.kernel, opts);
      tk::Kernel kernel = dev->load(bundle);

      std::vector<std::vector<float>> in(c.inputs, std::vector<float>(n));
      for (auto &v : in)
        for (float &f : v) f = dist(rng);
      std::vector<tk::Arg> args;
      for (auto &v : in) args.push_back(dev->upload(v));
      tk::Buffer out = dev->upload(std::vector<float>(n, NAN));  // poisoned
      args.push_back(out);
      args.push_back(int32_t(n));

      const int64_t block = bundle.constInt("BLOCK");
      auto t0 = std::chrono::steady_clock::now();
      tk::LaunchStats s = dev->launch(kernel, {uint32_t((n + block - 1) / block)}, args);
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (s.ms > 0) ms = s.ms;
      std::vector<float> result = dev->download<float>(out, n);

      double err = 0, norm = 0;
      for (int i = 0; i < n; ++i) {
        double ref = c.reference(in[0][i], c.inputs > 1 ? in[1][i] : 0.0);
        double d = double(result[i]) - ref;
        err += d * d;
        norm += ref * ref;
      }
      const double rel = std::sqrt(err / norm);
      const uint64_t ideal = uint64_t(c.inputs + 1) * n * sizeof(float);
      // On a GPU nothing counts bytes: a correct kernel moves its ideal bytes.
      const uint64_t moved = s.counted ? s.bytesMoved() : ideal;
      const double ldSec = s.loadRequests ? double(s.loadSectors) / s.loadRequests : 0;
      const double stSec = s.storeRequests ? double(s.storeSectors) / s.storeRequests : 0;
      const bool ok = rel < 1e-5 && !std::isnan(rel);
      allOk &= ok;
      std::printf("%-20s %10.2e %14llu %14llu %8.4f %10.2f %10.2f %9.1f%s\n", c.kernel.c_str(), rel,
                  static_cast<unsigned long long>(moved), static_cast<unsigned long long>(ideal),
                  double(moved) / double(ideal), ldSec, stSec, ms, ok ? "" : "  <-- FAILED");
      report.push_back({{"kernel", c.kernel},
                        {"device", dev->name()},
                        {"n", n},
                        {"rel_err", rel},
                        {"bytes_moved", moved},
                        {"bytes_counted", s.counted},
                        {"ideal_bytes", ideal},
                        {"launches", 1},
                        {"load_sectors_per_request", ldSec},
                        {"store_sectors_per_request", stSec},
                        {"ms", ms},
                        {"ok", ok}});
    }
    allOk &= complexActivationOpByOp(*dev, report, n);
    allOk &= puzzler(*dev, report, 16, log2n >= 22 ? 1024 : 64, 256);
    allOk &= demoSimilarity(*dev, report, log2n >= 22, similaritySamples);
    allOk &= demoMatmul(*dev, report);
    allOk &= demoAttention(*dev, report);
    allOk &= autotune(*dev, report, n);
    if (!reportPath.empty()) {
      std::ofstream f(reportPath);
      f << report.dump(2) << "\n";
      if (!f) throw tk::Error("cannot write " + reportPath);
      std::printf("\nreport: %s\n", reportPath.c_str());
    }
    return allOk ? 0 : 1;
  } catch (const tk::Error &e) {
    std::fprintf(stderr, "tk-demo: error: %s\n", e.what());
    return 1;
  }
}
