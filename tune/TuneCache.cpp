// Tuning-cache entries (TuneCache.h) and `tkc tune --merge`.
#include "tune/TuneCache.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "driver/CacheEntry.h"
#include "runtime/CacheFiles.h"

namespace tk {

namespace detail {

using nlohmann::json;

std::string keyText(const std::map<std::string, std::string> &key) {
  std::string out;
  for (const auto &[name, value] : key) out += name + "=" + value + ";";
  return out;
}

json configJson(const TuneConfig &c) {
  return {{"consts", c.consts}, {"num_warps", c.numWarps}, {"num_stages", c.numStages}};
}

json modelJson(const ModelEstimate &m) {
  return {{"us", m.us},
          {"bound", m.bound},
          {"memory_us", m.memoryUs},
          {"compute_us", m.computeUs},
          {"shared_us", m.sharedUs},
          {"latency_us", m.latencyUs},
          {"launch_us", m.launchUs},
          {"blocks_per_sm", m.blocksPerSm},
          {"occupancy", m.occupancy},
          {"limited_by", m.limitedBy},
          {"waves", m.waves},
          {"dram_bytes", m.dramBytes},
          {"note", m.note}};
}

ModelEstimate modelFromJson(const json &j) {
  ModelEstimate m;
  m.us = j.at("us");
  m.bound = j.at("bound");
  m.memoryUs = j.at("memory_us");
  m.computeUs = j.at("compute_us");
  m.sharedUs = j.at("shared_us");
  m.latencyUs = j.at("latency_us");
  m.launchUs = j.at("launch_us");
  m.blocksPerSm = j.at("blocks_per_sm");
  m.occupancy = j.at("occupancy");
  m.limitedBy = j.at("limited_by");
  m.waves = j.at("waves");
  m.dramBytes = j.at("dram_bytes");
  m.note = j.at("note");
  return m;
}

namespace {
constexpr int kEntryVersion = 3;
// An entry is a few hundred bytes; anything near this is not one.
constexpr uint64_t kMaxEntryBytes = 1 << 20;

// Named by a SHA-256 of its whole key, which the entry also repeats: a
// different key under the same name reads as a miss, and the name is what
// the entry's seal (driver/CacheEntry.h) binds its content to.
std::string entryPath(const std::string &dir, const TuneEntryKey &k) {
  const std::string whole = k.device + "\n" + keyText(k.key) + "\n" + k.config.canonical() + "\n" + keyText(k.assumed) +
                            "\n" + k.launch;
  return dir + "/tune/" + k.kernel + "-" + k.kernelHash.substr(0, 16) + "/" + sha256Hex(whole).substr(0, 32) + ".json";
}
}  // namespace

std::optional<TuneResult> lookupTuneEntry(const std::string &dir, const TuneEntryKey &k,
                                          const std::function<void(const std::string &)> &warn) {
  const std::string path = entryPath(dir, k);
  std::optional<std::string> text = loadEntry(path, kMaxEntryBytes, warn);
  if (!text) return std::nullopt;
  try {
    json j = json::parse(*text);
    if (j.at("format") != "tk-tune-entry" || j.at("version") != kEntryVersion) throw Error("not a tuning entry");
    // A different key under the same file name: a hash collision, not corruption.
    if (j.at("kernel_hash") != k.kernelHash || j.at("device") != k.device ||
        j.at("key").get<std::map<std::string, std::string>>() != k.key || j.at("config") != configJson(k.config) ||
        j.at("assumed").get<std::map<std::string, std::string>>() != k.assumed || j.at("launch") != k.launch)
      return std::nullopt;
    TuneResult r;
    r.config = k.config;
    r.status = j.at("status").get<std::string>();
    if (r.status != "ok" && r.status != "pruned" && r.status != "error") throw Error("bad status");
    r.reason = j.at("reason").get<std::string>();
    r.ms = j.at("ms").get<double>();
    r.registers = j.at("registers").get<int>();
    r.spillBytes = j.at("spill_bytes").get<int>();
    r.sharedBytes = j.at("shared_bytes").get<int>();
    if (const json &m = j.at("model"); m.is_object()) r.model = modelFromJson(m);
    if (!(r.ms >= 0) || !std::isfinite(r.ms)) throw Error("bad time");
    r.cached = true;
    return r;
  } catch (const std::exception &e) {  // json's own exceptions too: `1e400` is out_of_range
    cache::warnOnce(warn, "ignoring a corrupted tuning-cache entry '" + path + "' (" + e.what() + "); measuring again");
    return std::nullopt;
  }
}

void storeTuneEntry(const std::string &dir, const TuneEntryKey &k, const TuneResult &r, const std::string &measure,
                    const std::function<void(const std::string &)> &warn) {
  json j = {{"format", "tk-tune-entry"}, {"version", kEntryVersion},    {"kernel", k.kernel},
            {"kernel_hash", k.kernelHash}, {"device", k.device},       {"key", k.key},
            {"config", configJson(k.config)}, {"assumed", k.assumed},  {"launch", k.launch},  {"status", r.status}, {"reason", r.reason},
            {"ms", r.ms},                 {"measure", measure},         {"registers", r.registers},
            {"spill_bytes", r.spillBytes}, {"shared_bytes", r.sharedBytes}};
  j["model"] = measure == "model" && r.status == "ok" ? modelJson(r.model) : json(nullptr);
  std::string error;
  if (!storeEntry(entryPath(dir, k), j.dump(1), error))
    cache::warnOnce(warn, "tuning cache not updated: " + error + " (set TK_CACHE_DIR or --cache-dir to a writable directory)");
}

}  // namespace detail

int mergeTuneCaches(const std::vector<std::string> &from, const std::string &into,
                    const std::function<void(const std::string &)> &warnFn) {
  namespace fs = std::filesystem;
  const auto warn = cache::orStderr(warnFn);
  int copied = 0;
  std::error_code ec;
  if (!cache::trustedDirectory(into, warn)) throw Error("cannot merge into '" + into + "': not a cache directory of yours alone");
  for (const std::string &dir : from) {
    if (!fs::is_directory(dir, ec)) throw Error("cannot merge '" + dir + "': not a directory");
    if (fs::equivalent(dir, into, ec)) continue;
    const fs::path root = fs::path(dir) / "tune";
    for (const std::string &file : cache::listFiles(root.string(), ".json")) {
      // Entries from elsewhere (other machines' shards) are checked as the
      // cache checks its own: sealed, bounded, a tuning entry.
      std::optional<std::string> text = cache::readFile(file, detail::kMaxEntryBytes);
      std::string why = "too large or not a regular file";
      bool valid = false;
      try {
        if (text)
          if (std::optional<std::string> payload = detail::unsealEntry(file, *text, why))
            valid = nlohmann::json::parse(*payload).at("format") == "tk-tune-entry";
      } catch (const std::exception &e) {
        why = e.what();
      }
      if (!valid) {
        warn("skipping '" + file + "': not a tuning-cache entry (" + why + ")");
        continue;
      }
      const fs::path target = fs::path(into) / "tune" / fs::relative(file, root, ec);
      if (fs::exists(target, ec)) continue;
      std::string error;
      if (!cache::writeEntry(target.string(), *text, error)) throw Error("merge into '" + into + "' failed: " + error);
      ++copied;
    }
  }
  return copied;
}

}  // namespace tk
