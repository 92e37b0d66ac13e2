// tk-tune-bench: the autotuner's costs. A 50-config sweep's compile phase
// with one compile at a time against --jobs 2 (each variant compiled for
// real: a fresh cache), a `tkc tune` of the same space answered by the
// tuning cache (the whole process), and a tk::Compiler compile-cache hit.
// Figures go to docs/perf.md with this command.
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tk/tune.h"

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string freshDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "tk-tune-bench-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw tk::Error("mkdtemp failed");
  return tmpl;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

const char *kFile = TK_STDLIB_DIR "/elementwise.tk";
const int kN = 1 << 20;

// sincos_chain: CHAIN x BLOCK x num_warps = 2 x 5 x 5 = 50 distinct variants.
tk::TuneSpace space50() {
  tk::TuneSpace s;
  for (int chain : {2, 4})
    for (int block : {128, 256, 512, 1024, 2048})
      for (int warps : {1, 2, 4, 8, 16}) {
        tk::TuneConfig c;
        c.consts = {{"CHAIN", std::to_string(chain)}, {"BLOCK", std::to_string(block)}};
        c.numWarps = warps;
        s.configs.push_back(c);
      }
  s.key = {"n"};
  return s;
}

// The wall time of the compile phase of a sweep (until the last variant is compiled).
double sweepCompileMs(tk::Device &dev, int jobs, const std::vector<tk::Arg> &args, int *compiled) {
  const std::string dir = freshDir();
  tk::TuneOptions o;
  o.cacheDir = dir;
  o.compile.cacheDir = dir;
  o.jobs = jobs;
  Clock::time_point t0 = Clock::now();
  double compileMs = 0;
  o.progress = [&](int done, int total, const std::string &what) {
    if (what.rfind("compiled", 0) == 0 && done == total) compileMs = msSince(t0);
  };
  tk::Tuner t(dev, kFile, "sincos_chain", space50(), o);
  tk::TuneReport r = t.tune([](const tk::Bundle &b) { return tk::Dim3{uint32_t((kN + b.constInt("BLOCK") - 1) / b.constInt("BLOCK"))}; }, args);
  *compiled = r.compiled;
  std::filesystem::remove_all(dir);
  return compileMs;
}

}  // namespace

int main(int argc, char **argv) {
  try {
    auto dev = tk::Device::open("sim");
    tk::Buffer x = dev->alloc(size_t(kN) * 4), out = dev->alloc(size_t(kN) * 4);
    std::vector<tk::Arg> args = {x, out, int32_t(kN)};
    std::printf("tk-tune-bench on %s, %u cores\n\n", dev->name().c_str(), std::max(1u, std::thread::hardware_concurrency()));

    // Warm up what every compile shares once per process (target
    // registration, the libdevice buffer) so neither sweep pays it alone.
    tk::CompileOptions warm;
    warm.cache = false;
    warm.ptxasResources = true;
    tk::Compiler::compileFile(kFile, "sincos_chain", warm);

    int compiled1 = 0, compiled2 = 0;
    double serial = sweepCompileMs(*dev, 1, args, &compiled1);
    double parallel = sweepCompileMs(*dev, 2, args, &compiled2);
    std::printf("50-config sweep of sincos_chain, compile phase (fresh cache, %d and %d variants compiled):\n", compiled1,
                compiled2);
    std::printf("  --jobs 1  %8.0f ms\n  --jobs 2  %8.0f ms  (%.2fx)\n\n", serial, parallel, serial / parallel);

    // tkc tune of the same space, warm cache, as a whole process.
    if (argc > 1) {
      const std::string tkc = argv[1], dir = freshDir();
      std::string cmd = tkc + " tune " + kFile + " -k sincos_chain --grid 'cdiv(n, BLOCK)' --arg x=f32[" +
                        std::to_string(kN) + "]:rand --arg out=f32[" + std::to_string(kN) + "]:zeros --arg n=" +
                        std::to_string(kN) + " --cache-dir " + dir;
      for (const tk::TuneConfig &c : space50().configs) cmd += " --config " + c.str();
      cmd += " > /dev/null 2>&1";
      if (std::system(cmd.c_str()) != 0) throw tk::Error("tkc tune failed: " + cmd);
      std::vector<double> times;
      for (int i = 0; i < 10; ++i) {
        Clock::time_point t0 = Clock::now();
        if (std::system(cmd.c_str()) != 0) throw tk::Error("tkc tune failed");
        times.push_back(msSince(t0));
      }
      std::printf("tkc tune, 50 configs, every one from the tuning cache (whole process, 10 runs):\n");
      std::printf("  min %.1f ms, median %.1f ms, max %.1f ms\n\n", *std::min_element(times.begin(), times.end()),
                  median(times), *std::max_element(times.begin(), times.end()));
      std::filesystem::remove_all(dir);
    }

    // tk::Compiler: the second compile of a stdlib kernel reads the cache.
    const std::string dir = freshDir();
    tk::CompileOptions co;
    co.cacheDir = dir;
    Clock::time_point t0 = Clock::now();
    tk::Compiler::compileFile(TK_STDLIB_DIR "/normalization.tk", "softmax", co);
    double miss = msSince(t0);
    std::vector<double> hits;
    for (int i = 0; i < 20; ++i) {
      t0 = Clock::now();
      tk::Compiler::compileFile(TK_STDLIB_DIR "/normalization.tk", "softmax", co);
      hits.push_back(msSince(t0));
    }
    std::printf("tk::Compiler::compileFile(normalization.tk, softmax, sm_80):\n");
    std::printf("  compile %.1f ms; compile-cache hit median %.2f ms (min %.2f, 20 runs)\n", miss, median(hits),
                *std::min_element(hits.begin(), hits.end()));
    std::filesystem::remove_all(dir);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tk-tune-bench: error: %s\n", e.what());
    return 1;
  }
}
