// Shared by the runtime_* tests: fresh random inputs for kernel runs.
#pragma once

#include <random>
#include <vector>

namespace tk::test {

// n floats uniform in [lo, hi), from a generator seeded once per process
// from std::random_device, so every run sees new inputs.
inline std::vector<float> randomFloats(size_t n, float lo, float hi) {
  static std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &f : v) f = d(rng);
  return v;
}

}  // namespace tk::test
