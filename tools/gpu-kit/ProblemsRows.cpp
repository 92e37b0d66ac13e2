// The kit's row-wise problems (softmax, layernorm, rmsnorm, the Puzzler's
// fused layernorm-tanh-linear-relu, cross entropy) and rope, each against a
// reference computed in double, row by row.
#include <cmath>
#include <limits>

#include "tools/gpu-kit/Problem.h"

namespace kit {

namespace {

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kEps = 1e-5f;

// A [rows, cols] f32 input x, one f32 output of `outCols` per row, and the
// args between them and after them that each kernel adds.
class RowProblem : public Problem {
 public:
  RowProblem(int64_t rows, int64_t cols, int64_t outCols) : rows_(rows), cols_(cols), outCols_(outCols) {}
  std::vector<int64_t> dims() const override { return {rows_, cols_}; }
  std::map<std::string, int64_t> ints() const override { return {{"rows", rows_}, {"D", cols_}}; }
  void setup(tk::Device &dev, Rng &rng) override {
    x_ = rng.floats(size_t(rows_ * cols_), -4, 4);
    w_ = rng.floats(size_t(cols_), -1, 1);
    b_ = rng.floats(size_t(cols_), -1, 1);
    dx_ = dev.upload(x_);
    dw_ = dev.upload(w_);
    db_ = dev.upload(b_);
    out_ = dev.alloc(size_t(rows_ * outCols_) * 4);
  }
  void poison(tk::Device &dev) override { dev.fill(out_, kNan); }
  tk::Dim3 grid(const tk::Bundle &b) const override { return {cdiv(rows_, b.constInt("BLOCK_R"))}; }
  Check check(tk::Device &dev) override {
    std::vector<float> got = dev.download<float>(out_, size_t(rows_ * outCols_));
    std::vector<double> ref(got.size()), row(static_cast<size_t>(outCols_));
    for (int64_t r = 0; r < rows_; ++r) {
      reference(r, &x_[size_t(r * cols_)], row.data());
      std::copy(row.begin(), row.end(), ref.begin() + r * outCols_);
    }
    return {maxRelErr(got.data(), ref.data(), got.size()), tolerance(), false, "all " + std::to_string(got.size())};
  }
  double bytes() const override { return 4.0 * double(rows_ * cols_ + rows_ * outCols_ + weights() * cols_); }

 protected:
  // Output row `r` of its input row `x`, in double.
  virtual void reference(int64_t r, const float *x, double *out) const = 0;
  virtual double tolerance() const { return 1e-5; }
  virtual int weights() const { return 0; }  // [cols] vectors the kernel reads besides x
  void moments(const float *x, double &mean, double &rstd) const {
    double s = 0, q = 0;
    for (int64_t c = 0; c < cols_; ++c) s += x[c];
    mean = s / double(cols_);
    for (int64_t c = 0; c < cols_; ++c) q += (x[c] - mean) * (x[c] - mean);
    rstd = 1 / std::sqrt(q / double(cols_) + kEps);
  }

  int64_t rows_, cols_, outCols_;
  std::vector<float> x_, w_, b_;
  tk::Buffer dx_, dw_, db_, out_;
};

class Softmax final : public RowProblem {
 public:
  Softmax(int64_t rows, int64_t d) : RowProblem(rows, d, d) {}
  std::vector<tk::Arg> args() const override { return {dx_, out_, int32_t(rows_), int32_t(cols_)}; }

 private:
  void reference(int64_t r, const float *x, double *out) const override {
    double top = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols_; ++c) top = std::max(top, double(x[c]));
    for (int64_t c = 0; c < cols_; ++c) sum += std::exp(x[c] - top);
    for (int64_t c = 0; c < cols_; ++c) out[c] = std::exp(x[c] - top) / sum;
  }
};

class LayerNorm final : public RowProblem {
 public:
  LayerNorm(int64_t rows, int64_t d) : RowProblem(rows, d, d) {}
  json params() const override { return {{"eps", kEps}}; }
  std::vector<tk::Arg> args() const override { return {dx_, dw_, db_, out_, int32_t(rows_), int32_t(cols_), kEps}; }

