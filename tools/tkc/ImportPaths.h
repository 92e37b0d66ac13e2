// The one definition of `-I DIR` for every tkc command that reads a .tk file
// (check, compile, kernels, run, tune, report), so each takes import roots
// the same way: -I folders in order, then $TK_PATH, then the stdlib
// (CompileOptions::importPaths, docs/tkc.md).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace tkc {

inline CLI::Option *addImportPathOption(CLI::App &command, std::vector<std::string> &paths) {
  return command.add_option("-I,--import-path", paths, "look for imports in DIR too (repeatable; then $TK_PATH)")
      ->allow_extra_args(false);
}

}  // namespace tkc
