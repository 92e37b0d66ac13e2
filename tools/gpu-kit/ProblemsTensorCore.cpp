// The kit's compute-bound problems: matmul and attention on f16 tensor
// cores, and the seed's pairwise similarity count. At realistic sizes a full
// double reference would cost the host minutes, so these check a sample of
// outputs (every output at the small sizes).
#include <cmath>
#include <limits>

#include "tk/fp8.h"
#include "tk/half.h"
#include "tools/gpu-kit/Problem.h"

namespace kit {

namespace {

const float kNan = std::numeric_limits<float>::quiet_NaN();

// f16 values uniform in [lo, hi), as uploaded and as the host reads them.
std::vector<tk::Half> halves(Rng &rng, size_t n, float lo, float hi) {
  std::vector<tk::Half> v(n);
  for (tk::Half &h : v) h = tk::Half(rng.uniform(lo, hi));
  return v;
}

// Which outputs to check: all of them up to `full`, else `samples` spread at
// random, always including the last (the masked corner).
std::vector<int64_t> picks(Rng &rng, int64_t count, int64_t full, int64_t samples) {
  std::vector<int64_t> p;
  if (count <= full) {
    for (int64_t i = 0; i < count; ++i) p.push_back(i);
    return p;
  }
  for (int64_t i = 0; i < samples; ++i) p.push_back(int64_t(rng.next() % uint64_t(count)));
  p.push_back(count - 1);
  return p;
}

std::string checked(const std::vector<int64_t> &p, int64_t count, const std::string &what) {
  return (int64_t(p.size()) >= count ? "all " : std::to_string(p.size()) + " sampled of ") + std::to_string(count) +
         " " + what;
}

// C[M, N] f32 = A[M, K] f16 @ B[K, N] f16, row-major, no bias, no
// activation (stdlib matmul); with `batch` > 0, `batch` such products at
// once (matmul_batched, program_id(1) the batch). The error of an entry is
// relative to the sum of |a||b| along its dot product: the scale f32
// accumulation errs at. With `descriptors`, the operands go as host tensor
// descriptors (stdlib matmul_desc; n and k multiples of 8); with
// `persistent`, one program per multiprocessor or per tile, the fewer
// (matmul_desc_ws).
class Matmul final : public Problem {
 public:
  Matmul(int64_t m, int64_t n, int64_t k, int64_t batch, bool descriptors = false, bool persistent = false)
      : m_(m), n_(n), k_(k), z_(batch), desc_(descriptors), persistent_(persistent) {}
  std::vector<int64_t> dims() const override {
    return z_ ? std::vector<int64_t>{z_, m_, n_, k_} : std::vector<int64_t>{m_, n_, k_};
  }
  std::string dtype() const override { return "f16"; }
  std::map<std::string, int64_t> ints() const override {
    if (desc_) return {{"M", m_}, {"N", n_}, {"K", k_}};
    std::map<std::string, int64_t> i = {{"M", m_},         {"N", n_},         {"K", k_},
                                        {"stride_am", k_}, {"stride_ak", 1},  {"stride_bk", n_},
                                        {"stride_bn", 1},  {"stride_cm", n_}, {"stride_cn", 1}};
    if (z_) i.insert({{"stride_az", m_ * k_}, {"stride_bz", k_ * n_}, {"stride_cz", m_ * n_}});
    return i;
  }
  void setup(tk::Device &dev, Rng &rng) override {
    sms_ = std::max(1, dev.properties().multiprocessors);
    a_ = halves(rng, size_t(batches() * m_ * k_), -1, 1);
    b_ = halves(rng, size_t(batches() * k_ * n_), -1, 1);
    picks_ = picks(rng, batches() * m_ * n_, 1 << 16, 4096);
    da_ = dev.upload(a_), db_ = dev.upload(b_);
    c_ = dev.alloc(size_t(batches() * m_ * n_) * 4), bias_ = dev.alloc(size_t(n_) * 4);
  }
  void poison(tk::Device &dev) override { dev.fill(c_, kNan); }
  tk::Dim3 grid(const tk::Bundle &b) const override {
    const uint32_t tiles = cdiv(m_, b.constInt("BLOCK_M")) * cdiv(n_, b.constInt("BLOCK_N"));
    if (persistent_) return {std::min(tiles, uint32_t(sms_)), 1};
    return {tiles, uint32_t(batches())};
  }
  std::vector<tk::Arg> args() const override {
    const auto i = [](int64_t v) { return tk::Arg(int32_t(v)); };
    if (desc_)
      return {tk::TensorDescriptor::contiguous(da_, {m_, k_}, {}), tk::TensorDescriptor::contiguous(db_, {k_, n_}, {}),
              tk::TensorDescriptor::contiguous(c_, {m_, n_}, {}), i(m_), i(n_), i(k_)};
    if (z_)
      return {da_,  db_,        c_,    i(m_), i(n_),      i(k_), i(m_ * k_), i(k_),
              i(1), i(k_ * n_), i(n_), i(1),  i(m_ * n_), i(n_), i(1)};
    return {da_, db_, c_, bias_, i(m_), i(n_), i(k_), i(k_), i(1), i(n_), i(1), i(n_), i(1)};
  }
  Check check(tk::Device &dev) override {
    std::vector<float> got = dev.download<float>(c_, size_t(batches() * m_ * n_));
    double worst = 0;
    for (int64_t e : picks_) {
      const int64_t z = e / (m_ * n_), r = e % (m_ * n_) / n_, c = e % n_;
      const size_t a0 = size_t(z * m_ * k_), b0 = size_t(z * k_ * n_);
      double ref = 0, scale = 0;
      for (int64_t k = 0; k < k_; ++k) {
        const double p = double(a_[a0 + size_t(r * k_ + k)].value()) * double(b_[b0 + size_t(k * n_ + c)].value());
        ref += p, scale += std::fabs(p);
      }
      const double err = std::fabs(got[size_t(e)] - ref) / std::max(1.0, scale);
      if (std::isnan(err))
        return {INFINITY, 1e-4, false,
                "NaN at C[" + std::to_string(z) + ", " + std::to_string(r) + ", " + std::to_string(c) + "]"};
      worst = std::max(worst, err);
    }
    return {worst, 1e-4, false, checked(picks_, batches() * m_ * n_, "entries, error / sum |a||b|")};
  }
  double bytes() const override {
    return double(batches()) * (2.0 * double(m_ * k_ + k_ * n_) + 4.0 * double(m_ * n_));
  }
  double flops() const override { return 2.0 * double(batches()) * double(m_) * double(n_) * double(k_); }

