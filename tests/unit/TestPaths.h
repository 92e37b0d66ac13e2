// Where a test finds the source and build trees: TK_SOURCE_DIR and
// TK_BINARY_DIR, absolute paths resolved against the test executable's own
// folder (build/tests), so a test runs from any working directory -- ctest's,
// the repository root's, `make asan`'s -- while the compile command carries
// only paths relative to that folder, the same in every clone (ccache hits
// across clones; docs/internals.md, "Builds and CI on two cores"). Every test
// target includes this header first (tests/CMakeLists.txt, -include).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace tk::test {

inline std::string treeDir(const char *relative) {
  static const std::filesystem::path exeDir = [] {
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::filesystem::path(std::string(buf, size_t(n))).parent_path() : std::filesystem::current_path();
  }();
  std::string dir = (exeDir / relative).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

}  // namespace tk::test

#define TK_SOURCE_DIR (::tk::test::treeDir(TK_SOURCE_FROM_TESTS))
#define TK_BINARY_DIR (::tk::test::treeDir(TK_BINARY_FROM_TESTS))
