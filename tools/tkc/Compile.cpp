// `tkc compile`: one kernel of a .tk (or .tir) file to any stage (--emit),
// or C++ launchers for several (--emit cpp, EmitCpp.cpp).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include "Depfile.h"
#include "EmitCpp.h"
#include "ImportPaths.h"
#include "LaunchSpec.h"
#include "Outputs.h"
#include "tk/compiler.h"

namespace tkc {

namespace {

struct CompileArgs {
  std::string file, emit = "ptx", output, depfile, specialise = "auto";
  std::vector<std::string> kernels, defines, archs, printAfter, assume, tuneTables;
  int numWarps = 4, numStages = 3;
  bool noLibdevice = false, noCache = false, skipMissing = false, noCubin = false, verifyEach = false;
};

}  // namespace

std::function<int()> addCompileCommand(CLI::App &app, std::vector<std::string> &importPaths) {
  CLI::App *compile = app.add_subcommand("compile", "Compile one kernel of a .tk file");
  auto a = std::make_shared<CompileArgs>();
  compile
      ->add_option("file", a->file,
                   "the .tk source, or printed tile IR (.tir) for --emit tir-raw|tir|llvm*|sim-llvm*|ptx|cubin")
      ->required();
  compile->add_option("-k,--kernel", a->kernels,
                      "the kernel to compile (none: the file's only kernel; --emit cpp: repeatable, none: every "
                      "kernel)");
  compile->add_flag("--skip-missing-kernels", a->skipMissing, "--emit cpp: skip -k kernels the file does not define");
  compile->add_option("-D,--define", a->defines,
                      "set a const parameter: NAME=VALUE (repeatable; --emit cpp: several values of one name "
                      "compile one variant each)");
  addImportPathOption(*compile, importPaths);
  compile->add_option("--arch", a->archs, "target GPU: sm_80 sm_86 sm_89 sm_90 sm_90a (repeatable; default sm_80)");
  compile->add_option("--num-warps", a->numWarps, "warps per block (1, 2, 4, 8, 16, 32)")->default_val(4);
  compile
      ->add_option("--num-stages", a->numStages,
                   "pipeline depth of loops over K: dot operands fetched S-1 iterations ahead (1: none)")
      ->default_val(3)
      ->check(CLI::Range(1, 64));
  compile->add_flag("--no-cache", a->noCache, "compile even when the compile cache holds the bundle");
  compile->add_option("--assume", a->assume,
                      "NAME=VALUE: compile the variant a launch with this integer argument value gets (1, or a "
                      "multiple of 16, specialise; repeatable)");
  compile->add_option("--emit", a->emit, "stop after this stage")
      ->check(CLI::IsMember({"tokens", "ast", "tir-raw", "tir", "llvm", "llvm-opt", "sim-llvm", "sim-llvm-opt", "ptx",
                             "cubin", "bundle", "cpp"}))
      ->default_val("ptx");
  compile->add_option("-o,--output", a->output,
                      "output file (default: stdout); --emit cpp: DIR/NAME for NAME.h and NAME.cpp");
  compile->add_option("--depfile", a->depfile,
                      "write a Makefile depfile: the outputs depend on the .tk file and its imports");
  compile->add_option("--tune-table", a->tuneTables,
                      "--emit cpp: a `tkc tune --json` report; its best config is compiled and chosen by key values "
                      "(repeatable)");
  compile
      ->add_option("--specialise", a->specialise,
                   "--emit cpp: auto (also variants for integer arguments % 16 == 0 and == 1, chosen at launch) "
                   "or none")
      ->check(CLI::IsMember({"auto", "none"}));
  compile->add_flag("--no-cubin", a->noCubin, "--emit cpp: embed PTX only, no cubins even when ptxas is found");
  compile->add_flag("--no-libdevice", a->noLibdevice, "use fast approximate math instead of libdevice");
  compile->add_flag("--verify-each", a->verifyEach,
                    "verify the tile IR after every pass of the tile pipeline (default: once, after the last pass)");
  compile->add_option("--print-after", a->printAfter,
                      "print the tile IR to stderr after a pass of the tile pipeline (or 'all'); an unknown name is an "
                      "error listing them");

  return [a, &importPaths]() -> int {
    tk::CompileOptions opts;
    opts.importPaths = importPaths;
    if (a->emit != "cpp") opts.defines = parseDefines(a->defines);
    // Repeats name one target once (in the order first given).
    if (!a->archs.empty()) {
      opts.archs.clear();
      for (const std::string &arch : a->archs)
        if (std::find(opts.archs.begin(), opts.archs.end(), arch) == opts.archs.end()) opts.archs.push_back(arch);
    }
    opts.numWarps = a->numWarps;
    opts.numStages = a->numStages;
    opts.assume = parseAssumes(a->assume);
    opts.cache = !a->noCache;
    opts.useLibdevice = !a->noLibdevice;
    for (const std::string &p : a->printAfter) opts.printAfter.insert(p);
    opts.verifyEachPass = a->verifyEach;
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
    if (a->emit == "cpp") {
      if (!a->assume.empty())
        throw tk::Error("--emit cpp chooses integer specialisations itself (--specialise); drop --assume");
      EmitCppOptions e;
      e.file = a->file;
      e.kernels = a->kernels;
      e.skipMissing = a->skipMissing;
      e.defines = a->defines;
      e.tuneTables = a->tuneTables;
      e.specialise = a->specialise;
      e.compile = opts;
      e.output = a->output;
      e.depfile = a->depfile;
      e.cubins = !a->noCubin;
      emitCpp(e);
      return 0;
    }
    // Without -k, a .tk file of one kernel means that kernel (Compiler::emit
    // chooses it, from the one parse it makes).
    const bool tkSource = a->file.size() > 3 && a->file.compare(a->file.size() - 3, 3, ".tk") == 0;
    if (a->kernels.size() > 1 || (a->kernels.empty() && !tkSource))
      throw tk::Error("--emit " + a->emit + " compiles one kernel: give one -k (several are for --emit cpp)");
    const std::string kernel = a->kernels.empty() ? "" : a->kernels.front();
    if (a->emit == "cubin" && (a->output.empty() || a->output == "-")) {
      std::cerr << "tkc: error: --emit cubin writes a binary: give an output file with -o\n";
      return 1;
    }
    if (!a->depfile.empty() && (a->output.empty() || a->output == "-")) throw tk::Error("--depfile needs an output file (-o)");
    std::vector<std::string> read;
    std::vector<std::pair<std::string, std::string>> outputs = {
        {a->output, tk::Compiler::emit(a->file, kernel, stages.at(a->emit), opts, &read)}};
    if (!a->depfile.empty()) outputs.emplace_back(a->depfile, depfileText({a->output}, read));
    return writeOutputs(std::move(outputs)) ? 0 : 1;
  };
}

}  // namespace tkc
