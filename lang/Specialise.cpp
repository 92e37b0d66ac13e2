// Binding a kernel's const parameters to values: the one check of -D and
// @tune values, and the num_warps / num_stages rules (lang/Specialise.h).
#include "lang/Specialise.h"

#include <charconv>
#include <cstdint>
#include <cmath>

#include "lang/IRGen.h"

namespace tk::lang {

// The rules for a launch's num_warps and num_stages, for lowerKernel and @tune alike.
std::string badNumWarps(const std::string &text) {
  return "num_warps must be a power of two from 1 to " + std::to_string(kMaxWarps) + ", not " + text;
}
std::string badNumStages(const std::string &text) { return "num_stages must be an integer of at least 1, not " + text; }

std::string invalidValue(const std::string &text, const std::string &name, ir::ScalarKind kind) {
  return "invalid value " + quoted(text) + " for const parameter " + quoted(name) + " of type " +
         (kind == ir::ScalarKind::I1 ? std::string("bool") : ir::scalarName(kind));
}

// A define's text as a value of `kind`; nullopt when it does not parse. The
// one check of -D values and @tune values.
std::optional<ConstValue> parseDefine(const std::string &text, ir::ScalarKind kind) {
  if (kind == ir::ScalarKind::I1) {
    if (text == "true" || text == "1") return ConstValue::ofInt(1);
    if (text == "false" || text == "0") return ConstValue::ofInt(0);
    return std::nullopt;
  }
  const char *b = text.data(), *e = text.data() + text.size();
  if (b != e && *b == '+') ++b;
  if (!ir::isFloat(kind)) {
    // As the language writes integers: decimal, or hex after 0x (and a sign).
    const bool negative = b != e && *b == '-';
    const char *digits = negative ? b + 1 : b;
    const bool hex = e - digits > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
    if (hex) {
      uint64_t u = 0;
      auto [p, ec] = std::from_chars(digits + 2, e, u, 16);
      if (ec != std::errc() || p != e || *(digits + 2) == '+' || *(digits + 2) == '-' ||
          u > (negative ? uint64_t{1} << 63 : uint64_t(INT64_MAX)))
        return std::nullopt;
      const int64_t v = negative ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
      if (!fitsIn(v, kind)) return std::nullopt;
      return ConstValue::ofInt(v);
    }
    int64_t v = 0;
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || p != e || b == e || !fitsIn(v, kind)) return std::nullopt;
    return ConstValue::ofInt(v);
  }
  // Floats as the literals: decimal, inf, nan (from_chars also takes them negated).
  double v = 0;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p != e || b == e) return std::nullopt;
  return convertConst(ConstValue::ofFloat(v), kind);
}

std::optional<ConstType> constTypeOf(const ast::Param &p, const std::vector<ConstBinding> &consts) {
  ConstSort sort = constSortOf(p.type.name);
  if (sort != ConstSort::Scalar) return ConstType{sort, ir::ScalarKind::I32};
  auto k = IRGen::resolveType(p.type.name, consts);
  if (!k) return std::nullopt;
  return ConstType{sort, *k};
}

std::optional<ConstBinding> parseConstDefine(const std::string &text, const std::string &name, ConstType t) {
  if (t.sort == ConstSort::Scalar) {
    auto v = parseDefine(text, t.kind);
    if (!v) return std::nullopt;
    return ConstBinding{name, t.kind, *v};
  }
  if (t.sort == ConstSort::Str) {
    bool quoted = text.size() >= 2 && text.front() == '"' && text.back() == '"';
    return ConstBinding{name, t.kind, ConstValue::ofText(quoted ? text.substr(1, text.size() - 2) : text), t.sort};
  }
  auto k = IRGen::scalarKind(text);
  if (!k) return std::nullopt;
  return ConstBinding{name, *k, ConstValue::ofText(typeText(*k)), t.sort};
}

std::string invalidConstValue(const std::string &text, const std::string &name, ConstType t) {
  if (t.sort == ConstSort::Type)
    return "invalid value " + quoted(text) + " for type const " + quoted(name) +
           " (a type:"
#define TK_DTYPE(ID, IR_ID, NAME, ...) " " NAME
#include "tk/dtype.def"
           ")";
  return invalidValue(text, name, t.kind);
}

// Binds every const param of `d`, in order, to its define or else its
// default (which may use the consts before it). The first failure is
// reported and stops it, so errors do not cascade.
bool specialiseConsts(const ast::Decl &d, const std::map<std::string, std::string> &defines, DiagnosticEngine &diags,
                      const std::string &file, const FnTable *fns, std::vector<ConstBinding> &consts) {
  for (const ast::Param &p : d.params) {
    if (!p.isConst) continue;
    auto type = constTypeOf(p, consts);
    if (!type) {
      diags.error(p.type.loc, "unknown type " + quoted(p.type.name));
      return false;
    }
    std::optional<ConstBinding> b;
    auto def = defines.find(p.name);
    if (def != defines.end()) {
      b = parseConstDefine(def->second, p.name, *type);
      if (!b) {
        diags.error(p.loc, invalidConstValue(def->second, p.name, *type));
        return false;
      }
    } else if (p.defaultValue) {
      IRGen gen(diags, file);
      gen.setFns(fns);
      auto v = gen.evalConst(*p.defaultValue, p.name, type->kind, consts, {}, type->sort);
      if (!v) return false;
      b = ConstBinding{p.name, type->sort == ConstSort::Type ? *IRGen::scalarKind(v->s) : type->kind, *v, type->sort};
    } else {
      diags.error(p.loc, "const parameter " + quoted(p.name) + " has no default value and none was defined");
      return false;
    }
    consts.push_back(*b);
  }
  // Run-time parameters may have a type const's type (`x: *T`).
  for (const ast::Param &p : d.params)
    if (!p.isConst && !IRGen::resolveType(p.type.name, consts)) {
      diags.error(p.type.loc, "unknown type " + quoted(p.type.name));
      return false;
    }
  return true;
}

}  // namespace tk::lang
