// `tkc tune`: the autotuner on the command line -- the launch described as
// for `tkc run`, the space from the file's @tune or --config, a table on
// stdout, JSON and an SVG chart on request, shards and their merge.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <functional>
#include <iostream>

#include "ImportPaths.h"
#include "LaunchSpec.h"
#include "Npy.h"
#include "runtime/Descriptors.h"
#include "runtime/OutputFiles.h"
#include "tk/tune.h"

namespace tkc {
namespace {

struct TuneCli {
  std::string file, kernel, grid, device, json, plot, cacheDir, shard, prune, gpu = "H100", arch;
  std::vector<std::string> args, defines, configs, keys, merge, importPaths;
  int numWarps = 4, jobs = 0, maxSpillBytes = 256;
  unsigned workers = 0;
  uint64_t seed = LaunchSpec::kDefaultSeed, sampleBlocks = 512;
  bool noCache = false, noSpecialize = false;
};

// "I/N" -> (I, N).
std::pair<int, int> parseShard(const std::string &text) {
  size_t slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      size_t a = 0, b = 0;
      int i = std::stoi(text.substr(0, slash), &a), n = std::stoi(text.substr(slash + 1), &b);
      if (a == slash && b == text.size() - slash - 1 && n >= 1 && i >= 0 && i < n) return {i, n};
    }
  } catch (const std::exception &) {
  }
  throw tk::Error("--shard expects I/N with 0 <= I < N, got '" + text + "'");
}

// A progress bar on a terminal, plain lines otherwise (logs, CI).
std::function<void(int, int, const std::string &)> progressPrinter() {
  const bool tty = isatty(2);
  return [tty](int done, int total, const std::string &what) {
    if (!tty) {
      std::cerr << "tkc tune: [" << done << "/" << total << "] " << what << "\n";
      return;
    }
    const int width = 30, filled = total ? done * width / total : width;
    std::string line = "\r[" + std::string(filled, '#') + std::string(width - filled, '.') + "] " +
                       std::to_string(done) + "/" + std::to_string(total) + " " + what;
    if (line.size() > 100) line = line.substr(0, 100);
    std::cerr << line << "\033[K" << (done == total ? "\n" : "") << std::flush;
  };
}

int runTune(const TuneCli &o) {
  if (!o.merge.empty()) {
    if (o.cacheDir.empty()) throw tk::Error("--merge needs --cache-dir DIR: the cache to merge into");
    int n = tk::mergeTuneCaches(o.merge, o.cacheDir);
    std::cout << "merged " << n << " tuning entries into " << o.cacheDir << "\n";
    return 0;
  }
  if (o.file.empty()) throw tk::Error("tkc tune needs a .tk file (or --merge DIR... --cache-dir DIR)");
  if (o.kernel.empty()) throw tk::Error("tkc tune needs -k KERNEL");
  if (o.grid.empty()) throw tk::Error("tkc tune needs --grid EXPR[,EXPR[,EXPR]]");

  tk::TuneOptions opts;
  opts.compile.importPaths = o.importPaths;
  auto [spec, defines, source, params] = checkLaunch(o.file, o.kernel, o.args, o.grid, o.seed, o.defines, opts.compile);
  opts.compile.defines = defines;
  opts.gpu = o.gpu;
  tk::GpuSpec::named(o.gpu);  // an unknown GPU fails before any work
  opts.arch = o.arch;
  opts.jobs = o.jobs;
  opts.cache = !o.noCache;
  opts.cacheDir = o.cacheDir;
  opts.maxSpillBytes = o.maxSpillBytes;
  opts.sampleBlocks = o.sampleBlocks;
  opts.specialise = !o.noSpecialize;
  if (!o.shard.empty()) std::tie(opts.shardIndex, opts.shardCount) = parseShard(o.shard);
  opts.progress = progressPrinter();

  // --config replaces the file's configs; --key and --prune its key and
  // prune. The Tuner takes what is left empty from the file's @tune.
  tk::TuneSpace space;
  for (const std::string &c : o.configs) space.configs.push_back(tk::TuneConfig::parse(c, o.numWarps));
  space.key = o.keys;
  space.prune = o.prune;

  std::unique_ptr<tk::Device> dev = tk::Device::open(o.device, {.workers = o.workers});
  spec.numSms = dev->properties().multiprocessors;
  std::vector<tk::KernelParam> launchParams;
  std::vector<tk::Arg> scalarsOnly;  // buffers left empty, their sizes given: enough for the cache
  std::vector<size_t> bufferBytes;
  for (const tk::KernelParam &p : params) {
    if (p.isConst) continue;
    launchParams.push_back(p);
    const ArgSpec *a = spec.find(p.name);
    auto desc = tk::detail::parseDescriptorType(p.type);
    if (desc && a) {
      scalarsOnly.push_back(tk::TensorDescriptor::contiguous(tk::Buffer(), a->shape(), desc->block));
    } else {
      scalarsOnly.push_back(tk::Buffer());
    }
    bufferBytes.push_back(a && a->isBuffer ? size_t(a->count * scalarBytes(a->dtype)) : 0);
  }
  LaunchSpec::Bound bound;
  opts.preHook = [&] { spec.reset(*dev, bound); };
  tk::Tuner tuner(*dev, std::move(source), o.kernel, space, opts);

  // A space the cache answers whole needs no buffers: skip filling them.
  std::optional<tk::TuneReport> report;
  for (size_t i = 0; i < launchParams.size(); ++i)
    if (isScalarParam(launchParams[i])) scalarsOnly[i] = spec.bind(*dev, {launchParams[i]}).args.at(0);
  auto grid = [&](const tk::Bundle &b) { return spec.grid(b); };
  report = tuner.cached(grid, scalarsOnly, bufferBytes);
  if (!report) {
    bound = spec.bind(*dev, launchParams);
    report = tuner.tune(grid, bound.args);
  }
  std::cout << report->table();
  tk::files::OutputSet out;  // --json and --plot: both or neither
  if (!o.json.empty()) out.add(o.json, report->json());
  if (!o.plot.empty()) out.add(o.plot, report->svg());
  if (std::string error; !out.commit(error)) throw tk::Error(error);
  return 0;
}

}  // namespace