 private:
  int64_t batches() const { return z_ ? z_ : 1; }
  int64_t m_, n_, k_, z_;
  bool desc_, persistent_;
  int sms_ = 1;
  std::vector<tk::Half> a_, b_;
  std::vector<int64_t> picks_;
  tk::Buffer da_, db_, c_, bias_;
};

// stdlib matmul_fp8: C[M, N] f32 = (A[M, K] @ B[K, N]) * sa[:, None] * sb[None, :]
// for f8e4m3 A and B, A row-major, B row-major or (bColumnMajor) stored
// [N, K] as fp8 GEMMs take it; errors relative to the scaled sum of |a||b|.
// With `descriptors` (B stored [N, K]), matmul_fp8_desc_ws: A, B^T and C as
// host tensor descriptors, one program per multiprocessor or per tile.
class MatmulFp8 final : public Problem {
 public:
  MatmulFp8(int64_t m, int64_t n, int64_t k, bool bColumnMajor, bool descriptors = false)
      : m_(m), n_(n), k_(k), sbk_(bColumnMajor ? 1 : n), sbn_(bColumnMajor ? k : 1), desc_(descriptors) {}
  std::vector<int64_t> dims() const override { return {m_, n_, k_}; }
  std::string dtype() const override { return "f8e4m3"; }
  std::map<std::string, int64_t> ints() const override {
    if (desc_) return {{"M", m_}, {"N", n_}, {"K", k_}};
    return {{"M", m_}, {"N", n_}, {"K", k_}, {"stride_am", k_}, {"stride_ak", 1},
            {"stride_bk", sbk_}, {"stride_bn", sbn_}, {"stride_cm", n_}, {"stride_cn", 1}};
  }
  void setup(tk::Device &dev, Rng &rng) override {
    for (auto *v : {&a_, &b_}) {
      v->resize(size_t(v == &a_ ? m_ * k_ : k_ * n_));
      for (tk::Float8e4m3 &x : *v) x = tk::Float8e4m3::fromFloat(rng.uniform(-4, 4));
    }
    sa_ = rng.floats(size_t(m_), 0.5f, 2), sb_ = rng.floats(size_t(n_), 0.5f, 2);
    picks_ = picks(rng, m_ * n_, 1 << 16, 4096);
    da_ = dev.upload(a_), db_ = dev.upload(b_), dsa_ = dev.upload(sa_), dsb_ = dev.upload(sb_);
    c_ = dev.alloc(size_t(m_ * n_) * 4);
    sms_ = std::max(1, dev.properties().multiprocessors);
  }
  void poison(tk::Device &dev) override { dev.fill(c_, kNan); }
  tk::Dim3 grid(const tk::Bundle &b) const override {
    const uint32_t tiles = cdiv(m_, b.constInt("BLOCK_M")) * cdiv(n_, b.constInt("BLOCK_N"));
    return {desc_ ? std::min(tiles, uint32_t(sms_)) : tiles};
  }
  std::vector<tk::Arg> args() const override {
    const auto i = [](int64_t v) { return tk::Arg(int32_t(v)); };
    if (desc_)
      return {tk::TensorDescriptor::contiguous(da_, {m_, k_}, {}), tk::TensorDescriptor::contiguous(db_, {n_, k_}, {}),
              tk::TensorDescriptor::contiguous(c_, {m_, n_}, {}), dsa_, dsb_, i(m_), i(n_), i(k_)};
    return {da_, db_, c_, dsa_, dsb_, i(m_), i(n_), i(k_), i(k_), i(1), i(sbk_), i(sbn_), i(n_), i(1)};
  }
  Check check(tk::Device &dev) override {
    std::vector<float> got = dev.download<float>(c_, size_t(m_ * n_));
    double worst = 0;
    for (int64_t e : picks_) {
      const int64_t r = e / n_, c = e % n_;
      double ref = 0, scale = 0;
      for (int64_t k = 0; k < k_; ++k) {
        const double p = double(a_[size_t(r * k_ + k)].toFloat()) * b_[size_t(k * sbk_ + c * sbn_)].toFloat();
        ref += p, scale += std::fabs(p);
      }
      const double s = double(sa_[size_t(r)]) * sb_[size_t(c)];
      const double err = std::fabs(got[size_t(e)] - ref * s) / std::max(1.0, scale * s);
      worst = std::max(worst, std::isnan(err) ? INFINITY : err);
    }
    return {worst, 1e-4, false, checked(picks_, m_ * n_, "entries, error / scaled sum |a||b|")};
  }
  double bytes() const override { return double(m_ * k_ + k_ * n_) + 4.0 * double(m_ * n_); }
  double flops() const override { return 2.0 * double(m_) * double(n_) * double(k_); }

