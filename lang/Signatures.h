// The checks of kernel and fn parameter declarations that Frontend::
// checkDecls and lowerKernel run (Signatures.cpp): types, alignments,
// const defaults and parameter attributes, each error at its source.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lang/Frontend.h"
#include "lang/IRGen.h"

namespace tk::lang {

// "pointers nest at most N deep ...": the error for a type nested too deep.
std::string tooDeep(const ast::TypeRef &t);
const ast::Param *findParam(const ast::Decl &d, const std::string &name);
// A run-time parameter whose type is a type const (`x: *T`): its type and
// alignment as `consts` give them; when T has no value yet it stays as written.
void resolveGenericParam(const ast::Param &p, const std::vector<ConstBinding> &consts, ParamSig &ps, bool &ok,
                         DiagnosticEngine &diags);
// A const parameter's type and default (evaluated with the consts before
// it in scope), appended to `consts`.
void checkConstParam(const ast::Param &p, std::vector<ConstBinding> &consts, const std::vector<std::string> &runtime,
                     ParamSig &ps, bool &ok, DiagnosticEngine &diags, const std::string &file, const FnTable *fns);
// A fn's signature: known types, no const/default/align params.
bool checkFnSignature(const ast::Decl &d, DiagnosticEngine &diags);
// `@no_specialize` and `@multiple_of(N)` after an integer kernel parameter's
// type. Fills `ps`; false after reporting an error.
bool checkParamAttributes(const ast::Param &p, std::optional<ir::ScalarKind> kind, ParamSig &ps,
                          DiagnosticEngine &diags);

}  // namespace tk::lang
