// The GPU kit's problems: one kernel at one size, with fresh random inputs,
// poisoned outputs, its launch, a reference computed on the host in double
// and the traffic or work that turns a time into GB/s or TFLOP/s.
// docs/gpu.md says what each row of the kit's report means.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tk/runtime.h"

namespace kit {

using json = nlohmann::json;

// A generator that fills 2^26 floats in a fraction of a second (SplitMix64):
// the kit draws fresh inputs for every problem, at sizes where a
// std::mt19937 distribution would cost seconds.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi).
  float uniform(float lo, float hi) { return lo + (hi - lo) * float(next() >> 40) * 0x1p-24f; }
  std::vector<float> floats(size_t n, float lo, float hi) {
    std::vector<float> v(n);
    for (float &f : v) f = uniform(lo, hi);
    return v;
  }

 private:
  uint64_t state_;
};

// How far a result is from its reference: the largest error of any checked
// element, in the measure the problem states (absolute, or relative to a
// scale), against the dtype's tolerance.
struct Check {
  double maxErr = 0;
  double tol = 0;
  bool ok = false;
  std::string note;  // what was checked: "all 98433", "4096 sampled entries", ...
};

// The largest |got - ref| / max(1, |ref|) over `count` elements, NaN counted
// as an infinite error (a poisoned output left unwritten is NaN).
double maxRelErr(const float *got, const double *ref, size_t count);

// One problem at one size.
class Problem {
 public:
  virtual ~Problem() = default;
  // The shape as the report prints it ("[8192, 1024]") and its dims.
  virtual std::vector<int64_t> dims() const = 0;
  virtual std::string dtype() const { return "f32"; }
  virtual json params() const { return json::object(); }
  // The integer launch arguments by name: what the variant is specialised
  // on (1, a multiple of 16), as Triton specialises at launch.
  virtual std::map<std::string, int64_t> ints() const = 0;
  // Allocates the inputs (fresh random values) and outputs on `dev`.
  virtual void setup(tk::Device &dev, Rng &rng) = 0;
  // Fills every output with a value no correct kernel writes (NaN, or a
  // sentinel for integers).
  virtual void poison(tk::Device &dev) = 0;
  virtual tk::Dim3 grid(const tk::Bundle &bundle) const = 0;
  virtual std::vector<tk::Arg> args() const = 0;
  virtual Check check(tk::Device &dev) = 0;
  // The global bytes an ideal kernel moves (each input read once, each output
  // written once), and the floating-point operations of compute-bound ones.
  virtual double bytes() const = 0;
  virtual double flops() const { return 0; }
};

using Size = std::vector<int64_t>;
using Consts = std::vector<std::pair<std::string, std::string>>;

// A compiled form of a kernel the kit carries: one `tkc compile`.
struct Variant {
  std::string source;  // a stdlib file ("normalization.tk") or the kit's own "kit.tk"
  std::string kernel;
  Consts consts;
  int numWarps = 4, numStages = 3;
  std::map<std::string, int64_t> assume;  // integer arguments whose value gives a fact
  // "BLOCK=1024,num_warps=4,num_stages=3": `tkc tune --config`'s syntax.
  std::string config() const;
  // kernel/CONFIG[+n=16,...] : where its bundles live under kernels/.
  std::string stem() const;
  // The `tkc compile` arguments after the file (no --arch, --emit, -o).
  std::vector<std::string> tkcArgs() const;
};

// A kernel the kit checks and times: the config it runs, the sizes it checks
// (at the mask-exercising sizes the brief asks for) and the realistic size
// it times on a GPU.
struct Case {
  Case(std::string n, std::string src, std::string k, Consts c)
      : name(std::move(n)), source(std::move(src)), kernel(std::move(k)), consts(std::move(c)) {}
  std::string name;  // the report's row name, and peers.py's
  std::string source, kernel;
  Consts consts;
  int numWarps = 4, numStages = 3;
  std::function<std::unique_ptr<Problem>(const Size &)> make;
  std::vector<Size> checkSizes;
  Size realistic;
  bool tensorCores = false;  // rows on every arch the GPU runs, not only its best
  // The variant that runs `p` with this config.
  Variant variant(const Problem &p, const Consts &consts, int numWarps, int numStages) const;
};

