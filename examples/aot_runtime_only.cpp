// complex_activation through its generated launcher, in a program linked
// against tk::runtime alone (examples/CMakeLists.txt): on a GPU it runs and
// checks n values; with no GPU it reports that and that the sim is not linked.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "elementwise.h"

int main(int argc, char **argv) {
  const int32_t n = argc > 1 ? std::atoi(argv[1]) : 98433;
  std::unique_ptr<tk::Device> dev;
  try {
    dev = tk::Device::open();
  } catch (const tk::Error &e) {
    std::printf("no device: %s\n", e.what());
    return 0;
  }
  std::vector<float> x(n), y(n), out(n, std::nanf(""));
  for (int32_t i = 0; i < n; ++i) {
    x[i] = std::sin(0.37f * i) * 3;
    y[i] = std::cos(0.11f * i) * 3;
  }
  tk::Buffer bx = dev->upload(x), by = dev->upload(y), bout = dev->upload(out);
  tk::Status st = complex_activation(*dev, [&](const complex_activation_config &c) {
    return tk::Dim3{uint32_t((n + c.BLOCK - 1) / c.BLOCK)};
  }, tk::pointer<float>(bx), tk::pointer<float>(by), tk::pointer<float>(bout), n);
  if (!st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  out = dev->download<float>(bout, n);
  for (int32_t i = 0; i < n; ++i) {
    const double a = x[i], b = y[i], want = std::max(0.0, (std::sin(a) * std::cos(b) + a) * b);
    if (!(std::fabs(out[i] - want) <= 1e-5 * (1 + std::fabs(want)))) {
      std::fprintf(stderr, "mismatch at %d: %g, want %g\n", i, out[i], want);
      return 1;
    }
  }
  std::printf("ok: %d values on %s\n", n, dev->name().c_str());
  return 0;
}