 private:
  void reference(int64_t r, const float *x, double *out) const override {
    double mean, rstd;
    moments(x, mean, rstd);
    for (int64_t c = 0; c < cols_; ++c) out[c] = (x[c] - mean) * rstd * w_[c] + b_[c];
  }
  double tolerance() const override { return 1e-4; }
  int weights() const override { return 2; }
};

class RmsNorm final : public RowProblem {
 public:
  RmsNorm(int64_t rows, int64_t d) : RowProblem(rows, d, d) {}
  json params() const override { return {{"eps", kEps}}; }
  std::vector<tk::Arg> args() const override { return {dx_, dw_, out_, int32_t(rows_), int32_t(cols_), kEps}; }

 private:
  void reference(int64_t r, const float *x, double *out) const override {
    double q = 0;
    for (int64_t c = 0; c < cols_; ++c) q += double(x[c]) * x[c];
    const double rstd = 1 / std::sqrt(q / double(cols_) + kEps);
    for (int64_t c = 0; c < cols_; ++c) out[c] = x[c] * rstd * w_[c];
  }
  double tolerance() const override { return 1e-4; }
  int weights() const override { return 1; }
};

// The Puzzler's `combined`: relu(tanh(layernorm(x)) . w + b), one value a row.
class Puzzler final : public RowProblem {
 public:
  Puzzler(int64_t rows, int64_t d) : RowProblem(rows, d, 1) {}
  json params() const override { return {{"eps", kEps}, {"b", kBias}}; }
  std::vector<tk::Arg> args() const override { return {dx_, dw_, kBias, out_, int32_t(rows_), int32_t(cols_), kEps}; }

 private:
  static constexpr float kBias = 0.1f;
  void reference(int64_t r, const float *x, double *out) const override {
    double mean, rstd, y = kBias;
    moments(x, mean, rstd);
    for (int64_t c = 0; c < cols_; ++c) y += std::tanh((x[c] - mean) * rstd) * w_[c];
    out[0] = std::max(0.0, y);
  }
  double tolerance() const override { return 1e-4; }
  int weights() const override { return 1; }
};

// Cross entropy of rows of V logits with class targets, a sixteenth of them
// ignore_index (-100), loss 0 there.
class CrossEntropy final : public RowProblem {
 public:
  CrossEntropy(int64_t rows, int64_t v) : RowProblem(rows, v, 1) {}
  json params() const override { return {{"ignore_index", kIgnore}}; }
  std::map<std::string, int64_t> ints() const override {
    return {{"rows", rows_}, {"V", cols_}, {"ignore_index", kIgnore}};
  }
  void setup(tk::Device &dev, Rng &rng) override {
    RowProblem::setup(dev, rng);
    targets_.resize(size_t(rows_));
    for (int32_t &t : targets_) t = rng.next() % 16 == 0 ? kIgnore : int32_t(rng.next() % uint64_t(cols_));
    dt_ = dev.upload(targets_);
  }
  std::vector<tk::Arg> args() const override {
    return {dx_, dt_, out_, int32_t(rows_), int32_t(cols_), int32_t(kIgnore)};
  }
  double bytes() const override { return 4.0 * double(rows_ * cols_ + 2 * rows_); }

 private:
  static constexpr int32_t kIgnore = -100;
  void reference(int64_t r, const float *x, double *out) const override {
    const int32_t t = targets_[size_t(r)];
    if (t == kIgnore) {
      out[0] = 0;
      return;
    }
    double top = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols_; ++c) top = std::max(top, double(x[c]));
    for (int64_t c = 0; c < cols_; ++c) sum += std::exp(x[c] - top);
    out[0] = top + std::log(sum) - x[t];
  }
  double tolerance() const override { return 1e-4; }
  std::vector<int32_t> targets_;
  tk::Buffer dt_;
};