 private:
  int64_t m_, n_, k_, sbk_, sbn_;
  bool desc_;
  int sms_ = 1;
  std::vector<tk::Float8e4m3> a_, b_;
  std::vector<float> sa_, sb_;
  std::vector<int64_t> picks_;
  tk::Buffer da_, db_, dsa_, dsb_, c_;
};

// kit.tk's transpose: y[N, M] = x[M, N]^T in f16, compared exactly.
class Transpose final : public Problem {
 public:
  Transpose(int64_t m, int64_t n) : m_(m), n_(n) {}
  std::vector<int64_t> dims() const override { return {m_, n_}; }
  std::string dtype() const override { return "f16"; }
  std::map<std::string, int64_t> ints() const override { return {{"M", m_}, {"N", n_}}; }
  void setup(tk::Device &dev, Rng &rng) override {
    x_ = halves(rng, size_t(m_ * n_), -4, 4);
    dx_ = dev.upload(x_);
    y_ = dev.alloc(size_t(m_ * n_) * 2);
  }
  void poison(tk::Device &dev) override { dev.fill(y_, tk::Half(kNan)); }
  tk::Dim3 grid(const tk::Bundle &b) const override { return {cdiv(m_, b.constInt("B")), cdiv(n_, b.constInt("B"))}; }
  std::vector<tk::Arg> args() const override { return {dx_, y_, int32_t(m_), int32_t(n_)}; }
  Check check(tk::Device &dev) override {
    auto got = dev.download<tk::Half>(y_, size_t(m_ * n_));
    double wrong = 0;
    for (int64_t r = 0; r < m_; ++r)
      for (int64_t c = 0; c < n_; ++c) wrong += got[size_t(c * m_ + r)].bits != x_[size_t(r * n_ + c)].bits;
    return {wrong, 0, false, "all " + std::to_string(got.size()) + " elements, bit for bit (error: how many differ)"};
  }
  double bytes() const override { return 4.0 * double(m_ * n_); }

