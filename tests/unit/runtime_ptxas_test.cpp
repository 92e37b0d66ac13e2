// Every kernel of stdlib/*.tk, at its default config, becomes PTX that ptxas accepts
// for sm_80, sm_90 and sm_90a (dots on wgmma) with no spills.
#include <gtest/gtest.h>

#include <filesystem>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "tk/compiler.h"

TEST(StdlibPtxas, NoSpillsOnSm80AndSm90) {
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "no ptxas: the CUDA toolkit was not found (CUDA_HOME, /usr/local/cuda)";
  int count = 0;
  for (const auto &entry : std::filesystem::directory_iterator(TK_SOURCE_DIR "/stdlib")) {
    if (entry.path().extension() != ".tk") continue;
    const std::string file = entry.path().string();
    for (const auto &[name, params] : tk::Compiler::kernels(file)) {
      ++count;
      tk::CompileOptions opts;
      opts.archs = {"sm_80", "sm_90", "sm_90a"};
      tk::Bundle b = tk::Compiler::compileFile(file, name, opts);
      for (const std::string &arch : opts.archs) {
        tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(b.ptx.at(arch), arch, toolkit);
        ASSERT_TRUE(info.ran) << info.log;
        EXPECT_GT(info.registers, 0) << name << " " << arch << "\n" << info.log;
        EXPECT_EQ(info.spillStoreBytes, 0) << name << " " << arch << "\n" << info.log;
        EXPECT_EQ(info.spillLoadBytes, 0) << name << " " << arch << "\n" << info.log;
        EXPECT_FALSE(info.cubin.empty()) << name << " " << arch;
      }
    }
  }
  EXPECT_GE(count, 7);
}
