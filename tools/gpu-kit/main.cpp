// tk-gpu-kit: the first minutes on a real GPU (docs/gpu.md). `run.sh`
// starts it; it runs each step's work in a child process of its own and
// writes report.json and report.md after every step:
//   1 the device; 2 every kernel checked against double at sizes that
//   exercise masks; 3 timed with CUDA events at realistic sizes; 4 PyTorch
//   eager, torch.compile and Triton on the same problems (peers/peers.py);
//   5 two kernels' whole tuning spaces, measured beside the model; 6
//   compute-sanitizer memcheck and racecheck; 7 the host cost of a launch.
// With --device sim (tk-gpu-kit-sim, which links the sim) steps 2 and 5 run
// on the sim, untimed. Built without LLVM: it loads what `make gpu-kit`
// compiled.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <set>

#include "tools/gpu-kit/Kit.h"

namespace kit {
// Runs every step (Orchestrate.cpp); true when every row and step is ok.
bool orchestrate(const Options &opts);
}  // namespace kit

namespace {

using kit::json;

// `--list-variants`: every compile the kit carries, one line each:
// STEM <tab> ARCH <tab> SOURCE <tab> tkc arguments (tab-separated).
void listVariants(const std::string &kitDir) {
  std::set<std::string> seen;
  auto print = [&](const kit::Variant &v, const std::string &arch) {
    if (!seen.insert(v.stem() + "." + arch).second) return;
    std::string line = v.stem() + "\t" + arch + "\t" + v.source;
    for (const std::string &a : v.tkcArgs()) line += "\t" + a;
    std::cout << line << "\n";
  };
  const std::vector<kit::Case> cases = kit::allCases();
  for (const kit::Case &c : cases) {
    std::vector<kit::Size> sizes = c.checkSizes;
    sizes.push_back(c.realistic);
    for (const kit::Size &s : sizes)
      for (const char *arch : {"sm_90a", "sm_90", "sm_80"})
        if (c.tensorCores || std::string(arch) != "sm_90")  // Measure.cpp's archsFor
          print(c.variant(*c.make(s), c.consts, c.numWarps, c.numStages), arch);
  }
  for (const kit::TuneCase &t : kit::tuneCases()) {
    const kit::Case &c =
        *std::find_if(cases.begin(), cases.end(), [&](const kit::Case &x) { return x.name == t.caseName; });
    const json model = json::parse(kit::readFile(kitDir + "/model/" + t.caseName + ".json"));
    for (const json &r : model.at("results")) {
      if (r.at("status") != "ok") continue;
      const kit::Consts consts = kit::tunedConsts(c, r);
      // The sweep for kTuneArch alone: sm_80's copies of every config were
      // a third of the kit.
      for (const kit::Size &s : {t.checkSize, t.size})
        print(c.variant(*c.make(s), consts, r.at("num_warps"), r.at("num_stages")), kit::kTuneArch);
    }
  }
}

// `--list-tune`: NAME <tab> SOURCE <tab> the rest of its `tkc tune` command.
void listTune() {
  const std::vector<kit::Case> cases = kit::allCases();
  for (const kit::TuneCase &t : kit::tuneCases()) {
    const kit::Case &c =
        *std::find_if(cases.begin(), cases.end(), [&](const kit::Case &x) { return x.name == t.caseName; });
    std::string line = t.caseName + "\t" + c.source;
    for (const std::string &a : t.tkcTune) line += "\t" + a;
    std::cout << line << "\n";
  }
}

// One step's work in this (child) process; rows go to `rowsOut` as they come.
int child(const kit::Options &opts, const std::string &what, const std::string &name, const std::string &rowsOut) {
  json rows = json::array();
  const kit::Emit emit = [&](const json &row) {
    rows.push_back(row);
    kit::writeFileAtomically(rowsOut, rows.dump(1) + "\n");
  };
  if (what == "kernels" || what == "sanitize") {
    for (const kit::Case &c : kit::allCases())
      if (c.name == name) kit::runCase(opts, c, what == "sanitize", emit);
  } else if (what == "tune") {
    for (const kit::TuneCase &t : kit::tuneCases())
      if (t.caseName == name) kit::runTune(opts, t, emit);
  } else if (what == "launch") {
    kit::launchOverhead(opts, emit);
  } else {
    throw tk::Error("unknown --child '" + what + "'");
  }
  if (rows.empty()) throw tk::Error("nothing to run for --child " + what + " --case '" + name + "'");
  bool ok = true;
  for (const json &r : rows) ok &= r.value("ok", false);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
  CLI::App app{"tk-gpu-kit: checks and times tk's kernels on this machine's GPU (docs/gpu.md)"};
  kit::Options opts;
  std::string only, childWhat, childCase, rowsOut;
  bool listV = false, listT = false, noPeers = false, noSanitizer = false;
  app.add_option("--kit", opts.kitDir, "the kit's folder (kernels/, model/, peers/)")->required();
  app.add_option("--out", opts.outDir, "where report.json and report.md go");
  app.add_option("--device", opts.device, "cuda (the default) or sim (tk-gpu-kit-sim only)")
      ->check(CLI::IsMember({"cuda", "sim"}));
  app.add_option("--only", only, "comma-separated case names (default: all)");
  app.add_option("--budget-s", opts.budgetS, "seconds for the whole run")->check(CLI::Range(10.0, 3600.0));
  app.add_option("--reps", opts.reps, "timed repetitions per kernel (at least 10)")->check(CLI::Range(10, 1000));
  app.add_option("--seed", opts.seed, "the inputs' seed (default: a fresh one, recorded in the report)");
  app.add_flag("--no-peers", noPeers, "skip step 4 (PyTorch, torch.compile, Triton)");
  app.add_flag("--no-sanitizer", noSanitizer, "skip step 6 (compute-sanitizer)");
  app.add_flag("--list-variants", listV, "print every compile the kit needs (for make gpu-kit) and exit");
  app.add_flag("--list-tune", listT, "print the tkc tune commands behind model/ (for make gpu-kit) and exit");
  app.add_option("--child", childWhat, "internal: run one step's work in this process")
      ->check(CLI::IsMember({"kernels", "tune", "sanitize", "launch"}));
  app.add_option("--case", childCase, "internal: the case --child runs");
  app.add_option("--rows-out", rowsOut, "internal: where --child writes its rows");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  opts.peers = !noPeers;
  opts.sanitizer = !noSanitizer;
  for (size_t start = 0; !only.empty() && start <= only.size();) {
    const size_t comma = std::min(only.find(',', start), only.size());
    if (comma > start) opts.only.insert(only.substr(start, comma - start));
    start = comma + 1;
  }
  try {
    if (listV) return listVariants(opts.kitDir), 0;
    if (listT) return listTune(), 0;
    if (!childWhat.empty()) {
      if (rowsOut.empty()) throw tk::Error("--child needs --rows-out");
      return child(opts, childWhat, childCase, rowsOut);
    }
    if (opts.outDir.empty()) throw tk::Error("give --out DIR: where report.json and report.md go");
    // A fresh seed from the clock and the pid.
    if (opts.seed == 0)
      opts.seed = uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) * 0x9E3779B97F4A7C15ull ^
                  uint64_t(getpid());
    return kit::orchestrate(opts) ? 0 : 1;
  } catch (const std::exception &e) {
    std::cerr << "tk-gpu-kit: error: " << e.what() << "\n";
    return 1;
  }
}
