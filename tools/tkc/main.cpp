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

#include "Depfile.h"
#include "EmitCpp.h"
#include "ImportPaths.h"
#include "LaunchSpec.h"
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
}  // namespace tkc

namespace {

// Writes the command's outputs (each path "" or "-" is stdout) all or none,
// through the one output writer.
bool writeOutputs(std::vector<std::pair<std::string, std::string>> outputs) {
  tk::files::OutputSet set;
  for (auto &[path, text] : outputs) {
    if (path.empty() || path == "-") {
      path = "-";
      if (!text.empty() && text.back() != '\n') text += '\n';
    }
    set.add(path, text);
  }
  std::string error;
  if (set.commit(error)) return true;
  std::cerr << "tkc: error: " << error << "\n";
  return false;
}

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

  std::string file, emit = "ptx", output, depfile, specialise = "auto";
  std::vector<std::string> kernels, defines, archs, printAfter, assume, importPaths, tuneTables;
  int numWarps = 4, numStages = 3;
  bool verify = false, noLibdevice = false, noCache = false, skipMissing = false, noCubin = false, verifyEach = false;

  CLI::App *check = app.add_subcommand("check", "Parse and type-check a .tk file (every kernel, default consts)");
  check->add_option("file", file, "the .tk source")->required();
  check->add_option("-D,--define", defines, "override a const parameter: NAME=VALUE");
  tkc::addImportPathOption(*check, importPaths);
  check->add_flag("--verify-diagnostics", verify,
                  "expect exactly the errors named by `// expected-error {{...}}` comments; exit 0 when they match");

