// Files of tk's on-disk caches (compiled bundles, tuning results): a cache
// directory trusted only when it is yours and no one else can write it (as
// ssh trusts its keys), entries read without following links or blocking on
// FIFOs and bounded before allocation, atomic private writes; and the small
// helpers around them (listing, warnings, short hashes).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tk::cache {

using WarnFn = std::function<void(const std::string &)>;

// Creates `dir` (missing components 0700) and says whether a cache may live
// there: a directory owned by you (the effective user) that group and others
// cannot write. Otherwise `warn` is told once per process why, and the caller
// runs without the cache.
bool trustedDirectory(const std::string &dir, const WarnFn &warn);

// The bytes of cache entry `path`, or nullopt. A missing entry is a quiet
// miss; one that is a symlink, a FIFO or device, owned by someone else,
// writable by group or others, or larger than `cap` bytes is refused with one
// warning naming it (it is replaced when the caller stores the fresh entry).
// Opened O_NOFOLLOW|O_NONBLOCK and checked with fstat, so what is checked is
// what is read.
std::optional<std::string> readEntry(const std::string &path, uint64_t cap, const WarnFn &warn);

// Writes entry `path` (0600, in directories made 0700) through the one output
// writer: a temporary beside it and a rename, which replaces whatever was
// planted there. False with `error` set on failure.
bool writeEntry(const std::string &path, const std::string &bytes, std::string &error);

// Calls `warn(message)` unless this process already did with this message:
// a bad entry is named once, not at every lookup of a long tuning run.
void warnOnce(const WarnFn &warn, const std::string &message);

// The whole regular file `path` if it is at most `cap` bytes, or nullopt (a
// FIFO or device is not opened for reading: it could block or never end).
std::optional<std::string> readFile(const std::string &path, uint64_t cap = uint64_t(1) << 30);

// Regular files under `dir` (recursively) whose names end with `suffix`.
std::vector<std::string> listFiles(const std::string &dir, const std::string &suffix);

// `warn`, or one that writes "tk: warning: MESSAGE" to stderr when it is
// unset: how the caches report what does not stop the work.
WarnFn orStderr(WarnFn warn);

// FNV-1a, 64 bits: a fixed, portable hash (tkc's seeds). Not for anything
// another user could choose the input of: cache entries use SHA-256.
uint64_t fnv1a64(std::string_view bytes);

// FNV-1a, 64 bits, as 16 hex digits.
std::string hash64(std::string_view bytes);

}  // namespace tk::cache
