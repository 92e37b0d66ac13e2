// The sim as a tk device: bundles are re-lowered from their tile IR through
// SimTarget and JIT-compiled; launches run on tk::sim::Simulator.
#include "runtime/SimDevice.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <tuple>

#include "backend/sim/SimTarget.h"
#include "backend/sim/Simulator.h"
#include "ir/Verifier.h"
#include "runtime/DeviceImpl.h"
#include "syntax/Location.h"
#include "tk/gpu.h"

namespace tk::sim {

TensorMap encodeTensorMap(const detail::TensorMapSpec &s) {
  TensorMap m{};
  m.base = s.base;
  m.rank = uint32_t(s.rank);
  m.elemBytes = uint32_t(s.elemBytes);
  m.swizzle = uint32_t(s.swizzle);
  for (size_t i = 0; i < s.rank; ++i) {
    const size_t d = s.rank - 1 - i;  // tk's dim of the map's dim i
    m.dims[i] = uint64_t(s.shape[d]);
    m.strides[i] = uint64_t(s.strides[d] * s.elemBytes);
    m.box[i] = uint32_t(s.box[d]);
  }
  m.magic = kTensorMapMagic;
  return m;
}

}  // namespace tk::sim

namespace tk {

namespace {

// The public name of a memory site's kind; null for the sites that move no
// memory (barriers, shuffles, mma).
const char *siteKindName(sim::SiteKind k) {
  switch (k) {
    case sim::SiteKind::GlobalLoad:
      return "global load";
    case sim::SiteKind::GlobalStore:
      return "global store";
    case sim::SiteKind::GlobalAtomic:
      return "global atomic";
    case sim::SiteKind::SharedLoad:
      return "shared load";
    case sim::SiteKind::SharedStore:
      return "shared store";
    case sim::SiteKind::SharedAtomic:
      return "shared atomic";
    case sim::SiteKind::Ldmatrix:
      return "ldmatrix";
    case sim::SiteKind::Wgmma:
      return "wgmma";
    default:
      return nullptr;
  }
}

// "file:line:col" -> (file, line, col) for sorting; a loc without numbers
// sorts by its text alone.
std::tuple<std::string, long, long> sourcePosition(const std::string &loc) {
  Location l = Location::parse(loc);
  return {l.file, l.line, l.col};
}

// The per-site counts by (loc, kind, access width): a tile access the
// lowering split into several instructions (one per vector a thread holds)
// is one row, as it is one operation in the source.
std::vector<SiteStats> siteStats(const sim::SiteTable &table, const std::vector<sim::SiteCounters> &counts) {
  std::map<std::tuple<std::string, std::string, uint32_t>, SiteStats> merged;
  for (size_t i = 0; i < counts.size() && i < table.sites.size(); ++i) {
    const sim::Site &site = table.sites[i];
    const char *kind = siteKindName(site.kind);
    if (!kind) continue;
    SiteStats &s = merged[{site.loc, kind, site.bytes}];
    s.loc = site.loc;
    s.kind = kind;
    s.accessBytes = site.bytes;
    s.requests += counts[i].requests;
    s.bytes += counts[i].bytes;
    s.sectors += counts[i].sectors;
    s.wavefronts += counts[i].wavefronts;
  }
  std::vector<SiteStats> out;
  for (auto &[key, s] : merged) out.push_back(std::move(s));
  std::stable_sort(out.begin(), out.end(), [](const SiteStats &a, const SiteStats &b) {
    return std::make_tuple(sourcePosition(a.loc), a.kind, a.accessBytes) <
           std::make_tuple(sourcePosition(b.loc), b.kind, b.accessBytes);
  });
  return out;
}

class SimDevice final : public DeviceImpl {
 public:
  SimDevice(unsigned workers, bool overflowCheck) : sim_(workers) { program_.overflowCheck = overflowCheck; }
  std::string kind() const override { return "sim"; }
  DeviceProperties properties() const override {
    DeviceProperties p;
    p.name = name();
    p.multiprocessors = int(sim_.workers());
    return p;
  }
  std::string name() const override {
    return "tk sim (" + std::to_string(sim_.workers()) + " workers" + (raceCheck_ ? ", race check" : "") +
           (program_.overflowCheck ? ", overflow check" : "") + ")";
  }
  void setRaceCheck(bool on) override { raceCheck_ = on; }
  void setPrintSink(std::function<void(const std::string &)> sink) override { printSink_ = std::move(sink); }

