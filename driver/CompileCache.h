// The compile cache: bundles on disk keyed by a SHA-256 of everything a
// compile depends on (sources with their imports, kernel, options, toolkit,
// the compiler's own source hash). A second compile of the same kernel is a
// file read. Internal to driver/
#pragma once

#include <optional>
#include <string>

#include "tk/compiler.h"

namespace tk::lang {
class SourceManager;
}

namespace tk::detail {

// The key of kernel `kernel` compiled from the files in `sources` with `opts`
// (toolkitRoot: the CUDA toolkit the compile would use, "" for none).
std::string compileKey(const lang::SourceManager &sources, const std::string &kernel, const CompileOptions &opts,
                       const std::string &toolkitRoot);

// The cached bundle for `key` in the cache directory `dir`, or nullopt. A
// corrupted entry is reported through `warn` and treated as a miss.
std::optional<Bundle> lookupBundle(const std::string &dir, const std::string &key,
                                   const std::function<void(const std::string &)> &warn);
// Stores `b` under `key` (atomically); failures go to `warn`, not thrown.
void storeBundle(const std::string &dir, const std::string &key, const Bundle &b,
                 const std::function<void(const std::string &)> &warn);

}  // namespace tk::detail
