// `tkc run`: compile one kernel, fill its buffers, launch it once on the sim
// or a GPU, write the `>out.npy` buffers and report what the launch cost.
#include <CLI/CLI.hpp>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ImportPaths.h"
#include "LaunchSpec.h"
#include "Npy.h"
#include "tk/compiler.h"
#include "tk/runtime.h"
#include "tk/gpu.h"

namespace tkc {
namespace {

struct RunOptions {
  std::string file, kernel, grid, device, json, arch;
  std::vector<std::string> args, defines, importPaths;
  int numWarps = 4, numStages = 3;
  unsigned workers = 0;
  uint64_t seed = LaunchSpec::kDefaultSeed;
  bool noSpecialize = false;
};


nlohmann::ordered_json statsJson(const tk::LaunchStats &s) {
  // Field for field as tk::LaunchStats declares them.
  return {{"counted", s.counted},
          {"ms", s.ms},
          {"globalLoadBytes", s.globalLoadBytes},
          {"globalStoreBytes", s.globalStoreBytes},
          {"loadRequests", s.loadRequests},
          {"loadSectors", s.loadSectors},
          {"storeRequests", s.storeRequests},
          {"storeSectors", s.storeSectors},
          {"sharedRequests", s.sharedRequests},
          {"sharedWavefronts", s.sharedWavefronts},
          {"barriers", s.barriers},
          {"threadInstructions", s.threadInstructions},
          {"warpInstructions", s.warpInstructions},
          {"fpInstructions", s.fpInstructions},
          {"specialInstructions", s.specialInstructions},
          {"blocksRun", s.blocksRun},
          {"blocksTotal", s.blocksTotal}};
}

std::string perRequest(uint64_t n, uint64_t requests) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2) << (requests ? double(n) / double(requests) : 0.0);
  return os.str();
}

std::string summary(const tk::Bundle &bundle, const tk::Device &dev, tk::Dim3 grid, const tk::LaunchStats &s,
                    const LaunchSpec::Bound &bound) {
  std::ostringstream os;
  os << "kernel   " << bundle.kernel;
  for (const tk::KernelParam &p : bundle.params)
    if (p.isConst) os << "  " << p.name << "=" << p.value;
  os << "  num_warps=" << bundle.numWarps << "\n";
  if (!bundle.assumed.empty()) os << "assumed  " << assumedText(bundle) << "\n";
  os << "device   " << dev.name() << "\n";
  os << "grid     " << grid.x << " x " << grid.y << " x " << grid.z << " blocks of " << bundle.threadsPerBlock()
     << " threads\n";
  if (s.counted) {
    os << "global   " << s.globalLoadBytes << " B loaded, " << s.globalStoreBytes << " B stored\n";
    os << "sectors  " << perRequest(s.loadSectors, s.loadRequests) << " per load request (" << s.loadRequests
       << " requests), " << perRequest(s.storeSectors, s.storeRequests) << " per store request (" << s.storeRequests
       << " requests)\n";
    os << "shared   " << perRequest(s.sharedWavefronts, s.sharedRequests) << " wavefronts per request ("
       << s.sharedRequests << " requests)\n";
    os << "barriers " << s.barriers << "\n";
    os << "instrs   " << s.warpInstructions << " issued by warps; threads ran " << s.threadInstructions << " ("
       << s.fpInstructions << " fp, " << s.specialInstructions << " math-library calls)\n";
    os << "time     " << std::setprecision(4) << s.ms << " ms of sim time (the host's wall time, not a GPU's)\n";
  } else {
    os << "time     " << std::setprecision(4) << s.ms << " ms (CUDA events)\n";
  }
  for (const BoundBuffer &b : bound.buffers)
    if (!b.spec.outFile.empty())
      os << "wrote    " << b.spec.outFile << " (" << b.spec.dtype << "[" << b.spec.count << "])\n";
  return os.str();
}

