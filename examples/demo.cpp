// tk-demo: compiles the stdlib's elementwise kernels, runs them on the
// default device at a realistic size, checks each against a double-precision
// CPU reference and reports traffic. `make demo` runs it; it writes
// build/demo-report.json.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tk/runtime.h"

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

}  // namespace

int main(int argc, char **argv) {
  std::string reportPath;
  int log2n = 22;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--report" && i + 1 < argc) reportPath = argv[++i];
    else if (a == "--log2n" && i + 1 < argc) log2n = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: tk-demo [--report FILE] [--log2n K]\n");
      return 1;
    }
  }
  if (log2n < 0 || log2n > 28) {
    std::fprintf(stderr, "tk-demo: --log2n must be in [0, 28]\n");
    return 1;
  }
  const int n = 1 << log2n;

  try {
    auto dev = tk::Device::open();
    std::printf("tk demo on %s, n = %d (2^%d) f32 elements\n\n", dev->name().c_str(), n, log2n);

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
