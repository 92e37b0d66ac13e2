// tk::Tuner: enumerate the space, prune by the user's predicate, look each
// config up in the tuning cache, compile the misses in parallel (through the
// compile cache), prune what cannot run well, measure the rest, remember the
// best per key. See docs/autotune.md.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "lang/Frontend.h"
#include "lang/HostExpr.h"
#include "runtime/CacheFiles.h"
#include "runtime/Descriptors.h"
#include "driver/CompileCache.h"
#include "driver/KernelLookup.h"
#include "tune/TuneCache.h"
#include "tune/TuneSpace.h"
#include "tk/tune.h"
#include "tk/jit.h"

namespace tk {

namespace {

// A key argument's value as text, exactly (floats round-trip).
std::string argText(const Arg &a) {
  return std::visit(
      [](const auto &v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        char buf[64];
        if constexpr (std::is_same_v<T, Buffer>) return "buffer";
        else if constexpr (std::is_same_v<T, TensorDescriptor>) return "descriptor";
        else if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, float>) std::snprintf(buf, sizeof buf, "%.9g", double(v));
        else if constexpr (std::is_same_v<T, double>) std::snprintf(buf, sizeof buf, "%.17g", v);
        else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
          std::snprintf(buf, sizeof buf, "%.9g", double(v.value()));
        else return std::to_string(int64_t(v));
        return buf;
      },
      a);
}

// A descriptor argument's buffer size (`bytes`: the buffer's, or the size
// an unbound one will have), shape and strides: a tuning done on one tensor
// is not replayed for another.
std::string descriptorText(const TensorDescriptor &d, size_t bytes) {
  std::string s = std::to_string(bytes) + "/";
  for (const std::vector<int64_t> *v : {&d.shape, &d.strides})
    for (int64_t x : *v) s += std::to_string(x) + (v == &d.shape ? "x" : ":");
  return s;
}

lang::HostValue argValue(const Arg &a) {
  return std::visit(
      [](const auto &v) -> lang::HostValue {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Buffer> || std::is_same_v<T, TensorDescriptor>) return lang::HostValue::ofInt(0);
        else if constexpr (std::is_same_v<T, bool>) return lang::HostValue::ofBool(v);
        else if constexpr (std::is_floating_point_v<T>) return lang::HostValue::ofFloat(double(v));
        else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
          return lang::HostValue::ofFloat(double(v.value()));
        else return lang::HostValue::ofInt(int64_t(v));
      },
      a);
}

std::string firstLine(const std::string &s) {
  std::string t = s.substr(0, s.find('\n'));
  return t.size() > 300 ? t.substr(0, 300) + "..." : t;
}

// The GPU a CUDA device is, for the resource checks (nullptr: not one tk knows).
const GpuSpec *specForDevice(const std::string &name) {
  for (const std::string &n : GpuSpec::names())
    if (name.find(n) != std::string::npos) return &GpuSpec::named(n);
  return nullptr;
}

}  // namespace

struct Tuner::Impl {
  Device &device;
  std::string path, kernel;
  TuneSpace space;
  TuneOptions opts;
  std::optional<SourceFile> source;  // read once: the signature, the key's hash and every compile
  lang::KernelSig sig;
  std::vector<KernelParam> launchParams;
  std::string kernelHash, arch, deviceId, cacheDir;
  const GpuSpec *gpu = nullptr;  // the model's GPU (sim) or the device's when known
  bool onSim = true;
  std::unique_ptr<lang::HostExpr> prune;
  std::function<void(const std::string &)> warn;

  struct Chosen {
    TuneConfig config;
    Kernel kernel;
  };
  std::map<std::string, Chosen> bestByKey;
  std::optional<Kernel> flushKernel;
  Buffer flushBuffer;

  Impl(Device &d, std::string p, std::string k, TuneSpace s, TuneOptions o)
      : device(d), path(std::move(p)), kernel(std::move(k)), space(std::move(s)), opts(std::move(o)) {}

