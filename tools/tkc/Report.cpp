// `tkc report`: the profiler view without a GPU. Runs a kernel once on the sim
// over its whole grid and prints, per memory instruction by `.tk` line, what
// Nsight Compute would, with ptxas's resources and the performance model's
// occupancy, estimate and roofline point; each figure says where it came from.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "ImportPaths.h"
#include "LaunchSpec.h"
#include "Npy.h"
#include "tk/compiler.h"
#include "tk/perf.h"
#include "tk/runtime.h"
#include "tk/gpu.h"

namespace tkc {
namespace {

struct ReportOptions {
  std::string file, kernel, grid, json, gpu = "h100", arch;
  std::vector<std::string> args, defines, assume, importPaths;
  int numWarps = 4, numStages = 3;
  unsigned workers = 0;
  std::string device = "sim";  // sim[:OPTIONS]: the report runs on the sim, with its checks if asked
  uint64_t seed = LaunchSpec::kDefaultSeed, idealBytes = 0;
  bool noSpecialize = false;
};

using Json = nlohmann::ordered_json;

std::string fixed(double v, int decimals) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(decimals) << v;
  return os.str();
}

double ratio(uint64_t n, uint64_t d) { return d ? double(n) / double(d) : 0.0; }

// "/a/b/file.tk:12:5" -> "file.tk:12:5": the table's column stays narrow;
// the JSON keeps the whole path.
std::string shortLoc(const std::string &loc) {
  if (loc.empty()) return "(no loc)";
  size_t slash = loc.rfind('/', loc.find(':'));
  return slash == std::string::npos ? loc : loc.substr(slash + 1);
}

bool isShared(const tk::SiteStats &s) {
  return s.kind.rfind("shared", 0) == 0 || s.kind == "ldmatrix" || s.kind == "wgmma";
}

// Everything the report shows, computed once for the text and the JSON.
struct Report {
  tk::Bundle bundle;
  std::string device;
  tk::Dim3 grid;
  const tk::GpuSpec *gpu = nullptr;
  std::string arch;
  std::optional<tk::Resources> ptxas;  // absent without the CUDA toolkit
  std::string noPtx;                   // why no PTX could be made, when it could not
  tk::LaunchStats stats;
  tk::ModelEstimate model;
  uint64_t idealBytes = 0;
  bool idealGiven = false;
  double flops = 0, intensity = 0, balance = 0;
  std::vector<tk::Compiler::PaddedTile> padding;  // tiles not of power-of-two dims, from the front end
};

int64_t elements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// The share of a padded tile's lanes that hold no element.
double idleShare(const tk::Compiler::PaddedTile &t) { return 1.0 - double(elements(t.shape)) / double(elements(t.padded)); }

// One line per padded tile, the most wasteful first, at most eight.
std::string paddingText(const std::vector<tk::Compiler::PaddedTile> &padding) {
  std::vector<const tk::Compiler::PaddedTile *> order;
  for (const auto &t : padding) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](auto *a, auto *b) { return idleShare(*a) > idleShare(*b); });
  std::ostringstream os;
  os << "padding    [tile IR] tiles whose dims are not powers of two hold the next power of two (the padding's lanes\n"
     << "                     idle and masked off; loads and stores of an odd size go element by element):\n";
  for (size_t i = 0; i < order.size() && i < 8; ++i)
    os << "  " << shortLoc(order[i]->loc) << "  " << shapeText(order[i]->shape) << " in "
       << shapeText(order[i]->padded) << ", " << fixed(100 * idleShare(*order[i]), 0) << "% idle\n";
  if (order.size() > 8) os << "  (and " << order.size() - 8 << " more, listed in --json)\n";
  return os.str();
}

