// Interop: a program that owns its memory and its stream (as a CUDA or
// PyTorch program does) hands them to tk. On a GPU the memory comes from
// cudaMalloc and the stream from cudaStreamCreate (the CUDA runtime shares
// the primary context tk uses); with no GPU, the sim runs the same program
// on host memory the program allocated. Either way it:
//   1. wraps its memory as tk::Buffers (Device::wrap) and launches the
//      stdlib's gelu through Device::launch, compiled here by tk::Compiler;
//   2. adopts its stream (Device::adoptStream) and launches complex_activation
//      through the launcher `tkc --emit cpp` generated (examples/CMakeLists.txt)
//      on it, with the program's own pointers;
//   3. checks both results against double references.
// Run by ctest (`interop_example`); docs/api.md, "Borrowed memory and streams".
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "elementwise.h"  // the generated launcher of complex_activation
#include "tk/compiler.h"

#ifdef TK_EXAMPLE_HAS_CUDART
#include <cuda_runtime_api.h>
#endif

namespace {

// The program's own memory and stream: the CUDA runtime's on a GPU, the
// host's on the sim (where any stream value is accepted).
struct Owned {
  bool gpu = false;
  std::vector<void *> blocks;
  void *stream = nullptr;
  std::vector<std::vector<float>> host;

  void *alloc(size_t bytes) {
#ifdef TK_EXAMPLE_HAS_CUDART
    if (gpu) {
      void *p = nullptr;
      if (cudaMalloc(&p, bytes) != cudaSuccess) throw tk::Error("cudaMalloc failed");
      blocks.push_back(p);
      return p;
    }
#endif
    host.emplace_back(bytes / sizeof(float));
    return host.back().data();
  }
  void toDevice(void *dst, const std::vector<float> &src) {
#ifdef TK_EXAMPLE_HAS_CUDART
    if (gpu) {
      cudaMemcpy(dst, src.data(), src.size() * sizeof(float), cudaMemcpyHostToDevice);
      return;
    }
#endif
    std::memcpy(dst, src.data(), src.size() * sizeof(float));
  }
  std::vector<float> toHost(const void *src, size_t n) {
    std::vector<float> out(n);
#ifdef TK_EXAMPLE_HAS_CUDART
    if (gpu) {
      cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
      cudaMemcpy(out.data(), src, n * sizeof(float), cudaMemcpyDeviceToHost);
      return out;
    }
#endif
    std::memcpy(out.data(), src, n * sizeof(float));
    return out;
  }
  ~Owned() {
#ifdef TK_EXAMPLE_HAS_CUDART
    for (void *p : blocks) cudaFree(p);
    if (stream) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
#endif
  }
};

bool matches(const std::vector<float> &got, double (*want)(double, double), const std::vector<float> &x,
           const std::vector<float> &y, const char *what) {
  for (size_t i = 0; i < got.size(); ++i) {
    const double w = want(x[i], y.empty() ? 0.0 : y[i]);
    if (!(std::fabs(got[i] - w) <= 1e-5 * std::max(1.0, std::fabs(w)))) {
      std::fprintf(stderr, "%s: element %zu is %g, want %g\n", what, i, got[i], w);
      return false;
    }
  }
  return true;
}

double gelu(double v, double) { return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))); }
double complexActivation(double a, double b) { return std::max(0.0, (std::sin(a) * std::cos(b) + a) * b); }

}  // namespace

int main() {
  try {
    auto dev = tk::Device::open();
    Owned own;
    own.gpu = dev->kind() == "cuda";
#ifdef TK_EXAMPLE_HAS_CUDART
    if (own.gpu) {
      cudaStream_t s = nullptr;
      if (cudaStreamCreate(&s) != cudaSuccess) throw tk::Error("cudaStreamCreate failed");
      own.stream = s;
    }
#else
    if (own.gpu) throw tk::Error("built without the CUDA runtime: this example's GPU path needs it");
#endif
    const int32_t n = 98433;  // not a multiple of any block: the masks run
    std::vector<float> x(n), y(n);
    for (int32_t i = 0; i < n; ++i) x[i] = std::sin(0.37f * i) * 4, y[i] = std::cos(0.11f * i) * 3;
    const size_t bytes = n * sizeof(float);
    void *px = own.alloc(bytes), *py = own.alloc(bytes), *pout = own.alloc(bytes);
    own.toDevice(px, x);
    own.toDevice(py, y);

    // 1. The program's memory as tk::Buffers, through Device::launch. (Kept
    // while the memory is used: on the sim, wrapping is what tells it the
    // range is memory, and an access outside every wrapped range is a fault.)
    tk::Buffer bx = dev->wrap(px, bytes, tk::DType::F32), by = dev->wrap(py, bytes, tk::DType::F32),
               bout = dev->wrap(pout, bytes, tk::DType::F32);
    const tk::Bundle bundle = tk::Compiler::compileFile(TK_STDLIB_DIR "/elementwise.tk", "gelu", {});
    const uint32_t blocks = uint32_t((n + bundle.constInt("BLOCK") - 1) / bundle.constInt("BLOCK"));
    dev->launch(dev->load(bundle), tk::Dim3{blocks}, {bx, bout, n});
    if (!matches(own.toHost(pout, n), gelu, x, {}, "gelu through Device::launch")) return 1;

    // 2. The program's stream, adopted, and the generated launcher on its pointers.
    tk::Stream stream = dev->adoptStream(own.stream);
    tk::Status st = complex_activation(stream, tk::Dim3{uint32_t((n + 255) / 256)}, static_cast<const float *>(px),
                                       static_cast<const float *>(py), static_cast<float *>(pout), n);
    if (!st) {
      std::fprintf(stderr, "%s\n", st.message().c_str());
      return 1;
    }
    if (!matches(own.toHost(pout, n), complexActivation, x, y, "complex_activation on the adopted stream")) return 1;
    std::printf("ok: memory and a stream the program owns, on %s\n", dev->name().c_str());
    return 0;
  } catch (const tk::Error &e) {
    std::fprintf(stderr, "interop: %s\n", e.what());
    return 1;
  }
}
