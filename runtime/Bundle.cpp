// The compiled-kernel artifact: JSON with a format version and a checksum,
// so a truncated or edited file is refused with a precise message.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "runtime/CacheFiles.h"
#include "tk/compiler.h"

namespace tk {

namespace {
using nlohmann::json;

// FNV-1a over the fields a device runs, to catch corruption.
std::string checksum(const Bundle &b) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string &s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  };
  mix(b.kernel);
  mix(b.tir);
  for (const std::string &arch : b.archs) mix(arch);
  for (const auto &[arch, ptx] : b.ptx) {
    mix(arch);
    mix(ptx);
  }
  for (const KernelParam &p : b.params)
    mix(p.name + ":" + p.type + "=" + p.value + "@" + std::to_string(p.align) + (p.noSpecialize ? "!" : "%") +
        std::to_string(p.multipleOf));
  mix(std::to_string(b.numWarps) + "/" + std::to_string(b.numStages) + "/" + std::to_string(b.sharedBytes));
  for (const auto &[name, fact] : b.assumed) mix(name + "~" + fact);
  for (const auto &[arch, r] : b.resources)
    mix(arch + ":" + std::to_string(r.registers) + "," + std::to_string(r.spillStoreBytes) + "," +
        std::to_string(r.spillLoadBytes) + "," + std::to_string(r.sharedStaticBytes));
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

template <class T>
T field(const json &j, const char *key, const std::string &what) {
  auto it = j.find(key);
  if (it == j.end()) throw Error(what + ": missing field '" + key + "'");
  try {
    return it->get<T>();
  } catch (const json::exception &) {
    throw Error(what + ": field '" + key + "' has the wrong type");
  }
}
}  // namespace

// Runtime and compiler both ask: what a compile assumes, what a launch checks.
std::string integerFact(int64_t value) {
  if (value == 1) return "1";
  if (value % 16 == 0) return "16";
  return "";
}

bool factHolds(const std::string &fact, int64_t value) {
  if (fact == "1") return value == 1;
  return value % std::stoll(fact) == 0;
}

namespace {
// "1", or a power of two from 2 to 2^30 in decimal.
bool validFact(const std::string &fact) {
  if (fact.empty() || fact.size() > 10 || fact.find_first_not_of("0123456789") != std::string::npos) return false;
  int64_t n = std::stoll(fact);
  return fact == std::to_string(n) && (n == 1 || (n >= 2 && n <= (int64_t{1} << 30) && (n & (n - 1)) == 0));
}
}  // namespace

std::vector<KernelParam> Bundle::launchParams() const {
  std::vector<KernelParam> out;
  for (const KernelParam &p : params)
    if (!p.isConst) out.push_back(p);
  return out;
}

int64_t Bundle::constInt(const std::string &name) const {
  for (const KernelParam &p : params)
    if (p.isConst && p.name == name) {
      try {
        size_t used = 0;
        int64_t v = std::stoll(p.value, &used);
        if (used == p.value.size()) return v;
      } catch (const std::exception &) {
      }
      throw Error("const parameter '" + name + "' of '" + kernel + "' is not an integer: " + p.value);
    }
  throw Error("kernel '" + kernel + "' has no const parameter '" + name + "'");
}

std::string Bundle::toJson() const {
  json j;
  j["format"] = "tk-bundle";
  j["version"] = kFormatVersion;
  j["kernel"] = kernel;
  j["source"] = source;
  j["num_warps"] = numWarps;
  j["num_stages"] = numStages;
  j["shared_bytes"] = sharedBytes;
  j["archs"] = archs;
  json res = json::object();
  for (const auto &[arch, r] : resources)
    res[arch] = {{"registers", r.registers},
                 {"spill_store_bytes", r.spillStoreBytes},
                 {"spill_load_bytes", r.spillLoadBytes},
                 {"shared_static_bytes", r.sharedStaticBytes}};
  j["resources"] = res;
  j["assumed"] = assumed;
  json ps = json::array();
  for (const KernelParam &p : params)
    ps.push_back({{"name", p.name},
                  {"type", p.type},
                  {"const", p.isConst},
                  {"value", p.value},
                  {"align", p.align},
                  {"no_specialize", p.noSpecialize},
                  {"multiple_of", p.multipleOf}});
  j["params"] = ps;
  j["tir"] = tir;
  j["ptx"] = ptx;
  j["checksum"] = checksum(*this);
  return j.dump(1);
}

Bundle Bundle::fromJson(const std::string &text, const std::string &what) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error &e) {
    throw Error(what + ": not a tk bundle (invalid JSON at byte " + std::to_string(e.byte) + ")");
  }
  if (!j.is_object() || j.value("format", "") != "tk-bundle") throw Error(what + ": not a tk bundle");
  int version = field<int>(j, "version", what);
  if (version != kFormatVersion)
    throw Error(what + ": bundle format version " + std::to_string(version) + " is not supported (this tk reads " +
                std::to_string(kFormatVersion) + ")");
  Bundle b;
  b.kernel = field<std::string>(j, "kernel", what);
  b.source = field<std::string>(j, "source", what);
  b.numWarps = field<int>(j, "num_warps", what);
  b.numStages = field<int>(j, "num_stages", what);
  b.sharedBytes = field<int>(j, "shared_bytes", what);
  b.archs = field<std::vector<std::string>>(j, "archs", what);
  b.tir = field<std::string>(j, "tir", what);
  b.ptx = field<std::map<std::string, std::string>>(j, "ptx", what);
  b.assumed = field<std::map<std::string, std::string>>(j, "assumed", what);
  for (const auto &[name, fact] : b.assumed)
    if (!validFact(fact)) throw Error(what + ": unknown fact '" + fact + "' assumed of '" + name + "'");
  const json resources = field<json>(j, "resources", what);
  if (!resources.is_object()) throw Error(what + ": field 'resources' has the wrong type");
  for (const auto &[arch, r] : resources.items()) {
    std::string rw = what + ": resources of " + arch;
    b.resources[arch] = Resources{field<int>(r, "registers", rw), field<int>(r, "spill_store_bytes", rw),
                                  field<int>(r, "spill_load_bytes", rw), field<int>(r, "shared_static_bytes", rw)};
  }
  for (const json &p : field<json>(j, "params", what)) {
    std::string pw = what + ": parameter";
    b.params.push_back(KernelParam{field<std::string>(p, "name", pw), field<std::string>(p, "type", pw),
                                   field<bool>(p, "const", pw), field<std::string>(p, "value", pw),
                                   field<int64_t>(p, "align", pw), field<bool>(p, "no_specialize", pw),
                                   field<int64_t>(p, "multiple_of", pw)});
  }
  if (b.numWarps < 1 || b.numWarps > 32 || (b.numWarps & (b.numWarps - 1)))
    throw Error(what + ": num_warps " + std::to_string(b.numWarps) + " is not a power of two in [1, 32]");
  if (b.numStages < 1) throw Error(what + ": num_stages " + std::to_string(b.numStages) + " is not positive");
  if (field<std::string>(j, "checksum", what) != checksum(b))
    throw Error(what + ": corrupted (checksum mismatch)");
  return b;
}

void Bundle::save(const std::string &path) const {
  std::string error;
  if (!cache::writeAtomic(path, toJson(), error)) throw Error(error);
}

Bundle Bundle::load(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return fromJson(ss.str(), path);
}

}  // namespace tk
