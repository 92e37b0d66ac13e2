// Host expressions: parsing through the grammar's expression entry, the
// typing rules (shared by eval and check, so both reject the same things),
// i64 evaluation that reports overflow instead of wrapping, and printing
// back to canonical text.
#include "lang/HostExpr.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "syntax/AST.h"
#include "lang/Compare.h"
#include "syntax/Diagnostics.h"
#include "parser/Lexer.h"
#include "parser/Parser.h"

namespace tk::lang {

using ast::Expr;
using ast::ExprKind;
using Kind = HostValue::Kind;

HostValue HostValue::ofInt(int64_t v) { return {Kind::Int, v, 0}; }
HostValue HostValue::ofFloat(double v) { return {Kind::Float, 0, v}; }
HostValue HostValue::ofBool(bool v) { return {Kind::Bool, v ? 1 : 0, 0}; }

const char *HostValue::kindName(Kind k) {
  switch (k) {
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Bool: return "bool";
  }
  return "?";
}

// Integers are [+-]digits and must fit in i64 (a too-large integer is not
// read as a float); floats are what std::from_chars reads, finite.
std::optional<HostValue> HostValue::parseLiteral(const std::string &text) {
  if (text == "true") return ofBool(true);
  if (text == "false") return ofBool(false);
  const char *b = text.data(), *e = text.data() + text.size();
  const char *digits = b != e && (*b == '+' || *b == '-') ? b + 1 : b;
  if (digits == e) return std::nullopt;
  if (std::all_of(digits, e, [](char c) { return c >= '0' && c <= '9'; })) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(*b == '+' ? b + 1 : b, e, v);
    if (ec != std::errc() || p != e) return std::nullopt;
    return ofInt(v);
  }
  double v = 0;
  auto [p, ec] = std::from_chars(*b == '+' ? b + 1 : b, e, v);
  if (ec != std::errc() || p != e || !std::isfinite(v)) return std::nullopt;
  return ofFloat(v);
}

std::string HostValue::str() const {
  if (kind == Kind::Bool) return i ? "true" : "false";
  if (kind == Kind::Int) return std::to_string(i);
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, f);  // the shortest text that reads back exactly
  std::string s(buf, r.ptr);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

