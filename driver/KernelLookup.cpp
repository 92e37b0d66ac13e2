// Kernel lookup, declared tuning spaces and import roots (KernelLookup.h).
#include "driver/KernelLookup.h"

#include <cstdlib>
#include <filesystem>

namespace tk::detail {

lang::KernelSig findKernel(const std::vector<lang::KernelSig> &kernels, const std::string &path,
                           const std::string &kernel) {
  std::string names;
  for (const lang::KernelSig &k : kernels) {
    if (k.name == kernel) return k;
    names += (names.empty() ? "" : ", ") + k.name;
  }
  throw Error(path + ": no kernel named '" + kernel + "'" +
              (names.empty() ? " (the file defines none)" : " (kernels: " + names + ")"));
}

std::vector<lang::Frontend::ImportRoot> importRoots(const CompileOptions &opts) {
  std::vector<lang::Frontend::ImportRoot> roots;
  for (const std::string &dir : opts.importPaths) roots.push_back({"", dir});
  if (const char *env = std::getenv("TK_PATH"); env && *env) {
    std::string path = env;
    for (size_t start = 0; start <= path.size();) {
      size_t end = path.find(':', start);
      if (end == std::string::npos) end = path.size();
      if (end > start) roots.push_back({"", path.substr(start, end - start)});
      start = end + 1;
    }
  }
  if (std::string stdlib = stdlibDirectory(opts.stdlibDir); !stdlib.empty()) roots.push_back({"tk/", stdlib});
  return roots;
}

}  // namespace tk::detail

namespace tk {

std::string stdlibDirectory(const std::string &dir) {
  if (!dir.empty()) return dir;
  namespace fs = std::filesystem;
  std::error_code ec;
  // An installed tree is relocatable: P/bin/tkc reads P/share/tk/stdlib.
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  if (!ec) candidates.push_back(exe.parent_path().parent_path() / "share/tk/stdlib");
  candidates.push_back(TK_INSTALLED_STDLIB_DIR);
  candidates.push_back(TK_SOURCE_STDLIB_DIR);
  for (const fs::path &c : candidates)
    if (fs::is_regular_file(c / "math.tk", ec)) return c.lexically_normal().generic_string();
  return "";
}

}  // namespace tk
