// Every atomic read-modify-write op on every type it takes (tests/kernels/
// atomics.tk's `rmw`), on the sim against a CPU reference: many elements and
// programs hitting a few words (the final values, and the old values checked
// as a serialisation: add and xchg chains, max/min/and/or membership), and
// one updater per word (old values exact). Float max and min order by IEEE
// 754 totalOrder (-0.0 < +0.0, NaNs by sign beyond the infinities).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <random>

#include "TestSeed.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/atomics.tk";
const int kSizes[] = {1, 781, 1023, 98433};

template <class T>
const char *tkName() {
  if constexpr (std::is_same_v<T, int32_t>) return "i32";
  if constexpr (std::is_same_v<T, int64_t>) return "i64";
  if constexpr (std::is_same_v<T, float>) return "f32";
  return "f64";
}

// The unsigned integer of T's size: how the tests compare bits.
template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <class T>
Bits<T> bitsOf(T v) {
  return std::bit_cast<Bits<T>>(v);
}

// IEEE 754 totalOrder as an unsigned key: sign-set values reversed below
// the sign-clear ones. For integers, the signed order.
template <class T>
Bits<T> orderKey(T v) {
  const Bits<T> sign = Bits<T>(1) << (sizeof(T) * 8 - 1);
  const Bits<T> b = bitsOf(v);
  if constexpr (std::is_floating_point_v<T>) return (b & sign) ? ~b : b | sign;
  return b ^ sign;
}

template <class T>
T apply(const std::string &op, T a, T v) {
  if (op.rfind("add", 0) == 0) {
    if constexpr (std::is_integral_v<T>) return T(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(v));
    return a + v;
  }
  if (op == "max") return orderKey(v) > orderKey(a) ? v : a;
  if (op == "min") return orderKey(v) < orderKey(a) ? v : a;
  if (op == "xchg") return v;
  if constexpr (std::is_integral_v<T>) {
    if (op == "and") return a & v;
    if (op == "or") return a | v;
    if (op == "xor") return a ^ v;
  }
  ADD_FAILURE() << "no reference for " << op;
  return a;
}

template <class T>
T fromBits(Bits<T> b) {
  return std::bit_cast<T>(b);
}

// Values for `op`: small positive integers for add (exact in every type,
// and the olds of one word increase along its serialisation), distinct ones
// for xchg, and for max/min a mix with both zeros, infinities and NaNs.
template <class T>
std::vector<T> values(const std::string &op, int n, std::mt19937 &rng) {
  std::vector<T> v(n);
  for (int i = 0; i < n; ++i) {
    if (op.rfind("add", 0) == 0) {
      v[i] = T(1 + rng() % 8);
    } else if (op == "xchg") {
      v[i] = T(i + 1);
    } else if constexpr (std::is_floating_point_v<T>) {
      const T special[] = {T(0), -T(0), std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                           std::numeric_limits<T>::quiet_NaN(), -std::numeric_limits<T>::quiet_NaN()};
      v[i] = rng() % 8 == 0 ? special[rng() % 6] : T(std::uniform_real_distribution<double>(-1e3, 1e3)(rng));
    } else {
      v[i] = T(std::uniform_int_distribution<int64_t>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(rng));
    }
  }
  return v;
}

struct Run {
  std::vector<int32_t> idx;
  int nslots;
};

// Element i updates word idx[i]: `contended` spreads n elements over 5
// words, else each element has a word of its own (a permutation).
Run layout(int n, bool contended, std::mt19937 &rng) {
  Run r{std::vector<int32_t>(n), contended ? 5 : n};
  if (contended) {
    for (auto &i : r.idx) i = int32_t(rng() % r.nslots);
  } else {
    std::iota(r.idx.begin(), r.idx.end(), 0);
    std::shuffle(r.idx.begin(), r.idx.end(), rng);
  }
  return r;
}

