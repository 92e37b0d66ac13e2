// The one pass registry (driver/Pipeline.cpp) as every user sees it: the
// compiler's order, tk::Compiler's lists, and docs/ir.md's pass table, which
// must name exactly the registry's passes.
#include "driver/Pipeline.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "ir/OpAttrs.h"
#include "lang/Frontend.h"
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
  EXPECT_EQ(names(), (std::vector<std::string>{"expand-descriptor-loads", "pad-tiles", "emulate-fp8", "canonicalize",
                                               "reassociate-pointer-offsets", "cse", "licm", "dce", "specialize-warps", "pipeline-dot-operands",
                                               "sink-loads", "assign-layouts"}));
  EXPECT_EQ(tk::pipeline::findPass("cse")->run, &tk::ir::eliminateCommonSubexpressions);
  EXPECT_EQ(tk::pipeline::findPass("licm")->run, &tk::ir::loopInvariantCodeMotion);
  EXPECT_EQ(tk::pipeline::findPass("frobnicate"), nullptr);
  tk::ir::PassPipeline p;
  try {
    tk::pipeline::addPass(p, "frobnicate");
    FAIL() << "an unknown pass was accepted";
  } catch (const tk::Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown pass 'frobnicate' (known: expand-descriptor-loads, pad-tiles, emulate-fp8, canonicalize, reassociate-pointer-offsets, cse, licm, dce, specialize-warps, pipeline-dot-operands, "
              "sink-loads, assign-layouts)");
  }
  EXPECT_EQ(tk::pipeline::optimizationPasses().flags(),
            (std::vector<std::string>{"expand-descriptor-loads", "pad-tiles", "emulate-fp8", "canonicalize", "reassociate-pointer-offsets",
                                      "cse", "licm", "cse", "dce", "canonicalize", "dce"}));
  EXPECT_EQ(tk::Compiler::pipelineOrder(),
            (std::vector<std::string>{"expand-descriptor-loads", "pad-tiles", "emulate-fp8", "canonicalize", "reassociate-pointer-offsets",
                                      "cse", "licm", "cse", "dce", "canonicalize", "dce", "specialize-warps", "pipeline-dot-operands", "sink-loads", "assign-layouts", "cse", "dce"}));
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

// ir/Ops.def declares each op's attributes once; every attribute the front
// end and the tile passes put on an op is one it declares, so the verifier's
// presence and kind checks (ir/OpAttrs.cpp) and docs/ir.md's table cover
// all of them. Every kernel of the stdlib and the kernel tests, for an
// mma.sync arch and a wgmma one.
TEST(Pipeline, EveryAttributeOnAnOpIsDeclaredByIt) {
  namespace fs = std::filesystem;
  std::set<std::string> seen;
  int kernels = 0;
  for (const char *dir : {"/stdlib", "/tests/kernels"}) {
    for (const auto &entry : fs::directory_iterator(std::string(TK_SOURCE_DIR) + dir)) {
      if (entry.path().extension() != ".tk") continue;
      tk::lang::DiagnosticEngine diags;
      tk::lang::Frontend fe(diags);
      if (!fe.loadFile(entry.path().string())) continue;  // tests/kernels holds some files meant to fail
      for (const tk::lang::KernelSig &k : fe.kernels()) {
        tk::CompileOptions opts;
        opts.archs = {"sm_80", "sm_90a"};
        tk::lang::KernelSig sig;
        tk::ir::Module m;
        try {
          m.functions.push_back(tk::pipeline::frontEnd(fe, k.name, opts, sig));
          tk::pipeline::runTilePasses(m, k.name, opts);
        } catch (const tk::CompileError &) {
          continue;  // a kernel whose defaults do not compile alone (its test passes -D)
        }
        ++kernels;
        for (tk::ir::Op *op : m.functions[0]->walk())
          for (const auto &[name, value] : op->attrs()) {
            bool declared = false;
            for (const tk::ir::AttrDecl &d : tk::ir::declaredAttrs(op->kind())) declared |= name == d.name;
            EXPECT_TRUE(declared) << k.name << " (" << entry.path().filename().string() << "): '" << op->info().mnemonic
                                  << "' carries '" << name << "', which ir/Ops.def does not declare for it";
            seen.insert(std::string(op->info().mnemonic) + "." + name);
          }
      }
    }
  }
  EXPECT_GE(kernels, 100);
  // What the walk must have met for the check to mean something.
  for (const char *a : {"cmp.predicate", "reduce.kind", "load.vec", "async_copy.buffer", "shared_load.stages"})
    EXPECT_TRUE(seen.count(a)) << a;
}
