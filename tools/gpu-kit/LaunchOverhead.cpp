// Step 7 of the kit: the host's cost of one launch on a real GPU -- the
// typed launcher `tkc compile --emit cpp` generates, the generic
// Device::launch, and the bare cuLaunchKernel both stand on -- for a tiny
// kernel (vector_add over 4096 values) queued on a stream, so what is timed
// is the host's work per call, not the kernel's.
#include <algorithm>
#include <chrono>

#include "backend/cuda/Context.h"
#include "backend/cuda/Driver.h"
#include "kit.h"  // tk_add_kernels(tk-gpu-kit SOURCES kit.tk): the typed launcher
#include "tk/aot.h"
#include "tools/gpu-kit/Kit.h"

namespace kit {

namespace {

constexpr int kCalls = 1000, kBatches = 7;

// The median over batches of `kCalls` calls of `launch`, in microseconds per
// call; the stream is drained between batches, untimed.
template <class F, class S>
double usPerLaunch(F &&launch, S &&drain) {
  std::vector<double> us;
  for (int b = 0; b < kBatches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) launch();
    const auto t1 = std::chrono::steady_clock::now();
    drain();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kCalls);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

json row(const std::string &name, double us, const std::string &what) {
  return {{"step", "launch"}, {"name", name}, {"us_per_launch", us}, {"ok", true}, {"what", what}};
}

}  // namespace

void launchOverhead(const Options &opts, const Emit &emit) {
  auto dev = tk::Device::open(opts.device);
  if (dev->kind() != "cuda") throw tk::Error("launch overhead is measured on a GPU only");
  const int32_t n = 4096;
  const std::vector<float> ones(n, 1.0f);
  tk::Buffer x = dev->upload(ones), y = dev->upload(ones), out = dev->alloc(n * 4);
  const tk::Dim3 grid{cdiv(n, 1024)};
  tk::Stream s = dev->createStream();

  const float *px = tk::pointer<float>(x), *py = tk::pointer<float>(y);
  float *pout = tk::pointer<float>(out);
  if (tk::Status st = vector_add(s, grid, px, py, pout, n); !st) throw tk::Error(st.message());
  int failed = 0;
  emit(row("typed AOT launcher",
           usPerLaunch([&] { failed += !vector_add(s, grid, px, py, pout, n).ok(); }, [&] { s.synchronize(); }),
           "vector_add(stream, grid, x, y, out, n) from tkc --emit cpp"));

  const Case add = allCases().front();  // vector_add, BLOCK=1024
  const std::string arch = archsFor(*dev, false).front();
  std::unique_ptr<Problem> p = add.make({n});
  const tk::Bundle bundle = loadBundle(opts.kitDir, add.variant(*p, add.consts, add.numWarps, add.numStages), arch);
  tk::Kernel k = dev->load(bundle);
  tk::LaunchOptions o;
  o.stream = &s;
  emit(row("Device::launch",
           usPerLaunch(
               [&] {
                 dev->launch(k, grid, {x, y, out, n}, o);
               },
               [&] { s.synchronize(); }),
           "dev.launch(kernel, grid, {x, y, out, n}, {.stream}): arguments checked against the signature"));

  // The driver alone: the same cubin (or PTX), its own module and stream.
  tk::cuda::Context ctx(0);
  const auto cubin = bundle.cubins.find(arch);
  tk::cuda::Module m = ctx.loadModule(cubin != bundle.cubins.end() ? cubin->second : bundle.ptx.at(arch));
  tk::cuda::Function f = ctx.function(m, bundle.kernel);
  tk::cuda::Stream cs = ctx.createStream();
  uint64_t ax = x.address(), ay = y.address(), aout = out.address();
  int32_t nn = n;
  void *params[] = {&ax, &ay, &aout, &nn};
  const tk::cuda::Driver &d = ctx.driver();
  const unsigned threads = unsigned(bundle.numWarps * 32);
  emit(row("cuLaunchKernel",
           usPerLaunch(
               [&] {
                 failed +=
                     d.cuLaunchKernel(f.handle, grid.x, 1, 1, threads, 1, 1, 0, cs.handle(), params, nullptr) != 0;
               },
               [&] { cs.synchronize(); }),
           "the Driver API call alone, on a prepared parameter array"));
  if (failed) throw tk::Error(std::to_string(failed) + " launches failed while timing");
}

}  // namespace kit
