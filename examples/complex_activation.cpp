// Runs stdlib's complex_activation, relu((sin(x) * cos(y) + x) * y), through
// the launcher API on the default device and checks it against the CPU.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "tk/runtime.h"

int main(int argc, char **argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1 << 20;
  if (n <= 0) {
    std::fprintf(stderr, "usage: complex_activation [N > 0]\n");
    return 1;
  }
  try {
    auto dev = tk::Device::open();
    tk::Bundle bundle = tk::Compiler::compileFile(TK_STDLIB_DIR "/elementwise.tk", "complex_activation");
    tk::Kernel kernel = dev->load(bundle);

    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) x[i] = dist(rng), y[i] = dist(rng);

    tk::Buffer dx = dev->upload(x), dy = dev->upload(y);
    tk::Buffer dout = dev->upload(std::vector<float>(n, NAN));  // poisoned
    const int64_t block = bundle.constInt("BLOCK");
    tk::LaunchStats stats = (*dev)(kernel, {uint32_t((n + block - 1) / block)}, dx, dy, dout, n);
    std::vector<float> out = dev->download<float>(dout, n);

    double err = 0, norm = 0;
    for (int i = 0; i < n; ++i) {
      double ref = std::max(0.0, (std::sin(double(x[i])) * std::cos(double(y[i])) + x[i]) * y[i]);
      err += (out[i] - ref) * (out[i] - ref);
      norm += ref * ref;
    }
    double rel = std::sqrt(err / norm);
    std::printf("complex_activation on %s: n = %d, relative error %.3g", dev->name().c_str(), n, rel);
    if (stats.counted) std::printf(", %llu bytes moved", static_cast<unsigned long long>(stats.bytesMoved()));
    std::printf("\n");
    return rel < 1e-5 ? 0 : 1;
  } catch (const tk::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
