// tk-launch-bench: the host cost of one launch, without the device's own
// work -- a generated typed launcher (tkc --emit cpp) against
// Device::launch with a std::vector<Arg>. Both launch on a "null" device
// registered here, whose launch returns at once, so what is timed is
// argument packing, checks and dispatch (docs/perf.md, "Launch overhead").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "elementwise.h"
#include "runtime/DeviceImpl.h"
#include "tk/compiler.h"

namespace {

class NullDevice final : public tk::DeviceImpl {
 public:
  std::string kind() const override { return "null"; }
  std::string name() const override { return "null device (launches do nothing)"; }
  uint64_t allocate(size_t bytes) override {
    return reinterpret_cast<uint64_t>(std::aligned_alloc(256, (bytes + 255) / 256 * 256));
  }
  void release(uint64_t address) override { std::free(reinterpret_cast<void *>(address)); }
  void copyToDevice(uint64_t, const void *, size_t) override {}
  void copyToHost(void *, uint64_t, size_t) override {}
  void fill(uint64_t, const void *, size_t, size_t) override {}
  std::shared_ptr<void> load(const tk::Bundle &) override { return std::make_shared<int>(0); }
  tk::LaunchStats launch(void *, const tk::Bundle &, tk::Dim3, const std::vector<const void *> &args,
                         const tk::LaunchOptions &, void *) override {
    sink += args.size();
    return {};
  }
  size_t sink = 0;
};

const bool registered =
    (tk::registerDevice(
         "null", [](const std::string &) -> std::unique_ptr<tk::DeviceImpl> { return std::make_unique<NullDevice>(); }),
     true);

// Median over 7 runs of `iters` calls of f, in ns per call.
template <class F>
double nsPerCall(size_t iters, F &&f) {
  std::vector<double> runs;
  for (int r = 0; r < 7; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < iters; ++i) f(i);
    auto t1 = std::chrono::steady_clock::now();
    runs.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / iters);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  const size_t iters = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  auto dev = tk::Device::open("null");
  const int32_t n = 98432;
  tk::Buffer x = dev->alloc(n * 4), y = dev->alloc(n * 4), out = dev->alloc(n * 4);
  const tk::Dim3 grid{uint32_t(n / 1024)};

  // The generated launcher: typed pointers, its own checks and dispatch.
  const float *px = tk::pointer<float>(x), *py = tk::pointer<float>(y);
  float *pout = tk::pointer<float>(out);
  if (tk::Status st = complex_activation(*dev, grid, px, py, pout, n); !st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  int failed = 0;
  const double typed = nsPerCall(
      iters, [&](size_t i) { failed += !complex_activation(*dev, grid, px, py, pout, n - int32_t(i & 1)).ok(); });

  // Device::launch: a vector of Args built per launch, checked against the signature.
  tk::Kernel k = dev->load(tk::Compiler::compileFile(TK_STDLIB_DIR "/elementwise.tk", "complex_activation"));
  const double generic = nsPerCall(iters, [&](size_t i) { dev->launch(k, grid, {x, y, out, n - int32_t(i & 1)}); });

  std::printf("host cost of one launch (null device, median of 7 x %zu launches):\n", iters);
  std::printf("  generated typed launcher          %8.1f ns\n", typed);
  std::printf("  Device::launch(std::vector<Arg>)  %8.1f ns\n", generic);
  return failed ? 1 : 0;
}
