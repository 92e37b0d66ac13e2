// The one pass registry (driver/Pipeline.cpp) as every user sees it: the
// compiler's order, tk::Compiler's lists, and docs/ir.md's pass table, which
// must name exactly the registry's passes.
#include "driver/Pipeline.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "runtime/DeviceImpl.h"
#include "tk/compiler.h"
#include "tk/error.h"

namespace {

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const tk::ir::PassInfo &p : tk::pipeline::passes()) out.push_back(p.flag);
  return out;
}

TEST(Pipeline, OneRegistryInOrder) {
  EXPECT_EQ(names(), (std::vector<std::string>{"pad-tiles", "emulate-fp8", "canonicalize", "reassociate-pointer-offsets", "cse", "licm", "dce",
                                               "pipeline-dot-operands", "assign-layouts"}));
  EXPECT_EQ(tk::pipeline::findPass("cse")->run, &tk::ir::eliminateCommonSubexpressions);
  EXPECT_EQ(tk::pipeline::findPass("licm")->run, &tk::ir::loopInvariantCodeMotion);
  EXPECT_EQ(tk::pipeline::findPass("frobnicate"), nullptr);
  tk::ir::PassPipeline p;
  try {
    tk::pipeline::addPass(p, "frobnicate");
    FAIL() << "an unknown pass was accepted";
  } catch (const tk::Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown pass 'frobnicate' (known: pad-tiles, emulate-fp8, canonicalize, reassociate-pointer-offsets, cse, licm, dce, pipeline-dot-operands, "
              "assign-layouts)");
  }
  EXPECT_EQ(tk::pipeline::optimizationPasses().flags(),
            (std::vector<std::string>{"pad-tiles", "emulate-fp8", "canonicalize", "reassociate-pointer-offsets", "cse", "licm", "cse", "dce", "canonicalize", "dce"}));
  EXPECT_EQ(tk::Compiler::pipelineOrder(),
            (std::vector<std::string>{"pad-tiles", "emulate-fp8", "canonicalize", "reassociate-pointer-offsets", "cse", "licm", "cse", "dce", "canonicalize",
                                      "dce", "pipeline-dot-operands", "assign-layouts", "cse", "dce"}));
  // What --print-after accepts is every registered pass the compiler runs.
  EXPECT_EQ(tk::Compiler::pipelinePasses(), names());
  std::vector<std::string> described;
  for (const auto &[name, summary] : tk::Compiler::passes()) {
    described.push_back(name);
    EXPECT_FALSE(summary.empty()) << name;
  }
  EXPECT_EQ(described, names());
}

TEST(Pipeline, DocsListExactlyTheRegisteredPasses) {
  std::ifstream in(std::string(TK_SOURCE_DIR) + "/docs/ir.md");
  ASSERT_TRUE(in) << "docs/ir.md not found";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string docs = ss.str();
  // The table of the "## Passes" section: rows "| `flag` | `function` | ...".
  const size_t start = docs.find("\n## Passes\n");
  ASSERT_NE(start, std::string::npos);
  const size_t end = docs.find("\n## ", start + 1);
  const std::string section = docs.substr(start, end - start);
  std::set<std::string> documented;
  std::vector<std::string> order;
  static const std::regex row(R"(\n\| `([a-z0-9-]+)` \| `)");
  for (std::sregex_iterator it(section.begin(), section.end(), row), e; it != e; ++it) {
    documented.insert((*it)[1]);
    order.push_back((*it)[1]);
  }
  EXPECT_EQ(order, names()) << "docs/ir.md's pass table must list the registry's passes, in its order";
  EXPECT_EQ(documented.size(), order.size()) << "a pass is listed twice";
}

// A GPU that none of a bundle's PTX fits gets code from the compiler, which
// tk_compiler registers with the runtime: the same road to PTX as a compile
// (pipeline::compileTo), for the GPU's own arch, from the bundle's tile IR.
TEST(Pipeline, ALoadForAnotherArchLowersTheBundlesTileIr) {
  tk::PtxLowering lower = tk::registeredPtxLowering();
  ASSERT_NE(lower, nullptr) << "linking tk_compiler registers the load-time lowering";
  tk::CompileOptions opts;
  opts.archs = {"sm_80"};
  const tk::Bundle b = tk::Compiler::compileFile(TK_SOURCE_DIR + "/stdlib/elementwise.tk", "gelu", opts);
  const std::string ptx = lower(b, "sm_90a");
  EXPECT_NE(ptx.find(".target sm_90a"), std::string::npos);
  EXPECT_NE(ptx.find(".entry gelu"), std::string::npos);
  try {
    lower(b, "sm_75");
    FAIL() << "sm_75 was lowered";
  } catch (const tk::Error &e) {
    EXPECT_NE(std::string(e.what()).find("tk cannot generate code for sm_75"), std::string::npos) << e.what();
  }
}

}  // namespace
