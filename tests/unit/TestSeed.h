// The seed of every test's random inputs: fresh each run (std::random_device)
// unless TK_TEST_SEED gives one, and printed once per process, so a failure
// seen once can be replayed with `TK_TEST_SEED=N ctest -R NAME`.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace tk::test {

inline uint32_t testSeed() {
  static const uint32_t seed = [] {
    const char *env = std::getenv("TK_TEST_SEED");
    uint32_t s = env && *env ? static_cast<uint32_t>(std::stoul(env)) : std::random_device{}();
    std::fprintf(stderr, "[tk] random inputs from seed %u (set TK_TEST_SEED=%u to replay)\n", s, s);
    return s;
  }();
  return seed;
}

}  // namespace tk::test
