// The front end's public API: load a .tk file, inspect its tokens, AST and
// kernel signatures, and lower a kernel, specialised on its const
// parameters, to one tile-IR function. Errors go to a DiagnosticEngine.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "syntax/Diagnostics.h"

namespace tk::lang {

namespace ast {
struct Module;
}
struct FnTable;

struct ParamSig {
  std::string name;
  std::string type;  // "*f32", "i32", "bool"
  bool isConst = false;
  std::string constValue;  // consts: the (specialised or default) value as text
  int64_t align = 0;       // pointers: assumed alignment in bytes (default 16)
  // Integer parameters: `@no_specialize` (launches never specialise on the
  // value) and `@multiple_of(N)` (every launch passes a multiple of N; 0: not said).
  bool noSpecialize = false;
  int64_t multipleOf = 0;
};

// One point of a kernel's @tune space.
struct TuneConfigSig {
  std::map<std::string, std::string> consts;  // only the consts the config names, as -D takes them
  std::vector<std::string> order;             // those names in the order config(...)/product(...) gives them
  int numWarps = 4;
  int numStages = 3;
  Location loc;  // the config(...) or product(...) it came from
};

// `@tune(configs: [...], key: [...], prune: EXPR)` before a kernel: the
// configs expanded in order (a product's first axis varies slowest).
struct TuneSig {
  std::vector<TuneConfigSig> configs;
  std::vector<std::string> key;  // scalar argument names
  std::string prune;             // HostExpr::str() text, "" if none
  Location loc;              // the '@'
};

struct KernelSig {
  std::string name;
  std::vector<ParamSig> params;
  Location loc;
  std::optional<TuneSig> tune;
};

class Frontend {
 public:
  explicit Frontend(DiagnosticEngine &diags);
  ~Frontend();
  Frontend(const Frontend &) = delete;
  Frontend &operator=(const Frontend &) = delete;

  // Reads, lexes, parses and checks the declarations of a file and of the
  // files it imports (a second load replaces the first). False when there
  // were errors (see diags), also for an unreadable file. `import "x.tk";`
  // is resolved relative to the folder of `filename` / `path`.
  bool loadFile(const std::string &path);
  bool loadSource(const std::string &text, const std::string &filename);

  // How imported files are read: path -> text, nullopt when it cannot be
  // read. The default reads regular files from the file system; tests and
  // the fuzzer may serve files from memory (or none).
  using FileReader = std::function<std::optional<std::string>(const std::string &path)>;
  void setFileReader(FileReader reader);
  // Where an import that is not beside the importing file is looked for, in
  // order (docs/language.md, "Imports"): a root with an empty prefix serves
  // every name (`tkc -I DIR`, TK_PATH); one with prefix "tk/" only names
  // starting with it, the rest of the name taken in `dir` (the stdlib).
  struct ImportRoot {
    std::string prefix, dir;
  };
  void setImportRoots(std::vector<ImportRoot> roots);
  static std::optional<std::string> readFile(const std::string &path);

  std::string dumpTokens() const;  // one token per line: "line:col KIND 'text'"
  std::string dumpAst() const;     // an indented tree
  // The kernels of the loaded file (not those of its imports), const params
  // with their defaults.
  std::vector<KernelSig> kernels() const;

  // Type-checks kernel `name` and lowers it to tile IR, specialised with
  // `defines` (const param name -> value text) over the defaults. Null on
  // error (unknown kernel or define, bad value, any error in the body).
  // `assume` specialises integer arguments on a value a launch will pass, as
  // Triton does: 1 makes the argument the constant 1 in the IR; a multiple
  // of 16 lets the analyses assume divisibility by 16; other values assume
  // nothing. Only facts are kept, so one variant serves every value that
  // has them (see tk::CompileOptions::assume). A parameter declared
  // @multiple_of(N) is a multiple of N in every variant; one declared
  // @no_specialize cannot be assumed of.
  std::unique_ptr<ir::Function> lowerKernel(const std::string &name,
                                            const std::map<std::string, std::string> &defines,
                                            int numWarps, KernelSig *sigOut = nullptr,
                                            const std::map<std::string, int64_t> &assume = {});

  // Type-checks the body of every fn of the loaded file that no kernel
  // lowered so far has called (`tkc check` runs it after the kernels), with
  // scalar arguments of the params' types, else tiles of them; reports the
  // scalar attempt's errors when neither type-checks.
  void checkUnusedFns();

  DiagnosticEngine &diags() { return diags_; }

 private:
  void reset();
  std::unique_ptr<ast::Module> parseText(const std::string &text, const std::string &file);
  void loadImports(const ast::Module &m, std::vector<std::string> &stack);
  void checkFns();
  void checkDecls();

  DiagnosticEngine &diags_;
  std::string file_;
  std::string text_;
  bool loadOk_ = false;  // the last load had no errors
  std::vector<bool> sigOk_;      // parallel to sigs_: the signature had no errors
  std::vector<const void *> kernelDecls_;  // parallel to sigs_: the ast::Decl
  std::unique_ptr<ast::Module> module_;
  std::vector<KernelSig> sigs_;  // parallel to the kernels of module_
  FileReader reader_;
  std::vector<ImportRoot> roots_;
  std::vector<std::unique_ptr<ast::Module>> imported_;  // in load order
  std::map<std::string, const ast::Module *> loaded_;  // normalised path -> module (main included)
  std::unique_ptr<FnTable> fns_;  // the fns of every loaded file
};

}  // namespace tk::lang
