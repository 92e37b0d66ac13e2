// The kit's elementwise problems: a formula over n f32 values (vector_add,
// complex_activation, sincos_chain, gelu, swiglu) and seeded dropout,
// checked element by element against double.
#include <array>
#include <cmath>
#include <limits>

#include "tools/gpu-kit/Problem.h"

namespace kit {

double maxRelErr(const float *got, const double *ref, size_t count) {
  double worst = 0;
  for (size_t i = 0; i < count; ++i) {
    const double err = std::fabs(double(got[i]) - ref[i]) / std::max(1.0, std::fabs(ref[i]));
    if (std::isnan(err)) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, err);
  }
  return worst;
}

namespace {

const float kNan = std::numeric_limits<float>::quiet_NaN();

class Elementwise final : public Problem {
 public:
  Elementwise(int64_t n, int inputs, std::function<double(double, double)> ref, json params)
      : n_(n), inputs_(inputs), ref_(std::move(ref)), params_(std::move(params)) {}
  std::vector<int64_t> dims() const override { return {n_}; }
  json params() const override { return params_; }
  std::map<std::string, int64_t> ints() const override { return {{"n", n_}}; }
  void setup(tk::Device &dev, Rng &rng) override {
    for (int i = 0; i < inputs_; ++i) {
      host_[i] = rng.floats(size_t(n_), -4, 4);
      in_[i] = dev.upload(host_[i]);
    }
    out_ = dev.alloc(size_t(n_) * 4);
  }
  void poison(tk::Device &dev) override { dev.fill(out_, kNan); }
  tk::Dim3 grid(const tk::Bundle &b) const override { return {cdiv(n_, b.constInt("BLOCK"))}; }
  std::vector<tk::Arg> args() const override {
    std::vector<tk::Arg> a(in_.begin(), in_.begin() + inputs_);
    a.push_back(out_);
    a.push_back(int32_t(n_));
    return a;
  }
  Check check(tk::Device &dev) override {
    std::vector<float> got = dev.download<float>(out_, size_t(n_));
    std::vector<double> ref(static_cast<size_t>(n_));
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = ref_(host_[0][i], inputs_ > 1 ? double(host_[1][i]) : 0.0);
    return {maxRelErr(got.data(), ref.data(), got.size()), 1e-5, false, "all " + std::to_string(n_)};
  }
  double bytes() const override { return double(inputs_ + 1) * 4 * double(n_); }

 private:
  int64_t n_;
  int inputs_;
  std::function<double(double, double)> ref_;
  json params_;
  std::array<std::vector<float>, 2> host_;
  std::array<tk::Buffer, 2> in_;
  tk::Buffer out_;
};

// Word 0 of Philox 4x32-10 for counter (offset, 0, 0, 0) with the seed's 64
// bits as key, and the float in [0, 1) Triton's rand makes of it.
uint32_t philox(int64_t seed, int32_t offset) {
  std::array<uint32_t, 4> c = {uint32_t(offset), 0, 0, 0};
  std::array<uint32_t, 2> k = {uint32_t(uint64_t(seed)), uint32_t(uint64_t(seed) >> 32)};
  for (int r = 0; r < 10; ++r) {
    if (r > 0) k = {k[0] + 0x9E3779B9u, k[1] + 0xBB67AE85u};
    const uint64_t p0 = uint64_t{0xD2511F53u} * c[0], p1 = uint64_t{0xCD9E8D57u} * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
  }
  return c[0];
}
float rand01(int64_t seed, int32_t offset) {
  const int32_t x = int32_t(philox(seed, offset));
  return float(x < 0 ? ~x : x) * 0x1.fffffep-32f;
}

// stdlib/dropout.tk: each element's mask is Philox of (seed, index), so the
// reference is exact, not a keep rate.
class Dropout final : public Problem {
 public:
  Dropout(int64_t n, float p) : n_(n), p_(p) {}
  std::vector<int64_t> dims() const override { return {n_}; }
  json params() const override { return {{"p", p_}, {"seed", seed_}}; }
  std::map<std::string, int64_t> ints() const override { return {{"n", n_}}; }
  void setup(tk::Device &dev, Rng &rng) override {
    x_ = rng.floats(size_t(n_), -4, 4);
    seed_ = int64_t(rng.next() >> 1);
    dx_ = dev.upload(x_);
    out_ = dev.alloc(size_t(n_) * 4);
  }
  void poison(tk::Device &dev) override { dev.fill(out_, kNan); }
  tk::Dim3 grid(const tk::Bundle &b) const override { return {cdiv(n_, b.constInt("BLOCK"))}; }
  std::vector<tk::Arg> args() const override { return {dx_, out_, int32_t(n_), p_, seed_}; }
  Check check(tk::Device &dev) override {
    std::vector<float> got = dev.download<float>(out_, size_t(n_));
    std::vector<double> ref(static_cast<size_t>(n_));
    for (size_t i = 0; i < ref.size(); ++i)
      ref[i] = rand01(seed_, int32_t(i)) > p_ ? double(x_[i]) / (1.0 - double(p_)) : 0.0;
    return {maxRelErr(got.data(), ref.data(), got.size()), 1e-5, false,
            "all " + std::to_string(n_) + " against Philox 4x32-10 on the host"};
  }
  double bytes() const override { return 8.0 * double(n_); }

 private:
  int64_t n_;
  float p_;
  int64_t seed_ = 0;
  std::vector<float> x_;
  tk::Buffer dx_, out_;
};

}  // namespace

std::unique_ptr<Problem> elementwise(int64_t n, int inputs, std::function<double(double, double)> ref, json params) {
  return std::make_unique<Elementwise>(n, inputs, std::move(ref), std::move(params));
}

std::unique_ptr<Problem> dropout(int64_t n, float p) { return std::make_unique<Dropout>(n, p); }

}  // namespace kit
