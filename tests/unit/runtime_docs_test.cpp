// Docs run: every ```tk code block in README.md and docs/*.md compiles, each
// kernel in it all the way to PTX.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tk/compiler.h"

namespace fs = std::filesystem;

namespace {

struct Block {
  std::string file;
  int line;
  std::string code;
};

std::vector<Block> tkBlocks() {
  std::vector<fs::path> files = {fs::path(TK_SOURCE_DIR) / "README.md"};
  for (const auto &e : fs::directory_iterator(fs::path(TK_SOURCE_DIR) / "docs"))
    if (e.path().extension() == ".md") files.push_back(e.path());
  std::vector<Block> out;
  for (const fs::path &f : files) {
    std::ifstream in(f);
    std::string line, code;
    int n = 0, start = 0;
    bool inside = false;
    while (std::getline(in, line)) {
      ++n;
      if (!inside && line.rfind("```tk", 0) == 0 && line.size() == 5) {
        inside = true;
        start = n;
        code.clear();
      } else if (inside && line.rfind("```", 0) == 0) {
        inside = false;
        out.push_back({f.filename().string(), start, code});
      } else if (inside) {
        code += line + "\n";
      }
    }
  }
  return out;
}

}  // namespace

TEST(Docs, EveryTkBlockCompilesToPtx) {
  auto blocks = tkBlocks();
  ASSERT_GE(blocks.size(), 3u) << "README and docs should show tk code";
  fs::path dir = fs::path(TK_BINARY_DIR) / "docs-blocks";
  fs::create_directories(dir);
  int kernels = 0;
  for (const Block &b : blocks) {
    fs::path path = dir / (b.file + "-" + std::to_string(b.line) + ".tk");
    std::ofstream(path) << b.code;
    std::vector<std::pair<std::string, std::vector<tk::KernelParam>>> ks;
    try {
      ks = tk::Compiler::kernels(path.string());
    } catch (const tk::Error &e) {
      ADD_FAILURE() << b.file << ":" << b.line << ": " << e.what();
      continue;
    }
    for (const auto &[name, params] : ks) {
      try {
        tk::Bundle bundle = tk::Compiler::compileFile(path.string(), name);
        EXPECT_FALSE(bundle.ptx.at("sm_80").empty());
        ++kernels;
      } catch (const tk::Error &e) {
        ADD_FAILURE() << b.file << ":" << b.line << ": kernel " << name << ": " << e.what();
      }
    }
  }
  EXPECT_GE(kernels, 3);
}
