// The attributes each op and each kernel declares (ir/Ops.def's TK_OP_ATTR,
// TK_OP_ENUM_ATTR and TK_KERNEL_ATTR lines) as data: what the verifier
// checks attributes against and docs/ir.md lists.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace tk::ir {

enum class AttrKind { Int, Float, Number, String, IntList, Flag, Enum };

struct AttrDecl {
  OpKind op;  // a kernel attribute's is unused
  const char *name;
  AttrKind kind;
  bool required;
  const char *doc;
  // An Enum's spellings and what they are ("comparison predicate").
  std::span<const char *const> choices = {};
  const char *what = nullptr;
};

// The attributes `k` declares, in Ops.def's order.
std::span<const AttrDecl> declaredAttrs(OpKind k);

// The first problem with `op`'s declared attributes: a required one absent,
// or one whose value is not of its kind ("" when none). Undeclared
// attributes are not looked at.
std::string checkDeclaredAttrs(const Op &op);

// The attributes a kernel may carry (TK_KERNEL_ATTR), all optional, and the
// first problem with `fn`'s ("" when none).
std::span<const AttrDecl> declaredKernelAttrs();
std::string checkKernelAttrs(const Function &fn);

// "integer", "0 or 1", `"sum" or "prod"`: a kind as docs and messages name it.
std::string attrKindText(const AttrDecl &d);

}  // namespace tk::ir
