// The GPU kit's runner (docs/gpu.md): an orchestrator that runs each step's
// work in a child process of its own -- a kernel that faults the GPU's
// context, or hangs, costs its own rows and no others -- and writes
// report.json and report.md after every step.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tools/gpu-kit/Problem.h"

namespace kit {

struct Options {
  std::string kitDir;  // build/gpu-kit: kernels/, model/, peers/
  std::string outDir;
  std::string device = "cuda";  // "cuda" or "sim" (tk-gpu-kit-sim only)
  std::set<std::string> only;   // case names; empty: all
  double budgetS = 450;         // the whole run, all steps (the GPU is lent for minutes)
  int reps = 20;                // timed repetitions per kernel, median reported
  uint64_t seed = 0;            // inputs' seed; 0: a fresh one, recorded in the report
  bool peers = true, sanitizer = true;
};

// Child work: each row of the report as it is done, to `emit` (which keeps
// what is done if the child dies later). A failing row records its error
// and the child goes on to the next.
using Emit = std::function<void(const json &row)>;
void runCase(const Options &opts, const Case &c, bool sanitize, const Emit &emit);
void runTune(const Options &opts, const TuneCase &t, const Emit &emit);
void launchOverhead(const Options &opts, const Emit &emit);  // CUDA only (LaunchOverhead.cpp)

// The bundle of `v` for `arch` from the kit, with its cubin when the kit
// carries one.
tk::Bundle loadBundle(const std::string &kitDir, const Variant &v, const std::string &arch);
// The one arch the kit carries the tuning sweep for (main.cpp's
// --list-variants, Measure.cpp's runTune): what a compute-9.0 GPU runs.
inline const char *const kTuneArch = "sm_90a";
// The archs a case runs on this device, its best first: sm_90a on a 9.0 GPU
// (and the sim, which stands in for one), sm_80 on an 8.x GPU; with
// `tensorCores` also every older arch the kit carries that the GPU runs.
std::vector<std::string> archsFor(tk::Device &dev, bool tensorCores);
// The median of `reps` kernel times from CUDA events on a stream of its own,
// after 3 warm-up launches, with the L2 flushed (`flush` zeroed) before each.
double timeKernel(tk::Device &dev, const tk::Kernel &k, tk::Dim3 grid, const std::vector<tk::Arg> &args, int reps,
                  const tk::Buffer &flush);

// Runs `argv` and waits at most `timeoutS` seconds (then kills it). Its
// stdout and stderr go to `log` when not empty. Returns a description of how
// it ended: "" for exit status 0, else "exit status N", "killed by signal
// N", "timed out after S s", "cannot start: ...".
std::string runProcess(const std::vector<std::string> &argv, double timeoutS, const std::string &log = "");
// This executable's path (/proc/self/exe).
std::string selfPath();
// Writes `text` to `path` through a temporary file renamed over it.
void writeFileAtomically(const std::string &path, const std::string &text);
std::string readFile(const std::string &path);

// report.json (the object as it is) and report.md (its tables), both
// written atomically, so an interrupted run leaves the last complete step.
void writeReport(const std::string &dir, const json &report);
std::string markdown(const json &report);
// Spearman's rank correlation of two equal-length samples (ties ranked by
// their average); NaN for fewer than 3 pairs.
double spearman(const std::vector<double> &a, const std::vector<double> &b);

}  // namespace kit