namespace {

// ---- Printing -------------------------------------------------------------

int binaryPrecedence(const std::string &op) {
  static const std::map<std::string, int> prec = {
      {"||", 1}, {"&&", 2}, {"|", 3}, {"^", 4}, {"&", 5}, {"==", 6}, {"!=", 6}, {"<", 7}, {"<=", 7}, {">", 7},
      {">=", 7}, {"<<", 8}, {">>", 8}, {"+", 9}, {"-", 9}, {"*", 10}, {"/", 10}, {"%", 10}};
  auto it = prec.find(op);
  return it == prec.end() ? 0 : it->second;
}

// As grammar.y ranks them: binary operators, then `as`, then unary
// operators, then calls, indexing, literals and parentheses.
constexpr int kCastPrec = 11, kUnaryPrec = 12, kPostfixPrec = 13;

int precedence(const Expr &e) {
  switch (e.kind) {
    case ExprKind::Binary: return binaryPrecedence(e.text);
    case ExprKind::Cast: return kCastPrec;
    case ExprKind::Unary: return kUnaryPrec;
    default: return kPostfixPrec;
  }
}

void print(const Expr &e, std::string &out);

void printAtLeast(const Expr &e, int prec, std::string &out) {
  bool parens = precedence(e) < prec;
  if (parens) out += '(';
  print(e, out);
  if (parens) out += ')';
}

void printList(const Expr &e, size_t from, std::string &out) {
  for (size_t i = from; i < e.args.size(); ++i) {
    if (i > from) out += ", ";
    if (e.kind == ExprKind::Call && !e.argNames[i].empty()) out += e.argNames[i] + ": ";
    print(*e.args[i], out);
  }
}

// Parentheses only where the grammar needs them; binary operators associate
// to the left, so a right operand of equal rank keeps its parentheses.
void print(const Expr &e, std::string &out) {
  switch (e.kind) {
    case ExprKind::Int: out += std::to_string(e.intValue); break;
    case ExprKind::Float: out += HostValue::ofFloat(e.floatValue).str(); break;
    case ExprKind::Bool: out += e.intValue ? "true" : "false"; break;
    case ExprKind::String:
      out += '"';
      for (char c : e.text) {
        if (c == '"' || c == '\\') out += '\\', out += c;
        else if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else out += c;
      }
      out += '"';
      break;
    case ExprKind::None: out += "None"; break;
    case ExprKind::Slice: out += ":"; break;
    case ExprKind::Name: out += e.text; break;
    case ExprKind::Type: out += e.type.str(); break;
    case ExprKind::Unary:
      out += e.text;
      printAtLeast(*e.args[0], kUnaryPrec, out);
      break;
    case ExprKind::Binary: {
      int p = binaryPrecedence(e.text);
      printAtLeast(*e.args[0], p, out);
      out += " " + e.text + " ";
      printAtLeast(*e.args[1], p + 1, out);
      break;
    }
    case ExprKind::Cast:
      printAtLeast(*e.args[0], kCastPrec, out);
      out += " as " + e.type.str();
      break;
    case ExprKind::Call:
      out += e.text + "(";
      printList(e, 0, out);
      out += ")";
      break;
    case ExprKind::Index:
      printAtLeast(*e.args[0], kPostfixPrec, out);
      out += "[";
      printList(e, 1, out);
      out += "]";
      break;
    case ExprKind::List:
      out += "[";
      printList(e, 0, out);
      out += "]";
      break;
    case ExprKind::Tuple:
      out += "(";
      printList(e, 0, out);
      out += e.args.size() == 1 ? ",)" : ")";
      break;
    case ExprKind::Error: out += "<error>"; break;
  }
}

std::string text(const Expr &e) {
  std::string s;
  print(e, s);
  return s;
}

// ---- Typing rules ---------------------------------------------------------

[[noreturn]] void fail(const Expr &e, const std::string &message) { throw HostExprError(e.loc, message); }

std::string in(const Expr &e) {
  std::string t = text(e);
  return " in '" + (t.size() > 60 ? t.substr(0, 60) + "..." : t) + "'";
}

bool isArith(const std::string &op) { return op == "+" || op == "-" || op == "*" || op == "/" || op == "%"; }
bool isRelational(const std::string &op) { return op == "<" || op == "<=" || op == ">" || op == ">="; }
bool isEquality(const std::string &op) { return op == "==" || op == "!="; }
bool isLogic(const std::string &op) { return op == "&&" || op == "||"; }

[[noreturn]] void unsupported(const Expr &e, const std::string &what) {
  fail(e, "unsupported construct '" + what +
              "' (a host expression has numbers, bools, + - * / %, comparisons, && || !, cdiv, min, max and abs)");
}

// Rejects what a host expression cannot hold, whatever its operands.
void checkConstruct(const Expr &e) {
  switch (e.kind) {
    case ExprKind::Int: case ExprKind::Float: case ExprKind::Bool: case ExprKind::Name: return;
    case ExprKind::String: unsupported(e, "string");
    case ExprKind::None: unsupported(e, "None");
    case ExprKind::Slice: unsupported(e, ":");
    case ExprKind::Type: unsupported(e, e.type.str());
    case ExprKind::Cast: unsupported(e, "as " + e.type.str());
    case ExprKind::Index: unsupported(e, "indexing");
    case ExprKind::List: unsupported(e, "list");
    case ExprKind::Tuple: unsupported(e, "tuple");
    case ExprKind::Error: unsupported(e, "error");
    case ExprKind::Unary:
      if (e.text != "-" && e.text != "!") unsupported(e, e.text);
      return;
    case ExprKind::Binary:
      if (!isArith(e.text) && !isRelational(e.text) && !isEquality(e.text) && !isLogic(e.text)) unsupported(e, e.text);
      return;
    case ExprKind::Call: {
      // The built-ins lang/BuiltinTable.def marks TK_HOST_FN, with their arity.
      static const std::map<std::string, size_t> hostFns = {
#define TK_HOST_FN(NAME, ARITY) {NAME, ARITY},
#include "lang/BuiltinTable.def"
      };
      auto fn = hostFns.find(e.text);
      if (fn == hostFns.end()) unsupported(e, e.text);
      const size_t arity = fn->second;
      for (size_t i = 0; i < e.args.size(); ++i)
        if (!e.argNames[i].empty())
          throw HostExprError(i < e.argNameLocs.size() ? e.argNameLocs[i] : e.loc,
                              e.text + " takes its arguments by position," + in(e));
      if (e.args.size() != arity)
        fail(e, e.text + " takes " + std::to_string(arity) + " argument" + (arity == 1 ? "" : "s") + ", not " +
                    std::to_string(e.args.size()) + "," + in(e));
      return;
    }
  }
}

std::string kindName(Kind k) { return HostValue::kindName(k); }

Kind unaryKind(const Expr &e, Kind a) {
  if (e.text == "-" && a == Kind::Bool) fail(e, "operator '-' needs a number, not bool," + in(e));
  if (e.text == "!" && a != Kind::Bool) fail(e, "operator '!' needs a bool, not " + kindName(a) + "," + in(e));
  return a;
}

// The left operand of && and || alone (eval may stop after it).
void logicOperand(const Expr &e, Kind a) {
  if (a != Kind::Bool) fail(e, "operator '" + e.text + "' needs bools, not " + kindName(a) + "," + in(e));
}

Kind binaryKind(const Expr &e, Kind a, Kind b) {
  const std::string &op = e.text;
  if (isLogic(op)) {
    logicOperand(e, a);
    logicOperand(e, b);
    return Kind::Bool;
  }
  if (isEquality(op)) {
    if ((a == Kind::Bool) != (b == Kind::Bool))
      fail(e, "cannot compare " + kindName(a) + " with " + kindName(b) + in(e));
    return Kind::Bool;
  }
  if (a == Kind::Bool || b == Kind::Bool) fail(e, "operator '" + op + "' needs numbers, not bool," + in(e));
  if (isRelational(op)) return Kind::Bool;
  return a == Kind::Int && b == Kind::Int ? Kind::Int : Kind::Float;
}

Kind callKind(const Expr &e, const std::vector<Kind> &args) {
  if (e.text == "num_sms") return Kind::Int;
  for (Kind k : args) {
    if (e.text == "cdiv" && k != Kind::Int)
      fail(e, "cdiv needs integers, not " + kindName(k) + "," + in(e));
    if (k == Kind::Bool) fail(e, e.text + " needs numbers, not bool," + in(e));
  }
  if (e.text == "abs") return args[0];
  return args[0] == Kind::Int && args[1] == Kind::Int ? Kind::Int : Kind::Float;
}

// ---- Evaluation -----------------------------------------------------------

class Evaluator {
 public:
  Evaluator(const HostExpr::Lookup &lookup, const std::vector<std::string> *known) : lookup_(lookup), known_(known) {}

