// Docs run: every ```tk code block in docs/*.md goes through the front end
// (each kernel lowered with its defaults) without a diagnostic. Examples
// that are meant to fail belong in ```text blocks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "lang/Frontend.h"

namespace tk::lang {
namespace {

struct Block {
  std::string file;
  int line;
  std::string text;
};

std::vector<Block> tkBlocks() {
  std::vector<Block> blocks;
  for (const auto &e : std::filesystem::directory_iterator(TK_SOURCE_DIR + "/docs")) {
    if (e.path().extension() != ".md") continue;
    std::ifstream in(e.path());
    std::string line;
    int lineNo = 0;
    Block *cur = nullptr;
    while (std::getline(in, line)) {
      ++lineNo;
      if (!cur && line == "```tk") {
        blocks.push_back({e.path().filename().string(), lineNo + 1, ""});
        cur = &blocks.back();
      } else if (cur && line.rfind("```", 0) == 0) {
        cur = nullptr;
      } else if (cur) {
        cur->text += line + "\n";
      }
    }
  }
  return blocks;
}

TEST(LangDocs, EveryTkBlockCompiles) {
  auto blocks = tkBlocks();
  EXPECT_GE(blocks.size(), 5u);  // docs/language.md alone has five
  for (const Block &b : blocks) {
    std::string name = b.file + ":" + std::to_string(b.line);
    DiagnosticEngine diags;
    Frontend fe(diags);
    EXPECT_TRUE(fe.loadSource(b.text, name)) << name << "\n" << diags.render();
    EXPECT_FALSE(fe.kernels().empty()) << name << " has no kernel";
    for (const KernelSig &k : fe.kernels())
      EXPECT_TRUE(fe.lowerKernel(k.name, {}, 4)) << name << " kernel " << k.name << "\n" << diags.render();
  }
}

}  // namespace
}  // namespace tk::lang
