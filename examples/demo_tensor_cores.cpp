// tk-demo's tensor-core rows: the stdlib matmul and flash attention on the
// default device, against double references, with their traffic.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "demo.h"
#include "tk/half.h"
#include "tk/runtime.h"

namespace {
// f16 bits of the demo's inputs (multiples of 1/64 in [-2, 2]: exact).
std::vector<uint16_t> halves(const std::vector<float> &x) {
  std::vector<uint16_t> h;
  for (float f : x) h.push_back(tk::floatToHalfBits(f));
  return h;
}
}  // namespace

// stdlib matmul at 512^3 on tensor cores (f16 in, f32 out), checked against
// a double reference, with its traffic against the tiling's: A is read once
// per column of tiles, B once per row of tiles, C written once.
bool demoMatmul(tk::Device &dev, nlohmann::json &report) {
  const int M = 512, N = 512, K = 512;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> d(-128, 128);
  std::vector<float> a(size_t(M) * K), b(size_t(K) * N);
  for (float &f : a) f = float(d(rng)) / 64;  // exact in f16
  for (float &f : b) f = float(d(rng)) / 64;
  std::vector<uint16_t> ha = halves(a), hb = halves(b);
  tk::Bundle bundle = tk::Compiler::compileFile(TK_STDLIB_DIR "/matmul.tk", "matmul");
  const int64_t bm = bundle.constInt("BLOCK_M"), bn = bundle.constInt("BLOCK_N");
  tk::Buffer da = dev.upload(ha), db = dev.upload(hb), dc = dev.upload(std::vector<float>(size_t(M) * N, NAN));
  auto t0 = std::chrono::steady_clock::now();
  tk::LaunchStats s = dev(dev.load(bundle), {uint32_t((M / bm) * (N / bn))}, da, db, dc, dc, int32_t(M), int32_t(N),
                          int32_t(K), int32_t(K), int32_t(1), int32_t(N), int32_t(1), int32_t(N), int32_t(1));
  double ms = s.ms > 0 ? s.ms : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::vector<float> c = dev.download<float>(dc, size_t(M) * N);
  size_t wrong = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0;
      for (int k = 0; k < K; ++k) ref += double(a[size_t(i) * K + k]) * b[size_t(k) * N + j];
      wrong += c[size_t(i) * N + j] != ref;
    }
  const uint64_t ideal = uint64_t(2) * M * K * (N / bn) + uint64_t(2) * K * N * (M / bm) + uint64_t(4) * M * N;
  const uint64_t moved = s.counted ? s.bytesMoved() : ideal;
  const double wf = s.sharedRequests ? double(s.sharedWavefronts) / s.sharedRequests : 0;
  std::printf("\nmatmul %dx%dx%d f16 -> f32 on tensor cores (%lldx%lld tiles, %d warps)\n", M, N, K, (long long)bm,
              (long long)bn, bundle.numWarps);
  std::printf("%-10s %10s %14s %14s %8s %16s %9s\n", "kernel", "mismatches", "bytes_moved", "tiling_bytes", "ratio",
              "shared wf/req", "ms");
  std::printf("%-10s %10zu %14llu %14llu %8.4f %16.3f %9.1f%s\n", "matmul", wrong, (unsigned long long)moved,
              (unsigned long long)ideal, double(moved) / double(ideal), wf, ms, wrong ? "  <-- FAILED" : "");
  report.push_back({{"kernel", "matmul"},
                    {"device", dev.name()},
                    {"m", M},
                    {"n", N},
                    {"k", K},
                    {"mismatches", wrong},
                    {"bytes_moved", moved},
                    {"bytes_counted", s.counted},
                    {"tiling_bytes", ideal},
                    {"shared_wavefronts_per_request", wf},
                    {"ms", ms},
                    {"ok", wrong == 0}});
  return wrong == 0;
}

// stdlib flash attention (f16 in, f32 out, causal) at 2 heads x 512 x 64,
// against a double reference, with its traffic against reading q, k, v and
// writing out once.
bool demoAttention(tk::Device &dev, nlohmann::json &report) {
  const int H = 2, L = 512, D = 64;
  const size_t n = size_t(H) * L * D;
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> d(-64, 64);
  std::vector<float> q(n), k(n), v(n);
  for (auto *t : {&q, &k, &v})
    for (float &f : *t) f = float(d(rng)) / 64;  // exact in f16
  tk::CompileOptions o;
  o.defines = {{"D", std::to_string(D)}, {"CAUSAL", "true"}};
  tk::Bundle bundle = tk::Compiler::compileFile(TK_STDLIB_DIR "/attention.tk", "attention", o);
  const int64_t bm = bundle.constInt("BLOCK_M");
  tk::Buffer dq = dev.upload(halves(q)), dk = dev.upload(halves(k)), dv = dev.upload(halves(v));
  tk::Buffer dout = dev.upload(std::vector<float>(n, NAN));
  const float scale = 1.0f / std::sqrt(float(D));
  auto t0 = std::chrono::steady_clock::now();
  tk::LaunchStats s = dev(dev.load(bundle), {uint32_t((L + bm - 1) / bm), uint32_t(H)}, dq, dk, dv, dout, int32_t(L), scale);
  double ms = s.ms > 0 ? s.ms : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::vector<float> got = dev.download<float>(dout, n);
  double worst = 0;
  std::vector<double> w(L);
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < L; ++i) {
      const float *qi = &q[(size_t(h) * L + i) * D];
      double m = -1e300, sum = 0;
      for (int j = 0; j <= i; ++j) {
        double dot = 0;
        for (int c = 0; c < D; ++c) dot += double(qi[c]) * k[(size_t(h) * L + j) * D + c];
        w[j] = dot * scale;
        m = std::max(m, w[j]);
      }
      for (int j = 0; j <= i; ++j) sum += (w[j] = std::exp(w[j] - m));
      for (int c = 0; c < D; ++c) {
        double ref = 0;
        for (int j = 0; j <= i; ++j) ref += w[j] / sum * v[(size_t(h) * L + j) * D + c];
        const double g = got[(size_t(h) * L + i) * D + c];
        worst = std::max(worst, std::isnan(g) ? 1.0 : std::fabs(g - ref));
      }
    }
  const bool ok = worst < 1e-2;
  const uint64_t ideal = uint64_t(3) * n * 2 + uint64_t(n) * 4;
  const uint64_t moved = s.counted ? s.bytesMoved() : ideal;
  std::printf("\nattention, %d heads x %d x %d, causal, f16 -> f32 (BLOCK_M %lld, %d warps)\n", H, L, D, (long long)bm,
              bundle.numWarps);
  std::printf("%-10s %12s %14s %14s %8s %9s\n", "kernel", "max_abs_err", "bytes_moved", "ideal_bytes", "ratio", "ms");
  std::printf("%-10s %12.2e %14llu %14llu %8.4f %9.1f%s\n", "attention", worst, (unsigned long long)moved,
              (unsigned long long)ideal, double(moved) / double(ideal), ms, ok ? "" : "  <-- FAILED");
  std::printf("(k and v are re-read by every block of queries: from L2 on a GPU, mostly)\n");
  report.push_back({{"kernel", "attention"},
                    {"device", dev.name()},
                    {"heads", H},
                    {"seq_len", L},
                    {"head_dim", D},
                    {"max_abs_err", worst},
                    {"bytes_moved", moved},
                    {"bytes_counted", s.counted},
                    {"ideal_bytes", ideal},
                    {"ms", ms},
                    {"ok", ok}});
  return ok;
}

