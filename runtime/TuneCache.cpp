// Tuning-cache entries (TuneCache.h) and `tkc tune --merge`.
#include "runtime/TuneCache.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

#include "runtime/CacheFiles.h"

namespace tk {

namespace detail {

namespace {
using nlohmann::json;
constexpr int kEntryVersion = 1;

json configJson(const TuneConfig &c) {
  return {{"consts", c.consts}, {"num_warps", c.numWarps}, {"num_stages", c.numStages}};
}

std::string entryPath(const std::string &dir, const TuneEntryKey &k) {
  std::string keyText;
  for (const auto &[name, value] : k.key) keyText += name + "=" + value + ";";
  return dir + "/tune/" + k.kernel + "-" + k.kernelHash.substr(0, 16) + "/" +
         cache::hash64(k.device + "\n" + keyText + "\n" + k.config.str()) + ".json";
}
}  // namespace

std::optional<TuneResult> lookupTuneEntry(const std::string &dir, const TuneEntryKey &k,
                                          const std::function<void(const std::string &)> &warn) {
  const std::string path = entryPath(dir, k);
  std::optional<std::string> text = cache::readFile(path);
  if (!text) return std::nullopt;
  try {
    json j = json::parse(*text);
    if (j.at("format") != "tk-tune-entry" || j.at("version") != kEntryVersion) throw std::runtime_error("not a tuning entry");
    // A different key under the same file name: a hash collision, not corruption.
    if (j.at("kernel_hash") != k.kernelHash || j.at("device") != k.device ||
        j.at("key").get<std::map<std::string, std::string>>() != k.key || j.at("config") != configJson(k.config))
      return std::nullopt;
    TuneResult r;
    r.config = k.config;
    r.status = j.at("status").get<std::string>();
    if (r.status != "ok" && r.status != "pruned" && r.status != "error") throw std::runtime_error("bad status");
    r.reason = j.at("reason").get<std::string>();
    r.ms = j.at("ms").get<double>();
    r.registers = j.at("registers").get<int>();
    r.spillBytes = j.at("spill_bytes").get<int>();
    r.sharedBytes = j.at("shared_bytes").get<int>();
    if (const json &m = j.at("model"); m.is_object()) {
      r.model.us = m.at("us");
      r.model.memoryUs = m.at("memory_us");
      r.model.computeUs = m.at("compute_us");
      r.model.sharedUs = m.at("shared_us");
      r.model.latencyUs = m.at("latency_us");
      r.model.launchUs = m.at("launch_us");
      r.model.blocksPerSm = m.at("blocks_per_sm");
      r.model.occupancy = m.at("occupancy");
      r.model.limitedBy = m.at("limited_by");
      r.model.bound = m.at("bound");
      r.model.waves = m.at("waves");
      r.model.dramBytes = m.at("dram_bytes");
      r.model.note = m.at("note");
    }
    if (!(r.ms >= 0)) throw std::runtime_error("bad time");
    r.cached = true;
    return r;
  } catch (const std::exception &e) {
    warn("ignoring a corrupted tuning-cache entry '" + path + "' (" + e.what() + "); measuring again");
    return std::nullopt;
  }
}

void storeTuneEntry(const std::string &dir, const TuneEntryKey &k, const TuneResult &r, const std::string &measure,
                    const std::function<void(const std::string &)> &warn) {
  json j = {{"format", "tk-tune-entry"}, {"version", kEntryVersion},    {"kernel", k.kernel},
            {"kernel_hash", k.kernelHash}, {"device", k.device},       {"key", k.key},
            {"config", configJson(k.config)}, {"status", r.status},    {"reason", r.reason},
            {"ms", r.ms},                 {"measure", measure},         {"registers", r.registers},
            {"spill_bytes", r.spillBytes}, {"shared_bytes", r.sharedBytes}};
  if (measure == "model" && r.status == "ok")
    j["model"] = {{"us", r.model.us},
                  {"memory_us", r.model.memoryUs},
                  {"compute_us", r.model.computeUs},
                  {"shared_us", r.model.sharedUs},
                  {"latency_us", r.model.latencyUs},
                  {"launch_us", r.model.launchUs},
                  {"blocks_per_sm", r.model.blocksPerSm},
                  {"occupancy", r.model.occupancy},
                  {"limited_by", r.model.limitedBy},
                  {"bound", r.model.bound},
                  {"waves", r.model.waves},
                  {"dram_bytes", r.model.dramBytes},
                  {"note", r.model.note}};
  else
    j["model"] = nullptr;
  std::string error;
  if (!cache::writeAtomic(entryPath(dir, k), j.dump(1), error))
    warn("tuning cache not updated: " + error + " (set TK_CACHE_DIR or --cache-dir to a writable directory)");
}

}  // namespace detail

int mergeTuneCaches(const std::vector<std::string> &from, const std::string &into,
                    const std::function<void(const std::string &)> &warnFn) {
  namespace fs = std::filesystem;
  std::function<void(const std::string &)> warn = warnFn;
  if (!warn) warn = [](const std::string &m) { std::fprintf(stderr, "tk: warning: %s\n", m.c_str()); };
  int copied = 0;
  std::error_code ec;
  for (const std::string &dir : from) {
    if (!fs::is_directory(dir, ec)) throw Error("cannot merge '" + dir + "': not a directory");
    if (fs::equivalent(dir, into, ec)) continue;
    const fs::path root = fs::path(dir) / "tune";
    for (const std::string &file : cache::listFiles(root.string(), ".json")) {
      std::optional<std::string> text = cache::readFile(file);
      bool valid = false;
      try {
        valid = text && nlohmann::json::parse(*text).at("format") == "tk-tune-entry";
      } catch (const std::exception &) {
      }
      if (!valid) {
        warn("skipping '" + file + "': not a tuning-cache entry");
        continue;
      }
      const fs::path target = fs::path(into) / "tune" / fs::relative(file, root, ec);
      if (fs::exists(target, ec)) continue;
      std::string error;
      if (!cache::writeAtomic(target.string(), *text, error)) throw Error("merge into '" + into + "' failed: " + error);
      ++copied;
    }
  }
  return copied;
}

}  // namespace tk