// The per-line table: one row per memory instruction, in source order.
std::string linesTable(const std::vector<tk::SiteStats> &sites) {
  std::ostringstream os;
  size_t w = 4;
  for (const tk::SiteStats &s : sites) w = std::max(w, shortLoc(s.loc).size());
  os << "  " << std::left << std::setw(int(w)) << "loc" << "  " << std::setw(13) << "kind" << std::right
     << std::setw(7) << "vector" << std::setw(12) << "requests" << std::setw(14) << "bytes" << std::setw(13)
     << "sectors/req" << std::setw(16) << "wavefronts/req" << "\n";
  size_t idle = 0;
  for (const tk::SiteStats &s : sites) {
    // A path no lane took (the scalar tail beside a vector body) is noise
    // here; the JSON keeps it.
    if (s.requests == 0) {
      ++idle;
      continue;
    }
    bool shared = isShared(s);
    os << "  " << std::left << std::setw(int(w)) << shortLoc(s.loc) << "  " << std::setw(13) << s.kind << std::right
       << std::setw(7) << (std::to_string(s.accessBytes) + " B") << std::setw(12) << s.requests << std::setw(14)
       << s.bytes << std::setw(13) << (shared ? "-" : fixed(ratio(s.sectors, s.requests), 2)) << std::setw(16)
       << (shared ? fixed(ratio(s.wavefronts, s.requests), 2) : "-") << "\n";
  }
  if (idle > 0) os << "  (and " << idle << " that never ran, listed in --json)\n";
  return os.str();
}

std::string text(const Report &r) {
  const tk::LaunchStats &s = r.stats;
  const tk::ModelEstimate &m = r.model;
  std::ostringstream os;
  os << "kernel     " << r.bundle.kernel;
  for (const tk::KernelParam &p : r.bundle.params)
    if (p.isConst) os << "  " << p.name << "=" << p.value;
  os << "  num_warps=" << r.bundle.numWarps << "\n";
  if (!r.bundle.assumed.empty()) os << "assumed    " << assumedText(r.bundle) << "\n";
  os << "grid       " << r.grid.x << " x " << r.grid.y << " x " << r.grid.z << " blocks of " << r.bundle.threadsPerBlock()
     << " threads, every block run once on " << r.device << "\n";
  os << "figures    [sim] counted by the sim; [ptxas] ptxas -v for " << r.arch << "; [model] the performance model for "
     << r.gpu->name << " (an estimate, not a measurement)\n\n";

  os << "resources  [ptxas]  ";
  if (r.ptxas)
    os << r.ptxas->registers << " registers, " << r.ptxas->spillStoreBytes + r.ptxas->spillLoadBytes
       << " bytes spilled per thread, shared " << r.ptxas->sharedStaticBytes << " B static + "
       << r.bundle.sharedBytes << " B dynamic per block\n";
  else
    os << "registers unknown (no ptxas), shared " << r.bundle.sharedBytes << " B dynamic per block (static unknown)\n";
  if (!r.noPtx.empty()) os << "note       [ptxas]  no PTX: " << r.noPtx << "\n";
  if (m.blocksPerSm > 0)
    os << "occupancy  [model]  " << m.blocksPerSm << " blocks/SM = " << m.blocksPerSm * r.bundle.numWarps
       << " warps/SM (" << fixed(100.0 * m.blocksPerSm * r.bundle.numWarps * tk::kWarpSize / r.gpu->maxThreadsPerSm, 0)
       << "% of " << r.gpu->maxThreadsPerSm / tk::kWarpSize << "), limited by " << m.limitedBy << "; this grid fills "
       << fixed(100 * m.occupancy, 0) << "%\n";
  if (!m.note.empty()) os << "note       [model]  " << m.note << "\n";
  if (!r.padding.empty()) os << paddingText(r.padding);

  os << "\nmemory instructions [sim], by source position:\n" << linesTable(s.sites) << "\n";
  os << "bytes      [sim]    " << s.bytesMoved() << " moved (" << s.globalLoadBytes << " loaded, " << s.globalStoreBytes
     << " stored): " << fixed(ratio(s.bytesMoved(), r.idealBytes), 2) << "x the ideal " << r.idealBytes
     << (r.idealGiven ? " (--ideal-bytes)" : " (each buffer once)") << "\n";
  os << "sectors    [sim]    " << fixed(ratio(s.loadSectors, s.loadRequests), 2) << " per load request ("
     << s.loadRequests << " requests), " << fixed(ratio(s.storeSectors, s.storeRequests), 2)
     << " per store request (" << s.storeRequests << " requests)\n";
  os << "shared     [sim]    " << fixed(ratio(s.sharedWavefronts, s.sharedRequests), 2) << " wavefronts per request ("
     << s.sharedRequests << " requests), " << s.barriers << " barriers\n";
  if (!m.launchable) {
    os << "estimate   [model]  not launchable on " << r.gpu->name << ": " << m.whyNot << "\n";
    return os.str();
  }
  os << "dram       [model]  " << fixed(m.dramBytes, 0) << " B (sectors x 32 + spills)\n";
  os << "estimate   [model]  " << fixed(m.us, 2) << " us on " << r.gpu->name << ", bound by " << m.bound
     << " (memory " << fixed(m.memoryUs, 2) << ", compute " << fixed(m.computeUs, 2) << ", shared memory "
     << fixed(m.sharedUs, 2) << ", latency " << fixed(m.latencyUs, 2) << ", launch " << fixed(m.launchUs, 2)
     << " us)\n";
  os << "roofline   [model]  " << fixed(r.intensity, 2) << " flop/B (" << fixed(r.flops, 0) << " fp instructions / "
     << fixed(m.dramBytes, 0) << " DRAM bytes) against a balance of " << fixed(r.balance, 2) << " flop/B: "
     << (r.intensity < r.balance ? "the memory side" : "the compute side") << " of the ridge\n";
  return os.str();
}

