// The kit's scans and sorts along rows (kit.tk): prefix sums, Mamba's linear
// recurrence through a combine function, and a row sort, each against a
// sequential reference computed in double, row by row; and the stdlib's
// per-row fp8 quantisation against the same steps on the host, code for code.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tk/fp8.h"
#include "tools/gpu-kit/Problem.h"

namespace kit {

namespace {

// A row-major [rows, D] f32 input (and a second one for the recurrence), an
// output of the same shape.
class ScanProblem : public Problem {
 public:
  ScanProblem(int64_t rows, int64_t cols, int inputs) : rows_(rows), cols_(cols), inputs_(inputs) {}
  std::vector<int64_t> dims() const override { return {rows_, cols_}; }
  std::map<std::string, int64_t> ints() const override { return {{"rows", rows_}, {"D", cols_}}; }
  void setup(tk::Device &dev, Rng &rng) override {
    const size_t n = size_t(rows_ * cols_);
    x_ = rng.floats(n, -4, 4);
    dx_ = dev.upload(x_);
    if (inputs_ == 2) {
      // Decays in [0.5, 0.95): h stays within 4 / (1 - 0.95) = 80.
      a_ = rng.floats(n, 0.5f, 0.95f);
      da_ = dev.upload(a_);
    }
    out_ = dev.alloc(n * 4);
  }
  void poison(tk::Device &dev) override { dev.fill(out_, std::numeric_limits<float>::quiet_NaN()); }
  tk::Dim3 grid(const tk::Bundle &b) const override { return {cdiv(rows_, b.constInt("BLOCK_R"))}; }
  Check check(tk::Device &dev) override {
    std::vector<float> got = dev.download<float>(out_, size_t(rows_ * cols_));
    std::vector<double> ref(got.size());
    for (int64_t r = 0; r < rows_; ++r) reference(r, &ref[size_t(r * cols_)]);
    return {maxRelErr(got.data(), ref.data(), got.size()), tolerance(), false, "all " + std::to_string(got.size())};
  }
  double bytes() const override { return 4.0 * double(rows_ * cols_) * (inputs_ + 1); }

 protected:
  virtual void reference(int64_t r, double *out) const = 0;
  virtual double tolerance() const = 0;
  const float *row(const std::vector<float> &v, int64_t r) const { return &v[size_t(r * cols_)]; }

  int64_t rows_, cols_;
  int inputs_;
  std::vector<float> x_, a_;
  tk::Buffer dx_, da_, out_;
};

class CumsumRows final : public ScanProblem {
 public:
  CumsumRows(int64_t rows, int64_t d) : ScanProblem(rows, d, 1) {}
  std::vector<tk::Arg> args() const override { return {dx_, out_, int32_t(rows_), int32_t(cols_)}; }

 private:
  void reference(int64_t r, double *out) const override {
    double s = 0;
    for (int64_t c = 0; c < cols_; ++c) out[c] = s += row(x_, r)[c];
  }
  // f32 sums of up to D = 4096 values below 4 in magnitude: the worst case
  // is D * 2^-24 * 4 = 1e-3 (torch.cumsum measured 2.0e-4 at 4096 x 4096 on
  // an H100, tk's tree order 5.9e-5).
  double tolerance() const override { return 1e-3; }
};

class RecurrenceRows final : public ScanProblem {
 public:
  RecurrenceRows(int64_t rows, int64_t d) : ScanProblem(rows, d, 2) {}
  std::vector<tk::Arg> args() const override { return {da_, dx_, out_, int32_t(rows_), int32_t(cols_)}; }

 private:
  void reference(int64_t r, double *out) const override {
    double h = 0;
    for (int64_t c = 0; c < cols_; ++c) out[c] = h = double(row(a_, r)[c]) * h + row(x_, r)[c];
  }
  double tolerance() const override { return 1e-4; }
};

class SortRows final : public ScanProblem {
 public:
  SortRows(int64_t rows, int64_t d) : ScanProblem(rows, d, 1) {}
  std::vector<tk::Arg> args() const override { return {dx_, out_, int32_t(rows_), int32_t(cols_)}; }

 private:
  void reference(int64_t r, double *out) const override {
    std::copy(row(x_, r), row(x_, r) + cols_, out);
    std::sort(out, out + cols_);
  }
  double tolerance() const override { return 0; }  // a sort moves values, exactly
};

// stdlib/quantize.tk's quantize_fp8_rows: the host repeats the kernel's f32
// steps (max|x|, the scale, x / scale rounded by tk/fp8.h), so every code and
// scale must match exactly; the error is the count of those that do not.
class QuantizeRows final : public Problem {
 public:
  QuantizeRows(int64_t rows, int64_t cols) : rows_(rows), cols_(cols) {}
  std::vector<int64_t> dims() const override { return {rows_, cols_}; }
  std::map<std::string, int64_t> ints() const override { return {{"rows", rows_}, {"D", cols_}}; }
  void setup(tk::Device &dev, Rng &rng) override {
    x_ = rng.floats(size_t(rows_ * cols_), -4, 4);
    if (rows_ > 1)  // an all-zero row: the scale's floor
      std::fill(x_.begin() + cols_, x_.begin() + 2 * cols_, 0.0f);
    dx_ = dev.upload(x_);
    out_ = dev.alloc(size_t(rows_ * cols_));
    scale_ = dev.alloc(size_t(rows_) * 4);
  }
  void poison(tk::Device &dev) override {
    dev.fill(out_, int8_t(-1));  // 0xff, an e4m3 NaN: no finite input gives it
    dev.fill(scale_, std::numeric_limits<float>::quiet_NaN());
  }
  tk::Dim3 grid(const tk::Bundle &) const override { return {uint32_t(rows_)}; }
  std::vector<tk::Arg> args() const override { return {dx_, out_, scale_, int32_t(rows_), int32_t(cols_)}; }
  Check check(tk::Device &dev) override {
    auto got = dev.download<uint8_t>(out_, size_t(rows_ * cols_));
    auto gotScale = dev.download<float>(scale_, size_t(rows_));
    double wrong = 0;
    for (int64_t r = 0; r < rows_; ++r) {
      float top = 0;
      for (int64_t c = 0; c < cols_; ++c) top = std::max(top, std::fabs(x_[size_t(r * cols_ + c)]));
      const float s = std::max(top / 448.0f, float(1.0 / (448.0 * 512.0)));
      wrong += !(gotScale[size_t(r)] == s);
      for (int64_t c = 0; c < cols_; ++c)
        wrong += got[size_t(r * cols_ + c)] != tk::floatToFp8Bits(x_[size_t(r * cols_ + c)] / s, tk::kE4M3);
    }
    return {wrong, 0, false,
            "all " + std::to_string(got.size()) + " codes and " + std::to_string(rows_) + " scales, exactly (error: how many differ)"};
  }
  double bytes() const override { return double(rows_ * cols_) * 5 + 4.0 * double(rows_); }

 private:
  int64_t rows_, cols_;
  std::vector<float> x_;
  tk::Buffer dx_, out_, scale_;
};

}  // namespace

std::unique_ptr<Problem> quantizeRows(int64_t rows, int64_t d) { return std::make_unique<QuantizeRows>(rows, d); }
std::unique_ptr<Problem> cumsumRows(int64_t rows, int64_t d) { return std::make_unique<CumsumRows>(rows, d); }
std::unique_ptr<Problem> recurrenceRows(int64_t rows, int64_t d) { return std::make_unique<RecurrenceRows>(rows, d); }
std::unique_ptr<Problem> sortRows(int64_t rows, int64_t d) { return std::make_unique<SortRows>(rows, d); }

}  // namespace kit
