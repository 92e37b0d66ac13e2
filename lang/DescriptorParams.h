// Tensor descriptor parameters, `a: desc<f16, [BM, BK]>` (DescriptorParams.cpp):
// what the front end checks of their declarations and how their type reads
// in a kernel's signature.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lang/Frontend.h"
#include "lang/IRGen.h"

namespace tk::lang {

// "desc<f16,[64,32]>": a descriptor parameter's type in signatures and bundles.
std::string descriptorTypeText(const std::string &elem, const std::vector<std::string> &block);

// The declaration's own checks (the block shape is spelled, 1 to 5 dims, a
// number element type, no default); sets ps.type to the type as written.
bool checkDescriptorDecl(const ast::Param &p, const std::set<std::string> &typeConsts, ParamSig &ps,
                         DiagnosticEngine &diags);

// The block shape with `consts` bound, ps.type set to the evaluated type.
// Nullopt after an error, or, quietly, where the element type or a name in
// the block is a const with no value yet (`quietIfUnbound`: a signature read
// before any -D) and the type stays as written.
std::optional<std::vector<int64_t>> resolveDescriptorParam(const ast::Param &p,
                                                           const std::vector<ConstBinding> &consts,
                                                           const std::vector<std::string> &runtime, bool quietIfUnbound,
                                                           ParamSig &ps, DiagnosticEngine &diags,
                                                           const std::string &file, const FnTable *fns);

// Every descriptor parameter of kernel `d` resolved with its specialised
// `consts` (params[i] describes d.params[i]): the block shapes by name, for
// IRGen::setDescriptorBlocks. False after an error.
bool resolveDescriptorBlocks(const ast::Decl &d, const std::vector<ConstBinding> &consts, std::vector<ParamSig> &params,
                             DiagnosticEngine &diags, const std::string &file, const FnTable *fns,
                             std::map<std::string, std::vector<int64_t>> &blocks);

}  // namespace tk::lang