Json json(const Report &r) {
  const tk::LaunchStats &s = r.stats;
  const tk::ModelEstimate &m = r.model;
  auto orNull = [](bool known, auto v) { return known ? Json(v) : Json(nullptr); };
  Json consts = constsJson(r.bundle);
  Json lines = Json::array();
  for (const tk::SiteStats &l : s.sites) {
    bool shared = isShared(l);
    lines.push_back({{"loc", l.loc},
                     {"kind", l.kind},
                     {"bytes", l.bytes},
                     {"requests", l.requests},
                     {"sectors_per_request", orNull(!shared, ratio(l.sectors, l.requests))},
                     {"vector_bytes", l.accessBytes},
                     {"wavefronts_per_request", orNull(shared, ratio(l.wavefronts, l.requests))}});
  }
  const bool known = r.ptxas.has_value();
  const int spill = known ? r.ptxas->spillStoreBytes + r.ptxas->spillLoadBytes : 0;
  Json j = {{"kernel", r.bundle.kernel},
            {"source", r.bundle.source},
            {"device", r.device},
            {"gpu", r.gpu->name},
            {"arch", r.arch},
            {"grid", {r.grid.x, r.grid.y, r.grid.z}},
            {"consts", consts},
            {"num_warps", r.bundle.numWarps},
            {"assumed", r.bundle.assumed},
            {"registers", orNull(known, known ? r.ptxas->registers : 0)},
            {"spill_bytes", orNull(known, spill)},
            {"shared_bytes", r.bundle.sharedBytes + (known ? r.ptxas->sharedStaticBytes : 0)},
            {"shared_static_bytes", orNull(known, known ? r.ptxas->sharedStaticBytes : 0)},
            {"shared_dynamic_bytes", r.bundle.sharedBytes},
            {"blocks_per_sm", m.blocksPerSm},
            {"warps_per_sm", m.blocksPerSm * r.bundle.numWarps},
            {"occupancy", m.occupancy},
            {"occupancy_limited_by", m.limitedBy},
            {"bytes_moved", s.bytesMoved()},
            {"bytes_loaded", s.globalLoadBytes},
            {"bytes_stored", s.globalStoreBytes},
            {"ideal_bytes", r.idealBytes},
            {"ideal_from", r.idealGiven ? "--ideal-bytes" : "buffers"},
            {"sectors_per_request", ratio(s.loadSectors + s.storeSectors, s.loadRequests + s.storeRequests)},
            {"load_sectors_per_request", ratio(s.loadSectors, s.loadRequests)},
            {"store_sectors_per_request", ratio(s.storeSectors, s.storeRequests)},
            {"shared_wavefronts_per_request", ratio(s.sharedWavefronts, s.sharedRequests)},
            {"barriers", s.barriers},
            {"no_ptx_because", r.noPtx},
            {"launchable", m.launchable},
            {"not_launchable_because", m.whyNot},
            {"estimated_ms", orNull(m.launchable, m.us / 1000)},
            {"limiter", orNull(m.launchable, m.bound)},
            {"model_us",
             {{"memory", m.memoryUs},
              {"compute", m.computeUs},
              {"shared_memory", m.sharedUs},
              {"latency", m.latencyUs},
              {"launch", m.launchUs}}},
            {"model_note", m.note},
            {"dram_bytes", m.dramBytes},
            {"fp_instructions", s.fpInstructions},
            {"arithmetic_intensity", r.intensity},
            {"machine_balance", r.balance},
            {"lines", lines}};
  Json padding = Json::array();
  for (const tk::Compiler::PaddedTile &t : r.padding)
    padding.push_back({{"loc", t.loc}, {"shape", t.shape}, {"padded", t.padded}, {"idle", idleShare(t)}});
  j["padding"] = padding;
  // Where each figure comes from: counted on the sim, reported by ptxas, or
  // the performance model's.
  Json measure = Json::object();
  for (const char *k : {"bytes_moved", "bytes_loaded", "bytes_stored", "sectors_per_request", "load_sectors_per_request",
                        "store_sectors_per_request", "shared_wavefronts_per_request", "barriers", "fp_instructions",
                        "lines"})
    measure[k] = "sim";
  measure["padding"] = "tile IR";
  for (const char *k : {"registers", "spill_bytes", "shared_static_bytes"}) measure[k] = "ptxas";
  for (const char *k : {"blocks_per_sm", "warps_per_sm", "occupancy", "estimated_ms", "limiter", "model_us",
                        "dram_bytes", "arithmetic_intensity", "machine_balance"})
    measure[k] = "model";
  j["measure"] = measure;
  return j;
}

