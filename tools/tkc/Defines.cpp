// `-D NAME=VALUE` and `--assume NAME=VALUE`: parsed, and checked against a
// kernel's const parameters (declared in LaunchSpec.h).
#include <algorithm>

#include "LaunchSpec.h"

namespace tkc {

namespace {

// "NAME=VALUE" -> {NAME, VALUE}; `flag` names the option in the error.
std::pair<std::string, std::string> splitNameValue(const std::string &text, const char *flag) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw tk::Error(std::string(flag) + " expects NAME=VALUE, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace

std::map<std::string, std::string> parseDefines(const std::vector<std::string> &defines) {
  std::map<std::string, std::string> out;
  for (const std::string &d : defines) {
    auto [name, value] = splitNameValue(d, "-D");
    out[name] = value;
  }
  return out;
}

std::map<std::string, int64_t> parseAssumes(const std::vector<std::string> &assumes) {
  std::map<std::string, int64_t> out;
  for (const std::string &a : assumes) {
    const auto [name, value] = splitNameValue(a, "--assume");
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used != value.size()) throw tk::Error("--assume " + name + "=" + value + ": the value must be an integer");
    out[name] = v;
  }
  return out;
}

void checkDefineNames(const std::vector<std::pair<std::string, std::vector<tk::KernelParam>>> &kernels,
                      const std::vector<std::string> &defines) {
  std::vector<std::string> consts;
  for (const auto &[kernel, params] : kernels)
    for (const tk::KernelParam &p : params)
      if (p.isConst && std::find(consts.begin(), consts.end(), p.name) == consts.end()) consts.push_back(p.name);
  for (const std::string &d : defines) {
    if (d.find('=') == std::string::npos) continue;  // malformed: the -D parser says so
    const std::string name = d.substr(0, d.find('='));
    if (std::find(consts.begin(), consts.end(), name) != consts.end()) continue;
    std::string list;
    for (const std::string &c : consts) list += (list.empty() ? "" : ", ") + c;
    const bool one = kernels.size() == 1;
    throw tk::Error("-D " + d + ": " + (one ? "kernel '" + kernels[0].first + "' has no" : "no kernel compiled has a") +
                    " const parameter '" + name + "' (" + (one ? "its" : "their") +
                    " consts: " + (list.empty() ? "none" : list) + ")");
  }
}

void checkDefines(const std::string &kernel, const std::vector<tk::KernelParam> &params,
                  const std::map<std::string, std::string> &defines) {
  std::string consts;
  for (const tk::KernelParam &p : params)
    if (p.isConst) consts += (consts.empty() ? "" : ", ") + p.name;
  if (consts.empty()) consts = "none";
  for (const auto &[name, value] : defines) {
    const tk::KernelParam *p = nullptr;
    for (const tk::KernelParam &q : params)
      if (q.name == name) p = &q;
    if (!p)
      throw tk::Error("-D " + name + "=" + value + ": kernel '" + kernel + "' has no const parameter '" + name +
                      "' (its consts: " + consts + ")");
    if (!p->isConst)
      throw tk::Error("-D " + name + "=" + value + ": '" + name + "' is not a const parameter of '" + kernel +
                      "': pass it with --arg " + name + "=... (its consts: " + consts + ")");
  }
}

std::string signature(const std::string &kernel, const std::vector<tk::KernelParam> &params) {
  std::string s = kernel + "(";
  for (size_t i = 0; i < params.size(); ++i) {
    const tk::KernelParam &p = params[i];
    s += (i ? ", " : "") + std::string(p.isConst ? "const " : "") + p.name + ": " + p.type;
    if (p.isConst && !p.value.empty()) s += " = " + p.value;
  }
  return s + ")";
}

}  // namespace tkc