  HostValue eval(const Expr &e) const {
    checkConstruct(e);
    switch (e.kind) {
      case ExprKind::Int: return HostValue::ofInt(e.intValue);
      case ExprKind::Float: return HostValue::ofFloat(e.floatValue);
      case ExprKind::Bool: return HostValue::ofBool(e.intValue != 0);
      case ExprKind::Name: return name(e);
      case ExprKind::Unary: return unary(e, eval(*e.args[0]));
      case ExprKind::Binary: return binary(e);
      case ExprKind::Call: return call(e);
      default: unsupported(e, "?");  // checkConstruct rejected the rest
    }
  }

 private:
  HostValue name(const Expr &e) const {
    if (auto v = lookup_(e.text)) return *v;
    std::string msg = "unknown name '" + e.text + "'";
    if (known_) {
      msg += " (known: ";
      for (size_t i = 0; i < known_->size(); ++i) msg += (i ? ", " : "") + (*known_)[i];
      msg += known_->empty() ? "none)" : ")";
    }
    fail(e, msg);
  }

  static int64_t checked(const Expr &e, bool overflow, int64_t r) {
    if (overflow) fail(e, "integer overflow (beyond i64)" + in(e));
    return r;
  }

  static HostValue unary(const Expr &e, HostValue a) {
    unaryKind(e, a.kind);
    if (e.text == "!") return HostValue::ofBool(!a.i);
    if (a.kind == Kind::Float) return HostValue::ofFloat(-a.f);
    // Checked before negating: -INT64_MIN is undefined behaviour.
    return HostValue::ofInt(a.i == INT64_MIN ? checked(e, true, 0) : -a.i);
  }

