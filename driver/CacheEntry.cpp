// Sealing cache entries with SHA-256 (see CacheEntry.h).
#include "driver/CacheEntry.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SHA256.h>

#include <filesystem>

namespace tk::detail {

namespace {
constexpr std::string_view kMagic = "tk-cache-entry sha256:";

// Length-prefixed fields, so no name/payload split hashes like another.
std::string digestFor(const std::string &name, std::string_view payload) {
  return sha256Hex(std::to_string(name.size()) + ":" + name + std::to_string(payload.size()) + ":" + std::string(payload));
}

std::string nameOf(const std::string &path) { return std::filesystem::path(path).filename().string(); }
}  // namespace

std::string sha256Hex(std::string_view bytes) {
  llvm::SHA256 h;
  h.update(llvm::StringRef(bytes.data(), bytes.size()));
  std::array<uint8_t, 32> d = h.final();
  static const char *hex = "0123456789abcdef";
  std::string out;
  for (uint8_t b : d) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

std::optional<std::string> unsealEntry(const std::string &path, const std::string &text, std::string &why) {
  const size_t eol = text.find('\n');
  if (text.compare(0, kMagic.size(), kMagic) != 0 || eol == std::string::npos) {
    why = "not a sealed tk cache entry";
    return std::nullopt;
  }
  const std::string digest = text.substr(kMagic.size(), eol - kMagic.size());
  std::string payload = text.substr(eol + 1);
  if (digest != digestFor(nameOf(path), payload)) {
    why = "its content does not match its SHA-256 digest (edited, planted or renamed)";
    return std::nullopt;
  }
  return payload;
}

std::optional<std::string> loadEntry(const std::string &path, uint64_t cap, const cache::WarnFn &warn) {
  std::optional<std::string> text = cache::readEntry(path, cap, warn);
  if (!text) return std::nullopt;
  std::string why;
  std::optional<std::string> payload = unsealEntry(path, *text, why);
  if (!payload) cache::warnOnce(warn, "ignoring cache entry '" + path + "': " + why + "; it is replaced");
  return payload;
}

bool storeEntry(const std::string &path, const std::string &payload, std::string &error) {
  return cache::writeEntry(path, std::string(kMagic) + digestFor(nameOf(path), payload) + "\n" + payload, error);
}

}  // namespace tk::detail
