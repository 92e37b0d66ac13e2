// The front end's public API: load a .tk file, inspect its tokens, AST and
// kernel signatures, and lower a kernel, specialised on its const
// parameters, to one tile-IR function. Errors go to a DiagnosticEngine.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "lang/Diagnostics.h"

namespace tk::lang {

namespace ast {
struct Module;
}

struct ParamSig {
  std::string name;
  std::string type;  // "*f32", "i32", "bool"
  bool isConst = false;
  std::string constValue;  // consts: the (specialised or default) value as text
  int64_t align = 0;       // pointers: assumed alignment in bytes (default 16)
};

struct KernelSig {
  std::string name;
  std::vector<ParamSig> params;
  ir::Location loc;
};

class Frontend {
 public:
  explicit Frontend(DiagnosticEngine &diags);
  ~Frontend();
  Frontend(const Frontend &) = delete;
  Frontend &operator=(const Frontend &) = delete;

  // Reads, lexes, parses and checks the declarations of a file (a second
  // load replaces the first). False when there were errors (see diags),
  // also for an unreadable file.
  bool loadFile(const std::string &path);
  bool loadSource(const std::string &text, const std::string &filename);

  std::string dumpTokens() const;  // one token per line: "line:col KIND 'text'"
  std::string dumpAst() const;     // an indented tree
  // The kernels of the loaded file, const params with their defaults.
  std::vector<KernelSig> kernels() const;

  // Type-checks kernel `name` and lowers it to tile IR, specialised with
  // `defines` (const param name -> value text) over the defaults. Null on
  // error (unknown kernel or define, bad value, any error in the body).
  std::unique_ptr<ir::Function> lowerKernel(const std::string &name,
                                            const std::map<std::string, std::string> &defines,
                                            int numWarps, KernelSig *sigOut = nullptr);

  DiagnosticEngine &diags() { return diags_; }

 private:
  void checkDecls();

  DiagnosticEngine &diags_;
  std::string file_;
  std::string text_;
  bool loadOk_ = false;  // the last load had no errors
  std::vector<bool> sigOk_;      // parallel to sigs_: the signature had no errors
  std::vector<const void *> kernelDecls_;  // parallel to sigs_: the ast::Decl
  std::unique_ptr<ast::Module> module_;
  std::vector<KernelSig> sigs_;  // parallel to the kernels of module_
};

}  // namespace tk::lang