template <class T>
void checkOp(tk::Device &dev, const std::string &op, std::mt19937 &rng) {
  tk::CompileOptions o;
  o.defines = {{"T", tkName<T>()}, {"OP", op}};
  tk::Kernel k = dev.load(tk::Compiler::compileFile(kFile, "rmw", o));
  for (int n : kSizes) {
    for (bool contended : {true, false}) {
      if (!contended && n > 1023) continue;  // one updater per word: the small sizes show it
      SCOPED_TRACE(std::string(tkName<T>()) + " " + op + " n=" + std::to_string(n) +
                   (contended ? " contended" : " one updater per word"));
      Run r = layout(n, contended, rng);
      std::vector<T> x = values<T>(op, n, rng), init = values<T>(op == "xchg" ? "max" : op, r.nslots, rng);
      if (op == "xchg")  // distinct from every value: the chain starts at it
        for (int s = 0; s < r.nslots; ++s) init[s] = T(-1 - s);
      const T poison = T(-77);
      tk::Buffer slots = dev.upload(init), idx = dev.upload(r.idx), dx = dev.upload(x),
                 olds = dev.upload(std::vector<T>(n, poison));
      tk::LaunchStats st = dev(k, {uint32_t((n + 255) / 256)}, slots, idx, dx, olds, int32_t(n));
      // The sim counts each active element's atomic once, as a store (float
      // max/min too: one of its two integer atomics runs), and the olds' store.
      EXPECT_EQ(st.globalStoreBytes, 2 * uint64_t(n) * sizeof(T));
      std::vector<T> got = dev.download<T>(slots, r.nslots), old = dev.download<T>(olds, n);

      std::vector<T> want = init;
      std::vector<std::vector<int>> by(r.nslots);  // the elements of each word
      for (int i = 0; i < n; ++i) {
        want[r.idx[i]] = apply(op, want[r.idx[i]], x[i]);
        by[r.idx[i]].push_back(i);
      }
      for (int s = 0; s < r.nslots; ++s) {
        if (op != "xchg") {
          ASSERT_EQ(bitsOf(got[s]), bitsOf(want[s])) << "word " << s << ": " << got[s] << " vs " << want[s];
        }
        const std::vector<int> &e = by[s];
        if (!contended) {
          for (int i : e) ASSERT_EQ(bitsOf(old[i]), bitsOf(init[s])) << "element " << i;
          continue;
        }
        if (op.rfind("add", 0) == 0 || op == "xchg") {
          // A chain: ordered by the olds (add's increase; xchg's follow from
          // one value to the element that wrote it), each old is the previous
          // element's result, starting at the initial value, ending at the final.
          std::map<Bits<T>, int> byOld;
          for (int i : e) ASSERT_TRUE(byOld.emplace(bitsOf(old[i]), i).second) << "old value seen twice";
          T at = init[s];
          for (size_t step = 0; step < e.size(); ++step) {
            auto it = byOld.find(bitsOf(at));
            ASSERT_NE(it, byOld.end()) << "no update saw " << at << " (step " << step << ")";
            at = apply(op, at, x[it->second]);
          }
          ASSERT_EQ(bitsOf(got[s]), bitsOf(at));
        } else if (op == "max" || op == "min" || op == "and" || op == "or") {
          // Each old is a state the word passed through: the initial value or
          // one written, at most as far from the initial as the final.
          for (int i : e) {
            const T o = old[i];
            if (op == "max" || op == "min") {
              bool seen = bitsOf(o) == bitsOf(init[s]);
              for (int j : e) seen = seen || bitsOf(o) == bitsOf(x[j]);
              ASSERT_TRUE(seen) << "element " << i << " saw " << o;
              ASSERT_TRUE(op == "max" ? orderKey(o) <= orderKey(got[s]) : orderKey(o) >= orderKey(got[s]));
            } else if constexpr (std::is_integral_v<T>) {
              const T fin = got[s], first = init[s];
              ASSERT_EQ(op == "and" ? (o & fin) : (o | fin), fin) << "element " << i;
              ASSERT_EQ(op == "and" ? (o | first) : (o & first), first) << "element " << i;
            }
          }
        }
      }
    }
  }
}

TEST(AtomicOps, IntegerOpsUnderContentionAndAlone) {
  auto dev = tk::Device::open("sim");
  std::mt19937 rng(tk::test::testSeed());
  for (std::string op : {"add", "max", "min", "xchg", "and", "or", "xor"}) {
    checkOp<int32_t>(*dev, op, rng);
    checkOp<int64_t>(*dev, op, rng);
  }
}

TEST(AtomicOps, FloatOpsUnderContentionAndAlone) {
  auto dev = tk::Device::open("sim");
  std::mt19937 rng(tk::test::testSeed() + 1);
  for (std::string op : {"add", "max", "min", "xchg"}) {
    checkOp<float>(*dev, op, rng);
    checkOp<double>(*dev, op, rng);
  }
}

// Every sem/scope spelling the kernel uses runs as an add (the sim's order is
// the host's, at least as strong as any asked).
TEST(AtomicOps, EverySemanticsAdds) {
  auto dev = tk::Device::open("sim");
  std::mt19937 rng(tk::test::testSeed() + 2);
  for (std::string op : {"add_relaxed_cta", "add_release_sys", "add_acquire_gpu"}) checkOp<int32_t>(*dev, op, rng);
}

// Float max and min, one updater per word, on the pairs that decide the
// semantics docs/language.md states: -0.0 < +0.0, a sign-clear NaN above
// +inf, a sign-set NaN below -inf; the old value always comes back.
TEST(AtomicOps, FloatMaxMinFollowTotalOrder) {
  auto dev = tk::Device::open("sim");
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  struct Case {
    float mem, v, max, min;
  };
  const Case cases[] = {
      {-0.0f, 0.0f, 0.0f, -0.0f}, {0.0f, -0.0f, 0.0f, -0.0f},    {-5.0f, -0.0f, -0.0f, -5.0f},
      {-0.0f, -5.0f, -0.0f, -5.0f}, {3.0f, -7.0f, 3.0f, -7.0f},  {-3.0f, -7.0f, -3.0f, -7.0f},
      {nan, 1.0f, nan, 1.0f},     {1.0f, nan, nan, 1.0f},        {inf, nan, nan, inf},
      {-nan, -inf, -inf, -nan},   {-inf, -nan, -inf, -nan},      {-nan, nan, nan, -nan},
  };
  const int n = int(std::size(cases));
  std::vector<int32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::vector<float> mem, v;
  for (const Case &c : cases) mem.push_back(c.mem), v.push_back(c.v);
  for (std::string op : {"max", "min"}) {
    tk::CompileOptions o;
    o.defines = {{"T", "f32"}, {"OP", op}};
    tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "rmw", o));
    tk::Buffer slots = dev->upload(mem), di = dev->upload(idx), dv = dev->upload(v),
               olds = dev->upload(std::vector<float>(n, 42.0f));
    (*dev)(k, {1}, slots, di, dv, olds, int32_t(n));
    std::vector<float> got = dev->download<float>(slots, n), old = dev->download<float>(olds, n);
    for (int i = 0; i < n; ++i) {
      const float want = op == "max" ? cases[i].max : cases[i].min;
      EXPECT_EQ(bitsOf(got[i]), bitsOf(want)) << op << "(" << cases[i].mem << ", " << cases[i].v << ") = " << got[i];
      EXPECT_EQ(bitsOf(old[i]), bitsOf(cases[i].mem)) << op << " case " << i;
    }
  }
}

}  // namespace