  uint64_t allocate(size_t bytes) override {
    return reinterpret_cast<uint64_t>(sim_.memory().allocate(bytes));
  }
  void release(uint64_t address) override { sim_.memory().release(reinterpret_cast<void *>(address)); }
  // Borrowed host memory joins the memory table, so the sim checks accesses
  // to it as to its own allocations.
  uint64_t adopt(uint64_t address, size_t bytes) override {
    return sim_.memory().adopt(reinterpret_cast<const void *>(address), bytes);
  }
  void forget(uint64_t key) override { sim_.memory().forget(key); }
  void copyToDevice(uint64_t dst, const void *src, size_t bytes) override {
    std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  }
  void copyToHost(void *dst, uint64_t src, size_t bytes) override {
    std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  }
  // The descriptor was checked as any launch checks one (descriptorValues):
  // the sim's copies read inside what it describes.
  void encodeTensorMap(const detail::TensorMapSpec &s, void *out128) override {
    const sim::TensorMap m = sim::encodeTensorMap(s);
    std::memcpy(out128, &m, sizeof m);
  }
  void fill(uint64_t dst, const void *pattern, size_t patternBytes, size_t count) override {
    auto *out = reinterpret_cast<unsigned char *>(dst);
    if (patternBytes == 1) {
      std::memset(out, *static_cast<const unsigned char *>(pattern), count);
      return;
    }
    for (size_t i = 0; i < count; ++i) std::memcpy(out + i * patternBytes, pattern, patternBytes);
  }

  std::shared_ptr<void> load(const Bundle &bundle) override {
    std::string error;
    // A bundle may come from a file or a cache: its IR is checked before lowering trusts it.
    auto module = ir::parseVerifiedModule(bundle.tir, bundle.kernel + ".tir", error);
    if (!module) throw Error("bundle for '" + bundle.kernel + "': bad tile IR: " + error);
    ir::Function *fn = module->lookup(bundle.kernel);
    if (!fn) throw Error("bundle for '" + bundle.kernel + "': its tile IR has no kernel of that name");
    auto ctx = std::make_unique<llvm::LLVMContext>();
    // The sim emulates the bundle's first arch (sm_90a: dot on wgmma).
    lower::LoweredKernel lowered;
    try {
      lowered = sim::lowerForSim(*fn, bundle.archs.empty() ? "sm_80" : bundle.archs.front(), *ctx);
    } catch (const Error &e) {  // InternalError: lowering and the Targets throw nothing else
      e.rethrowPrefixed("bundle for '" + bundle.kernel + "': cannot lower its tile IR: ");
    }
    // What a launch passes and sizes must be what the IR takes: an edited
    // bundle would otherwise hand the kernel the wrong parameters or too
    // little shared memory.
    const std::string tag = "bundle for '" + bundle.kernel + "': ";
    if (lowered.sharedBytes > bundle.sharedBytes)
      throw Error(tag + "its tile IR needs " + std::to_string(lowered.sharedBytes) +
                  " bytes of shared memory, the bundle gives " + std::to_string(bundle.sharedBytes));
    if (lowered.producerWarps != bundle.producerWarps)
      throw Error(tag + "its producer_warps (" + std::to_string(bundle.producerWarps) + ") are not its tile IR's (" +
                  std::to_string(lowered.producerWarps) + ")");
    if (lowered.tensorMaps != bundle.tensorMaps)
      throw Error(tag + "its tensor_maps (" + std::to_string(bundle.tensorMaps.size()) +
                  ") are not the ones its tile IR copies through (" + std::to_string(lowered.tensorMaps.size()) + ")");
    std::shared_ptr<sim::Program> p = sim::Program::compile(std::move(lowered.module), std::move(ctx), program_);
    return p;
  }

