// Cache entries sealed with a SHA-256 digest bound to their name: the first
// line of an entry is "tk-cache-entry sha256:HEX", HEX the digest of the
// entry's file name (itself a hash of its key) and its payload. A planted or
// edited entry, or one copied under another key's name, fails the check and
// is a miss. Shared by the compile cache and the tuning cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/CacheFiles.h"

namespace tk::detail {

// SHA-256 of `bytes` as 64 hex digits (LLVM's, as the compile key uses).
std::string sha256Hex(std::string_view bytes);

// The payload of the entry at `path`, or nullopt: missing (quiet), refused
// by cache::readEntry (warned), or sealed for another name or other content
// (warned once, naming the file).
std::optional<std::string> loadEntry(const std::string &path, uint64_t cap, const cache::WarnFn &warn);

// `payload` sealed for `path`'s name and written there (cache::writeEntry).
bool storeEntry(const std::string &path, const std::string &payload, std::string &error);

// The payload of sealed entry `text` read from `path`, or nullopt with `why`
// set: for tools that read entries in bulk (merging caches, `tkc cache ls`).
std::optional<std::string> unsealEntry(const std::string &path, const std::string &text, std::string &why);

}  // namespace tk::detail
