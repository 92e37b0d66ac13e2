// Tile IR from outside the process is verified before it is lowered
// (docs/security.md): a bundle whose IR was edited -- a `vec` that does not
// divide a thread's registers, a #blocked layout with a 0, a 2^30-element
// tile -- is a tk::Error naming the problem on every device, never a crash
// or a hang.
#include <gtest/gtest.h>

#include "tk/compiler.h"
#include "tk/runtime.h"

namespace {

std::string loadError(const tk::Bundle &b) {
  auto dev = tk::Device::open("sim");
  try {
    dev->load(b);
  } catch (const tk::Error &e) {
    return e.what();
  }
  return "";
}

// debug_barrier.tk's kernel with `from` replaced by `to` (first occurrence) in its tile IR.
tk::Bundle edited(const std::string &from, const std::string &to) {
  tk::CompileOptions opts;
  opts.numWarps = 1;
  opts.defines["BLOCK"] = "128";
  tk::Bundle b = tk::Compiler::compileFile(TK_SOURCE_DIR + "/tests/kernels/debug_barrier.tk", "mirror_in_place", opts);
  const size_t at = b.tir.find(from);
  EXPECT_NE(at, std::string::npos) << from << " not in\n" << b.tir;
  if (at != std::string::npos) b.tir.replace(at, from.size(), to);
  return b;
}

TEST(VerifiedInputs, ABundlesVectorWidthIsChecked) {
  std::string m = loadError(edited("{vec = 4}", "{vec = 3}"));
  EXPECT_NE(m.find("bundle for 'mirror_in_place': bad tile IR: invalid tile IR:"), std::string::npos) << m;
  EXPECT_NE(m.find("'load' op: 'vec' = 3 must be a power of two from 1 to 16"), std::string::npos) << m;
}

TEST(VerifiedInputs, ABundlesLayoutsAndTileSizesAreChecked) {
  std::string m = loadError(edited("#blocked<[1],[32],[1],[0]>", "#blocked<[0],[32],[1],[0]>"));
  EXPECT_NE(m.find("#blocked sizes must be powers of two"), std::string::npos) << m;
  m = loadError(edited("arange {end = 128, start = 0} : tile<128xi32", "arange {end = 1073741824, start = 0} : tile<1073741824xi32"));
  EXPECT_NE(m.find("a tile may hold at most 1048576 elements"), std::string::npos) << m;
  // Unedited, it loads.
  EXPECT_EQ(loadError(edited("{vec = 4}", "{vec = 4}")), "");
}

}  // namespace
