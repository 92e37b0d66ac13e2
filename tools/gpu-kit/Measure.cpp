// Steps 2, 3 and 5 of the kit, as a child process runs them: each case's
// kernel checked against its double reference at every check size (and on
// a GPU at its realistic size, then timed), and every config of a tuned
// kernel checked and timed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "tools/gpu-kit/Kit.h"

namespace kit {

namespace {

std::string shapeText(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// Inputs of a fresh seed per problem, derived from the run's seed and the
// row, so a failing row reproduces with --seed alone.
uint64_t rowSeed(uint64_t seed, const std::string &row) { return seed ^ std::hash<std::string>{}(row); }

// Checks (and on a GPU, times) one problem with one variant on one arch.
json runRow(const Options &opts, tk::Device &dev, const Case &c, const Size &size, const std::string &arch,
            const Consts &consts, int warps, int stages, bool time, const char *step) {
  json row;
  std::unique_ptr<Problem> p = c.make(size);
  const Variant v = c.variant(*p, consts, warps, stages);
  row["step"] = step;
  row["name"] = c.name;
  row["shape"] = shapeText(p->dims());
  row["dtype"] = p->dtype();
  row["arch"] = arch;
  row["config"] = v.config();
  row["variant"] = v.stem();
  row["ok"] = false;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    tk::Kernel k = dev.load(loadBundle(opts.kitDir, v, arch));
    Rng rng(rowSeed(opts.seed, row["name"].get<std::string>() + row["shape"].get<std::string>() + arch));
    p->setup(dev, rng);
    p->poison(dev);
    const tk::Dim3 grid = p->grid(k.bundle());
    dev.launch(k, grid, p->args());
    Check chk = p->check(dev);
    chk.ok = chk.maxErr <= chk.tol;
    row["max_err"] = std::isfinite(chk.maxErr) ? json(chk.maxErr) : json("inf");
    row["tol"] = chk.tol;
    row["ok"] = chk.ok;
    row["checked"] = chk.note;
    if (time) {
      tk::Buffer flush = dev.alloc(size_t(256) << 20);
      const double ms = timeKernel(dev, k, grid, p->args(), opts.reps, flush);
      row["ms"] = ms;
      if (p->flops() > 0)
        row["tflops"] = p->flops() / ms / 1e9;
      else
        row["gbps"] = p->bytes() / ms / 1e6;
    }
  } catch (const std::exception &e) {
    row["error"] = e.what();
  }
  row["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("  %-28s %-7s %-20s %s%s%s\n", c.name.c_str(), arch.c_str(), row["shape"].get<std::string>().c_str(),
              row["ok"].get<bool>() ? "ok" : "FAILED",
              row.contains("ms") ? (" " + std::to_string(row["ms"].get<double>()) + " ms").c_str() : "",
              std::string(step) == "tune" ? ("  " + v.config()).c_str() : "");
  std::fflush(stdout);
  return row;
}

}  // namespace

tk::Bundle loadBundle(const std::string &kitDir, const Variant &v, const std::string &arch) {
  const std::string base = kitDir + "/kernels/" + v.stem() + "." + arch;
  tk::Bundle b = tk::Bundle::load(base + ".json");
  std::ifstream cubin(base + ".cubin", std::ios::binary);
  if (cubin) {
    std::ostringstream bytes;
    bytes << cubin.rdbuf();
    b.cubins[arch] = bytes.str();
  }
  return b;
}

std::vector<std::string> archsFor(tk::Device &dev, bool tensorCores) {
  // The sim stands in for the H100 the kit is for.
  const std::string device = dev.kind() == "sim" ? "sm_90" : dev.arch();
  const int cc = std::stoi(device.substr(3));
  std::vector<std::string> archs;
  if (cc == 90) archs.push_back("sm_90a");
  for (const char *a : {"sm_90", "sm_80"})
    if (std::stoi(std::string(a).substr(3)) <= cc) archs.push_back(a);
  if (!tensorCores) {
    // Kernels without tensor cores are carried for sm_90a and sm_80 only
    // (main.cpp's --list-variants): the driver JITs sm_80's PTX for any
    // newer GPU, and an sm_90 copy would never run on a Hopper.
    std::erase(archs, "sm_90");
    archs.resize(std::min<size_t>(archs.size(), 1));
  }
  return archs;
}

double timeKernel(tk::Device &dev, const tk::Kernel &k, tk::Dim3 grid, const std::vector<tk::Arg> &args, int reps,
                  const tk::Buffer &flush) {
  tk::Stream s = dev.createStream();
  tk::LaunchOptions o;
  o.stream = &s;
  for (int i = 0; i < 3; ++i) dev.launch(k, grid, args, o);
  s.synchronize();
  std::vector<double> ms;
  for (int r = 0; r < std::max(reps, 10); ++r) {
    dev.zero(flush);  // the default stream: the created stream waits for it
    tk::Event start = s.record();
    dev.launch(k, grid, args, o);
    tk::Event end = s.record();
    ms.push_back(tk::Event::elapsedMs(start, end));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void runCase(const Options &opts, const Case &c, bool sanitize, const Emit &emit) {
  auto dev = tk::Device::open(opts.device);
  const bool gpu = dev->kind() == "cuda";
  std::vector<std::string> archs = archsFor(*dev, c.tensorCores);
  if (sanitize) archs.resize(1);
  for (const std::string &arch : archs) {
    for (const Size &s : c.checkSizes)
      emit(runRow(opts, *dev, c, s, arch, c.consts, c.numWarps, c.numStages, false, "kernels"));
    if (gpu && !sanitize)
      emit(runRow(opts, *dev, c, c.realistic, arch, c.consts, c.numWarps, c.numStages, true, "kernels"));
  }
}

// Every config of the model's table (model/<case>.json, written by `tkc
// tune` when the kit was built), checked at the small size and timed at the
// tuning size on a GPU, beside the model's estimate.
void runTune(const Options &opts, const TuneCase &t, const Emit &emit) {
  const std::vector<Case> cases = allCases();
  const auto c = std::find_if(cases.begin(), cases.end(), [&](const Case &x) { return x.name == t.caseName; });
  if (c == cases.end()) throw tk::Error("no case '" + t.caseName + "'");
  const json model = json::parse(readFile(opts.kitDir + "/model/" + t.caseName + ".json"));
  auto dev = tk::Device::open(opts.device);
  const bool gpu = dev->kind() == "cuda";
  const std::string arch = archsFor(*dev, false).front();
  if (arch != kTuneArch) {
    emit({{"step", "tune"}, {"name", t.caseName}, {"arch", arch}, {"ok", true},
          {"skipped", std::string("the kit carries the tuning sweep for ") + kTuneArch + " (a compute-9.0 GPU) only"}});
    return;
  }
  for (const json &r : model.at("results")) {
    if (r.at("status") != "ok") continue;
    const Consts consts = tunedConsts(*c, r);
    const int warps = r.at("num_warps"), stages = r.at("num_stages");
    json row = runRow(opts, *dev, *c, t.checkSize, arch, consts, warps, stages, false, "tune");
    if (gpu && row["ok"] == true) {
      json timed = runRow(opts, *dev, *c, t.size, arch, consts, warps, stages, true, "tune");
      row["ok"] = timed["ok"];
      for (const char *f : {"ms", "gbps", "tflops", "error", "max_err"})
        if (timed.contains(f)) row[f] = timed[f];
      row["shape"] = timed["shape"];
    }
    row["model_ms"] = r.at("model_ms");
    emit(row);
  }
}

}  // namespace kit
