// Search spaces: the `--config` text form of one config, and the @tune space
// a .tk file declares.
#include <algorithm>
#include <cctype>
#include <set>

#include "driver/KernelLookup.h"
#include "tune/TuneSpace.h"
#include "tk/gpu.h"
#include "tk/tune.h"

namespace tk {

std::string TuneConfig::str() const {
  std::string out;
  std::set<std::string> listed;
  for (const std::string &name : order)
    if (auto it = consts.find(name); it != consts.end() && listed.insert(name).second)
      out += name + "=" + it->second + ",";
  for (const auto &[name, value] : consts)
    if (!listed.count(name)) out += name + "=" + value + ",";
  return out + "num_warps=" + std::to_string(numWarps) + ",num_stages=" + std::to_string(numStages);
}

std::string TuneConfig::canonical() const {
  std::string out;
  for (const auto &[name, value] : consts) out += name + "=" + value + ",";
  return out + "num_warps=" + std::to_string(numWarps) + ",num_stages=" + std::to_string(numStages);
}

namespace {
bool isIdent(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

int positiveInt(const std::string &text, const std::string &what, const std::string &config) {
  size_t used = 0;
  long v = 0;
  try {
    v = std::stol(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != text.size() || v < 1 || v > 1024)
    throw Error("config '" + config + "': " + what + " must be a positive integer, got '" + text + "'");
  return int(v);
}
}  // namespace

TuneConfig TuneConfig::parse(const std::string &text, int defaultNumWarps) {
  TuneConfig c;
  c.numWarps = defaultNumWarps;
  bool warps = false, stages = false;
  size_t start = 0;
  if (text.empty()) throw Error("empty config: expected NAME=VALUE[,NAME=VALUE...]");
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw Error("config '" + text + "': expected NAME=VALUE, got '" + item + "'");
    std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    if (!isIdent(name)) throw Error("config '" + text + "': '" + name + "' is not a name");
    if (name == "num_warps") {
      if (warps) throw Error("config '" + text + "': num_warps is given twice");
      warps = true;
      c.numWarps = positiveInt(value, "num_warps", text);
      if (!validNumWarps(c.numWarps))
        throw Error("config '" + text + "': num_warps must be a power of two in [1, " + std::to_string(kMaxWarps) +
                    "], got " + value);
    } else if (name == "num_stages") {
      if (stages) throw Error("config '" + text + "': num_stages is given twice");
      stages = true;
      c.numStages = positiveInt(value, "num_stages", text);
    } else if (!c.consts.emplace(name, value).second) {
      throw Error("config '" + text + "': '" + name + "' is given twice");
    } else {
      c.order.push_back(name);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return c;
}

TuneSpace TuneSpace::fromFile(const std::string &path, const std::string &kernel) {
  lang::DiagnosticEngine diags;
  lang::Frontend fe(diags);
  fe.setImportRoots(detail::importRoots({}));
  if (!fe.loadFile(path) || diags.hasErrors()) throw CompileError(diags.render());
  return detail::declaredSpace(detail::findKernel(fe.kernels(), path, kernel));
}

}  // namespace tk

namespace tk::detail {

TuneSpace declaredSpace(const lang::KernelSig &sig) {
  TuneSpace s;
  if (!sig.tune) return s;
  for (const lang::TuneConfigSig &c : sig.tune->configs)
    s.configs.push_back(TuneConfig{c.consts, c.numWarps, c.numStages, c.order});
  s.key = sig.tune->key;
  s.prune = sig.tune->prune;
  return s;
}

}  // namespace tk::detail