int runRun(const RunOptions &o) {
  // Check the command line against the kernel's signature before the
  // (slower) compile and before touching a device.
  tk::CompileOptions opts;
  opts.importPaths = o.importPaths;
  auto [spec, defines, source, params] = checkLaunch(o.file, o.kernel, o.args, o.grid, o.seed, o.defines, opts);

  std::unique_ptr<tk::Device> dev = tk::Device::open(o.device, {.workers = o.workers});
  spec.numSms = dev->properties().multiprocessors;
  opts.defines = defines;
  opts.numWarps = o.numWarps;
  opts.numStages = o.numStages;
  if (!o.arch.empty()) opts.archs = {o.arch};
  opts.emitPtx = dev->kind() == "cuda";
  if (!o.noSpecialize) opts.assume = spec.specialisation(params);
  tk::Bundle bundle = source.compile(o.kernel, opts);
  tk::Dim3 grid = spec.grid(bundle);

  tk::Kernel kernel = dev->load(bundle);
  LaunchSpec::Bound bound = spec.bind(*dev, bundle.launchParams());
  tk::LaunchStats stats = dev->launch(kernel, grid, bound.args);
  // The .npy outputs and --json together: all written or none.
  tk::files::OutputSet out;
  spec.addOutputs(*dev, bound, out);
  if (!o.json.empty()) {
    nlohmann::ordered_json j = {{"kernel", bundle.kernel},          {"device", dev->name()},
                                {"grid", {grid.x, grid.y, grid.z}}, {"consts", constsJson(bundle)},
                                {"num_warps", bundle.numWarps},     {"assumed", bundle.assumed},
                                {"stats", statsJson(stats)}};
    out.add(o.json, j.dump(2) + "\n");
  }
  if (std::string error; !out.commit(error)) throw tk::Error(error);
  std::cout << summary(bundle, *dev, grid, stats, bound) << std::flush;
  return 0;
}

}  // namespace

std::function<int()> addRunCommand(CLI::App &app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App *run =
      app.add_subcommand("run", "Compile a kernel and launch it once on buffers described on the command line");
  run->add_option("file", o->file, "the .tk source")->required();
  run->add_option("-k,--kernel", o->kernel, "the kernel to run")->required();
  run->add_option("--grid", o->grid, "blocks: 1 to 3 comma-separated tk expressions over scalar args and consts")
      ->required();
  run->add_option("--arg", o->args,
                  "NAME=SPEC for every non-const parameter: a literal (98432, 1e-5, true) or a buffer "
                  "DTYPE[COUNT]:INIT[>OUT.npy], INIT one of rand randn zeros ones arange @FILE.npy")
      ->allow_extra_args(false);
  run->add_option("-D,--define", o->defines, "set a const parameter: NAME=VALUE (repeatable)")->allow_extra_args(false);
  addImportPathOption(*run, o->importPaths);
  run->add_option("--num-warps", o->numWarps, "warps per block (1, 2, 4, 8, 16, 32)")->default_val(4);
  run->add_option("--num-stages", o->numStages, "the software pipeline's depth (tensor-core operand rings)")
      ->default_val(3)
      ->check(CLI::Range(1, 8));
  run->add_option("--arch", o->arch,
                  "compile for this arch, which the sim runs too (sm_90a: dot on wgmma, host descriptors through "
                  "TMA, warp_specialize; default: the compiler's, sm_80)")
      ->check(CLI::IsMember({"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}));
  run->add_option("--device", o->device,
                  "sim[:OPTIONS] (sim:racecheck, sim:overflow, sim:workers=N) or cuda[:N] (default: a CUDA GPU if "
                  "there is one, else the sim)")
      ->check(
          [](const std::string &d) {
            for (const char *kind : {"sim", "cuda"})
              if (d == kind || d.rfind(std::string(kind) + ":", 0) == 0) return std::string();
            return "expected sim[:OPTIONS] or cuda[:N], not '" + d + "'";
          },
          "sim[:OPTIONS]|cuda[:N]");
  run->add_option("--workers", o->workers, "the sim's worker threads (default: one per core)")
      ->check(CLI::Range(1, 1024));
  run->add_option("--seed", o->seed, "seed of the rand/randn fills")->default_val(LaunchSpec::kDefaultSeed);
  run->add_flag("--no-specialize", o->noSpecialize,
               "run the general variant: do not specialise on integer arguments equal to 1 or divisible by 16");
  run->add_option("--json", o->json, "also write the kernel, device, grid, consts and launch stats as JSON");
  return [o] { return runRun(*o); };
}

}  // namespace tkc