  void setUp();
  std::map<std::string, std::string> keyValues(const std::vector<Arg> &args) const;
  std::optional<std::string> pruneReason(const TuneConfig &c, const std::vector<Arg> &args) const;
  // What a launch with `args` is compiled to assume (JitKernel's rule), and
  // the facts that gives, as bundles and cache entries record them.
  std::map<std::string, int64_t> specialisation(const std::vector<Arg> &args) const;
  static std::map<std::string, std::string> factsOf(const std::map<std::string, int64_t> &assume);
  CompileOptions compileOptions(const TuneConfig &c, const std::map<std::string, int64_t> &assume) const;
  std::string checkResources(const Bundle &b, TuneResult &r) const;
  void measure(const Kernel &k, Dim3 grid, const std::vector<Arg> &args, TuneResult &r);
  double benchCuda(const Kernel &k, Dim3 grid, const std::vector<Arg> &args);
  TuneReport run(const GridFn &grid, const std::vector<Arg> &args, const std::vector<size_t> &bufferBytes,
                 std::map<int, Kernel> *loaded, bool cacheOnly);
  // The grid `grid` gives config `c`, from a bundle that holds only the
  // signature's const values (as the compiled one will): what a cache lookup
  // keys on before anything compiles. nullopt when the function wants more.
  std::optional<Dim3> gridBeforeCompile(const GridFn &grid, const TuneConfig &c) const;
  std::string launchText(Dim3 grid, const std::vector<Arg> &args, const std::vector<size_t> &bufferBytes) const;
};

