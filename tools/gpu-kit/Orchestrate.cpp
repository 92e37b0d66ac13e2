// The kit's run, step by step: each step's work in child processes with a
// deadline from the run's budget, the report rewritten after every step, and
// a failed step recorded with its reason while the run goes on.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "tools/gpu-kit/Kit.h"

namespace kit {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class Run {
 public:
  explicit Run(const Options &opts) : opts_(opts), start_(Clock::now()) {}

  bool all() {
    fs::create_directories(opts_.outDir + "/parts");
    report_["kit"] = kitInfo();
    report_["steps"] = json::array();
    report_["rows"] = json::array();
    report_["tune"] = json::array();
    const bool sim = opts_.device == "sim";
    if (!step("1 device", [&] { device(); })) return finish();
    step("2-3 kernels", [&] { kernels(); });
    if (sim) {
      skip("7 launch overhead", "a GPU measurement");
    } else {
      step("7 launch overhead", [&] { children("launch", {""}, 60); });
    }
    step("5 tuning", [&] { tuning(); });
    if (sim || !opts_.sanitizer)
      skip("6 compute-sanitizer", sim ? "a GPU tool" : "--no-sanitizer");
    else
      step("6 compute-sanitizer", [&] { sanitizer(); });
    if (sim || !opts_.peers)
      skip("4 peers", sim ? "timing needs a GPU" : "--no-peers");
    else
      step("4 peers", [&] { peers(); });
    return finish();
  }

 private:
  double left() const { return opts_.budgetS - std::chrono::duration<double>(Clock::now() - start_).count(); }
  bool selected(const std::string &name) const { return opts_.only.empty() || opts_.only.count(name); }

  json kitInfo() const {
    json k = {{"mode", opts_.device}, {"seed", opts_.seed}, {"budget_s", opts_.budgetS}, {"reps", opts_.reps}};
    const std::time_t now = std::time(nullptr);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
    k["started"] = buf;
    try {
      const json manifest = json::parse(readFile(opts_.kitDir + "/manifest.json"));
      for (const auto &[key, value] : manifest.items()) k[key] = value;
    } catch (const std::exception &e) {
      k["manifest"] = e.what();
    }
    return k;
  }

  // Runs one step, recording its status and time; false when it failed.
  template <class F>
  bool step(const std::string &name, F &&work) {
    const auto t0 = Clock::now();
    json s = {{"step", name}, {"status", "ok"}};
    std::printf("tk-gpu-kit: step %s (%.0f s of the budget left)\n", name.c_str(), left());
    std::fflush(stdout);
    try {
      work();
    } catch (const std::exception &e) {
      s["status"] = "failed";
      s["error"] = e.what();
      std::fprintf(stderr, "tk-gpu-kit: step %s failed: %s\n", name.c_str(), e.what());
    }
    s["seconds"] = std::chrono::duration<double>(Clock::now() - t0).count();
    report_["steps"].push_back(s);
    writeReport(opts_.outDir, report_);
    return s["status"] == "ok";
  }
  void skip(const std::string &name, const std::string &why) {
    report_["steps"].push_back({{"step", name}, {"status", "skipped"}, {"error", why}});
    writeReport(opts_.outDir, report_);
  }

  bool finish() {
    bool ok = true;
    for (const json &s : report_["steps"]) ok &= s["status"] != "failed";
    for (const json &r : report_["rows"]) ok &= r.value("ok", false);
    report_["ok"] = ok;
    writeReport(opts_.outDir, report_);
    std::printf("tk-gpu-kit: %s; report in %s/report.md and report.json\n", ok ? "every row ok" : "FAILURES",
                opts_.outDir.c_str());
    return ok;
  }

  void device() {
    auto dev = tk::Device::open(opts_.device);
    const tk::DeviceProperties p = dev->properties();
    json d = {{"name", p.name}, {"kind", dev->kind()}};
    if (dev->kind() == "cuda") {
      d["arch"] = p.arch;
      d["compute_capability"] = p.arch.substr(3, p.arch.size() - 4) + "." + p.arch.substr(p.arch.size() - 1);
      d["driver"] = std::to_string(p.driverVersion / 1000) + "." + std::to_string(p.driverVersion % 1000 / 10);
      d["sms"] = p.multiprocessors;
      d["memory_gib"] = double(p.memoryBytes) / double(1 << 30);
      d["sm_clock_mhz"] = p.clockKHz / 1000;
      d["memory_clock_mhz"] = p.memoryClockKHz / 1000;
      d["memory_bus_bits"] = p.memoryBusWidthBits;
      d["l2_mib"] = double(p.l2Bytes) / double(1 << 20);
      d["shared_per_block_optin_kib"] = p.sharedPerBlockOptinBytes / 1024;
      d["peak_gbps_from_clocks"] = p.peakBytesPerSecond() / 1e9;
    } else {
      d["workers"] = p.multiprocessors;
    }
    report_["device"] = d;
    mainArch_ = archsFor(*dev, false).front();
  }