  CLI::App *compile = app.add_subcommand("compile", "Compile one kernel of a .tk file");
  compile
      ->add_option("file", file,
                   "the .tk source, or printed tile IR (.tir) for --emit tir-raw|tir|llvm*|sim-llvm*|ptx|cubin")
      ->required();
  compile->add_option("-k,--kernel", kernels,
                      "the kernel to compile (none: the file's only kernel; --emit cpp: repeatable, none: every "
                      "kernel)");
  compile->add_flag("--skip-missing-kernels", skipMissing, "--emit cpp: skip -k kernels the file does not define");
  compile->add_option("-D,--define", defines,
                      "set a const parameter: NAME=VALUE (repeatable; --emit cpp: several values of one name "
                      "compile one variant each)");
  tkc::addImportPathOption(*compile, importPaths);
  compile->add_option("--arch", archs, "target GPU: sm_80 sm_86 sm_89 sm_90 sm_90a (repeatable; default sm_80)");
  compile->add_option("--num-warps", numWarps, "warps per block (1, 2, 4, 8, 16, 32)")->default_val(4);
  compile
      ->add_option("--num-stages", numStages,
                   "pipeline depth of loops over K: cp.async ring slots of dot operands (1: none)")
      ->default_val(3)
      ->check(CLI::Range(1, 64));
  compile->add_flag("--no-cache", noCache, "compile even when the compile cache holds the bundle");
  compile->add_option("--assume", assume,
                      "NAME=VALUE: compile the variant a launch with this integer argument value gets (1, or a "
                      "multiple of 16, specialise; repeatable)");
  compile->add_option("--emit", emit, "stop after this stage")
      ->check(CLI::IsMember({"tokens", "ast", "tir-raw", "tir", "llvm", "llvm-opt", "sim-llvm", "sim-llvm-opt", "ptx",
                             "cubin", "bundle", "cpp"}))
      ->default_val("ptx");
  compile->add_option("-o,--output", output,
                      "output file (default: stdout); --emit cpp: DIR/NAME for NAME.h and NAME.cpp");
  compile->add_option("--depfile", depfile,
                      "write a Makefile depfile: the outputs depend on the .tk file and its imports");
  compile->add_option("--tune-table", tuneTables,
                      "--emit cpp: a `tkc tune --json` report; its best config is compiled and chosen by key values "
                      "(repeatable)");
  compile
      ->add_option("--specialise", specialise,
                   "--emit cpp: auto (also variants for integer arguments % 16 == 0 and == 1, chosen at launch) "
                   "or none")
      ->check(CLI::IsMember({"auto", "none"}));
  compile->add_flag("--no-cubin", noCubin, "--emit cpp: embed PTX only, no cubins even when ptxas is found");
  compile->add_flag("--no-libdevice", noLibdevice, "use fast approximate math instead of libdevice");
  compile->add_flag("--verify-each", verifyEach,
                    "verify the tile IR after every pass of the tile pipeline (default: once, after the last pass)");
  compile->add_option("--print-after", printAfter,
                      "print the tile IR to stderr after a pass of the tile pipeline (or 'all'); an unknown name is an "
                      "error listing them");

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
      for (const auto &[name, summary] : tk::Compiler::passes())
        os << "  " << name << std::string(name.size() < 22 ? 22 - name.size() : 1, ' ') << summary << "\n";
      os << "compile runs:";
      const std::vector<std::string> order = tk::Compiler::pipelineOrder();
      for (size_t i = 0; i < order.size(); ++i) os << (i ? ", " : " ") << order[i];
      os << "\n";
      return writeOutputs({{"", os.str()}}) ? 0 : 1;
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
      return writeOutputs({{"", os.str()}}) ? 0 : 1;
    }
    tk::CompileOptions opts;
    opts.importPaths = importPaths;
    if (emit != "cpp") opts.defines = tkc::parseDefines(defines);
    // Repeats name one target once (in the order first given).
    if (!archs.empty()) {
      opts.archs.clear();
      for (const std::string &a : archs)
        if (std::find(opts.archs.begin(), opts.archs.end(), a) == opts.archs.end()) opts.archs.push_back(a);
    }
    opts.numWarps = numWarps;
    opts.numStages = numStages;
    opts.assume = tkc::parseAssumes(assume);
    opts.cache = !noCache;
    opts.useLibdevice = !noLibdevice;
    for (const std::string &p : printAfter) opts.printAfter.insert(p);
    opts.verifyEachPass = verifyEach;
    opts.dump = &std::cerr;
    static const std::map<std::string, tk::Stage> stages = {{"tokens", tk::Stage::Tokens},
                                                            {"ast", tk::Stage::Ast},
                                                            {"tir", tk::Stage::Tir},
                                                            {"llvm", tk::Stage::Llvm},
                                                            {"ptx", tk::Stage::Ptx},
                                                            {"cubin", tk::Stage::Cubin},
                                                            {"bundle", tk::Stage::Bundle},
                                                            {"tir-raw", tk::Stage::TirRaw},
                                                            {"llvm-opt", tk::Stage::LlvmOpt},
                                                            {"sim-llvm", tk::Stage::SimLlvm},
                                                            {"sim-llvm-opt", tk::Stage::SimLlvmOpt}};
    if (emit == "cpp") {
      if (!assume.empty())
        throw tk::Error("--emit cpp chooses integer specialisations itself (--specialise); drop --assume");
      tkc::EmitCppOptions e;
      e.file = file;
      e.kernels = kernels;
      e.skipMissing = skipMissing;
      e.defines = defines;
      e.tuneTables = tuneTables;
      e.specialise = specialise;
      e.compile = opts;
      e.output = output;
      e.depfile = depfile;
      e.cubins = !noCubin;
      tkc::emitCpp(e);
      return 0;
    }
    // Without -k, a file of one kernel means that kernel (as nvcc compiles a
    // file whole); a file of several must name one.
    if (kernels.empty() && file.size() > 3 && file.compare(file.size() - 3, 3, ".tk") == 0) {
      std::string names;
      for (const auto &k : tk::Compiler::kernels(file, opts)) {
        kernels.push_back(k.first);
        names += (names.empty() ? "" : ", ") + k.first;
      }
      if (kernels.size() > 1)
        throw tk::Error(file + " defines " + std::to_string(kernels.size()) + " kernels (" + names +
                        "): choose one with -k");
    }
    if (kernels.size() != 1)
      throw tk::Error("--emit " + emit + " compiles one kernel: give one -k (several are for --emit cpp)");
    const std::string &kernel = kernels.front();
    if (emit == "cubin" && (output.empty() || output == "-")) {
      std::cerr << "tkc: error: --emit cubin writes a binary: give an output file with -o\n";
      return 1;
    }
    if (!depfile.empty() && (output.empty() || output == "-")) throw tk::Error("--depfile needs an output file (-o)");
    std::vector<std::pair<std::string, std::string>> outputs = {{output, tk::Compiler::emit(file, kernel, stages.at(emit), opts)}};
    if (!depfile.empty()) outputs.emplace_back(depfile, tkc::depfileText({output}, tk::Compiler::dependencies(file, opts)));
    return writeOutputs(std::move(outputs)) ? 0 : 1;
  } catch (const tk::CompileError &e) {
    std::cerr << e.what();
    return 1;
  } catch (const std::exception &e) {
    std::cerr << "tkc: error: " << e.what() << "\n";
    return 1;
  }
}
