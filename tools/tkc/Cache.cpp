// `tkc cache ls|clear|path`: what the compile and tuning caches hold.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>

#include "driver/CacheEntry.h"
#include "runtime/CacheFiles.h"
#include "tk/compiler.h"

namespace tkc {
namespace {

namespace fs = std::filesystem;

struct CacheCli {
  std::string action, dir;
};

uint64_t bytesOf(const std::vector<std::string> &files) {
  uint64_t total = 0;
  std::error_code ec;
  for (const std::string &f : files) total += fs::file_size(f, ec);
  return total;
}

std::string human(uint64_t bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1);
  if (bytes >= (1u << 20)) os << double(bytes) / (1 << 20) << " MiB";
  else os << double(bytes) / 1024 << " KiB";
  return os.str();
}

int list(const std::string &dir) {
  std::cout << "cache: " << dir << "\n";
  std::vector<std::string> bundles = tk::cache::listFiles(dir + "/kernels", ".tkb");
  std::cout << "compiled kernels: " << bundles.size() << " bundles, " << human(bytesOf(bundles)) << "\n";
  std::vector<std::string> entries = tk::cache::listFiles(dir + "/tune", ".json");
  std::cout << "tuning results: " << entries.size() << " entries\n";
  // Per kernel, device and key values: how many configs, and the best.
  struct Group {
    int entries = 0;
    double bestMs = -1;
    std::string best, measure;
  };
  std::map<std::string, Group> groups;
  for (const std::string &file : entries) {
    // Read as a lookup reads it: bounded, sealed, never a raw exception.
    std::optional<std::string> text = tk::cache::readFile(file, 1 << 20);
    std::string why;
    std::optional<std::string> payload = text ? tk::detail::unsealEntry(file, *text, why) : std::nullopt;
    try {
      nlohmann::json j = nlohmann::json::parse(payload.value_or(""));
      std::string key;
      for (const auto &[k, v] : j.at("key").items()) key += " " + k + "=" + v.get<std::string>();
      Group &g = groups[j.at("kernel").get<std::string>() + " on " + j.at("device").get<std::string>() + key];
      ++g.entries;
      g.measure = j.at("measure");
      if (j.at("status") == "ok" && (g.bestMs < 0 || j.at("ms").get<double>() < g.bestMs)) {
        g.bestMs = j.at("ms");
        std::string cfg;
        for (const auto &[k, v] : j.at("config").at("consts").items()) cfg += k + "=" + v.get<std::string>() + ",";
        g.best = cfg + "num_warps=" + std::to_string(j.at("config").at("num_warps").get<int>()) +
                 ",num_stages=" + std::to_string(j.at("config").at("num_stages").get<int>());
      }
    } catch (const std::exception &) {
      std::cout << "  (unreadable entry " << file << ")\n";
    }
  }
  for (const auto &[what, g] : groups) {
    std::cout << "  " << what << ": " << g.entries << " configs";
    if (g.bestMs >= 0) std::cout << ", best " << g.best << " (" << g.bestMs << (g.measure == "model" ? " model ms" : " ms") << ")";
    std::cout << "\n";
  }
  return 0;
}

int clear(const std::string &dir) {
  // Only what tk put there: the directory itself may be shared ($XDG_CACHE_HOME).
  std::error_code ec;
  uintmax_t n = 0;
  for (const char *sub : {"kernels", "tune"}) {
    n += fs::remove_all(fs::path(dir) / sub, ec);
    if (ec) throw tk::Error("cannot clear '" + (fs::path(dir) / sub).string() + "': " + ec.message());
  }
  std::cout << "cleared " << dir << " (" << n << " files and directories)\n";
  return 0;
}

}  // namespace

std::function<int()> addCacheCommand(CLI::App &app) {
  auto o = std::make_shared<CacheCli>();
  CLI::App *c = app.add_subcommand("cache", "Show, locate or clear the compile and tuning caches");
  c->add_option("action", o->action, "ls, clear or path")->required()->check(CLI::IsMember({"ls", "clear", "path"}));
  c->add_option("--cache-dir", o->dir, "the cache (default $TK_CACHE_DIR or ~/.cache/tk)");
  return [o] {
    const std::string dir = tk::cacheDirectory(o->dir);
    if (o->action == "path") {
      std::cout << dir << "\n";
      return 0;
    }
    return o->action == "ls" ? list(dir) : clear(dir);
  };
}

}  // namespace tkc