 private:
  int64_t m_, n_;
  std::vector<tk::Half> x_;
  tk::Buffer dx_, y_;
};

// stdlib/attention.tk: out[h, i] = softmax(q k^T / sqrt(D)) v over keys j
// (j <= i when causal), q, k, v f16 [heads, L, D], out f32. The kernel rounds
// P to f16 before P.V, as Triton's tutorial does: the tolerance is f16's.
class Attention final : public Problem {
 public:
  Attention(int64_t heads, int64_t l, int64_t d, bool causal) : h_(heads), l_(l), d_(d), causal_(causal) {}
  std::vector<int64_t> dims() const override { return {h_, l_, d_}; }
  std::string dtype() const override { return "f16"; }
  json params() const override { return {{"causal", causal_}, {"scale", scale()}}; }
  std::map<std::string, int64_t> ints() const override { return {{"L", l_}}; }
  void setup(tk::Device &dev, Rng &rng) override {
    const size_t n = size_t(h_ * l_ * d_);
    q_ = halves(rng, n, -1, 1), k_ = halves(rng, n, -1, 1), v_ = halves(rng, n, -1, 1);
    picks_ = picks(rng, h_ * l_, 512, 128);
    dq_ = dev.upload(q_), dk_ = dev.upload(k_), dv_ = dev.upload(v_);
    out_ = dev.alloc(n * 4);
  }
  void poison(tk::Device &dev) override { dev.fill(out_, kNan); }
  tk::Dim3 grid(const tk::Bundle &b) const override { return {cdiv(l_, b.constInt("BLOCK_M")), uint32_t(h_)}; }
  std::vector<tk::Arg> args() const override { return {dq_, dk_, dv_, out_, int32_t(l_), scale()}; }
  Check check(tk::Device &dev) override {
    std::vector<float> got = dev.download<float>(out_, size_t(h_ * l_ * d_));
    double worst = 0;
    std::vector<double> s(static_cast<size_t>(l_)), o(static_cast<size_t>(d_));
    for (int64_t row : picks_) {
      const int64_t h = row / l_, i = row % l_, keys = causal_ ? i + 1 : l_;
      const size_t base = size_t(h * l_ * d_);
      double top = -INFINITY, sum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d_; ++c)
          dot += double(q_[base + size_t(i * d_ + c)].value()) * double(k_[base + size_t(j * d_ + c)].value());
        s[size_t(j)] = dot * scale();
        top = std::max(top, s[size_t(j)]);
      }
      std::fill(o.begin(), o.end(), 0.0);
      for (int64_t j = 0; j < keys; ++j) {
        const double p = std::exp(s[size_t(j)] - top);
        sum += p;
        for (int64_t c = 0; c < d_; ++c) o[size_t(c)] += p * double(v_[base + size_t(j * d_ + c)].value());
      }
      for (int64_t c = 0; c < d_; ++c) {
        const double err = std::fabs(got[base + size_t(i * d_ + c)] - o[size_t(c)] / sum);
        if (std::isnan(err)) return {INFINITY, 1e-2, false, "NaN in row " + std::to_string(row)};
        worst = std::max(worst, err);
      }
    }
    return {worst, 1e-2, false, checked(picks_, h_ * l_, "query rows, absolute error")};
  }
  double bytes() const override { return double(h_ * l_ * d_) * (3 * 2 + 4); }
  double flops() const override {
    return 4.0 * double(h_) * double(l_) * double(l_) * double(d_) * (causal_ ? 0.5 : 1);
  }

