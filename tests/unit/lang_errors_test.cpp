// Bad input: every tests/errors/*.tk file goes through the front end (load,
// then each kernel lowered with its defaults) and must produce exactly the
// diagnostics its `// expected-error {{...}}` comments list. Files under
// tests/errors/Inputs/ are only imported by those cases (their comments
// count when they are).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lang/Frontend.h"

namespace tk::lang {
namespace {

std::vector<std::string> errorFiles() {
  std::vector<std::string> files;
  for (const auto &e : std::filesystem::directory_iterator(TK_SOURCE_DIR + "/tests/errors"))
    if (e.path().extension() == ".tk") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

class LangErrors : public ::testing::TestWithParam<std::string> {};

// Both ways of driving the front end must give the expected diagnostics:
// lowering every kernel whatever happened at load, or (as `tkc check` does)
// only after a clean load.
TEST_P(LangErrors, MatchExpectedDiagnostics) {
  const std::string &path = GetParam();
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  for (bool lowerAfterErrors : {true, false}) {
    SCOPED_TRACE(lowerAfterErrors ? "lowering every kernel" : "lowering after a clean load");
    DiagnosticEngine diags;
    Frontend fe(diags);
    bool loaded = fe.loadFile(path);
    if (loaded || lowerAfterErrors)
      for (const KernelSig &k : fe.kernels()) fe.lowerKernel(k.name, {}, 4);
    fe.checkUnusedFns();
    ASSERT_TRUE(diags.hasErrors()) << path << " should not pass the front end";
    std::string report;
    EXPECT_TRUE(verifyDiagnostics(diags.sources(), diags.diagnostics(), report)) << report << "\n" << diags.render();
    const std::string inputs = TK_SOURCE_DIR + "/tests/errors/Inputs/";
    for (const Diagnostic &d : diags.diagnostics()) {
      EXPECT_TRUE(d.loc.known()) << "diagnostic without a location: " << d.message;
      EXPECT_TRUE(d.loc.file == path || d.loc.file.rfind(inputs, 0) == 0) << d.loc.file;
    }
    // Rendering quotes the line and puts a caret under the column.
    std::string rendered = diags.render();
    const Diagnostic &first = diags.diagnostics().front();
    std::string head =
        first.loc.file + ":" + std::to_string(first.loc.line) + ":" + std::to_string(first.loc.col) + ": error: ";
    EXPECT_EQ(rendered.rfind(head, 0), 0u) << rendered;
  }
}

INSTANTIATE_TEST_SUITE_P(Files, LangErrors, ::testing::ValuesIn(errorFiles()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           std::string n = std::filesystem::path(info.param).stem().string();
                           std::replace_if(n.begin(), n.end(), [](char c) { return !isalnum(c); }, '_');
                           return n;
                         });

TEST(LangDiagnostics, RenderShowsLineAndCaret) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  fe.loadSource("kernel k(x: *f32) {\n\tlet a = x * 2;\n}\n", "r.tk");
  EXPECT_EQ(fe.lowerKernel("k", {}, 4), nullptr);
  EXPECT_EQ(diags.render(),
            "r.tk:2:12: error: operator '*' cannot be applied to ptr<f32> and int literal\n"
            "\tlet a = x * 2;\n"
            "\t          ^\n");
}

TEST(LangDiagnostics, ShortNamesGetNoGuess) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  fe.loadSource("kernel k(x: *f32) { let a = y; }\n", "g.tk");
  fe.lowerKernel("k", {}, 4);
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].message, "unknown name 'y'");
}

TEST(LangDiagnostics, FileWithSyntaxErrorsYieldsNoKernel) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  EXPECT_FALSE(fe.loadSource("kernel k(x: *f32) { let a = 1 +; store(x, 1.0); }\n", "s.tk"));
  EXPECT_EQ(fe.kernels().size(), 1u);
  EXPECT_EQ(fe.lowerKernel("k", {}, 4), nullptr);
  EXPECT_EQ(diags.errorCount(), 1);
}

TEST(LangDiagnostics, UnreadableFileAndUnknownKernel) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  EXPECT_FALSE(fe.loadFile("/nonexistent/dir/x.tk"));
  EXPECT_EQ(diags.render(), "/nonexistent/dir/x.tk: error: cannot read file '/nonexistent/dir/x.tk': No such file or directory\n");
  EXPECT_EQ(fe.lowerKernel("k", {}, 4), nullptr);
  EXPECT_EQ(diags.errorCount(), 2);
  EXPECT_FALSE(fe.loadFile(TK_SOURCE_DIR + "/tests/errors"));  // a directory
  EXPECT_EQ(diags.errorCount(), 3);
}

TEST(LangDiagnostics, VerifierReportsMismatches) {
  std::string src = "a\nb // expected-error {{wanted}}\nc // expected-error@-2 {{first}}\n";
  std::vector<Diagnostic> diags = {{Diagnostic::Severity::Error, {"f", 1, 1}, "the first one"},
                                   {Diagnostic::Severity::Error, {"f", 2, 1}, "wanted here"}};
  std::string report;
  EXPECT_TRUE(verifyDiagnostics(src, diags, report)) << report;
  diags.push_back({Diagnostic::Severity::Error, {"f", 3, 1}, "surprise"});
  EXPECT_FALSE(verifyDiagnostics(src, diags, report));
  EXPECT_EQ(report, "unexpected error at line 3: surprise\n");
  diags.erase(diags.begin());
  EXPECT_FALSE(verifyDiagnostics(src, diags, report));
  EXPECT_NE(report.find("expected error at line 1 not produced: first"), std::string::npos);
  EXPECT_FALSE(verifyDiagnostics("x // expected-error oops\n", {}, report));
  EXPECT_NE(report.find("without {{text}}"), std::string::npos);
}

}  // namespace
}  // namespace tk::lang