std::optional<Dim3> Tuner::Impl::gridBeforeCompile(const GridFn &grid, const TuneConfig &c) const {
  if (!grid) return std::nullopt;
  Bundle signatureOnly;
  signatureOnly.kernel = kernel;
  signatureOnly.numWarps = c.numWarps;
  for (const lang::ParamSig &p : sig.params) {
    if (!p.isConst) continue;
    KernelParam kp;
    kp.name = p.name;
    kp.isConst = true;
    kp.value = p.constValue;
    if (auto d = opts.compile.defines.find(p.name); d != opts.compile.defines.end()) kp.value = d->second;
    if (auto d = c.consts.find(p.name); d != c.consts.end()) kp.value = d->second;
    signatureOnly.params.push_back(kp);
  }
  try {
    return grid(signatureOnly);
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

// Everything besides the config and the key values that a measurement
// depends on, so that no entry is replayed for another launch: the grid, the
// size of every buffer, and the options that prune or sample.
std::string Tuner::Impl::launchText(Dim3 grid, const std::vector<Arg> &args,
                                    const std::vector<size_t> &bufferBytes) const {
  std::string out = "grid=" + std::to_string(grid.x) + "," + std::to_string(grid.y) + "," + std::to_string(grid.z) +
                    ";buffers=";
  for (size_t i = 0; i < args.size(); ++i)
    if (const Buffer *b = std::get_if<Buffer>(&args[i]))
      out += std::to_string(*b || i >= bufferBytes.size() ? b->size() : bufferBytes[i]) + ",";
    else if (const TensorDescriptor *d = std::get_if<TensorDescriptor>(&args[i]))
      out += descriptorText(*d, d->base || i >= bufferBytes.size() ? d->base.size() : bufferBytes[i]) + ",";
  return out + ";max_spill_bytes=" + std::to_string(opts.maxSpillBytes) +
         ";sample_blocks=" + std::to_string(opts.sampleBlocks);
}

void Tuner::Impl::setUp() {
  warn = cache::orStderr(opts.warn);
  if (!source) source.emplace(path, opts.compile);
  sig = detail::findKernel(detail::SourceFileAccess::kernels(*source), path, kernel);
  // What the space leaves empty comes from the file's @tune.
  const TuneSpace declared = detail::declaredSpace(sig);
  if (space.configs.empty()) space.configs = declared.configs;
  if (space.key.empty()) space.key = declared.key;
  if (space.prune.empty()) space.prune = declared.prune;
  if (space.configs.empty())
    throw Error("nothing to tune: kernel '" + kernel + "' declares no @tune space and no config was given (--config)");

  std::string consts;
  for (const lang::ParamSig &p : sig.params) {
    if (p.isConst) consts += (consts.empty() ? "" : ", ") + p.name;
    else launchParams.push_back(KernelParam{p.name, p.type, false, "", p.align, p.noSpecialize, p.multipleOf});
  }
  for (const TuneConfig &c : space.configs)
    for (const auto &[name, value] : c.consts) {
      bool isConst = false;
      for (const lang::ParamSig &p : sig.params) isConst |= p.isConst && p.name == name;
      if (!isConst)
        throw Error("config " + c.str() + ": '" + name + "' is not a const parameter of '" + kernel + "'" +
                    (consts.empty() ? " (it has none)" : " (consts: " + consts + ")"));
    }
  for (size_t i = 0; i < space.configs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (space.configs[i] == space.configs[j]) throw Error("config " + space.configs[i].str() + " is given twice");
  std::string args;
  for (const KernelParam &p : launchParams) args += (args.empty() ? "" : ", ") + p.name;
  for (const std::string &k : space.key) {
    auto it = std::find_if(launchParams.begin(), launchParams.end(), [&](const KernelParam &p) { return p.name == k; });
    if (it == launchParams.end())
      throw Error("key '" + k + "' is not an argument of '" + kernel + "' (arguments: " + args + ")");
    if (!it->type.empty() && it->type[0] == '*')
      throw Error("key '" + k + "' is a pointer argument; a key names scalar arguments, whose values select the tuning entry");
    if (detail::parseDescriptorType(it->type))
      throw Error("key '" + k + "' is a tensor descriptor; a key names scalar arguments, whose values select the tuning "
                  "entry (pass the sizes that should select it as scalars)");
  }
  if (!space.prune.empty()) {
    std::string error;
    prune = lang::HostExpr::parse(space.prune, "prune", error);
    if (!prune) throw Error("bad prune expression:\n" + error);
    for (const std::string &n : prune->names()) {
      bool known = n == "num_warps" || n == "num_stages" ||
                   std::find(space.key.begin(), space.key.end(), n) != space.key.end();
      for (const lang::ParamSig &p : sig.params) known |= p.isConst && p.name == n;
      if (!known)
        throw Error("prune expression '" + space.prune + "': '" + n +
                    "' is not a const parameter, num_warps, num_stages or a key argument");
    }
  }

  onSim = device.kind() == "sim";
  if (onSim) {
    gpu = &GpuSpec::named(opts.gpu);
    arch = opts.arch.empty() ? gpu->arch : opts.arch;
    deviceId = "sim/model:" + gpu->name;
  } else {
    gpu = specForDevice(device.name());
    arch = opts.arch.empty() ? device.arch() : opts.arch;
    deviceId = "cuda/" + device.name();
  }
  cacheDir = cacheDirectory(opts.cacheDir.empty() ? opts.compile.cacheDir : opts.cacheDir);
  CompileOptions base = opts.compile;
  base.numWarps = 0;
  base.numStages = 0;
  base.archs = {arch};
  kernelHash = detail::compileKey(detail::SourceFileAccess::sources(*source), kernel, base, "");
}

std::map<std::string, std::string> Tuner::Impl::keyValues(const std::vector<Arg> &args) const {
  if (args.size() != launchParams.size())
    throw Error("kernel '" + kernel + "' takes " + std::to_string(launchParams.size()) + " arguments, got " +
                std::to_string(args.size()));
  std::map<std::string, std::string> out;
  for (const std::string &k : space.key)
    for (size_t i = 0; i < launchParams.size(); ++i)
      if (launchParams[i].name == k) out[k] = argText(args[i]);
  return out;
}

std::optional<std::string> Tuner::Impl::pruneReason(const TuneConfig &c, const std::vector<Arg> &args) const {
  if (!prune) return std::nullopt;
  std::map<std::string, lang::HostValue> values;
  for (const lang::ParamSig &p : sig.params) {
    if (!p.isConst) continue;
    std::string text = p.constValue;
    if (auto d = opts.compile.defines.find(p.name); d != opts.compile.defines.end()) text = d->second;
    if (auto d = c.consts.find(p.name); d != c.consts.end()) text = d->second;
    if (auto v = lang::HostValue::parseLiteral(text)) values[p.name] = *v;
  }
  values["num_warps"] = lang::HostValue::ofInt(c.numWarps);
  values["num_stages"] = lang::HostValue::ofInt(c.numStages);
  for (const std::string &k : space.key)
    for (size_t i = 0; i < launchParams.size(); ++i)
      if (launchParams[i].name == k) values[k] = argValue(args[i]);
  lang::HostValue v = prune->eval(values);
  if (v.kind != lang::HostValue::Kind::Bool)
    throw Error("prune expression '" + space.prune + "' gives " + lang::HostValue::kindName(v.kind) + ", not bool");
  if (v.i) return "prune: " + prune->str();
  return std::nullopt;
}

std::map<std::string, int64_t> Tuner::Impl::specialisation(const std::vector<Arg> &args) const {
  if (!opts.specialise || !opts.compile.assume.empty()) return opts.compile.assume;
  return launchSpecialisation(launchParams, args);
}

std::map<std::string, std::string> Tuner::Impl::factsOf(const std::map<std::string, int64_t> &assume) {
  std::map<std::string, std::string> out;
  for (const auto &[name, value] : assume)
    if (std::string f = integerFact(value); !f.empty()) out[name] = f;
  return out;
}

CompileOptions Tuner::Impl::compileOptions(const TuneConfig &c, const std::map<std::string, int64_t> &assume) const {
  CompileOptions co = opts.compile;
  co.assume = assume;
  for (const auto &[name, value] : c.consts) co.defines[name] = value;
  co.numWarps = c.numWarps;
  co.numStages = c.numStages;
  co.archs = {arch};
  co.ptxasResources = true;
  co.cacheDir = cacheDir;
  co.warn = warn;
  co.printAfter.clear();
  return co;
}

// Prunes a compiled variant the GPU cannot run, or could run only badly:
// more shared memory or registers than the SM has, spills past the limit.
std::string Tuner::Impl::checkResources(const Bundle &b, TuneResult &r) const {
  const ModelInput in = modelInput(LaunchStats{}, Dim3{1, 1, 1}, b, arch);
  r.registers = in.registers;
  r.spillBytes = in.registers >= 0 ? in.spillBytes : -1;  // unknown without ptxas
  r.sharedBytes = in.sharedBytes;
  if (r.spillBytes > opts.maxSpillBytes)
    return "spills " + std::to_string(r.spillBytes) + " bytes per thread (limit " + std::to_string(opts.maxSpillBytes) +
           ", TuneOptions::maxSpillBytes / --max-spill-bytes)";
  if (gpu)
    if (ModelEstimate e = estimateTime(*gpu, in); !e.launchable) return e.whyNot;
  return "";
}

double Tuner::Impl::benchCuda(const Kernel &k, Dim3 grid, const std::vector<Arg> &args) {
  // Flush L2 between repetitions by writing a buffer larger than any L2
  // (H100: 50 MB), as triton.testing.do_bench does.
  constexpr int32_t kFlushInts = 64 << 20;  // 256 MB
  if (!flushKernel) {
    static const char *source =
        "kernel tk_flush_l2(buf: *i32, n: i32, const BLOCK: i32 = 1024) {\n"
        "    let offs = program_id(0) * BLOCK + arange(BLOCK);\n"
        "    store(buf + offs, zeros([BLOCK], i32), mask: offs < n);\n"
        "}\n";
    CompileOptions co = opts.compile;
    co.defines.clear();
    co.archs = {arch};
    co.cacheDir = cacheDir;
    co.warn = warn;
    flushKernel = device.load(Compiler::compileSource(source, "<tk-flush-l2>", "tk_flush_l2", co));
    flushBuffer = device.alloc(size_t(kFlushInts) * 4);
  }
  auto flush = [&] { device.launch(*flushKernel, Dim3{uint32_t(kFlushInts / 1024)}, {flushBuffer, kFlushInts}); };
  for (int i = 0; i < 3; ++i) {  // warm-up
    if (opts.preHook) opts.preHook();
    device.launch(k, grid, args);
  }
  std::vector<double> times;
  double total = 0;
  while ((total < opts.benchMs || times.size() < 10) && times.size() < 10000) {
    if (opts.preHook) opts.preHook();
    flush();
    double ms = device.launch(k, grid, args).ms;
    times.push_back(ms);
    total += ms;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void Tuner::Impl::measure(const Kernel &k, Dim3 grid, const std::vector<Arg> &given, TuneResult &r) {
  const std::vector<Arg> args = detail::withKernelBlocks(k.bundle(), given);
  if (!onSim) {
    r.ms = benchCuda(k, grid, args);
    return;
  }
  if (opts.preHook) opts.preHook();
  LaunchOptions lo;
  lo.sampleBlocks = opts.sampleBlocks;
  LaunchStats s = device.launch(k, grid, args, lo);
  ModelInput in = modelInput(s, grid, k.bundle(), arch);
  r.model = estimateTime(*gpu, in);
  if (!r.model.launchable) {
    r.status = "pruned";
    r.reason = r.model.whyNot;
    return;
  }
  r.ms = r.model.us / 1000;
}

// With `cacheOnly`, stops (returning a report with best -2) at the first
// config the cache cannot answer.
TuneReport Tuner::Impl::run(const GridFn &grid, const std::vector<Arg> &args, const std::vector<size_t> &bufferBytes,
                            std::map<int, Kernel> *loaded, bool cacheOnly) {
  if (opts.shardCount < 1 || opts.shardIndex < 0 || opts.shardIndex >= opts.shardCount)
    throw Error("bad shard " + std::to_string(opts.shardIndex) + "/" + std::to_string(opts.shardCount) +
                ": expected I/N with 0 <= I < N");
  TuneReport report;
  report.kernel = kernel;
  report.source = path;
  report.device = device.name();
  report.measure = onSim ? "model" : "cuda-events";
  report.gpu = gpu ? gpu->name : device.name();
  report.key = keyValues(args);
  const std::map<std::string, int64_t> assume = specialisation(args);
  report.assumed = factsOf(assume);
  report.shardIndex = opts.shardIndex;
  report.shardCount = opts.shardCount;
  report.spaceSize = int(space.configs.size());
  const bool useCache = opts.cache && cache::trustedDirectory(cacheDir, warn);
  auto entryKey = [&](const TuneConfig &c, Dim3 g) {
    return detail::TuneEntryKey{kernel, kernelHash, deviceId, report.key, c, report.assumed, launchText(g, args, bufferBytes)};
  };

  // Which configs this run owns, the user's prune, then the tuning cache.
  std::vector<int> owned, toCompile;
  for (int i = 0; i < int(space.configs.size()); ++i)
    if (i % opts.shardCount == opts.shardIndex) owned.push_back(i);
  std::map<int, TuneResult> results;
  for (int i : owned) {
    TuneResult r;
    r.config = space.configs[i];
    try {
      if (std::optional<std::string> why = pruneReason(r.config, args)) {
        r.status = "pruned";
        r.reason = *why;
        results[i] = r;
        continue;
      }
    } catch (const HostExprError &e) {
      e.rethrowPrefixed("prune expression '" + space.prune + "' for config " + r.config.str() + ": ");
    }
    if (std::optional<Dim3> g = gridBeforeCompile(grid, r.config); useCache && g)
      if (auto hit = detail::lookupTuneEntry(cacheDir, entryKey(r.config, *g), warn)) {
        results[i] = *hit;
        ++report.cacheHits;
        continue;
      }
    if (cacheOnly) {
      report.best = -2;
      return report;
    }
    results[i] = r;
    toCompile.push_back(i);
  }

  // Compile the misses in parallel: each has its own LLVM context; the one
  // front end serves them in turn (SourceFile::compile).
  std::map<int, Bundle> bundles;
  std::mutex mu;
  std::atomic<size_t> next{0};
  std::atomic<int> done{0};
  const Compiler::CacheStats before = Compiler::cacheStats();
  auto worker = [&] {
    for (size_t n; (n = next++) < toCompile.size();) {
      const int i = toCompile[n];
      const TuneConfig &c = space.configs[i];
      std::optional<Bundle> b;
      std::string error;
      try {
        b = source->compile(kernel, compileOptions(c, assume));
      } catch (const std::exception &e) {
        error = firstLine(e.what());
      }
      std::lock_guard<std::mutex> lock(mu);
      if (b) bundles.emplace(i, std::move(*b));
      else {
        results[i].status = "error";
        results[i].reason = "compile: " + error;
      }
      if (opts.progress) opts.progress(++done, int(toCompile.size()), "compiled " + c.str());
    }
  };
  unsigned jobs = opts.jobs > 0 ? unsigned(opts.jobs) : std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min<unsigned>(jobs, std::max<size_t>(1, toCompile.size()));
  std::vector<std::thread> pool;
  for (unsigned j = 1; j < jobs; ++j) pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool) t.join();
  report.compiled = int(Compiler::cacheStats().compiled - before.compiled);

  // Measure one variant at a time: timings must not share the device.
  int measured = 0;
  for (int i : toCompile) {
    TuneResult &r = results[i];
    std::optional<Dim3> launched;  // the grid the variant ran with
    bool launchFailed = false;
    if (auto b = bundles.find(i); b != bundles.end()) {
      std::string why = checkResources(b->second, r);
      if (!why.empty()) {
        r.status = "pruned";
        r.reason = why;
      } else {
        try {
          Kernel k = device.load(b->second);
          launched = grid(k.bundle());
          measure(k, *launched, args, r);
          ++report.timed;
          if (loaded) loaded->emplace(i, k);
        } catch (const Error &e) {
          r.status = "error";
          r.reason = firstLine(e.what());
          launchFailed = true;
        }
      }
    }
    // A launch that failed may have failed for these arguments (buffers too
    // small, a bad grid), not for the config: measured again next time.
    if (!launched) launched = gridBeforeCompile(grid, r.config);
    if (useCache && launched && !launchFailed)
      detail::storeTuneEntry(cacheDir, entryKey(r.config, *launched), r, report.measure, warn);
    if (opts.progress) opts.progress(++measured, int(toCompile.size()), (r.status == "ok" ? "measured " : r.status + " ") + r.config.str());
  }

  for (auto &[i, r] : results) {
    if (r.status == "ok" && (report.best < 0 || r.ms < report.results[report.best].ms)) report.best = int(report.results.size());
    report.results.push_back(std::move(r));
  }
  if (report.best < 0 && opts.shardCount == 1) {
    std::string why;
    for (const TuneResult &r : report.results) why += "\n  " + r.config.str() + ": " + r.status + ", " + r.reason;
    throw Error("no config of '" + kernel + "' could run:" + why);
  }
  return report;
}

Tuner::Tuner(Device &device, std::string path, std::string kernel, TuneSpace space, TuneOptions opts)
    : impl_(std::make_unique<Impl>(device, std::move(path), std::move(kernel), std::move(space), std::move(opts))) {
  impl_->setUp();
}

Tuner::Tuner(Device &device, SourceFile source, std::string kernel, TuneSpace space, TuneOptions opts)
    : impl_(std::make_unique<Impl>(device, source.path(), std::move(kernel), std::move(space), std::move(opts))) {
  impl_->source.emplace(std::move(source));  // setUp loads the file only where no source came
  impl_->setUp();
}
Tuner::~Tuner() = default;

const TuneSpace &Tuner::space() const { return impl_->space; }

TuneReport Tuner::tune(const GridFn &grid, const std::vector<Arg> &args) {
  std::map<int, Kernel> loaded;
  TuneReport report = impl_->run(grid, args, {}, &loaded, false);
  // Unsharded, results are the space's configs in order: best is its index.
  if (report.best >= 0 && impl_->opts.shardCount == 1)
    if (auto it = loaded.find(report.best); it != loaded.end())
      impl_->bestByKey.insert_or_assign(detail::keyText(report.key) + "|" + detail::keyText(report.assumed),
                                        Impl::Chosen{report.results[report.best].config, it->second});
  return report;
}

std::optional<TuneReport> Tuner::cached(const GridFn &grid, const std::vector<Arg> &args,
                                        const std::vector<size_t> &bufferBytes) {
  if (!impl_->opts.cache) return std::nullopt;
  TuneReport report = impl_->run(grid, args, bufferBytes, nullptr, true);
  if (report.best == -2) return std::nullopt;
  return report;
}

const Kernel &Tuner::best(const GridFn &grid, const std::vector<Arg> &args) {
  const std::map<std::string, int64_t> assume = impl_->specialisation(args);
  const std::string keyText = detail::keyText(impl_->keyValues(args)) + "|" + detail::keyText(Impl::factsOf(assume));
  if (auto it = impl_->bestByKey.find(keyText); it != impl_->bestByKey.end()) return it->second.kernel;
  TuneReport report = tune(grid, args);
  if (auto it = impl_->bestByKey.find(keyText); it != impl_->bestByKey.end()) return it->second.kernel;
  // Every result came from the tuning cache: compile (a compile-cache hit) and load the best.
  const TuneConfig &c = report.bestResult().config;
  Kernel k = impl_->device.load(impl_->source->compile(impl_->kernel, impl_->compileOptions(c, assume)));
  return impl_->bestByKey.insert_or_assign(keyText, Impl::Chosen{c, k}).first->second.kernel;
}

LaunchStats Tuner::launch(const GridFn &grid, const std::vector<Arg> &args) {
  const Kernel &k = best(grid, args);
  return impl_->device.launch(k, grid(k.bundle()), detail::withKernelBlocks(k.bundle(), args));
}

}  // namespace tk