  HostValue binary(const Expr &e) const {
    const std::string &op = e.text;
    HostValue a = eval(*e.args[0]);
    if (isLogic(op)) {
      logicOperand(e, a.kind);
      if ((op == "&&") != (a.i != 0)) return a;  // false && _, true || _
    }
    HostValue b = eval(*e.args[1]);
    Kind k = binaryKind(e, a.kind, b.kind);
    if (isLogic(op)) return b;
    if (isEquality(op) || isRelational(op)) {
      bool ints = a.kind != Kind::Float && b.kind != Kind::Float;
      return HostValue::ofBool(ints ? compareValues(op, a.i, b.i) : compareValues(op, a.asDouble(), b.asDouble()));
    }
    if (k == Kind::Float) {
      double x = a.asDouble(), y = b.asDouble();
      if (op == "+") return HostValue::ofFloat(x + y);
      if (op == "-") return HostValue::ofFloat(x - y);
      if (op == "*") return HostValue::ofFloat(x * y);
      if (op == "/") return HostValue::ofFloat(x / y);
      return HostValue::ofFloat(std::fmod(x, y));
    }
    int64_t x = a.i, y = b.i, r = 0;
    bool overflow = false;
    if (op == "+") overflow = __builtin_add_overflow(x, y, &r);
    if (op == "-") overflow = __builtin_sub_overflow(x, y, &r);
    if (op == "*") overflow = __builtin_mul_overflow(x, y, &r);
    if (op == "+" || op == "-" || op == "*") return HostValue::ofInt(checked(e, overflow, r));
    if (y == 0) fail(e, std::string(op == "/" ? "integer division" : "integer remainder") + " by zero" + in(e));
    if (x == INT64_MIN && y == -1) return HostValue::ofInt(op == "%" ? 0 : checked(e, true, 0));
    return HostValue::ofInt(op == "/" ? x / y : x % y);
  }


  HostValue call(const Expr &e) const {
    std::vector<HostValue> args;
    std::vector<Kind> kinds;
    for (const ast::ExprPtr &a : e.args) {
      args.push_back(eval(*a));
      kinds.push_back(args.back().kind);
    }
    Kind k = callKind(e, kinds);
    if (e.text == "num_sms") {
      std::optional<HostValue> sms = lookup_(kNumSmsName);
      if (!sms) fail(e, "num_sms() needs the device the kernel launches on, and none is known here," + in(e));
      return *sms;
    }
    if (e.text == "abs") {
      if (k == Kind::Float) return HostValue::ofFloat(std::fabs(args[0].f));
      return HostValue::ofInt(args[0].i == INT64_MIN ? checked(e, true, 0) : args[0].i < 0 ? -args[0].i : args[0].i);
    }
    if (e.text == "cdiv") {
      int64_t x = args[0].i, y = args[1].i;
      if (y == 0) fail(e, "integer division by zero" + in(e));
      if (x == INT64_MIN && y == -1) checked(e, true, 0);
      // The ceiling of the exact quotient, for any signs.
      int64_t q = x / y;
      if (x % y != 0 && (x < 0) == (y < 0)) ++q;
      return HostValue::ofInt(q);
    }
    bool isMin = e.text == "min";
    if (k == Kind::Float) {
      double x = args[0].asDouble(), y = args[1].asDouble();
      return HostValue::ofFloat(isMin ? std::min(x, y) : std::max(x, y));
    }
    return HostValue::ofInt(isMin ? std::min(args[0].i, args[1].i) : std::max(args[0].i, args[1].i));
  }

