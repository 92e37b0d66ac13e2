// Runs the launchers tk_add_kernels generated on the default device (a GPU,
// else the sim) and checks them against double-precision references.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "elementwise.h"
#include "scaled_gelu.h"

namespace {

// Largest |got - want| / (1 + |want|).
template <class Ref>
double worstError(const std::vector<float> &got, size_t n, Ref ref) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const double want = ref(i);
    worst = std::max(worst, std::fabs(got[i] - want) / (1 + std::fabs(want)));
  }
  return worst;
}

bool check(const char *what, tk::Status st, double err) {
  if (!st) {
    std::fprintf(stderr, "%s: %s\n", what, st.message().c_str());
    return false;
  }
  std::printf("%-32s max rel error %.2e\n", what, err);
  return err < 1e-5;
}

}  // namespace

int main() {
  try {
    auto dev = tk::Device::open();
    std::printf("device: %s\n", dev->name().c_str());
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> dist(-4, 4);
    bool ok = true;
    for (int32_t n : {1, 781, 98433}) {
      std::vector<float> x(n), y(n), poison(n, std::nanf(""));
      for (auto &v : x) v = dist(rng);
      for (auto &v : y) v = dist(rng);
      tk::Buffer bx = dev->upload(x), by = dev->upload(y), bout = dev->upload(poison);
      const float *px = tk::pointer<float>(bx), *py = tk::pointer<float>(by);
      float *pout = tk::pointer<float>(bout);

      // The grid from the config the launcher selects (BLOCK=256 first).
      tk::Status st = complex_activation(*dev, [&](const complex_activation_config &c) {
        return tk::Dim3{uint32_t((n + c.BLOCK - 1) / c.BLOCK)};
      }, px, py, pout, n);
      auto out = dev->download<float>(bout, n);
      ok &= check(("complex_activation n=" + std::to_string(n)).c_str(), st, worstError(out, n, [&](size_t i) {
        double a = x[i], b = y[i];
        return std::max(0.0, (std::sin(a) * std::cos(b) + a) * b);
      }));

      // The other compiled variant, by its config, and the consumer's kernel.
      dev->copyToDevice(bout, poison.data(), n * sizeof(float));
      const scaled_gelu_config big{1024, 4};
      st = scaled_gelu(*dev, tk::Dim3{uint32_t((n + 1023) / 1024)}, big, px, pout, 0.5f, n);
      out = dev->download<float>(bout, n);
      ok &= check(("scaled_gelu n=" + std::to_string(n)).c_str(), st, worstError(out, n, [&](size_t i) {
        double v = x[i];
        return 0.5 * 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      }));
    }
    std::printf(ok ? "ok\n" : "FAILED\n");
    return ok ? 0 : 1;
  } catch (const tk::Error &e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