 private:
  float scale() const { return float(1 / std::sqrt(double(d_))); }
  int64_t h_, l_, d_;
  bool causal_;
  std::vector<tk::Half> q_, k_, v_;
  std::vector<int64_t> picks_;
  tk::Buffer dq_, dk_, dv_, out_;
};

// stdlib/similarity.tk: out[i, j] = #{s : |x[s, i] - y[s, j]| < 1}, with the
// difference in f32 as the kernel computes it, so the counts match exactly.
class Similarity final : public Problem {
 public:
  Similarity(int64_t samples, int64_t dim) : s_(samples), d_(dim) {}
  std::vector<int64_t> dims() const override { return {s_, d_}; }
  std::map<std::string, int64_t> ints() const override { return {{"n_samples", s_}, {"n_dim", d_}}; }
  void setup(tk::Device &dev, Rng &rng) override {
    x_ = rng.floats(size_t(s_ * d_), -2, 2), y_ = rng.floats(size_t(s_ * d_), -2, 2);
    picks_ = picks(rng, d_ * d_, 1 << 18, 8192);
    dx_ = dev.upload(x_), dy_ = dev.upload(y_);
    out_ = dev.alloc(size_t(d_ * d_) * 4);
  }
  void poison(tk::Device &dev) override { dev.fill(out_, int32_t(-1)); }
  tk::Dim3 grid(const tk::Bundle &b) const override {
    return {cdiv(d_, b.constInt("BLOCK_I")), cdiv(d_, b.constInt("BLOCK_J"))};
  }
  std::vector<tk::Arg> args() const override { return {dx_, dy_, out_, int32_t(s_), int32_t(d_)}; }
  Check check(tk::Device &dev) override {
    std::vector<int32_t> got = dev.download<int32_t>(out_, size_t(d_ * d_));
    double worst = 0;
    for (int64_t e : picks_) {
      const int64_t i = e / d_, j = e % d_;
      int64_t count = 0;
      for (int64_t s = 0; s < s_; ++s) count += std::fabs(x_[size_t(s * d_ + i)] - y_[size_t(s * d_ + j)]) < 1.0f;
      worst = std::max(worst, std::fabs(double(got[size_t(e)] - count)));
    }
    return {worst, 0, false, checked(picks_, d_ * d_, "counts, exact")};
  }
  double bytes() const override { return 4.0 * double(2 * s_ * d_ + d_ * d_); }

 private:
  int64_t s_, d_;
  std::vector<float> x_, y_;
  std::vector<int64_t> picks_;
  tk::Buffer dx_, dy_, out_;
};

}  // namespace

std::unique_ptr<Problem> matmul(int64_t m, int64_t n, int64_t k, int64_t batch) {
  return std::make_unique<Matmul>(m, n, k, batch);
}
std::unique_ptr<Problem> matmulDescPersistent(int64_t m, int64_t n, int64_t k) {
  return std::make_unique<Matmul>(m, n, k, 0, true, true);
}

std::unique_ptr<Problem> matmulDesc(int64_t m, int64_t n, int64_t k) {
  return std::make_unique<Matmul>(m, n, k, 0, true);
}
std::unique_ptr<Problem> attention(int64_t heads, int64_t l, int64_t d, bool causal) {
  return std::make_unique<Attention>(heads, l, d, causal);
}
std::unique_ptr<Problem> matmulFp8(int64_t m, int64_t n, int64_t k, bool bColumnMajor) {
  return std::make_unique<MatmulFp8>(m, n, k, bColumnMajor);
}
std::unique_ptr<Problem> matmulFp8DescPersistent(int64_t m, int64_t n, int64_t k) {
  return std::make_unique<MatmulFp8>(m, n, k, true, true);
}
std::unique_ptr<Problem> transpose(int64_t m, int64_t n) { return std::make_unique<Transpose>(m, n); }
std::unique_ptr<Problem> similarity(int64_t samples, int64_t dim) { return std::make_unique<Similarity>(samples, dim); }

}  // namespace kit
