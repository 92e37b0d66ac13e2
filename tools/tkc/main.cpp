// tkc: the tk compiler driver. `tkc check` runs the front end; `tkc compile`
// stops after any stage (--emit tokens|ast|tir-raw|tir|llvm|llvm-opt|sim-llvm|
// sim-llvm-opt|ptx|cubin|bundle|cpp) and reads .tir as well as .tk; `tkc run`
// launches a kernel once (Run.cpp).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "ImportPaths.h"
#include "LaunchSpec.h"
#include "Outputs.h"
#include "lang/Frontend.h"
#include "runtime/OutputFiles.h"
#include "driver/KernelLookup.h"
#include "tk/compiler.h"

namespace tkc {
// Run.cpp: registers `tkc run`; the function it returns runs the parsed command.
std::function<int()> addRunCommand(CLI::App &app);
// Tune.cpp and Cache.cpp: `tkc tune` and `tkc cache`, registered the same way.
std::function<int()> addTuneCommand(CLI::App &app);
std::function<int()> addCacheCommand(CLI::App &app);
// Report.cpp: `tkc report`, the profiler view on the sim.
std::function<int()> addReportCommand(CLI::App &app);
// Compile.cpp: `tkc compile`; `importPaths` is shared with the other commands.
std::function<int()> addCompileCommand(CLI::App &app, std::vector<std::string> &importPaths);
}  // namespace tkc

namespace {

int runCheck(const std::string &file, const std::vector<std::string> &defineArgs, bool verify,
             const std::vector<std::string> &importPaths) {
  const std::map<std::string, std::string> defines = tkc::parseDefines(defineArgs);
  tk::lang::DiagnosticEngine diags;
  tk::lang::Frontend fe(diags);
  tk::CompileOptions importOpts;
  importOpts.importPaths = importPaths;
  fe.setImportRoots(tk::detail::importRoots(importOpts));
  // Every kernel is checked even after errors elsewhere in the file, so one
  // run reports as much as it can.
  fe.loadFile(file);
  for (const tk::lang::KernelSig &k : fe.kernels()) {
    std::map<std::string, std::string> mine;
    for (const auto &[name, value] : defines)
      for (const auto &p : k.params)
        if (p.name == name && p.isConst) mine[name] = value;
    fe.lowerKernel(k.name, mine, 4);
  }
  fe.checkUnusedFns();
  if (verify) {
    if (!diags.sources().text(file)) {
      std::cerr << diags.render();
      return 1;
    }
    // Each file's expectations (imports included) apply to its own lines.
    std::string report;
    bool ok = tk::lang::verifyDiagnostics(diags.sources(), diags.diagnostics(), report);
    if (!ok) std::cerr << file << ": diagnostics do not match the expectations:\n" << report;
    return ok ? 0 : 1;
  }
  std::cerr << diags.render();
  return diags.hasErrors() ? 1 : 0;
}

}  // namespace

int main(int argc, char **argv) {
  CLI::App app{"tkc: the tk tile-language compiler"};
  app.require_subcommand(1);

  std::string file;
  std::vector<std::string> defines, importPaths;
  bool verify = false;

  CLI::App *check = app.add_subcommand("check", "Parse and type-check a .tk file (every kernel, default consts)");
  check->add_option("file", file, "the .tk source")->required();
  check->add_option("-D,--define", defines, "override a const parameter: NAME=VALUE");
  tkc::addImportPathOption(*check, importPaths);
  check->add_flag("--verify-diagnostics", verify,
                  "expect exactly the errors named by `// expected-error {{...}}` comments; exit 0 when they match");

  std::function<int()> runCompile = tkc::addCompileCommand(app, importPaths);

  CLI::App *passes = app.add_subcommand(
      "passes", "List the tile-IR passes (what compile --print-after and tk-opt --pass take) and their order");

  CLI::App *list = app.add_subcommand("kernels", "List the kernels of a .tk file and their parameters");
  list->add_option("file", file, "the .tk source")->required();
  tkc::addImportPathOption(*list, importPaths);

  std::function<int()> runRun = tkc::addRunCommand(app);
  std::function<int()> runTune = tkc::addTuneCommand(app);
  std::function<int()> runCache = tkc::addCacheCommand(app);
  std::function<int()> runReport = tkc::addReportCommand(app);

  // CLI11 answers both a misspelt command and an unknown leading option with
  // "A subcommand is required": name what was wrong instead.
  if (argc > 1) {
    const std::string first = argv[1];
    std::string commands;
    bool known = false;
    for (const CLI::App *sub : app.get_subcommands({})) {
      commands += (commands.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->get_name() == first;
    }
    if (!known && first != "-h" && first != "--help") {
      if (first.empty() || first[0] != '-')
        std::cerr << "tkc: error: unknown command '" << first << "' (commands: " << commands << ")\n";
      else
        std::cerr << "tkc: error: unknown option '" << first << "': options follow the command (tkc COMMAND "
                  << "[OPTIONS]; commands: " << commands << ")\n";
      std::cerr << "(run `tkc --help` for usage)\n";
      return 1;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::cerr << "tkc: error: " << e.what() << "\n(run `tkc --help` for usage)\n";
    return 1;
  }

  try {
    if (check->parsed()) return runCheck(file, defines, verify, importPaths);
    if (app.got_subcommand("run")) return runRun();
    if (app.got_subcommand("tune")) return runTune();
    if (app.got_subcommand("cache")) return runCache();
    if (app.got_subcommand("report")) return runReport();
    if (passes->parsed()) {
      std::ostringstream os;
      size_t width = 0;  // the summaries in one column, after the longest name
      for (const auto &[name, summary] : tk::Compiler::passes()) width = std::max(width, name.size() + 2);
      for (const auto &[name, summary] : tk::Compiler::passes())
        os << "  " << name << std::string(width - name.size(), ' ') << summary << "\n";
      os << "compile runs:";
      const std::vector<std::string> order = tk::Compiler::pipelineOrder();
      for (size_t i = 0; i < order.size(); ++i) os << (i ? ", " : " ") << order[i];
      os << "\n";
      return tkc::writeOutputs({{"", os.str()}}) ? 0 : 1;
    }
    if (list->parsed()) {
      std::ostringstream os;
      tk::CompileOptions listOpts;
      listOpts.importPaths = importPaths;
      for (const auto &[name, params] : tk::Compiler::kernels(file, listOpts)) {
        os << name << "(";
        for (size_t i = 0; i < params.size(); ++i) {
          const tk::KernelParam &p = params[i];
          os << (i ? ", " : "") << (p.isConst ? "const " : "") << p.name << ": " << p.type;
          if (p.isConst && !p.value.empty()) os << " = " << p.value;
          if (p.align > 0 && p.align != 16) os << " align(" << p.align << ")";
        }
        os << ")\n";
      }
      return tkc::writeOutputs({{"", os.str()}}) ? 0 : 1;
    }
    return runCompile();
  } catch (const tk::CompileError &e) {
    std::cerr << e.what();
    return 1;
  } catch (const std::exception &e) {
    std::cerr << "tkc: error: " << e.what() << "\n";
    return 1;
  }
}
