// tk's autotuner: a search space over const parameters, num_warps and
// num_stages; each variant compiled (in parallel, through the compile cache),
// pruned with a reason or measured -- CUDA events on a GPU, the performance
// model (tk/perf.h) on the sim -- and the results cached per (kernel, device,
// key values, config). See docs/autotune.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tk/compiler.h"
#include "tk/perf.h"
#include "tk/runtime.h"

namespace tk {

// One point of a search space.
struct TuneConfig {
  std::map<std::string, std::string> consts;  // const parameter -> value, as -D takes it
  int numWarps = 4;
  int numStages = 3;
  // The order the space declares the consts in (`product(BLOCK_R: ...,
  // BLOCK_D: ...)`, or as a --config string gives them); str() lists them
  // so. Not part of the config's identity.
  std::vector<std::string> order;

  // "BLOCK=256,num_warps=4,num_stages=3": the `tkc tune --config` syntax,
  // the consts in `order` (any it does not name after, by name).
  std::string str() const;
  // The same with the consts by name: the config's identity (cache keys).
  std::string canonical() const;
  // Parses that syntax (num_warps/num_stages optional: `defaultNumWarps`
  // and 3). Throws tk::Error.
  static TuneConfig parse(const std::string &text, int defaultNumWarps = 4);
  bool operator==(const TuneConfig &o) const {
    return consts == o.consts && numWarps == o.numWarps && numStages == o.numStages;
  }
};

struct TuneSpace {
  std::vector<TuneConfig> configs;
  // Names of scalar launch arguments whose values select a tuning entry (as
  // Triton's `key=`): a new value tunes again, a seen one reuses the result.
  std::vector<std::string> key;
  // A tk expression over the consts, num_warps, num_stages and the key
  // arguments; configs where it is true are pruned. Empty: the file's, if
  // any ("false" prunes nothing).
  std::string prune;

  // The `@tune(...)` space declared before kernel `kernel` of a .tk file
  // (configs empty when it declares none). Throws CompileError/Error.
  static TuneSpace fromFile(const std::string &path, const std::string &kernel);
};

struct TuneOptions {
  // Defines that hold for every config (a config's own consts win), CUDA
  // home, libdevice; its archs are ignored (see `arch`).
  CompileOptions compile;
  std::string gpu = "H100";  // the model's GPU on the sim (GpuSpec::named)
  std::string arch;          // empty: the CUDA device's, or on the sim the model GPU's (H100: sm_90)
  // Compile each config for the integer facts of the launch's values (1, a
  // multiple of 16), as JitKernel does; ignored when compile.assume is set.
  bool specialise = true;
  int jobs = 0;              // parallel compiles; 0: one per core
  bool cache = true;         // the tuning cache (compiles always use the compile cache unless compile.cache is off)
  std::string cacheDir;      // empty: cacheDirectory()
  int shardIndex = 0, shardCount = 1;  // measure only configs i with i % shardCount == shardIndex
  int maxSpillBytes = 256;   // prune variants whose ptxas spills (stores + loads, per thread) exceed this
  uint64_t sampleBlocks = 512;  // sim: blocks run per launch, spread over the grid (0: all)
  double benchMs = 100;      // CUDA: keep repeating a variant for at least this long (after warm-up)
  // Progress: called after each variant is compiled and after each is
  // measured (done, total, a short line); unset: silent.
  std::function<void(int done, int total, const std::string &what)> progress;
  // Called before each measured launch of a variant (Triton's pre_hook):
  // restore the buffers a kernel updates in place, so every variant sees the
  // same inputs.
  std::function<void()> preHook;
  // Warnings (an unwritable cache, a corrupted entry); unset: stderr.
  std::function<void(const std::string &)> warn;
};

struct TuneResult {
  TuneConfig config;
  std::string status = "ok";  // "ok", "pruned", "error"
  std::string reason;         // why pruned or failed
  double ms = 0;              // measured (cuda-events) or estimated (model)
  int registers = -1, spillBytes = -1, sharedBytes = 0;
  bool cached = false;        // from the tuning cache
  int shard = -1;             // the shard that did not measure it (kept out: --shard), else -1
  ModelEstimate model;        // on the sim: the model's breakdown
};

struct TuneReport {
  std::string kernel, source;
  std::string device;   // the device's name
  std::string measure;  // "model" or "cuda-events"
  std::string gpu;      // the GPU the model estimates for (sim), or the device's
  std::map<std::string, std::string> key;  // key argument -> value
  std::map<std::string, std::string> assumed;  // integer argument -> fact compiled in (Bundle::assumed's form)
  std::vector<TuneResult> results;         // one per config, in the space's order
  int best = -1;                           // index into results; -1 when none was measured (a shard)
  int compiled = 0, timed = 0, cacheHits = 0;
  int shardIndex = 0, shardCount = 1;      // a shard's results are its configs only
  int spaceSize = 0;                       // configs in the whole space

  const TuneResult &bestResult() const;  // throws tk::Error when there is none
  std::string json() const;
  // A fixed-width table, one row per config, the best marked.
  std::string table() const;
  // An SVG bar chart of each config's measure, the best marked, pruned and
  // failed configs listed with their reasons.
  std::string svg() const;
};

// Tunes kernel `kernel` of a .tk file on `device`.
class Tuner {
 public:
  // What `space` leaves empty -- configs, key, prune, each on its own -- comes
  // from the file's @tune.
  Tuner(Device &device, std::string path, std::string kernel, TuneSpace space = {}, TuneOptions opts = {});
  // The same, from a file already loaded (its imports found as it was
  // loaded, whatever opts.compile.importPaths says).
  Tuner(Device &device, SourceFile source, std::string kernel, TuneSpace space = {}, TuneOptions opts = {});
  ~Tuner();

  // The grid of a launch, given the compiled variant (its consts through
  // Bundle::constInt) -- the `grid=lambda META: ...` of Triton.
  using GridFn = std::function<Dim3(const Bundle &)>;

  // Compiles, prunes and measures every config for the key values in
  // `args` (launch arguments, as Device::launch takes them). The kernel runs
  // with these arguments, so outputs are overwritten. Throws tk::Error when
  // every config was pruned or failed, listing why each did.
  TuneReport tune(const GridFn &grid, const std::vector<Arg> &args);
  // The report from the tuning cache alone, when it holds every config of the
  // space for this launch (configs the prune expression drops need no
  // entry); nullopt otherwise. Nothing compiles or runs, so the buffers in
  // `args` may be empty Buffers: `bufferBytes[i]` is then the size of the
  // i-th argument's buffer, which entries are keyed on with the grid.
  std::optional<TuneReport> cached(const GridFn &grid, const std::vector<Arg> &args,
                                   const std::vector<size_t> &bufferBytes = {});
  // Launches the best config for the key values in `args`: from this
  // Tuner's memory, else the tuning cache, else by tuning now.
  LaunchStats launch(const GridFn &grid, const std::vector<Arg> &args);
  // The best variant for these arguments' key values (tuning on a miss).
  const Kernel &best(const GridFn &grid, const std::vector<Arg> &args);

  const TuneSpace &space() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `tkc tune --merge`: copies the tuning entries of `from` into `into`
// (atomically per entry; an entry present in both is kept as is). Returns the
// number of entries copied. Bad entries are skipped with a warning.
int mergeTuneCaches(const std::vector<std::string> &from, const std::string &into,
                    const std::function<void(const std::string &)> &warn = {});

}  // namespace tk
