// The op attribute declarations of ir/Ops.def, gathered per op, and the
// check of an op's attributes against them.
#include "ir/OpAttrs.h"

#include <array>
#include <variant>
#include <vector>

namespace tk::ir {

namespace {

constexpr bool Required = true, Optional = false;

const AttrDecl kDecls[] = {
#define TK_OP_ATTR(E, NAME, KIND, PRESENCE, DOC) {OpKind::E, NAME, AttrKind::KIND, PRESENCE, DOC},
#define TK_OP_ENUM_ATTR(E, NAME, ENUM, PRESENCE, DOC) \
  {OpKind::E, NAME, AttrKind::Enum, PRESENCE, DOC, enumNames<ENUM>(), EnumInfo<ENUM>::what},
#include "ir/Ops.def"
};

const AttrDecl kKernelDecls[] = {
#define TK_KERNEL_ATTR(NAME, KIND, DOC) {OpKind::Return, NAME, AttrKind::KIND, Optional, DOC},
#include "ir/Ops.def"
};

constexpr size_t kNumOps = 0
#define TK_OP(E, M, MIN, MAX, RES, TRAITS, DOC) +1
#include "ir/Ops.def"
    ;

// Per op, its declarations in Ops.def's order.
struct Index {
  std::array<std::vector<AttrDecl>, kNumOps> byOp;
  Index() {
    for (const AttrDecl &d : kDecls) byOp[static_cast<size_t>(d.op)].push_back(d);
  }
};

// "an integer 'axis'", "a string 'prefix'", "a 'kind'": how a message names
// the attribute it wants.
std::string wanted(const AttrDecl &d) {
  const std::string q = std::string("'") + d.name + "'";
  switch (d.kind) {
    case AttrKind::Int: return "an integer " + q + " attribute";
    case AttrKind::Float: return "a float " + q + " attribute";
    case AttrKind::String: return "a string " + q + " attribute";
    case AttrKind::IntList: return "a list of integers " + q + " attribute";
    case AttrKind::Number: return "a " + q + " attribute (an integer or a float)";
    case AttrKind::Flag: return "a " + q + " attribute (0 or 1)";
    case AttrKind::Enum: return "a " + q + " attribute: " + choicesText(d.choices);
  }
  return q;
}

bool fits(const AttrDecl &d, const Attr &a) {
  switch (d.kind) {
    case AttrKind::Int: return std::holds_alternative<int64_t>(a);
    case AttrKind::Float: return std::holds_alternative<double>(a);
    case AttrKind::Number: return std::holds_alternative<int64_t>(a) || std::holds_alternative<double>(a);
    case AttrKind::String: return std::holds_alternative<std::string>(a);
    case AttrKind::IntList: return std::holds_alternative<std::vector<int64_t>>(a);
    case AttrKind::Flag: return a == Attr(int64_t{0}) || a == Attr(int64_t{1});
    case AttrKind::Enum: {
      const auto *s = std::get_if<std::string>(&a);
      if (!s) return false;
      for (const char *c : d.choices)
        if (*s == c) return true;
      return false;
    }
  }
  return false;
}

}  // namespace

std::span<const AttrDecl> declaredAttrs(OpKind k) {
  static const Index index;
  return index.byOp[static_cast<size_t>(k)];
}

namespace {
std::string checkAttrs(std::span<const AttrDecl> decls, const std::map<std::string, Attr> &attrs) {
  for (const AttrDecl &d : decls) {
    auto it = attrs.find(d.name);
    if (it == attrs.end()) {
      if (d.required) return "needs " + wanted(d);
      continue;
    }
    if (!fits(d, it->second)) return std::string("'") + d.name + "' must be " + attrKindText(d) + ", not " + attrStr(it->second);
  }
  return "";
}
}  // namespace

std::string checkDeclaredAttrs(const Op &op) { return checkAttrs(declaredAttrs(op.kind()), op.attrs()); }

std::span<const AttrDecl> declaredKernelAttrs() { return kKernelDecls; }

std::string checkKernelAttrs(const Function &fn) { return checkAttrs(kKernelDecls, fn.attrs); }

std::string attrKindText(const AttrDecl &d) {
  switch (d.kind) {
    case AttrKind::Int: return "an integer";
    case AttrKind::Float: return "a float";
    case AttrKind::Number: return "an integer or a float";
    case AttrKind::String: return "a string";
    case AttrKind::IntList: return "a list of integers";
    case AttrKind::Flag: return "0 or 1";
    case AttrKind::Enum: return choicesText(d.choices);
  }
  return "";
}

}  // namespace tk::ir
