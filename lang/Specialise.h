// Internal to lang/: binding a kernel's const parameters (-D and @tune values
// are checked by one function), the num_warps / num_stages rules, and the
// @tune attribute's checker (lang/TuneAttribute.cpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "syntax/AST.h"
#include "syntax/Diagnostics.h"
#include "lang/Frontend.h"
#include "lang/IRGen.h"
#include "tk/gpu.h"

namespace tk::lang {

// The rules for a launch's num_warps (tk::validNumWarps, include/tk/gpu.h)
// and num_stages, for lowerKernel and @tune alike.
std::string badNumWarps(const std::string &text);
std::string badNumStages(const std::string &text);
std::string invalidValue(const std::string &text, const std::string &name, ir::ScalarKind kind);

// A define's text as a value of `kind`; nullopt when it does not parse.
std::optional<ConstValue> parseDefine(const std::string &text, ir::ScalarKind kind);

// A const parameter's sort and, for Scalar, its kind: its written type, which
// may name a type const of `consts` (`const EPS: T = 1e-5`). Nullopt for an
// unknown type.
struct ConstType {
  ConstSort sort;
  ir::ScalarKind kind;
};
std::optional<ConstType> constTypeOf(const ast::Param &p, const std::vector<ConstBinding> &consts);
// A define's text for a const of type `t`: a scalar as parseDefine reads it,
// any text for a string (one pair of surrounding double quotes is dropped:
// -D ACT='"gelu"' is -D ACT=gelu), a type's name for a type.
std::optional<ConstBinding> parseConstDefine(const std::string &text, const std::string &name, ConstType t);
std::string invalidConstValue(const std::string &text, const std::string &name, ConstType t);

// Binds every const param of `d`, in order, to its define or else its
// default; reports the first failure and returns false.
bool specialiseConsts(const ast::Decl &d, const std::map<std::string, std::string> &defines, DiagnosticEngine &diags,
                      const std::string &file, const FnTable *fns, std::vector<ConstBinding> &consts);

// Attributes: only @tune exists, on kernels, once each.
void checkAttributes(const ast::Module &m, DiagnosticEngine &diags);

// Checks the @tune `a` of kernel `d` (whose signature is sound) and expands
// its configs; nullopt after reporting errors.
std::optional<TuneSig> checkTune(const ast::Decl &d, const ast::Attribute &a, DiagnosticEngine &diags,
                                 const std::string &file, const FnTable *fns);

}  // namespace tk::lang