  // Runs `what` for each name in a child; adds the rows it wrote, and a
  // failed row for a child that died before writing them all.
  void children(const std::string &what, const std::vector<std::string> &names, double capS) {
    for (const std::string &name : names) {
      const double timeout = std::min(capS, left());
      const std::string tag = what + (name.empty() ? "" : "-" + name);
      if (timeout < 5) {
        report_["rows"].push_back({{"step", what},
                                   {"name", name.empty() ? what : name},
                                   {"ok", false},
                                   {"error", "out of time: the run's budget is spent"}});
        continue;
      }
      const std::string rows = opts_.outDir + "/parts/" + tag + ".json";
      std::remove(rows.c_str());
      std::vector<std::string> argv = childArgs(what, name, rows);
      const std::string how = runProcess(argv, timeout);
      appendRows(rows, what, name, how);
      writeReport(opts_.outDir, report_);
    }
  }
  std::vector<std::string> childArgs(const std::string &what, const std::string &name, const std::string &rows) const {
    std::vector<std::string> argv = {selfPath(),
                                     "--kit",
                                     opts_.kitDir,
                                     "--device",
                                     opts_.device,
                                     "--child",
                                     what,
                                     "--rows-out",
                                     rows,
                                     "--reps",
                                     std::to_string(opts_.reps),
                                     "--seed",
                                     std::to_string(opts_.seed)};
    if (!name.empty()) argv.insert(argv.end(), {"--case", name});
    return argv;
  }
  // `how` is runProcess's account: "" or "exit status 1" (rows say why) are
  // the child's own ends; anything else means it died, which the last row
  // takes the blame for.
  void appendRows(const std::string &file, const std::string &what, const std::string &name, const std::string &how) {
    json rows = json::array();
    try {
      rows = json::parse(readFile(file));
    } catch (const std::exception &) {
    }
    for (const json &r : rows) report_["rows"].push_back(r);
    if (how.empty() || (how == "exit status 1" && !rows.empty())) return;
    report_["rows"].push_back({{"step", what == "sanitize" ? "sanitizer" : what},
                               {"name", name.empty() ? what : name},
                               {"ok", false},
                               {"error", "the child process " + how + " after " + std::to_string(rows.size()) +
                                             " rows (its output is above in the run's log)"}});
  }

  void kernels() {
    std::vector<std::string> names;
    for (const Case &c : allCases())
      if (selected(c.name)) names.push_back(c.name);
    children("kernels", names, opts_.device == "sim" ? 600 : 90);
  }

  void tuning() {
    for (const TuneCase &t : tuneCases()) {
      if (!selected(t.caseName)) continue;
      const size_t first = report_["rows"].size();
      children("tune", {t.caseName}, opts_.device == "sim" ? 600 : 120);
      std::vector<double> measured, model;
      json best, bestModel;
      double bestMs = INFINITY, bestModelMs = INFINITY;
      for (size_t i = first; i < report_["rows"].size(); ++i) {
        const json &r = report_["rows"][i];
        if (!r.value("ok", false) || !r.contains("model_ms") || !r["model_ms"].is_number()) continue;
        const double mm = r["model_ms"];
        if (mm < bestModelMs) bestModelMs = mm, bestModel = r["config"];
        if (!r.contains("ms")) continue;
        measured.push_back(r["ms"]), model.push_back(mm);
        if (r["ms"].get<double>() < bestMs) bestMs = r["ms"], best = r["config"];
      }
      const double rho = spearman(measured, model);
      report_["tune"].push_back({{"name", t.caseName},
                                 {"configs", report_["rows"].size() - first},
                                 {"spearman", std::isnan(rho) ? json() : json(rho)},
                                 {"best_measured", best},
                                 {"best_model", bestModel}});
    }
  }

