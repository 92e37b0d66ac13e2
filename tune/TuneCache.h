// The tuning cache: one file per (kernel hash, device, key values, config),
// so adding a config to a space measures only the new one, shards write
// disjoint files, and merging is copying. Internal to tune/
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>

#include "tk/tune.h"

namespace tk::detail {

// What identifies an entry; all of it is stored in the entry and compared on
// read, so a file name collision reads as a miss.
struct TuneEntryKey {
  std::string kernel, kernelHash, device;
  std::map<std::string, std::string> key;
  TuneConfig config;
  std::map<std::string, std::string> assumed;  // the facts the variant was compiled for
  // Everything else a measurement depends on: the grid, each argument's
  // buffer size, --max-spill-bytes, --sample-blocks (Tuner::Impl::launchText).
  std::string launch;
};

// Key values as one text, "n=4096;rows=7;": how entries and a Tuner's
// remembered bests are keyed.
std::string keyText(const std::map<std::string, std::string> &key);

// The JSON forms the cache entries and `tkc tune --json` share.
nlohmann::json configJson(const TuneConfig &c);
nlohmann::json modelJson(const ModelEstimate &m);
ModelEstimate modelFromJson(const nlohmann::json &j);  // throws nlohmann::json::exception

std::optional<TuneResult> lookupTuneEntry(const std::string &dir, const TuneEntryKey &k,
                                          const std::function<void(const std::string &)> &warn);
void storeTuneEntry(const std::string &dir, const TuneEntryKey &k, const TuneResult &r, const std::string &measure,
                    const std::function<void(const std::string &)> &warn);

}  // namespace tk::detail