  LaunchStats launch(void *loaded, const Bundle &bundle, Dim3 grid, const std::vector<const void *> &args,
                     const LaunchOptions &opts, void * /*stream: work runs when submitted*/) override {
    auto *program = static_cast<sim::Program *>(loaded);
    sim::LaunchConfig cfg;
    cfg.grid[0] = grid.x;
    cfg.grid[1] = grid.y;
    cfg.grid[2] = grid.z;
    cfg.blockThreads = static_cast<uint32_t>(bundle.threadsPerBlock());
    cfg.sharedBytes = static_cast<uint32_t>(bundle.sharedBytes);
    cfg.raceCheck = raceCheck_;
    cfg.printSink = printSink_;
    cfg.sampleBlocks = opts.sampleBlocks;
    cfg.perSite = opts.perSite;
    sim::Counters c;
    const auto start = std::chrono::steady_clock::now();
    c = sim_.launch(*program, bundle.kernel, cfg, args);
    LaunchStats s;
    // Sim time: how long the host took to run the launch, not a GPU's time.
    s.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    s.counted = true;
    s.globalLoadBytes = c.globalLoadBytes;
    s.globalStoreBytes = c.globalStoreBytes;
    s.loadRequests = c.globalLoadRequests;
    s.loadSectors = c.globalLoadSectors;
    s.storeRequests = c.globalStoreRequests;
    s.storeSectors = c.globalStoreSectors;
    s.sharedRequests = c.sharedRequests;
    s.sharedWavefronts = c.sharedWavefronts;
    s.barriers = c.barriers;
    s.threadInstructions = c.threadInstructions;
    s.warpInstructions = c.warpInstructions;
    s.fpInstructions = c.fpInstructions;
    s.specialInstructions = c.specialInstructions;
    s.blocksRun = c.blocksRun;
    s.blocksTotal = c.blocksTotal;
    if (opts.perSite) s.sites = siteStats(program->sites(), c.sites);
    return s;
  }

 private:
  sim::Simulator sim_;
  bool raceCheck_ = false;
  // Fixed when the device opens: the overflow check is compiled into each
  // kernel the device loads (sim:overflow), where the race check is a launch flag.
  sim::ProgramOptions program_;
  std::function<void(const std::string &)> printSink_;  // empty: stdout
};

}  // namespace

namespace {
// "sim[:OPTION[,OPTION...]]", each OPTION `racecheck`, `overflow` or
// `workers=N` (N in 1..1024; the default is one worker per core).
std::unique_ptr<DeviceImpl> openSim(const std::string &options) {
  bool raceCheck = false, overflow = false;
  unsigned workers = 0;
  const std::string usage = "expected sim[:OPTION,...] with OPTION racecheck, overflow or workers=N (N in 1..1024)";
  for (size_t start = 0; !options.empty() && start <= options.size();) {
    const size_t comma = options.find(',', start);
    const std::string o = options.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (o == "racecheck") {
      raceCheck = true;
    } else if (o == "overflow") {
      overflow = true;
    } else if (o.rfind("workers=", 0) == 0) {
      const std::string n = o.substr(8);
      char *end = nullptr;
      const long v = n.empty() || !std::isdigit(static_cast<unsigned char>(n[0])) ? -1 : std::strtol(n.c_str(), &end, 10);
      if (v < 1 || v > 1024 || *end) throw Error("bad device 'sim:" + options + "': workers=" + n + ": " + usage);
      workers = unsigned(v);
    } else {
      throw Error("unknown device 'sim:" + options + "': '" + o + "': " + usage);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  auto d = std::make_unique<SimDevice>(workers, overflow);
  d->setRaceCheck(raceCheck);
  return d;
}

// Registers the sim with tk_runtime when this library is linked: tk::sim's
// link options name tk_sim_device_anchor (-u), so the linker keeps this
// object file, and with it the registrar, though nothing calls into it.
const bool registered = (registerDevice("sim", &openSim), true);
}  // namespace

}  // namespace tk

extern "C" {
extern const int tk_sim_device_anchor;
const int tk_sim_device_anchor = tk::registered ? 1 : 0;
}

namespace tk {}  // namespace tk
