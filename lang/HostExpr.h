// Small tk expressions evaluated on the host over named values: launch grid
// sizes (`cdiv(n, BLOCK)`) and the autotuner's prune predicates. They are
// parsed by the .tk grammar's expression entry, so they read as in a kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "syntax/Location.h"
#include "tk/error.h"

namespace tk::lang {

namespace ast {
struct Expr;
}

// The name under which a host expression's caller gives `num_sms()`, the
// launching device's multiprocessor count (no name a user can write: it
// has parentheses). Without it, `num_sms()` is an error naming why.
inline constexpr const char *kNumSmsName = "num_sms()";

// A value a host expression computes.
struct HostValue {
  enum class Kind { Int, Float, Bool } kind = Kind::Int;
  int64_t i = 0;  // Int, and Bool as 0/1
  double f = 0;   // Float

  static HostValue ofInt(int64_t v);
  static HostValue ofFloat(double v);
  static HostValue ofBool(bool v);
  // Parses a -D / config style literal: "256", "-3", "1.5e-3", "true", "false". nullopt if not a literal.
  static std::optional<HostValue> parseLiteral(const std::string &text);
  std::string str() const;  // "256", "0.5", "true"; a float always shows a '.' or an exponent ("2.0")

  bool isNumber() const { return kind != Kind::Bool; }
  double asDouble() const { return kind == Kind::Float ? f : static_cast<double>(i); }
  static const char *kindName(Kind k);  // "int", "float", "bool"
};

// An error evaluating or checking a host expression. `loc()` is the place in
// the expression's source (a .tk file, or line 1 of `what` for a parsed
// text); it is unknown (line 0) when the thrower did not know it.
// The public tk::HostExprError (tk/error.h) with that place.
class HostExprError : public tk::HostExprError {
 public:
  using tk::HostExprError::HostExprError;
  HostExprError(const Location &loc, const std::string &message) : tk::HostExprError(message), loc_(loc) {}
  const Location &loc() const { return loc_; }
  [[noreturn]] void rethrowWithMessage(const std::string &message) const override {
    throw HostExprError(loc_, message);
  }

 private:
  Location loc_;
};

// One tk expression evaluated on the host over named values. Integers are
// i64 (overflow is an error), `/` truncates and `%` is the C remainder,
// int op float gives float; `&&` and `||` evaluate their right side only when
// needed, as in C.
class HostExpr {
 public:
  // Parses `text` with the tk lexer and grammar (an expression entry point). On a
  // syntax error returns null and sets `error` to the rendered diagnostic
  // ("<what>:1:COL: error: ...", source line, caret) -- `what` names the origin, e.g. "--grid".
  static std::unique_ptr<HostExpr> parse(const std::string &text, const std::string &what, std::string &error);
  // Wraps an expression the .tk parser produced (deep-copied).
  static std::unique_ptr<HostExpr> fromAst(const ast::Expr &e);
  ~HostExpr();

  using Lookup = std::function<std::optional<HostValue>(const std::string &)>;
  // Evaluates; `lookup` gives a name's value (nullopt: unknown). Throws HostExprError with a precise
  // message (unknown name 'x', integer division by zero in 'n / B', overflow, a float
  // where an integer is required, unsupported construct 'load').
  HostValue eval(const Lookup &lookup) const;
  // The same over a map of values; an unknown name's error lists the known ones
  // ("unknown name 'x' (known: a, b)").
  HostValue eval(const std::map<std::string, HostValue> &values) const;

  // Checks the expression without values: `kindOf` gives each name's kind
  // (nullopt: unknown). Returns the kind of the result; throws the
  // HostExprError eval would throw for any values (unknown name, bool
  // arithmetic, a float where an integer is required, unsupported construct).
  HostValue::Kind check(const std::function<std::optional<HostValue::Kind>(const std::string &)> &kindOf) const;

  std::vector<std::string> names() const;  // the free names, sorted, unique
  std::string str() const;                 // canonical text that parse() reads back to the same tree
  const ast::Expr &ast() const { return *expr_; }

 private:
  explicit HostExpr(std::unique_ptr<ast::Expr> e);
  std::unique_ptr<ast::Expr> expr_;
};

}  // namespace tk::lang
