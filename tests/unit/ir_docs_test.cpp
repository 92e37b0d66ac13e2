// docs/ir.md stays true: its op reference is what `tk-opt --print-op-docs`
// prints, and its `tir` examples parse, verify and round-trip.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ir/OpDocs.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

namespace tk::ir {
namespace {

std::string readDocs() {
  std::ifstream in(std::string(TK_SOURCE_DIR) + "/docs/ir.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(IrDocs, OpReferenceIsCurrent) {
  std::string docs = readDocs();
  ASSERT_FALSE(docs.empty()) << "docs/ir.md not found";
  size_t begin = docs.find(kOpDocsBegin), end = docs.find(kOpDocsEnd);
  ASSERT_NE(begin, std::string::npos) << "marker missing: " << kOpDocsBegin;
  ASSERT_NE(end, std::string::npos) << "marker missing: " << kOpDocsEnd;
  begin += std::string(kOpDocsBegin).size() + 1;
  EXPECT_EQ(docs.substr(begin, end - begin), opReferenceMarkdown())
      << "docs/ir.md is stale: replace the text between the markers with `tk-opt --print-op-docs`";
}

TEST(IrDocs, TirExamplesParseVerifyAndRoundTrip) {
  std::string docs = readDocs();
  int examples = 0;
  for (size_t at = docs.find("```tir\n"); at != std::string::npos; at = docs.find("```tir\n", at)) {
    at += 7;
    size_t close = docs.find("```", at);
    ASSERT_NE(close, std::string::npos);
    std::string text = docs.substr(at, close - at);
    std::string error;
    auto m = parseModule(text, "docs/ir.md", error);
    ASSERT_TRUE(m) << error << "\n" << text;
    EXPECT_TRUE(verifyModule(*m, error)) << error;
    EXPECT_EQ(printModule(*m), text) << "examples are written as the printer prints them";
    ++examples;
  }
  EXPECT_GE(examples, 1);
}

TEST(IrDocs, EveryOpHasARow) {
  std::string md = opReferenceMarkdown();
  for (const OpInfo &info : allOps())
    EXPECT_NE(md.find("| `" + std::string(info.mnemonic) + "` |"), std::string::npos) << info.mnemonic;
}

}  // namespace
}  // namespace tk::ir
