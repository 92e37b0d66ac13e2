// Files of tk's on-disk caches (compiled bundles, tuning results): atomic
// writes that many processes may race on, reads, and short content hashes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tk::cache {

// Writes `bytes` to `path` so that readers see either the old file or the
// whole new one: a fresh temporary file beside it (".tmp-NAME.PID.N", created
// with O_EXCL, so a planted file or symlink of that name is never followed),
// then rename over `path`. A symlink's target is replaced (the link stays);
// devices, FIFOs and the process's streams (/dev/null, /dev/stdout,
// /dev/fd/N) are written in place. With `makeParents` (cache entries), missing parent
// directories are created; a user's output path must exist. False, with
// `error` set ("cannot write 'PATH': reason"), when any step fails; no file
// is left behind then.
bool writeAtomic(const std::string &path, const std::string &bytes, std::string &error, bool makeParents = false);

// The whole file, or nullopt when it cannot be read.
std::optional<std::string> readFile(const std::string &path);

// Regular files under `dir` (recursively) whose names end with `suffix`.
std::vector<std::string> listFiles(const std::string &dir, const std::string &suffix);

// `warn`, or one that writes "tk: warning: MESSAGE" to stderr when it is
// unset: how the caches report what does not stop the work.
std::function<void(const std::string &)> orStderr(std::function<void(const std::string &)> warn);

// FNV-1a, 64 bits: a fixed, portable hash (cache entry names, tkc's seeds).
uint64_t fnv1a64(std::string_view bytes);

// FNV-1a, 64 bits, as 16 hex digits: names cache entries whose content
// repeats the full key, so a collision is detected as a mismatch, not trusted.
std::string hash64(std::string_view bytes);

}  // namespace tk::cache
