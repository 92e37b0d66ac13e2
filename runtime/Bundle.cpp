// The compiled-kernel artifact: JSON with a format version and a checksum,
// so a truncated or edited file is refused with a precise message.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "runtime/CacheFiles.h"
#include "runtime/Descriptors.h"
#include "runtime/OutputFiles.h"
#include "tk/compiler.h"
#include "tk/gpu.h"

namespace tk {

namespace {
using nlohmann::json;

// FNV-1a over every field, to catch corruption.
std::string checksum(const Bundle &b) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string &s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  };
  mix(b.kernel);
  mix(b.source);
  mix(b.tir);
  for (const std::string &arch : b.archs) mix(arch);
  for (const auto &[arch, ptx] : b.ptx) {
    mix(arch);
    mix(ptx);
  }
  for (const KernelParam &p : b.params)
    mix(p.name + ":" + p.type + "=" + p.value + (p.isConst ? "/const/" : "/") + std::to_string(p.align) +
        (p.noSpecialize ? "!" : "%") + std::to_string(p.multipleOf));
  mix(std::to_string(b.numWarps) + "/" + (b.producerWarps ? std::to_string(b.producerWarps) + "p/" : "") + std::to_string(b.numStages) + "/" + std::to_string(b.sharedBytes));
  for (const auto &[name, fact] : b.assumed) mix(name + "~" + fact);
  for (const auto &[arch, r] : b.resources)
    mix(arch + ":" + std::to_string(r.registers) + "," + std::to_string(r.spillStoreBytes) + "," +
        std::to_string(r.spillLoadBytes) + "," + std::to_string(r.sharedStaticBytes));
  // Mixed only when present, so a bundle without them keeps its checksum.
  for (const TensorMapParam &m : b.tensorMaps) {
    std::string box;
    for (int64_t d : m.box) box += std::to_string(d) + ",";
    mix("tensor_map:" + m.param + "[" + box + "]" + std::to_string(m.swizzle));
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// The launch parameters the tile IR's kernel header declares, as
// (name, type in the params' spelling: "*f32", "bool"), or nullopt when the
// header cannot be read.
std::optional<std::vector<std::pair<std::string, std::string>>> irParams(const std::string &tir,
                                                                         const std::string &kernel) {
  const std::string head = "kernel @" + kernel + "(";
  size_t at = tir.find(head);
  if (at == std::string::npos) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = at + head.size();
  int depth = 0;
  std::string item;
  auto flush = [&]() -> bool {
    if (item.find_first_not_of(' ') == std::string::npos) return true;
    size_t pct = item.find('%'), colon = item.find(':');
    if (pct == std::string::npos || colon == std::string::npos || colon < pct) return false;
    std::string name = item.substr(pct + 1, colon - pct - 1);
    std::string type = item.substr(colon + 1);
    type = type.substr(type.find_first_not_of(' '));
    type = type.substr(0, type.find_first_of(" {"));
    // ptr<ptr<f16>> is **f16: one '*' per level.
    std::string stars;
    while (type.rfind("ptr<", 0) == 0 && type.back() == '>') stars += '*', type = type.substr(4, type.size() - 5);
    type = stars + type;
    if (type == "i1") type = "bool";
    out.push_back({name, type});
    item.clear();
    return true;
  };
  for (; i < tir.size(); ++i) {
    const char c = tir[i];
    if (c == '{' || c == '<') ++depth;
    if (c == '}' || c == '>') --depth;
    if (depth == 0 && (c == ',' || c == ')')) {
      if (!flush()) return std::nullopt;
      if (c == ')') return out;
      continue;
    }
    if (c == '\n') return std::nullopt;
    item += c;
  }
  return std::nullopt;
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
  if (producerWarps) j["producer_warps"] = producerWarps;
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
  if (!tensorMaps.empty()) {  // optional: older bundles have none
    json maps = json::array();
    for (const TensorMapParam &m : tensorMaps)
      maps.push_back({{"param", m.param}, {"box", m.box}, {"swizzle", m.swizzle}});
    j["tensor_maps"] = maps;
  }
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
  if (j.contains("producer_warps")) b.producerWarps = field<int>(j, "producer_warps", what);
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
  if (auto maps = j.find("tensor_maps"); maps != j.end()) {
    if (!maps->is_array()) throw Error(what + ": field 'tensor_maps' has the wrong type");
    for (const json &m : *maps) {
      const std::string mw = what + ": tensor map " + std::to_string(b.tensorMaps.size());
      if (!m.is_object()) throw Error(mw + " is not an object");
      const int64_t swizzle = field<int64_t>(m, "swizzle", mw);
      if (swizzle < 0 || swizzle > 128)
        throw Error(mw + ": swizzle " + std::to_string(swizzle) + " is not 0, 32, 64 or 128 (bytes)");
      b.tensorMaps.push_back(
          TensorMapParam{field<std::string>(m, "param", mw), field<std::vector<int64_t>>(m, "box", mw), int(swizzle)});
    }
  }
  if (!validNumWarps(b.numWarps))
    throw Error(what + ": num_warps " + std::to_string(b.numWarps) + " is not a power of two in [1, " +
                std::to_string(kMaxWarps) + "]");
  if (b.producerWarps != 0 && b.producerWarps != 4)
    throw Error(what + ": producer_warps " + std::to_string(b.producerWarps) + " is not 0 or 4 (one warpgroup)");
  if (b.threadsPerBlock() > kMaxWarps * kWarpSize)
    throw Error(what + ": num_warps and producer_warps make " + std::to_string(b.threadsPerBlock()) +
                " threads per block, above " + std::to_string(kMaxWarps * kWarpSize));
  if (b.numStages < 1) throw Error(what + ": num_stages " + std::to_string(b.numStages) + " is not positive");
  if (field<std::string>(j, "checksum", what) != checksum(b))
    throw Error(what + ": corrupted (checksum mismatch)");
  // A bundle made by hand (with a matching checksum) must still describe
  // the kernel it holds: a launch is checked against `params`.
  const auto fromIr = irParams(b.tir, b.kernel);
  if (!fromIr) throw Error(what + ": its tile IR has no readable header for kernel '" + b.kernel + "'");
  // A descriptor parameter stands for several of the IR's (Descriptors.h).
  std::vector<std::pair<std::string, std::string>> launch;
  for (const KernelParam &p : b.launchParams()) {
    auto abi = detail::abiParams(p);
    if (!abi) throw Error(what + ": parameter '" + p.name + "' has an unknown type '" + p.type + "'");
    launch.insert(launch.end(), abi->begin(), abi->end());
  }
  bool same = *fromIr == launch;
  if (!same) throw Error(what + ": its parameters do not match those of its tile IR");
  for (size_t i = 0; i < b.tensorMaps.size(); ++i) {
    try {
      detail::tensorMapSource(b, b.tensorMaps[i]);
    } catch (const Error &e) {
      throw Error(what + ": tensor map " + std::to_string(i) + " (of '" + b.tensorMaps[i].param + "'): " + e.what());
    }
  }
  return b;
}

void Bundle::save(const std::string &path) const {
  std::string error;
  if (!files::writeFile(path, toJson(), error)) throw Error(error);
}

// Bundles are read whole: a regular file, and no larger than this (a big
// kernel with PTX for every arch is a few MiB).
constexpr uint64_t kMaxBundleBytes = uint64_t{256} << 20;

Bundle Bundle::load(const std::string &path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) throw Error("cannot read '" + path + "': " + ec.message());
  if (!std::filesystem::is_regular_file(status))
    throw Error("cannot read '" + path + "': " + (std::filesystem::is_directory(status) ? "it is a directory" : "it is not a regular file"));
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error("cannot read '" + path + "': " + ec.message());
  if (size > kMaxBundleBytes)
    throw Error("cannot read '" + path + "': " + std::to_string(size) + " bytes is more than a bundle holds (at most " +
                std::to_string(kMaxBundleBytes >> 20) + " MiB)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "'");
  std::string text(size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (in.gcount() != static_cast<std::streamsize>(size) || in.bad()) throw Error("cannot read '" + path + "': a read failed");
  return fromJson(text, path);
}

}  // namespace tk
