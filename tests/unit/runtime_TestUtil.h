// Shared by the runtime_* tests: fresh random inputs for kernel runs.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "TestSeed.h"
#include "tk/error.h"
#include "tk/half.h"
#include "tk/runtime.h"

namespace tk::test {

// n floats uniform in [lo, hi), from a generator seeded once per process
// from testSeed(), so every run sees new inputs and a failure can be replayed.
inline std::vector<float> randomFloats(size_t n, float lo, float hi) {
  static std::mt19937 rng(tk::test::testSeed());
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &f : v) f = d(rng);
  return v;
}

// n values k/64 for random integers k in [-128, 128]: exact in f16 and bf16,
// and every product and sum of up to 1024 of them is exact in f32, whatever
// the order the sum is taken in (so tensor-core results compare exactly).
inline std::vector<float> exactHalfInputs(size_t n) {
  static std::mt19937 rng(tk::test::testSeed());
  std::uniform_int_distribution<int> d(-128, 128);
  std::vector<float> v(n);
  for (float &f : v) f = float(d(rng)) / 64;
  return v;
}

// The f16 bits of each value (tk/half.h, rounded to nearest even).
inline std::vector<uint16_t> f16Values(const std::vector<float> &v) {
  std::vector<uint16_t> out;
  for (float f : v) out.push_back(tk::floatToHalfBits(f));
  return out;
}

// n ints uniform in [lo, hi], from the same per-process generator scheme.
inline std::vector<int32_t> randomInts(size_t n, int32_t lo, int32_t hi) {
  static std::mt19937 rng(tk::test::testSeed() + 1);
  std::uniform_int_distribution<int32_t> d(lo, hi);
  std::vector<int32_t> v(n);
  for (int32_t &x : v) x = d(rng);
  return v;
}

// `kernel` of the .tk file at `path` for the sim (no PTX), with `numWarps`
// and the consts in `defines`.
inline tk::Bundle compileForSim(const std::string &path, const std::string &kernel, int numWarps,
                                std::map<std::string, std::string> defines = {}) {
  tk::CompileOptions opts;
  opts.numWarps = numWarps;
  opts.emitPtx = false;
  opts.defines = std::move(defines);
  return tk::Compiler::compileFile(path, kernel, opts);
}

inline uint32_t cdiv(int64_t a, int64_t b) { return uint32_t((a + b - 1) / b); }

// The message of the tk::Error `f` throws; empty when it throws none.
template <class F>
std::string errorOf(F &&f) {
  try {
    f();
  } catch (const tk::Error &e) {
    return e.what();
  }
  return "";
}

}  // namespace tk::test
