// CUDA toolkit discovery, the ptxas -v parse, and docs/backends.md's C++
// examples; no LLVM needed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"

using namespace tk::nvptx;
namespace fs = std::filesystem;

namespace {

// A fake toolkit root with just libdevice in it.
struct FakeRoot {
  fs::path root = fs::temp_directory_path() / ("tk-fake-cuda-" + std::to_string(::getpid()));
  FakeRoot() {
    fs::create_directories(root / "nvvm" / "libdevice");
    std::ofstream(root / "nvvm" / "libdevice" / "libdevice.10.bc") << "BC";
  }
  ~FakeRoot() { fs::remove_all(root); }
};

TEST(NvptxToolkit, HintWinsWhenItHoldsAToolkit) {
  FakeRoot fake;
  Toolkit t = Toolkit::find(fake.root.string());
  EXPECT_EQ(t.root, fake.root.string());
  EXPECT_TRUE(t.hasLibdevice());
  EXPECT_FALSE(t.hasPtxas());
  EXPECT_EQ(t.libdevice, (fake.root / "nvvm" / "libdevice" / "libdevice.10.bc").string());
}

TEST(NvptxToolkit, MissingRootsGiveAnEmptyToolkit) {
  Toolkit t = Toolkit::at("/nonexistent/cuda");
  EXPECT_TRUE(t.root.empty());
  EXPECT_FALSE(t.hasLibdevice());
  EXPECT_FALSE(t.hasPtxas());
  EXPECT_TRUE(Toolkit::at("").root.empty());
}

TEST(NvptxToolkit, FallsBackPastABadHint) {
  // A bad hint must not hide $CUDA_HOME or /usr/local/cuda.
  Toolkit fromHint = Toolkit::find("/nonexistent/cuda");
  Toolkit plain = Toolkit::find();
  EXPECT_EQ(fromHint.root, plain.root);
  if (plain.root.empty()) GTEST_SKIP() << "no CUDA toolkit on this machine";
  EXPECT_TRUE(plain.hasLibdevice() || plain.hasPtxas());
}

TEST(NvptxToolkit, CudaHomeIsSearched) {
  FakeRoot fake;
  const char *old = std::getenv("CUDA_HOME");
  std::string saved = old ? old : "";
  setenv("CUDA_HOME", fake.root.c_str(), 1);
  Toolkit t = Toolkit::find("/nonexistent/cuda");
  if (old) setenv("CUDA_HOME", saved.c_str(), 1);
  else unsetenv("CUDA_HOME");
  EXPECT_EQ(t.root, fake.root.string());
}

TEST(NvptxPtxas, ParsesResourcesPerKernel) {
  // A ptxas 13 -v log: one spilling entry, one device function, one small entry.
  const char *log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Function properties for helper\n"
      "    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'big' for 'sm_80'\n"
      "ptxas info    : Function properties for big\n"
      "    48 bytes stack frame, 40 bytes spill stores, 44 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, 368 bytes cmem[0]\n"
      "ptxas info    : Compile time = 22.069 ms\n"
      "ptxas info    : Compiling entry function 'small' for 'sm_80'\n"
      "ptxas info    : Function properties for small\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 8 registers, used 0 barriers, 356 bytes cmem[0]\n";
  PtxasInfo info;
  parsePtxasLog(log, info);
  ASSERT_EQ(info.kernels.size(), 2u);
  EXPECT_EQ(info.kernels[0].name, "big");
  EXPECT_EQ(info.kernels[0].registers, 255);
  EXPECT_EQ(info.kernels[0].spillStoreBytes, 40);
  EXPECT_EQ(info.kernels[0].spillLoadBytes, 44);
  EXPECT_EQ(info.kernels[0].stackBytes, 48);
  EXPECT_EQ(info.kernels[0].sharedBytes, 4096);
  EXPECT_EQ(info.kernels[1].name, "small");
  EXPECT_EQ(info.kernels[1].registers, 8);
  EXPECT_EQ(info.kernels[1].sharedBytes, 0);
  EXPECT_EQ(info.registers, 255);
  EXPECT_EQ(info.spillStoreBytes, 40);
  EXPECT_EQ(info.spillLoadBytes, 44);
  EXPECT_EQ(info.sharedBytes, 4096);
}

TEST(NvptxPtxas, AssemblesHandWrittenPtx) {
  Toolkit tk = Toolkit::find();
  if (!tk.hasPtxas()) GTEST_SKIP() << "ptxas not found";
  const char *ptx =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".shared .align 4 .b8 st[256];\n"
      ".visible .entry k(.param .u64 p) {\n"
      "  .reg .b64 %rd<3>; .reg .f32 %f<2>;\n"
      "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n"
      "  ld.global.f32 %f1, [%rd2];\n  st.shared.f32 [st], %f1;\n  st.global.f32 [%rd2], %f1;\n  ret;\n}\n";
  PtxasInfo info = runPtxas(ptx, "sm_90", tk);
  EXPECT_TRUE(info.ran);
  ASSERT_EQ(info.kernels.size(), 1u) << info.log;
  EXPECT_EQ(info.kernels[0].name, "k");
  EXPECT_GT(info.registers, 0);
  EXPECT_EQ(info.sharedBytes, 256) << info.log;
  EXPECT_FALSE(info.cubin.empty());
}

// Each ```cpp block of docs/backends.md compiles against the real headers.
TEST(NvptxDocs, CppExamplesCompile) {
  std::ifstream in(std::string(TK_SOURCE_DIR) + "/docs/backends.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string docs = ss.str();
  ASSERT_FALSE(docs.empty()) << "docs/backends.md not found";
  int examples = 0;
  for (size_t at = docs.find("```cpp\n"); at != std::string::npos; at = docs.find("```cpp\n", at)) {
    at += 7;
    size_t close = docs.find("```", at);
    ASSERT_NE(close, std::string::npos);
    fs::path file = fs::temp_directory_path() / ("tk-backends-doc-" + std::to_string(::getpid()) + "-" +
                                                 std::to_string(examples++) + ".cpp");
    std::ofstream(file) << docs.substr(at, close - at);
    std::string cmd = std::string(TK_CXX) + " -std=c++20 -fsyntax-only -Wall -Werror -I" + TK_SOURCE_DIR + " -I" +
                      TK_SOURCE_DIR + "/include " + file.string() + " 2>&1";
    int rc = std::system(cmd.c_str());
    EXPECT_EQ(rc, 0) << "docs/backends.md example " << examples << " does not compile: " << cmd;
    fs::remove(file);
  }
  EXPECT_EQ(examples, 2);
}

}  // namespace
