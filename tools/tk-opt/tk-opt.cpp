// tk-opt: the tile IR's test driver. Reads `.tir` text, verifies it, runs
// the passes named by --pass, and prints the result -- or, with --lower,
// lowers it to the per-thread LLVM IR of a target, so the lowering is tested
// as text too; errors go to stderr with exit code 1.
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <algorithm>
#include <iostream>
#include <iterator>
#include <sstream>

#include "backend/nvptx/Codegen.h"
#include "ir/OpDocs.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "ir/passes/Passes.h"
#include "driver/Pipeline.h"

namespace {

std::vector<std::string> splitCommas(const std::vector<std::string> &lists) {
  std::vector<std::string> out;
  for (const std::string &list : lists) {
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ','))
      if (!item.empty()) out.push_back(item);
  }
  return out;
}

// True when every tile value has a layout (what lowering needs).
bool hasLayouts(tk::ir::Function &fn) {
  for (tk::ir::Op *op : fn.walk())
    for (tk::ir::Value *v : op->results())
      if (v->type().isTile() && !v->type().layout) return false;
  return true;
}

// Every function of `module` lowered through the target `target` ("nvptx" or
// "sim") for `arch`, printed as LLVM IR: what lowering emits, before any LLVM
// optimisation (tkc --emit llvm / sim-llvm for one kernel). The block size
// comes from each function's num_warps attribute.
std::string lowerModule(tk::ir::Module &module, const std::string &target, const std::string &arch) {
  std::string out;
  for (auto &fn : module.functions) {
    if (!hasLayouts(*fn))
      throw tk::Error("--lower: kernel '" + fn->name +
                               "' has tiles without a layout; run --pass=assign-layouts first (or lower the output of "
                               "`tkc compile --emit tir`)");
    // The compiler's own lowering (driver/Pipeline.cpp), not a copy of it.
    auto lowerOne = [&] {
      if (target != "nvptx") return tk::pipeline::lowerForSim(*fn, arch);
      tk::nvptx::CodegenOptions cg;
      tk::nvptx::checkArch(arch);
      cg.arch = arch;
      return tk::pipeline::lowerForNvptx(*fn, cg);
    };
    tk::pipeline::Llvm x = lowerOne();
    const tk::lower::LoweredKernel &lowered = x.lowered;
    llvm::raw_string_ostream os(out);
    os << "; kernel " << fn->name << ": " << lowered.numThreads << " threads, " << lowered.sharedBytes
       << " bytes of shared memory\n";
    lowered.module->print(os, nullptr);
  }
  return out;
}

int run(int argc, char **argv) {
  CLI::App app{"tk-opt: parse, verify, transform and print tile IR (.tir)"};
  std::string input = "-", output = "-";
  std::vector<std::string> passes, printAfter;
  bool printAfterAll = false, locations = false, verifyOnly = false, listPasses = false, opDocs = false,
       noVerify = false, optimize = false;
  app.add_option("input", input, "input .tir file, '-' for stdin")->capture_default_str();
  app.add_option("--pass,-p", passes, "passes to run, comma-separated, in order (see --list-passes)");
  app.add_flag("-O,--optimize", optimize, "run the default optimization pipeline (after any --pass)");
  app.add_option("--print-after", printAfter, "print the IR to stderr after these passes (comma-separated)");
  app.add_flag("--print-after-all", printAfterAll, "print the IR to stderr after every pass");
  app.add_flag("--locations", locations, "print loc(\"file\":line:col) on ops");
  app.add_option("-o", output, "output file, '-' for stdout")->capture_default_str();
  app.add_flag("--verify-only", verifyOnly, "parse and verify, print nothing");
  app.add_flag("--no-verify", noVerify, "do not run the verifier (to look at broken IR)");
  app.add_flag("--list-passes", listPasses, "list the passes --pass accepts");
  std::string lowerTo, arch = "sm_80";
  app.add_option("--lower", lowerTo, "after the passes, lower to LLVM IR for this target and print that")
      ->check(CLI::IsMember({"nvptx", "sim"}));
  app.add_option("--arch", arch, "the GPU arch --lower targets (the sim emulates it)")->capture_default_str();
  app.add_flag("--print-op-docs", opDocs, "print the op reference (Markdown) generated from ir/Ops.def");
  CLI11_PARSE(app, argc, argv);

  if (listPasses) {
    size_t width = 0;  // the summaries in one column, after the longest name
    for (const auto &p : tk::pipeline::passes()) width = std::max(width, std::string(p.flag).size() + 2);
    for (const auto &p : tk::pipeline::passes()) {
      std::string flag = p.flag;
      std::cout << "  " << flag << std::string(width - flag.size(), ' ') << p.summary << "\n";
    }
    std::cout << "  -O = ";
    auto flags = tk::pipeline::optimizationPasses().flags();
    for (size_t i = 0; i < flags.size(); ++i) std::cout << (i ? "," : "") << flags[i];
    std::cout << "\n";
    return 0;
  }
  if (opDocs) {
    std::cout << tk::ir::opReferenceMarkdown();
    return 0;
  }

  std::string text, name = input == "-" ? "<stdin>" : input;
  if (input == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    std::ifstream in(input, std::ios::binary);
    if (!in) {
      std::cerr << "tk-opt: error: cannot open '" << input << "'\n";
      return 1;
    }
    text.assign(std::istreambuf_iterator<char>(in), {});
  }

  std::string error;
  auto module = tk::ir::parseModule(text, name, error);
  if (!module) {
    std::cerr << error << "\n";
    return 1;
  }

  tk::ir::PassPipeline pipeline;
  tk::ir::PipelineOptions opts;
  opts.verifyEach = !noVerify;
  opts.printAfterAll = printAfterAll;
  opts.printLocations = locations;
  opts.dump = &std::cerr;
  try {
    for (const std::string &p : splitCommas(passes)) tk::pipeline::addPass(pipeline, p);
    if (optimize)
      for (const std::string &p : tk::pipeline::optimizationPasses().flags()) tk::pipeline::addPass(pipeline, p);
    for (const std::string &p : splitCommas(printAfter)) {
      if (!tk::pipeline::findPass(p)) throw tk::Error("--print-after: unknown pass '" + p + "'");
      opts.printAfter.insert(p);
    }
    pipeline.run(*module, opts);
  } catch (const std::exception &e) {
    std::cerr << "tk-opt: error: " << e.what() << "\n";
    return 1;
  }
  if (verifyOnly) return 0;

  tk::ir::PrintOptions po;
  po.locations = locations;
  std::string result;
  try {
    result = lowerTo.empty() ? tk::ir::printModule(*module, po) : lowerModule(*module, lowerTo, arch);
  } catch (const std::exception &e) {
    std::cerr << "tk-opt: error: " << e.what() << "\n";
    return 1;
  }
  if (output == "-") {
    std::cout << result;
  } else {
    std::ofstream out(output, std::ios::binary);
    if (!(out << result)) {
      std::cerr << "tk-opt: error: cannot write '" << output << "'\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) { return run(argc, argv); }