int runReport(const ReportOptions &o) {
  // Everything the command line can get wrong fails here, before a compile,
  // a launch or a file written.
  Report r;
  r.gpu = &tk::GpuSpec::named(o.gpu);
  r.arch = o.arch.empty() ? r.gpu->arch : o.arch;
  tk::CompileOptions opts;
  opts.importPaths = o.importPaths;
  auto [spec, defines, source, params] = checkLaunch(o.file, o.kernel, o.args, o.grid, o.seed, o.defines, opts);

  // The report always runs on the sim: its counters are the measurement.
  // num_sms() in the grid is the modelled GPU's, whose time it estimates.
  std::unique_ptr<tk::Device> dev = tk::Device::open(o.device, {.workers = o.workers});
  spec.numSms = r.gpu->sms;
  opts.defines = defines;
  opts.numWarps = o.numWarps;
  opts.numStages = o.numStages;
  opts.assume = parseAssumes(o.assume);
  opts.archs = {r.arch};
  opts.ptxasResources = true;
  if (opts.assume.empty() && !o.noSpecialize) opts.assume = spec.specialisation(params);
  try {
    r.bundle = source.compile(o.kernel, opts);
  } catch (const tk::CompileError &) {
    throw;
  } catch (const tk::Error &e) {
    // No PTX (a machine without the CUDA toolkit has no libdevice): the sim
    // needs only the tile IR, and the report says what is missing.
    r.noPtx = e.what();
    opts.emitPtx = false;
    opts.ptxasResources = false;
    r.bundle = source.compile(o.kernel, opts);
  }
  if (auto it = r.bundle.resources.find(r.arch); it != r.bundle.resources.end() && it->second.registers >= 0)
    r.ptxas = it->second;
  r.grid = spec.grid(r.bundle);
  r.device = dev->name();
  r.padding = source.paddedTiles(o.kernel, opts);

  tk::Kernel kernel = dev->load(r.bundle);
  LaunchSpec::Bound bound = spec.bind(*dev, r.bundle.launchParams());
  tk::LaunchOptions launch;
  launch.perSite = true;
  r.stats = dev->launch(kernel, r.grid, bound.args, launch);

  r.model = tk::estimateTime(*r.gpu, tk::modelInput(r.stats, r.grid, r.bundle, r.arch));
  r.idealGiven = o.idealBytes > 0;
  r.idealBytes = o.idealBytes;
  if (!r.idealGiven)
    for (const BoundBuffer &b : bound.buffers) r.idealBytes += b.buffer.size();
  // Roofline: FP instructions the threads ran (an fma counts once) per byte
  // the model sends to DRAM, against peak FP32 flops (an fma counts twice, as
  // datasheets count) per byte of peak DRAM bandwidth. docs/tkc.md.
  r.flops = double(r.stats.fpInstructions);
  r.intensity = r.model.dramBytes > 0 ? r.flops / r.model.dramBytes : 0;
  r.balance = double(r.gpu->fp32LanesPerSm) * 2 * r.gpu->sms * r.gpu->clockGhz * 1e9 / (r.gpu->dramGBps * 1e9);

  if (!o.json.empty()) writeFileAtomic(o.json, json(r).dump(2) + "\n");
  std::cout << text(r) << std::flush;
  return 0;
}

}  // namespace

