// tk-bench: for each stdlib kernel, compile latency, the sim's traffic
// counters at a realistic size against the ideal, and ptxas's registers and
// spills per arch. Figures go to docs/perf.md with the command that made them.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "tk/runtime.h"

namespace {

struct Entry {
  const char *kernel;
  int inputs;  // f32 inputs; one f32 output
};

double medianMs(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

using Rng = std::mt19937;
using Dist = std::uniform_real_distribution<float>;

const Entry kElementwise[] = {{"complex_activation", 2}, {"sincos_chain", 1}, {"gelu", 1}, {"swiglu", 2}};
const std::string kElementwiseFile = TK_STDLIB_DIR "/elementwise.tk";

// Each stage of the report is one function, in the order main runs them.

void compileLatencies() {
  const std::string &file = kElementwiseFile;
  const auto &entries = kElementwise;
  std::printf("compile latency, in process (median of 9), one kernel to PTX for sm_80\n");
  std::printf("%-20s %12s %14s %12s\n", "kernel", "tile IR ms", "PTX ms", "no-libdev ms");
  auto compileLatency = [](const std::string &path, const char *kernel) {
    auto time = [&](tk::CompileOptions o) {
      std::vector<double> ms;
      for (int i = 0; i < 9; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        tk::Compiler::compileFile(path, kernel, o);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      return medianMs(ms);
    };
    // The compile cache off: a cached compile is a file read (~0.7 ms).
    tk::CompileOptions tir, ptx, fast;
    tir.cache = ptx.cache = fast.cache = false;
    tir.emitPtx = false;
    fast.useLibdevice = false;
    std::printf("%-20s %12.1f %14.1f %12.1f\n", kernel, time(tir), time(ptx), time(fast));
  };
  for (const Entry &e : entries) compileLatency(file, e.kernel);
  compileLatency(TK_STDLIB_DIR "/similarity.tk", "similarity");
  compileLatency(TK_STDLIB_DIR "/dropout.tk", "dropout");
  compileLatency(TK_STDLIB_DIR "/loss.tk", "cross_entropy");
  compileLatency(TK_STDLIB_DIR "/rope.tk", "rope");
}

// The elementwise kernels at n = 2^log2n, then dropout.
void elementwiseTraffic(tk::Device &dev, int log2n, Rng &rng, Dist &dist) {
  const int n = 1 << log2n;
  const std::string &file = kElementwiseFile;
  const auto &entries = kElementwise;
  std::printf("\nsim traffic at n = 2^%d, default config (BLOCK 1024, 4 warps)\n", log2n);
  std::printf("%-20s %14s %14s %8s %10s %10s %12s %9s\n", "kernel", "bytes", "ideal", "ratio", "ld sec/req",
              "st sec/req", "smem wf/req", "sim s");
  for (const Entry &e : entries) {
    tk::Bundle b = tk::Compiler::compileFile(file, e.kernel);
    tk::Kernel k = dev.load(b);
    std::vector<tk::Arg> args;
    std::vector<float> host(n);
    for (int i = 0; i < e.inputs; ++i) {
      for (float &f : host) f = dist(rng);
      args.push_back(dev.upload(host));
    }
    args.push_back(dev.alloc(size_t(n) * 4));
    args.push_back(int32_t(n));
    auto t0 = std::chrono::steady_clock::now();
    tk::LaunchStats s = dev.launch(k, {uint32_t(n / b.constInt("BLOCK"))}, args);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t ideal = uint64_t(e.inputs + 1) * n * 4;
    std::printf("%-20s %14llu %14llu %8.4f %10.2f %10.2f %12.2f %9.2f\n", e.kernel,
                static_cast<unsigned long long>(s.bytesMoved()), static_cast<unsigned long long>(ideal),
                double(s.bytesMoved()) / ideal, s.loadRequests ? double(s.loadSectors) / s.loadRequests : 0.0,
                s.storeRequests ? double(s.storeSectors) / s.storeRequests : 0.0,
                s.sharedRequests ? double(s.sharedWavefronts) / s.sharedRequests : 0.0, secs);
  }

  // dropout: one read and one write per element, the mask computed (Philox)
  // rather than read.
  {
    tk::Bundle b = tk::Compiler::compileFile(TK_STDLIB_DIR "/dropout.tk", "dropout");
    tk::Kernel k = dev.load(b);
    std::vector<float> host(n);
    for (float &f : host) f = dist(rng);
    tk::Buffer x = dev.upload(host), out = dev.alloc(size_t(n) * 4);
    auto t0 = std::chrono::steady_clock::now();
    tk::LaunchStats s = dev(k, {uint32_t(n / b.constInt("BLOCK"))}, x, out, int32_t(n), 0.5f, int64_t(1234));
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t ideal = uint64_t(2) * n * 4;
    std::printf("%-20s %14llu %14llu %8.4f %10.2f %10.2f %12.2f %9.2f\n", "dropout",
                static_cast<unsigned long long>(s.bytesMoved()), static_cast<unsigned long long>(ideal),
                double(s.bytesMoved()) / ideal, s.loadRequests ? double(s.loadSectors) / s.loadRequests : 0.0,
                s.storeRequests ? double(s.storeSectors) / s.storeRequests : 0.0,
                s.sharedRequests ? double(s.sharedWavefronts) / s.sharedRequests : 0.0, secs);
  }

}

void crossEntropyTraffic(tk::Device &dev, Rng &rng, Dist &dist) {
  std::printf("\nsim traffic of stdlib/loss.tk, cross_entropy of 64 rows x V 32000 (LLaMA's vocabulary)\n");
  {
    const int rows = 64, V = 32000;
    std::vector<float> host(size_t(rows) * V);
    for (float &f : host) f = dist(rng);
    std::vector<int32_t> targets(rows);
    for (int r = 0; r < rows; ++r) targets[r] = int32_t(rng() % V);
    tk::Buffer x = dev.upload(host), t = dev.upload(targets), loss = dev.alloc(size_t(rows) * 4);
    tk::Bundle b = tk::Compiler::compileFile(TK_STDLIB_DIR "/loss.tk", "cross_entropy");
    tk::Kernel k = dev.load(b);
    const uint32_t programs = uint32_t((rows + b.constInt("BLOCK_R") - 1) / b.constInt("BLOCK_R"));
    auto t0 = std::chrono::steady_clock::now();
    tk::LaunchStats s = dev(k, {programs}, x, t, loss, int32_t(rows), int32_t(V), int32_t(-100));
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Ideal: the logits once, the targets and the losses.
    const uint64_t ideal = uint64_t(rows) * V * 4 + uint64_t(rows) * 8;
    std::printf("%-28s %14s %14s %8s %10s %9s\n", "kernel", "bytes", "ideal", "ratio", "ld sec/req", "sim s");
    std::printf("%-28s %14llu %14llu %8.4f %10.2f %9.2f\n", "cross_entropy", static_cast<unsigned long long>(s.bytesMoved()),
                static_cast<unsigned long long>(ideal), double(s.bytesMoved()) / ideal,
                s.loadRequests ? double(s.loadSectors) / s.loadRequests : 0.0, secs);
  }

}

void ropeTraffic(tk::Device &dev, Rng &rng, Dist &dist) {
  std::printf(
      "\nsim traffic of stdlib/rope.tk, q [2, 512, 32, 128] and k [2, 512, 8, 128] (grouped-query "
      "heads), tables [512, 64]\n");
  {
    const int batch = 2, seq = 512, qHeads = 32, kHeads = 8, D = 128, cols = D / 2;
    tk::CompileOptions o;
    o.defines = {{"D", std::to_string(D)}};
    tk::Bundle b = tk::Compiler::compileFile(TK_STDLIB_DIR "/rope.tk", "rope", o);
    tk::Kernel k = dev.load(b);
    const size_t nq = size_t(batch) * seq * qHeads * D, nk = size_t(batch) * seq * kHeads * D;
    std::vector<float> host(nq);
    for (float &f : host) f = dist(rng);
    tk::Buffer q = dev.upload(host), kk = dev.upload(std::vector<float>(host.begin(), host.begin() + nk));
    tk::Buffer cs = dev.upload(std::vector<float>(size_t(seq) * cols, 0.5f)),
               sn = dev.upload(std::vector<float>(size_t(seq) * cols, 0.25f));
    tk::Buffer qo = dev.alloc(nq * 4), ko = dev.alloc(nk * 4);
    const int64_t bs = b.constInt("BLOCK_S"), bh = b.constInt("BLOCK_H");
    auto t0 = std::chrono::steady_clock::now();
    tk::LaunchStats s = dev(k, {uint32_t((seq + bs - 1) / bs), uint32_t(batch), uint32_t((qHeads + bh - 1) / bh)},
                               q, kk, cs, sn, qo, ko, int32_t(seq), int32_t(qHeads), int32_t(kHeads), int32_t(cols));
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Ideal: q and k read and written once, the tables once per batch.
    const uint64_t ideal = 2 * uint64_t(nq + nk) * 4 + uint64_t(batch) * 2 * seq * cols * 4;
    std::printf("%-28s %14s %14s %8s %10s %10s %9s\n", "kernel", "bytes", "ideal", "ratio", "ld sec/req",
                "st sec/req", "sim s");
    std::printf("%-28s %14llu %14llu %8.4f %10.2f %10.2f %9.2f\n", "rope",
                static_cast<unsigned long long>(s.bytesMoved()), static_cast<unsigned long long>(ideal),
                double(s.bytesMoved()) / ideal, s.loadRequests ? double(s.loadSectors) / s.loadRequests : 0.0,
                s.storeRequests ? double(s.storeSectors) / s.storeRequests : 0.0, secs);
  }

}

void normalizationTraffic(tk::Device &dev, Rng &rng, Dist &dist) {
  std::printf("\nsim traffic of stdlib/normalization.tk, 16384 rows x D 256 (the Puzzler's seed size)\n");
  std::printf("%-28s %14s %14s %8s %10s %12s\n", "kernel", "bytes", "ideal", "ratio", "ld sec/req", "smem wf/req");
  {
    const int rows = 16384, D = 256;
    const std::string path = TK_STDLIB_DIR "/normalization.tk";
    std::vector<float> host(size_t(rows) * D);
    for (float &f : host) f = dist(rng);
    tk::Buffer x = dev.upload(host), w = dev.upload(std::vector<float>(D, 0.5f)),
               bvec = dev.upload(std::vector<float>(D, 0.1f));
    tk::Buffer out = dev.alloc(size_t(rows) * D * 4);
    auto report = [&](const char *name, const tk::LaunchStats &s, uint64_t ideal) {
      std::printf("%-28s %14llu %14llu %8.4f %10.2f %12.2f\n", name, static_cast<unsigned long long>(s.bytesMoved()),
                  static_cast<unsigned long long>(ideal), double(s.bytesMoved()) / ideal,
                  s.loadRequests ? double(s.loadSectors) / s.loadRequests : 0.0,
                  s.sharedRequests ? double(s.sharedWavefronts) / s.sharedRequests : 0.0);
    };
    auto programs = [&](const tk::Kernel &k) {
      return uint32_t((rows + k.bundle().constInt("BLOCK_R") - 1) / k.bundle().constInt("BLOCK_R"));
    };
    const uint64_t xBytes = uint64_t(rows) * D * 4;
    tk::Kernel fused = dev.load(tk::Compiler::compileFile(path, "layernorm_tanh_linear_relu"));
    report("layernorm_tanh_linear_relu",
           dev(fused, {programs(fused)}, x, w, 0.1f, out, int32_t(rows), int32_t(D), 1e-5f),
           xBytes + D * 4 + uint64_t(rows) * 4);
    tk::Kernel softmax = dev.load(tk::Compiler::compileFile(path, "softmax"));
    report("softmax", dev(softmax, {programs(softmax)}, x, out, int32_t(rows), int32_t(D)), 2 * xBytes);
    tk::Kernel layernorm = dev.load(tk::Compiler::compileFile(path, "layernorm"));
    report("layernorm",
           dev(layernorm, {programs(layernorm)}, x, w, bvec, out, int32_t(rows), int32_t(D), 1e-5f),
           2 * xBytes + 2 * D * 4);
    tk::Kernel rmsnorm = dev.load(tk::Compiler::compileFile(path, "rmsnorm"));
    report("rmsnorm", dev(rmsnorm, {programs(rmsnorm)}, x, w, out, int32_t(rows), int32_t(D), 1e-6f),
           2 * xBytes + D * 4);
  }

}

void similarityTraffic(tk::Device &dev, Rng &rng, Dist &dist) {
  std::printf("\nsim traffic of stdlib/similarity.tk, n_samples 256 x n_dim 512, default config\n");
  {
    const int nSamples = 256, nDim = 512;
    std::vector<float> host(size_t(nSamples) * nDim);
    for (float &f : host) f = dist(rng) / 2;
    tk::Buffer x = dev.upload(host);
    for (float &f : host) f = dist(rng) / 2;
    tk::Buffer y = dev.upload(host), out = dev.alloc(size_t(nDim) * nDim * 4);
    tk::Bundle b = tk::Compiler::compileFile(TK_STDLIB_DIR "/similarity.tk", "similarity");
    tk::Kernel k = dev.load(b);
    const uint64_t bi = b.constInt("BLOCK_I"), bj = b.constInt("BLOCK_J"), gi = (nDim + bi - 1) / bi,
                   gj = (nDim + bj - 1) / bj;
    auto t0 = std::chrono::steady_clock::now();
    tk::LaunchStats s = dev(k, {uint32_t(gi), uint32_t(gj)}, x, y, out, int32_t(nSamples), int32_t(nDim));
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Ideal: x, y and the output once. Tile level: each program reads its
    // BLOCK_I values of x and BLOCK_J of y per sample, so x is read gj times
    // and y gi times (on a GPU mostly from L2). Lane level (the sim's bytes)
    // also counts a value once per lane that loads it.
    const uint64_t outBytes = uint64_t(nDim) * nDim * 4, in = uint64_t(nSamples) * nDim * 4;
    const uint64_t ideal = 2 * in + outBytes, tile = in * (gi + gj) + outBytes;
    const uint64_t sectorBytes = (s.loadSectors + s.storeSectors) * 32;
    std::printf("%-28s %14s %14s %14s %14s\n", "", "lane bytes", "sector bytes", "tile bytes", "ideal");
    std::printf("%-28s %14llu %14llu %14llu %14llu\n", "similarity",
                static_cast<unsigned long long>(s.bytesMoved()), static_cast<unsigned long long>(sectorBytes),
                static_cast<unsigned long long>(tile), static_cast<unsigned long long>(ideal));
    std::printf("%-28s %14.2f %14.2f %14.2f %14.2f\n", "  x ideal", double(s.bytesMoved()) / ideal,
                double(sectorBytes) / ideal, double(tile) / ideal, 1.0);
    std::printf("  load sectors/request %.2f, store sectors/request %.2f, shared wavefronts/request %.2f "
                "(%llu shared requests), sim %.2f s\n",
                s.loadRequests ? double(s.loadSectors) / s.loadRequests : 0.0,
                s.storeRequests ? double(s.storeSectors) / s.storeRequests : 0.0,
                s.sharedRequests ? double(s.sharedWavefronts) / s.sharedRequests : 0.0,
                static_cast<unsigned long long>(s.sharedRequests), secs);
  }

}

void ptxasTable(const tk::nvptx::Toolkit &toolkit) {
  std::printf("\nptxas -v (CUDA toolkit: %s)\n", toolkit.hasPtxas() ? toolkit.ptxas.c_str() : "not found");
  if (!toolkit.hasPtxas()) return;
  std::printf("%-28s %-6s %10s %14s %14s\n", "kernel", "arch", "registers", "spill stores", "spill loads");
  for (const char *stdlibFile :
       {"elementwise.tk", "normalization.tk", "similarity.tk", "dropout.tk", "loss.tk", "rope.tk"}) {
    const std::string path = std::string(TK_STDLIB_DIR "/") + stdlibFile;
    for (const auto &[name, params] : tk::Compiler::kernels(path))
      for (const char *arch : {"sm_80", "sm_90"}) {
        tk::CompileOptions o;
        o.archs = {arch};
        tk::Bundle b = tk::Compiler::compileFile(path, name, o);
        tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(b.ptx.at(arch), arch, toolkit);
        std::printf("%-28s %-6s %10d %14d %14d\n", name.c_str(), arch, info.registers, info.spillStoreBytes,
                    info.spillLoadBytes);
      }
  }
}

}  // namespace

int main(int argc, char **argv) {
  int log2n = argc > 1 ? std::atoi(argv[1]) : 22;
  if (log2n < 10 || log2n > 26) {
    std::fprintf(stderr, "usage: tk-bench [log2(n) in 10..26]\n");
    return 1;
  }
  try {
    auto dev = tk::Device::open("sim");
    Rng rng(1);
    Dist dist(-4, 4);
    compileLatencies();
    elementwiseTraffic(*dev, log2n, rng, dist);
    crossEntropyTraffic(*dev, rng, dist);
    ropeTraffic(*dev, rng, dist);
    normalizationTraffic(*dev, rng, dist);
    similarityTraffic(*dev, rng, dist);
    ptxasTable(tk::nvptx::Toolkit::find());
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tk-bench: error: %s\n", e.what());
    return 1;
  }
}