  void sanitizer() {
    std::string tool;
    for (const std::string &dir :
         {std::string(std::getenv("CUDA_HOME") ? std::getenv("CUDA_HOME") : ""), std::string("/usr/local/cuda")}) {
      if (!dir.empty() && access((dir + "/bin/compute-sanitizer").c_str(), X_OK) == 0) {
        tool = dir + "/bin/compute-sanitizer";
        break;
      }
    }
    if (tool.empty() && runProcess({"compute-sanitizer", "--version"}, 20, "/dev/null").empty())
      tool = "compute-sanitizer";
    if (tool.empty()) throw tk::Error("compute-sanitizer not found ($CUDA_HOME/bin, /usr/local/cuda/bin, PATH)");
    for (const char *which : {"memcheck", "racecheck"}) {
      for (const char *name : {"matmul", "attention_d64", "softmax"}) {
        if (!selected(name)) continue;
        const std::string tag = std::string(which) + "-" + name;
        const std::string rows = opts_.outDir + "/parts/sanitize-" + tag + ".json";
        const std::string log = opts_.outDir + "/sanitizer-" + tag + ".log";
        std::vector<std::string> argv = {tool, "--tool", which, "--error-exitcode", "99", "--print-limit", "10"};
        for (const std::string &a : childArgs("sanitize", name, rows)) argv.push_back(a);
        const double timeout = std::min(90.0, left() - 5);
        json row = {{"step", "sanitizer"}, {"name", name}, {"tool", which}, {"ok", false}};
        if (timeout < 5) {
          row["note"] = "out of time";
        } else {
          const std::string how = runProcess(argv, timeout, log);
          row["ok"] = how.empty();
          row["note"] = how.empty()               ? "no errors"
                        : how == "exit status 99" ? "errors found: " + firstErrors(log)
                                                  : how + ": " + firstErrors(log);
          row["log"] = log;
        }
        report_["rows"].push_back(row);
        writeReport(opts_.outDir, report_);
      }
    }
  }
  static std::string firstErrors(const std::string &log) {
    std::string text;
    try {
      text = readFile(log);
    } catch (const std::exception &) {
      return "(no log)";
    }
    std::string out;
    size_t pos = 0;
    while (out.size() < 400 && pos < text.size()) {
      const size_t end = std::min(text.find('\n', pos), text.size());
      const std::string line = text.substr(pos, end - pos);
      if (line.find("=========") == 0 && line.size() > 10) out += line.substr(10) + "; ";
      pos = end + 1;
    }
    return out.empty() ? text.substr(0, 300) : out;
  }

  void peers() {
    json problems = json::array();
    for (const Case &c : allCases()) {
      if (!selected(c.name)) continue;
      std::unique_ptr<Problem> p = c.make(c.realistic);
      problems.push_back({{"name", c.name}, {"shape", p->dims()}, {"dtype", p->dtype()}, {"params", p->params()}});
    }
    const std::string in = opts_.outDir + "/problems.json", out = opts_.outDir + "/peers.json";
    writeFileAtomically(in, json({{"problems", problems}}).dump(2) + "\n");
    std::remove(out.c_str());
    const double timeout = std::min(300.0, left() - 5);
    if (timeout < 10) throw tk::Error("out of time: the run's budget is spent");
    const std::string how = runProcess({"python3", opts_.kitDir + "/peers/peers.py", "--problems", in, "--out", out,
                                        "--reps", std::to_string(opts_.reps)},
                                       timeout, opts_.outDir + "/peers.log");
    json peers;
    try {
      peers = json::parse(readFile(out));
    } catch (const std::exception &e) {
      throw tk::Error("peers.py " + (how.empty() ? "wrote no readable peers.json" : how) +
                      " (see peers.log): " + e.what());
    }
    report_["peers"] = {{"status", how.empty() ? "ok" : how},
                        {"torch", peers.value("torch", json())},
                        {"triton", peers.value("triton", json())}};
    for (const json &p : peers.value("rows", json::array()))
      for (json &r : report_["rows"])
        if (r.value("step", "") == "kernels" && r.value("name", "") == p.value("name", "") && r.contains("ms") &&
            r.value("arch", "") == mainArch_) {
          for (const char *f : {"torch_ms", "compile_ms", "triton_ms"}) r[f] = p.value(f, json());
          r["peer_notes"] = p.value("notes", "");
        }
  }

  const Options &opts_;
  Clock::time_point start_;
  json report_;
  std::string mainArch_;  // the arch a case's timed row runs on this device
};

}  // namespace

bool orchestrate(const Options &opts) { return Run(opts).all(); }

}  // namespace kit
