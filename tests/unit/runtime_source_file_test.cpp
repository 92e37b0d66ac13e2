// tk::SourceFile: one parse of a file answering every question a command
// asks (kernels, signatures, bundles, padded tiles, the files read), the same
// answers as the static tk::Compiler functions, a failed compile leaving the
// file usable, and compiles from several threads at once.
#include <gtest/gtest.h>

#include <thread>

#include "runtime_TestUtil.h"
#include "tk/compiler.h"
#include "tk/runtime.h"

namespace {

const char *kSource = R"(
kernel scale(x: *f32, out: *f32, n: i32, s: f32, const BLOCK: i32 = 128) {
    static_assert(BLOCK <= 512, "BLOCK too large");
    let offs = program_id(0) * BLOCK + arange(BLOCK);
    let m = offs < n;
    store(out + offs, load(x + offs, mask: m) * s, mask: m);
}

kernel copy3(x: *f32, out: *f32, n: i32, const B: i32 = 3) {
    let offs = program_id(0) * B + arange(B);
    store(out + offs, load(x + offs, mask: offs < n), mask: offs < n);
}
)";

tk::CompileOptions tileIrOnly(const std::map<std::string, std::string> &defines = {}) {
  tk::CompileOptions o;
  o.emitPtx = false;
  o.cache = false;
  o.defines = defines;
  return o;
}

TEST(SourceFile, AnswersAsTheStaticFunctionsDo) {
  const std::string path = TK_SOURCE_DIR + "/stdlib/normalization.tk";
  const tk::SourceFile file(path);
  EXPECT_EQ(file.path(), path);
  EXPECT_EQ(file.files(), tk::Compiler::dependencies(path));
  const auto kernels = file.kernels();
  const auto expected = tk::Compiler::kernels(path);
  ASSERT_EQ(kernels.size(), expected.size());
  for (size_t i = 0; i < kernels.size(); ++i) EXPECT_EQ(kernels[i].first, expected[i].first);
  const std::map<std::string, std::string> defines = {{"BLOCK_D", "256"}};
  const auto sig = file.signature("softmax", defines);
  const auto sigExpected = tk::Compiler::signature(path, "softmax", defines);
  ASSERT_EQ(sig.size(), sigExpected.size());
  for (size_t i = 0; i < sig.size(); ++i) EXPECT_EQ(sig[i].value, sigExpected[i].value) << sig[i].name;
  EXPECT_EQ(file.compile("softmax", tileIrOnly(defines)).tir,
            tk::Compiler::compileFile(path, "softmax", tileIrOnly(defines)).tir);
}

TEST(SourceFile, AFailedCompileLeavesTheFileUsable) {
  const tk::SourceFile file(kSource, "mem.tk", {});
  const std::string error = tk::test::errorOf([&] { file.compile("scale", tileIrOnly({{"BLOCK", "1024"}})); });
  EXPECT_NE(error.find("BLOCK too large"), std::string::npos) << error;
  EXPECT_NE(error.find("mem.tk:3:"), std::string::npos) << error;
  // The next compile reports only its own errors, or none.
  const tk::Bundle b = file.compile("scale", tileIrOnly({{"BLOCK", "256"}}));
  EXPECT_EQ(b.constInt("BLOCK"), 256);
  const std::string other = tk::test::errorOf([&] { file.signature("scale", {{"BLOCK", "2048"}}); });
  EXPECT_NE(other.find("BLOCK too large"), std::string::npos) << other;
  EXPECT_EQ(other.find("error:"), other.rfind("error:")) << "an earlier error repeated:\n" << other;
  EXPECT_EQ(file.signature("scale", {}).back().value, "128");
}

TEST(SourceFile, PaddedTilesComeFromTheSameParse) {
  const tk::SourceFile file(kSource, "mem.tk", {});
  const auto tiles = file.paddedTiles("copy3", tileIrOnly());
  ASSERT_FALSE(tiles.empty());
  EXPECT_EQ(tiles.front().shape, std::vector<int64_t>{3});
  EXPECT_EQ(tiles.front().padded, std::vector<int64_t>{4});
  EXPECT_TRUE(file.paddedTiles("scale", tileIrOnly()).empty());
}

TEST(SourceFile, CompilesFromSeveralThreadsAsOneAtATime) {
  const tk::SourceFile file(kSource, "mem.tk", {});
  const std::vector<std::string> blocks = {"32", "64", "128", "256", "512", "1024", "16", "8"};
  std::vector<std::string> parallel(blocks.size()), errors(blocks.size());
  std::vector<std::thread> pool;
  for (size_t i = 0; i < blocks.size(); ++i)
    pool.emplace_back([&, i] {
      try {
        parallel[i] = file.compile("scale", tileIrOnly({{"BLOCK", blocks[i]}})).tir;
      } catch (const std::exception &e) {
        errors[i] = e.what();
      }
    });
  for (std::thread &t : pool) t.join();
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i] == "1024") {
      EXPECT_NE(errors[i].find("BLOCK too large"), std::string::npos) << errors[i];
      continue;
    }
    ASSERT_EQ(errors[i], "") << "BLOCK=" << blocks[i];
    EXPECT_EQ(parallel[i], file.compile("scale", tileIrOnly({{"BLOCK", blocks[i]}})).tir) << "BLOCK=" << blocks[i];
  }
}

TEST(SourceFile, BadFilesAreCompileErrors) {
  EXPECT_THROW(tk::SourceFile("/nonexistent/x.tk"), tk::CompileError);
  EXPECT_THROW(tk::SourceFile("kernel k( {", "bad.tk", {}), tk::CompileError);
  const tk::SourceFile file(kSource, "mem.tk", {});
  const std::string error = tk::test::errorOf([&] { file.compile("nope", tileIrOnly()); });
  EXPECT_NE(error.find("scale"), std::string::npos) << error;
}

}  // namespace
