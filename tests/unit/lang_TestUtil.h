// Helpers shared by the front-end tests: lower a source string, and list
// the ops of a function.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Printer.h"
#include "lang/Frontend.h"

namespace tk::lang::test {

struct Lowered {
  DiagnosticEngine diags;
  std::unique_ptr<ir::Function> fn;
  std::string errors() const { return diags.render(); }
};

// Loads `src` and lowers kernel `name` (the first kernel when empty).
inline std::unique_ptr<Lowered> lower(const std::string &src, const std::string &name = "",
                                      const std::map<std::string, std::string> &defines = {}) {
  auto out = std::make_unique<Lowered>();
  Frontend fe(out->diags);
  fe.loadSource(src, "test.tk");
  std::string k = name;
  if (k.empty() && !fe.kernels().empty()) k = fe.kernels()[0].name;
  if (!k.empty()) out->fn = fe.lowerKernel(k, defines, 4);
  return out;
}

// The mnemonics of the ops of `fn`, in order.
inline std::vector<std::string> opNames(ir::Function &fn) {
  std::vector<std::string> names;
  for (ir::Op *op : fn.walk()) names.push_back(op->info().mnemonic);
  return names;
}

// The ops of one kind.
inline std::vector<ir::Op *> opsOf(ir::Function &fn, ir::OpKind k) {
  std::vector<ir::Op *> out;
  for (ir::Op *op : fn.walk())
    if (op->is(k)) out.push_back(op);
  return out;
}

}  // namespace tk::lang::test
