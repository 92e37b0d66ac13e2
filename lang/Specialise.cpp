// Binding a kernel's const parameters to values: the one check of -D and
// @tune values, and the num_warps / num_stages rules (lang/Specialise.h).
#include "lang/Specialise.h"

#include <charconv>
#include <cstdint>
#include <cmath>

#include "lang/IRGen.h"

namespace tk::lang {

// The rules for a launch's num_warps and num_stages, for lowerKernel and @tune alike.
bool validNumWarps(int64_t n) { return n >= 1 && n <= 32 && isPow2(n); }
std::string badNumWarps(const std::string &text) { return "num_warps must be a power of two from 1 to 32, not " + text; }
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
  double v = 0;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p != e || b == e || !std::isfinite(v)) return std::nullopt;
  return convertConst(ConstValue::ofFloat(v), kind);
}

// Binds every const param of `d`, in order, to its define or else its
// default (which may use the consts before it). The first failure is
// reported and stops it, so errors do not cascade.
bool specialiseConsts(const ast::Decl &d, const std::map<std::string, std::string> &defines, DiagnosticEngine &diags,
                      const std::string &file, const FnTable *fns, std::vector<ConstBinding> &consts) {
  for (const ast::Param &p : d.params) {
    if (!p.isConst) continue;
    ir::ScalarKind kind = *IRGen::scalarKind(p.type.name);
    std::optional<ConstValue> v;
    auto def = defines.find(p.name);
    if (def != defines.end()) {
      v = parseDefine(def->second, kind);
      if (!v) {
        diags.error(p.loc, invalidValue(def->second, p.name, kind));
        return false;
      }
    } else if (p.defaultValue) {
      IRGen gen(diags, file);
      gen.setFns(fns);
      v = gen.evalConst(*p.defaultValue, p.name, kind, consts);
      if (!v) return false;
    } else {
      diags.error(p.loc, "const parameter " + quoted(p.name) + " has no default value and none was defined");
      return false;
    }
    consts.push_back({p.name, kind, *v});
  }
  return true;
}

}  // namespace tk::lang