// Rope (stdlib/rope.tk) on f32 q [batch, seq, qh, D], k [batch, seq, kh, D]
// with [seq, D] cos and sin tables.
class Rope final : public Problem {
 public:
  Rope(int64_t batch, int64_t seq, int64_t qh, int64_t kh, int64_t d)
      : batch_(batch), seq_(seq), qh_(qh), kh_(kh), d_(d) {}
  std::vector<int64_t> dims() const override { return {batch_, seq_, qh_, d_}; }
  json params() const override {
    return {{"batch", batch_}, {"seq", seq_}, {"q_heads", qh_}, {"k_heads", kh_}, {"D", d_}};
  }
  std::map<std::string, int64_t> ints() const override {
    return {{"seq", seq_}, {"q_heads", qh_}, {"k_heads", kh_}, {"table_cols", d_}};
  }
  void setup(tk::Device &dev, Rng &rng) override {
    q_ = rng.floats(size_t(batch_ * seq_ * qh_ * d_), -2, 2);
    k_ = rng.floats(size_t(batch_ * seq_ * kh_ * d_), -2, 2);
    cos_ = rng.floats(size_t(seq_ * d_), -1, 1);
    sin_ = rng.floats(size_t(seq_ * d_), -1, 1);
    dq_ = dev.upload(q_), dk_ = dev.upload(k_), dcos_ = dev.upload(cos_), dsin_ = dev.upload(sin_);
    qo_ = dev.alloc(q_.size() * 4), ko_ = dev.alloc(k_.size() * 4);
  }
  void poison(tk::Device &dev) override {
    dev.fill(qo_, kNan);
    dev.fill(ko_, kNan);
  }
  tk::Dim3 grid(const tk::Bundle &b) const override {
    return {cdiv(seq_, b.constInt("BLOCK_S")), uint32_t(batch_), cdiv(std::max(qh_, kh_), b.constInt("BLOCK_H"))};
  }
  std::vector<tk::Arg> args() const override {
    return {dq_, dk_, dcos_, dsin_, qo_, ko_, int32_t(seq_), int32_t(qh_), int32_t(kh_), int32_t(d_)};
  }
  Check check(tk::Device &dev) override {
    double worst = 0;
    for (int which = 0; which < 2; ++which) {
      const std::vector<float> &x = which ? k_ : q_;
      const int64_t heads = which ? kh_ : qh_;
      std::vector<float> got = dev.download<float>(which ? ko_ : qo_, x.size());
      std::vector<double> ref(x.size());
      const int64_t half = d_ / 2;
      for (int64_t row = 0; row < batch_ * seq_ * heads; ++row) {
        const int64_t s = (row / heads) % seq_;
        const float *v = &x[size_t(row * d_)];
        for (int64_t j = 0; j < half; ++j) {
          const double c = cos_[size_t(s * d_ + j)], sn = sin_[size_t(s * d_ + j)];
          ref[size_t(row * d_ + j)] = v[j] * c - double(v[j + half]) * sn;
          ref[size_t(row * d_ + j + half)] = v[j + half] * c + double(v[j]) * sn;
        }
      }
      worst = std::max(worst, maxRelErr(got.data(), ref.data(), got.size()));
    }
    return {worst, 1e-5, false, "all of q and k"};
  }
  double bytes() const override { return 4.0 * double(2 * q_.size() + 2 * k_.size() + seq_ * d_); }

 private:
  int64_t batch_, seq_, qh_, kh_, d_;
  std::vector<float> q_, k_, cos_, sin_;
  tk::Buffer dq_, dk_, dcos_, dsin_, qo_, ko_;
};

}  // namespace

std::unique_ptr<Problem> softmax(int64_t rows, int64_t d) { return std::make_unique<Softmax>(rows, d); }
std::unique_ptr<Problem> layernorm(int64_t rows, int64_t d) { return std::make_unique<LayerNorm>(rows, d); }
std::unique_ptr<Problem> rmsnorm(int64_t rows, int64_t d) { return std::make_unique<RmsNorm>(rows, d); }
std::unique_ptr<Problem> puzzler(int64_t rows, int64_t d) { return std::make_unique<Puzzler>(rows, d); }
std::unique_ptr<Problem> crossEntropy(int64_t rows, int64_t v) { return std::make_unique<CrossEntropy>(rows, v); }
std::unique_ptr<Problem> rope(int64_t batch, int64_t seq, int64_t qHeads, int64_t kHeads, int64_t d) {
  return std::make_unique<Rope>(batch, seq, qHeads, kHeads, d);
}

}  // namespace kit
