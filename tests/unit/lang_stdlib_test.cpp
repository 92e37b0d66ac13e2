// The stdlib's .tk files pass the front end: every kernel lowers with its
// defaults to IR the verifier accepts.
#include <gtest/gtest.h>

#include <filesystem>

#include "ir/Verifier.h"
#include "lang_TestUtil.h"

namespace tk::lang {
namespace {

TEST(LangStdlib, EveryKernelLowersAndVerifies) {
  int kernels = 0;
  for (const auto &entry : std::filesystem::directory_iterator(TK_SOURCE_DIR + "/stdlib")) {
    if (entry.path().extension() != ".tk") continue;
    DiagnosticEngine diags;
    Frontend fe(diags);
    ASSERT_TRUE(fe.loadFile(entry.path().string())) << diags.render();
    for (const KernelSig &k : fe.kernels()) {
      auto fn = fe.lowerKernel(k.name, {}, 4);
      ASSERT_TRUE(fn) << k.name << "\n" << diags.render();
      std::string err;
      EXPECT_TRUE(ir::verifyFunction(*fn, err)) << k.name << ": " << err << "\n" << ir::printFunction(*fn);
      ++kernels;
    }
  }
  EXPECT_GE(kernels, 3);
}

TEST(LangStdlib, ComplexActivationShape) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  ASSERT_TRUE(fe.loadFile(TK_SOURCE_DIR + "/stdlib/elementwise.tk")) << diags.render();
  KernelSig sig;
  auto fn = fe.lowerKernel("complex_activation", {{"BLOCK", "256"}}, 8, &sig);
  ASSERT_TRUE(fn) << diags.render();
  EXPECT_EQ(fn->params.size(), 4u);
  EXPECT_EQ(fn->body.argument(0)->type(), ir::Type::ptr(ir::ScalarKind::F32));
  EXPECT_EQ(fn->params[0].align, 16);
  EXPECT_EQ(fn->body.argument(3)->type(), ir::Type::scalar(ir::ScalarKind::I32));
  EXPECT_EQ(fn->params[3].align, 0);
  EXPECT_EQ(std::get<int64_t>(fn->attrs.at("const.BLOCK")), 256);
  EXPECT_EQ(std::get<int64_t>(fn->attrs.at("num_warps")), 8);
  EXPECT_EQ(sig.params[4].constValue, "256");
  auto loads = test::opsOf(*fn, ir::OpKind::Load);
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(loads[0]->result()->type().str(), "tile<256xf32>");
  EXPECT_EQ(loads[0]->numOperands(), 3u);  // ptr, mask, other = 0
  EXPECT_EQ(test::opsOf(*fn, ir::OpKind::Store).size(), 1u);
  EXPECT_EQ(test::opsOf(*fn, ir::OpKind::Max).size(), 1u);  // relu
}

}  // namespace
}  // namespace tk::lang
