// What a tuning run shows: JSON (the `tkc tune --json` contract), a table
// and an SVG chart of the sweep.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "tune/TuneCache.h"
#include "tk/tune.h"

namespace tk {

namespace {
using nlohmann::json;

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string xmlEscape(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string unit(const TuneReport &r) { return r.measure == "model" ? "model ms" : "ms"; }
}  // namespace

const TuneResult &TuneReport::bestResult() const {
  if (best < 0 || best >= int(results.size())) throw Error("tuning of '" + kernel + "' has no best config");
  return results[best];
}

std::string TuneReport::json() const {
  nlohmann::json j;
  j["kernel"] = kernel;
  j["source"] = source;
  j["device"] = device;
  j["measure"] = measure;
  j["gpu"] = gpu;
  j["key"] = key;
  j["assumed"] = assumed;
  // The figure's name says what it is: the model's estimate on the sim, a
  // measured time on a GPU.
  const char *figure = measure == "model" ? "model_ms" : "ms";
  if (best >= 0) {
    j["best"] = detail::configJson(results[best].config);
    j["best"][figure] = results[best].ms;
  } else {
    j["best"] = nullptr;
  }
  nlohmann::json rs = nlohmann::json::array();
  for (const TuneResult &r : results) {
    nlohmann::json e = detail::configJson(r.config);
    e["status"] = r.status;
    e["reason"] = r.reason;
    e[figure] = r.status == "ok" ? nlohmann::json(r.ms) : nlohmann::json(nullptr);
    e["registers"] = r.registers;
    e["spill_bytes"] = r.spillBytes;
    e["shared_bytes"] = r.sharedBytes;
    e["cached"] = r.cached;
    if (measure == "model" && r.status == "ok") e["model"] = detail::modelJson(r.model);
    rs.push_back(e);
  }
  j["results"] = rs;
  j["shard"] = {{"index", shardIndex}, {"count", shardCount}, {"space_size", spaceSize}};
  j["compiled"] = compiled;
  j["timed"] = timed;
  j["cache_hits"] = cacheHits;
  return j.dump(2) + "\n";
}

std::string TuneReport::table() const {
  std::vector<std::vector<std::string>> rows;
  rows.push_back(
      {"", "config", "status", unit(*this), "regs", "spill B", "smem B", "occupancy", "bound / reason"});
  for (size_t i = 0; i < results.size(); ++i) {
    const TuneResult &r = results[i];
    std::string occupancy = r.status == "ok" && measure == "model" ? fixed(100 * r.model.occupancy, 0) + "%" : "-";
    std::string why = r.status == "ok" ? (measure == "model" ? r.model.bound : "") : r.reason;
    rows.push_back({int(i) == best ? "*" : "", r.config.str(), r.status + (r.cached ? " (cached)" : ""),
                    r.status == "ok" ? fixed(r.ms, 4) : "-", r.registers >= 0 ? std::to_string(r.registers) : "-",
                    r.spillBytes >= 0 ? std::to_string(r.spillBytes) : "-", std::to_string(r.sharedBytes), occupancy,
                    why});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto &row : rows)
    for (size_t c = 0; c + 1 < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::ostringstream os;
  os << kernel << " on " << device;
  if (measure == "model") os << ": estimated by the performance model for " << gpu << " (a model, not a measurement)";
  else os << ": measured with CUDA events";
  if (!key.empty()) {
    os << ", key";
    for (const auto &[name, value] : key) os << " " << name << "=" << value;
  }
  os << "\n";
  if (!assumed.empty()) {
    // The integer facts the variants were compiled for (as `tkc run` shows them).
    os << "assumed";
    const char *sep = " ";
    for (const auto &[name, fact] : assumed) {
      os << sep << name << (fact == "1" ? " == 1" : " % " + fact + " == 0");
      sep = ", ";
    }
    os << "\n";
  }
  if (shardCount > 1)
    os << "shard " << shardIndex << "/" << shardCount << ": " << results.size() << " of the space's " << spaceSize
       << " configs (merge the shards' caches for the whole table)\n";
  for (const auto &row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  }
  if (best >= 0) os << "best: " << results[best].config.str() << " (" << fixed(results[best].ms, 4) << " " << unit(*this) << ")\n";
  os << "compiled " << compiled << ", measured " << timed << ", from the cache " << cacheHits << "\n";
  return os.str();
}

std::string TuneReport::svg() const {
  std::vector<const TuneResult *> ok, fell;
  double most = 0;
  for (const TuneResult &r : results) {
    (r.status == "ok" ? ok : fell).push_back(&r);
    if (r.status == "ok") most = std::max(most, r.ms);
  }
  const int rowH = 22, left = 300, barW = 460, top = 56;
  const int height = top + int(ok.size()) * rowH + 40 + int(fell.size()) * 18 + 20;
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + barW + 120 << "\" height=\"" << height
     << "\" font-family=\"monospace\" font-size=\"12\">\n";
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  std::string title = kernel + " on " + device + (measure == "model" ? ": performance model for " + gpu + " (estimate)" : ": CUDA events");
  os << "<text x=\"10\" y=\"20\" font-size=\"14\">" << xmlEscape(title) << "</text>\n";
  os << "<text x=\"10\" y=\"40\">" << xmlEscape(unit(*this)) << " per config, lower is better; the best in green</text>\n";
  for (size_t i = 0; i < ok.size(); ++i) {
    const TuneResult &r = *ok[i];
    const bool isBest = best >= 0 && &results[best] == &r;
    const int y = top + int(i) * rowH;
    const double w = most > 0 ? r.ms / most * barW : 0;
    os << "<text x=\"" << left - 8 << "\" y=\"" << y + 15 << "\" text-anchor=\"end\">" << xmlEscape(r.config.str())
       << "</text>\n";
    os << "<rect x=\"" << left << "\" y=\"" << y + 3 << "\" width=\"" << fixed(std::max(w, 1.0), 1) << "\" height=\""
       << rowH - 6 << "\" fill=\"" << (isBest ? "#2a9d4b" : "#6c8ebf") << "\"/>\n";
    os << "<text x=\"" << left + int(w) + 6 << "\" y=\"" << y + 15 << "\">" << fixed(r.ms, 4) << (isBest ? " (best)" : "")
       << "</text>\n";
  }
  int y = top + int(ok.size()) * rowH + 30;
  if (!fell.empty()) os << "<text x=\"10\" y=\"" << y << "\">pruned or failed:</text>\n";
  for (const TuneResult *r : fell) {
    y += 18;
    os << "<text x=\"20\" y=\"" << y << "\">" << xmlEscape(r->config.str() + ": " + r->status + ", " + r->reason)
       << "</text>\n";
  }
  os << "</svg>\n";
  return os.str();
}

}  // namespace tk