std::function<int()> addReportCommand(CLI::App &app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App *c = app.add_subcommand(
      "report", "Run a kernel once on the sim and show its memory instructions by source line, its resources and "
                "the performance model's estimate (docs/tkc.md)");
  c->add_option("file", o->file, "the .tk source")->required();
  c->add_option("-k,--kernel", o->kernel, "the kernel to report")->required();
  c->add_option("--grid", o->grid, "blocks: 1 to 3 comma-separated tk expressions over scalar args and consts")
      ->required();
  c->add_option("--arg", o->args, "NAME=SPEC for every non-const parameter (see tkc run)")->allow_extra_args(false);
  c->add_option("-D,--define", o->defines, "set a const parameter: NAME=VALUE (repeatable)")->allow_extra_args(false);
  addImportPathOption(*c, o->importPaths);
  c->add_option("--num-warps", o->numWarps, "warps per block (1, 2, 4, 8, 16, 32)")->default_val(4);
  c->add_flag("--no-specialize", o->noSpecialize,
              "report the general variant: do not specialise on integer arguments equal to 1 or divisible by 16");
  c->add_option("--num-stages", o->numStages, "pipeline depth of loops over K (as tkc compile)")
      ->default_val(3)
      ->check(CLI::Range(1, 64));
  c->add_option("--assume", o->assume,
                "NAME=VALUE: compile for this integer argument value (as tkc compile) instead of the --arg values")
      ->allow_extra_args(false);
  c->add_option("--gpu", o->gpu, "the model's GPU: h100 or a100 (any case)")->default_val("h100");
  c->add_option("--workers", o->workers, "the sim's worker threads (default: one per core)")->check(CLI::Range(1, 1024));
  c->add_option("--device", o->device, "sim[:OPTIONS] (sim:racecheck, sim:overflow; default sim)")
      ->check(
          [](const std::string &d) {
            return d == "sim" || d.rfind("sim:", 0) == 0 ? std::string() : "the report runs on the sim: sim[:OPTIONS]";
          },
          "sim[:OPTIONS]");
  c->add_option("--arch", o->arch,
                "ptxas's arch, which the sim runs too (sm_90a: dot on wgmma; default: the GPU's, sm_90 for H100, "
                "sm_80 for A100)")
      ->check(CLI::IsMember({"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}));
  c->add_option("--ideal-bytes", o->idealBytes, "the bytes an ideal kernel moves (default: every buffer once)");
  c->add_option("--seed", o->seed, "seed of the rand/randn fills")->default_val(LaunchSpec::kDefaultSeed);
  c->add_option("--json", o->json, "also write the report as JSON");
  return [o] { return runReport(*o); };
}

}  // namespace tkc