// Every case of the kit, in report order (Cases.cpp).
std::vector<Case> allCases();
// The facts a launch with these integer values gives a compile.
std::map<std::string, int64_t> factsOf(const std::map<std::string, int64_t> &ints);

inline uint32_t cdiv(int64_t a, int64_t b) { return uint32_t((a + b - 1) / b); }

// The problems, by kind (ProblemsElementwise.cpp, ProblemsRows.cpp,
// ProblemsTensorCore.cpp); the case table (Cases.cpp) gives them sizes.
// Elementwise over n f32 values in [-4, 4): `inputs` arrays in (x, y), one
// out, `ref` of the inputs' values; `params` for the report.
std::unique_ptr<Problem> elementwise(int64_t n, int inputs, std::function<double(double, double)> ref,
                                     json params = json::object());
std::unique_ptr<Problem> dropout(int64_t n, float p);
std::unique_ptr<Problem> softmax(int64_t rows, int64_t d);
std::unique_ptr<Problem> layernorm(int64_t rows, int64_t d);
std::unique_ptr<Problem> rmsnorm(int64_t rows, int64_t d);
std::unique_ptr<Problem> puzzler(int64_t rows, int64_t d);
std::unique_ptr<Problem> crossEntropy(int64_t rows, int64_t v);
std::unique_ptr<Problem> rope(int64_t batch, int64_t seq, int64_t qHeads, int64_t kHeads, int64_t d);
std::unique_ptr<Problem> similarity(int64_t samples, int64_t dim);
// Along rows of [rows, D] (ProblemsScans.cpp): prefix sums, the linear
// recurrence h = a * h + b, an ascending sort (D <= its BLOCK_D).
std::unique_ptr<Problem> cumsumRows(int64_t rows, int64_t d);
std::unique_ptr<Problem> recurrenceRows(int64_t rows, int64_t d);
std::unique_ptr<Problem> sortRows(int64_t rows, int64_t d);
// stdlib/quantize.tk's per-row f32 -> f8e4m3 quantisation (ProblemsScans.cpp).
std::unique_ptr<Problem> quantizeRows(int64_t rows, int64_t d);
// kit.tk's f16 tiled transpose (ProblemsTensorCore.cpp).
std::unique_ptr<Problem> transpose(int64_t m, int64_t n);
// stdlib matmul_fp8 on f8e4m3 operands with row and column scales (ProblemsTensorCore.cpp).
std::unique_ptr<Problem> matmulFp8(int64_t m, int64_t n, int64_t k, bool bColumnMajor);
// The same through host descriptors, B stored [N, K], persistent (matmul_fp8_desc_ws).
std::unique_ptr<Problem> matmulFp8DescPersistent(int64_t m, int64_t n, int64_t k);
// batch 0: stdlib matmul (a bias pointer, unused); else matmul_batched.
std::unique_ptr<Problem> matmul(int64_t m, int64_t n, int64_t k, int64_t batch = 0);
// stdlib matmul_desc: the same product through host tensor descriptors.
std::unique_ptr<Problem> matmulDesc(int64_t m, int64_t n, int64_t k);
std::unique_ptr<Problem> matmulDescPersistent(int64_t m, int64_t n, int64_t k);
std::unique_ptr<Problem> attention(int64_t heads, int64_t l, int64_t d, bool causal);

}  // namespace kit

namespace kit {

// A kernel whose whole @tune space the kit times (step 5): every config the
// model ranked, checked at `checkSize`, then timed at `size`. `tkcTune` is
// the rest of the `tkc tune` command (after the .tk file) that `make
// gpu-kit` runs on the sim to write model/<case>.json, the model's estimate
// of each config on the same launch.
struct TuneCase {
  std::string caseName;
  Size size, checkSize;
  std::vector<std::string> tkcTune;
};
std::vector<TuneCase> tuneCases();

// A tuned config's consts: those of the model's `results` entry `r` (its
// "consts", the @tune axes), then the case's that it does not set (so a
// kernel tuned with -D D=128 keeps D).
Consts tunedConsts(const Case &c, const nlohmann::json &r);

}  // namespace kit
