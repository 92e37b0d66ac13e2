// The tile IR's text form, written: one `kernel @name(...) {...}` per
// function, values by SSA name, types after `:`. docs/ir.md describes the
// format; Parser.h reads it back (print -> parse -> print is the identity).
#pragma once

#include <map>
#include <string>

#include "ir/IR.h"

namespace tk::ir {

struct PrintOptions {
  bool locations = false;  // `loc("file":line:col)` after each op that has one
  bool nameHints = true;   // `// name` after ops whose result has a name hint
};

std::string printFunction(const Function &fn, const PrintOptions &opts = {});
std::string printModule(const Module &module, const PrintOptions &opts = {});

// The names the printer gives a function's values: parameters by their
// (sanitised, made unique) names, then op results and region arguments
// numbered %0, %1, ... in program order. The verifier and passes use it to
// name values in messages.
class ValueNames {
 public:
  explicit ValueNames(const Function &fn);
  // "%3", "%x"; "%<unknown>" for a value not in the function.
  std::string operator()(const Value *v) const;
  // The parameter names, without the '%', as printed.
  const std::vector<std::string> &paramNames() const { return paramNames_; }

 private:
  std::map<const Value *, std::string> names_;
  std::vector<std::string> paramNames_;
};

// One op on one line (regions elided to `({...})`), for diagnostics:
// `%5 = add %3, %4 : tile<1024xi32>`.
std::string printOpSummary(const Op &op, const ValueNames &names);

// Whether `s` can be printed bare as an attribute key, a function name or a
// name hint: [A-Za-z_][A-Za-z0-9_.$]*.
bool isBareIdentifier(const std::string &s);
// `s` as a double-quoted string literal with \" \\ \n \t \xHH escapes.
std::string quoteString(const std::string &s);

}  // namespace tk::ir