std::function<int()> addTuneCommand(CLI::App &app) {
  auto o = std::make_shared<TuneCli>();
  CLI::App *c = app.add_subcommand("tune", "Autotune a kernel over its @tune space or --config (docs/autotune.md)");
  c->add_option("file", o->file, "the .tk source");
  c->add_option("-k,--kernel", o->kernel, "the kernel to tune");
  c->add_option("--grid", o->grid, "blocks: 1 to 3 tk expressions over scalar args and consts, e.g. 'cdiv(n, BLOCK)'");
  c->add_option("--arg", o->args, "NAME=SPEC for each non-const parameter (see tkc run)");
  c->add_option("-D,--define", o->defines, "fix a const parameter for every config: NAME=VALUE");
  addImportPathOption(*c, o->importPaths);
  c->add_option("--num-warps", o->numWarps, "num_warps of a --config that names none")->default_val(4);
  c->add_flag("--no-specialize", o->noSpecialize,
              "tune the general variants: do not specialise on integer arguments equal to 1 or divisible by 16");
  c->add_option("--device", o->device, "sim[:OPTIONS] or cuda[:N] (default: a GPU if there is one, else the sim)");
  c->add_option("--seed", o->seed, "seed of rand/randn buffers");
  c->add_option("--config", o->configs, "a config 'C=V,C=V,num_warps=N,num_stages=S' (repeatable; replaces the file's space)");
  c->add_option("--key", o->keys, "a scalar argument whose value selects the tuning entry (repeatable)");
  c->add_option("--prune", o->prune, "a tk expression over consts, num_warps, num_stages and keys: true prunes");
  c->add_option("--json", o->json, "write the results as JSON");
  c->add_option("--plot", o->plot, "write an SVG chart of the sweep");
  c->add_option("--cache-dir", o->cacheDir, "the compile and tuning cache (default $TK_CACHE_DIR or ~/.cache/tk)");
  c->add_flag("--no-cache", o->noCache, "measure every config again (compiles still use the compile cache)");
  c->add_option("--shard", o->shard, "I/N: measure only configs i with i % N == I");
  c->add_option("--merge", o->merge, "merge the tuning caches in these directories into --cache-dir");
  c->add_option("--jobs", o->jobs, "parallel compiles (default: the core count)");
  c->add_option("--gpu", o->gpu, "the model's GPU on the sim: H100 or A100")->default_val("H100");
  c->add_option("--arch", o->arch, "compile for this arch (default: the device's, or the model GPU's)");
  c->add_option("--workers", o->workers, "the sim's worker threads (default: one per core)")->check(CLI::Range(1, 1024));
  c->add_option("--max-spill-bytes", o->maxSpillBytes, "prune variants spilling more per thread")->default_val(256);
  c->add_option("--sample-blocks", o->sampleBlocks, "sim: blocks run per variant, spread over the grid (0: all)")
      ->default_val(512);
  return [o] { return runTune(*o); };
}

}  // namespace tkc
