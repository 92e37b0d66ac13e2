// The compile cache (CompileCache.h): key, lookup, store.
#include "driver/CompileCache.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SHA256.h>

#include <cstdio>
#include <cstdlib>

#include "syntax/Diagnostics.h"
#include "driver/CacheEntry.h"
#include "runtime/CacheFiles.h"
#include "tk_build_id.h"

namespace tk {

std::string cacheDirectory(const std::string &dir) {
  if (!dir.empty()) return dir;
  if (const char *env = std::getenv("TK_CACHE_DIR"); env && *env) return env;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/tk";
  if (const char *home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/tk";
  return ".tk-cache";
}

namespace detail {

namespace {
// Every field is length-prefixed, so no two different inputs hash the same text.
void field(llvm::SHA256 &h, const std::string &s) {
  std::string len = std::to_string(s.size()) + ":";
  h.update(llvm::StringRef(len));
  h.update(llvm::StringRef(s));
}
}  // namespace

std::string compileKey(const lang::SourceManager &sources, const std::string &kernel, const CompileOptions &opts,
                       const std::string &toolkitRoot) {
  llvm::SHA256 h;
  field(h, TK_BUILD_ID);
  field(h, "sealed-entry");  // entries written before they were sealed are other keys
  field(h, std::to_string(Bundle::kFormatVersion));
  for (const std::string &file : sources.files()) {
    field(h, file);
    const std::string *text = sources.text(file);
    field(h, text ? *text : "");
  }
  field(h, kernel);
  for (const auto &[name, value] : opts.defines) {
    field(h, name);
    field(h, value);
  }
  field(h, std::to_string(opts.numWarps) + "/" + std::to_string(opts.numStages));
  for (const auto &[name, value] : opts.assume) {  // the facts, not the values
    field(h, name);
    field(h, integerFact(value));
  }
  for (const std::string &arch : opts.archs) field(h, arch);
  field(h, std::string(opts.emitPtx ? "ptx" : "-") + (opts.useLibdevice ? "libdevice" : "-") +
               (opts.ptxasResources ? "ptxas" : "-"));
  field(h, toolkitRoot);
  std::array<uint8_t, 32> digest = h.final();
  static const char *hex = "0123456789abcdef";
  std::string out;
  for (uint8_t b : digest) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

// A bundle carries PTX for each arch asked for: tens of MiB at most.
constexpr uint64_t kMaxBundleBytes = uint64_t(256) << 20;

namespace {
std::string entryPath(const std::string &dir, const std::string &key) {
  return dir + "/kernels/" + key.substr(0, 2) + "/" + key + ".tkb";
}
}  // namespace

std::optional<Bundle> lookupBundle(const std::string &dir, const std::string &key,
                                   const std::function<void(const std::string &)> &warn) {
  const std::string path = entryPath(dir, key);
  std::optional<std::string> text = loadEntry(path, kMaxBundleBytes, warn);
  if (!text) return std::nullopt;
  try {
    return Bundle::fromJson(*text, path);
  } catch (const std::exception &e) {  // a sealed entry of an older format
    cache::warnOnce(warn, std::string("ignoring a bad compile-cache entry (") + e.what() + "); compiling again");
    return std::nullopt;
  }
}

void storeBundle(const std::string &dir, const std::string &key, const Bundle &b,
                 const std::function<void(const std::string &)> &warn) {
  std::string error;
  if (!storeEntry(entryPath(dir, key), b.toJson(), error))
    cache::warnOnce(warn, "compile cache not updated: " + error + " (set TK_CACHE_DIR to a writable directory)");
}

}  // namespace detail
}  // namespace tk