  const HostExpr::Lookup &lookup_;
  const std::vector<std::string> *known_;
};

Kind checkKinds(const Expr &e, const std::function<std::optional<Kind>(const std::string &)> &kindOf) {
  checkConstruct(e);
  switch (e.kind) {
    case ExprKind::Int: return Kind::Int;
    case ExprKind::Float: return Kind::Float;
    case ExprKind::Bool: return Kind::Bool;
    case ExprKind::Name:
      if (auto k = kindOf(e.text)) return *k;
      fail(e, "unknown name '" + e.text + "'");
    case ExprKind::Unary: return unaryKind(e, checkKinds(*e.args[0], kindOf));
    case ExprKind::Binary: {
      Kind a = checkKinds(*e.args[0], kindOf);
      return binaryKind(e, a, checkKinds(*e.args[1], kindOf));
    }
    case ExprKind::Call: {
      std::vector<Kind> kinds;
      for (const ast::ExprPtr &a : e.args) kinds.push_back(checkKinds(*a, kindOf));
      return callKind(e, kinds);
    }
    default: unsupported(e, "?");
  }
}

void collectNames(const Expr &e, std::set<std::string> &out) {
  if (e.kind == ExprKind::Name) out.insert(e.text);
  for (const ast::ExprPtr &a : e.args) collectNames(*a, out);
}

}  // namespace

HostExpr::HostExpr(std::unique_ptr<ast::Expr> e) : expr_(std::move(e)) {}
HostExpr::~HostExpr() = default;

std::unique_ptr<HostExpr> HostExpr::parse(const std::string &text, const std::string &what, std::string &error) {
  DiagnosticEngine diags;
  const std::string &stored = diags.sources().add(what, text);
  parser::LexResult lexed = parser::lex(stored, what, diags);
  ast::ExprPtr e;
  if (!lexed.stopped) e = parser::parseExpression(lexed.tokens, what, diags, lexed.errorLines);
  if (!e || diags.hasErrors()) {
    error = diags.hasErrors() ? diags.render() : what + ": error: not an expression\n";
    return nullptr;
  }
  error.clear();
  return std::unique_ptr<HostExpr>(new HostExpr(std::move(e)));
}

std::unique_ptr<HostExpr> HostExpr::fromAst(const ast::Expr &e) {
  return std::unique_ptr<HostExpr>(new HostExpr(ast::clone(e)));
}

HostValue HostExpr::eval(const Lookup &lookup) const { return Evaluator(lookup, nullptr).eval(*expr_); }

HostValue HostExpr::eval(const std::map<std::string, HostValue> &values) const {
  std::vector<std::string> known;
  for (const auto &[name, value] : values) known.push_back(name);
  Lookup lookup = [&values](const std::string &name) -> std::optional<HostValue> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
  return Evaluator(lookup, &known).eval(*expr_);
}

HostValue::Kind HostExpr::check(const std::function<std::optional<HostValue::Kind>(const std::string &)> &kindOf) const {
  return checkKinds(*expr_, kindOf);
}

std::vector<std::string> HostExpr::names() const {
  std::set<std::string> names;
  collectNames(*expr_, names);
  return {names.begin(), names.end()};
}

std::string HostExpr::str() const { return text(*expr_); }

}  // namespace tk::lang
