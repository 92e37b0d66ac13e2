// Notes for Triton spellings, worded once here for the lexer ('.') and the
// parser (syntax errors): `a // b`, `and or not`, `axis=0`, `x.to(T)`,
// `tl.NAME`. The error itself is unchanged; the note says what tk writes.
#include "parser/TritonHints.h"

#include <cctype>
#include <map>

namespace tk::parser {

namespace {

// A token that can end an operand: after it, `//` was meant as an operator.
bool endsOperand(const Token &t) {
  return t.kind == Tok::Ident || t.kind == Tok::Int || t.kind == Tok::Float || t.kind == Tok::RParen ||
         t.kind == Tok::RBracket;
}

// Triton's dtype names, as tk writes them.
std::string tkType(const std::string &triton) {
  static const std::map<std::string, std::string> types = {
      {"float16", "f16"}, {"bfloat16", "bf16"}, {"float32", "f32"}, {"float64", "f64"}, {"int1", "bool"},
      {"int8", "i8"},     {"int16", "i16"},     {"int32", "i32"},   {"int64", "i64"},
      {"float8e4nv", "f8e4m3"}, {"float8e5", "f8e5m2"}};
  auto it = types.find(triton);
  return it == types.end() ? "" : it->second;
}

std::string identAt(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && (std::isalnum(static_cast<unsigned char>(s[n])) || s[n] == '_')) ++n;
  return std::string(s.substr(0, n));
}

const std::map<std::string, std::string> &tritonTable() {
  static const std::map<std::string, std::string> table = {
#define TK_TRITON_NAME(TRITON, TK) {#TRITON, TK},
#include "parser/TritonNames.def"
#undef TK_TRITON_NAME
  };
  return table;
}

}  // namespace

std::optional<std::string> tkSpellingOf(const std::string &tritonName) {
  auto it = tritonTable().find(tritonName);
  if (it == tritonTable().end()) return std::nullopt;
  return it->second;
}

std::vector<std::pair<std::string, std::string>> tritonNames() {
  return {tritonTable().begin(), tritonTable().end()};
}

std::string syntaxErrorHint(const std::vector<Token> &tokens, size_t at) {
  if (at >= tokens.size()) return "";
  const Token &bad = tokens[at];
  const Token *prev = at > 0 ? &tokens[at - 1] : nullptr;
  if (prev && prev->commentFollows && endsOperand(*prev) && bad.loc.line > prev->loc.line)
    return "'//' starts a comment in tk; integer division is '/'";
  auto isWord = [](const Token *t, const char *w) { return t && t->kind == Tok::Ident && t->text == w; };
  if (isWord(&bad, "and") || isWord(&bad, "or") || isWord(prev, "not"))
    return "tk writes 'and', 'or' and 'not' as '&&', '||' and '!'";
  const Token *prev2 = at > 1 ? &tokens[at - 2] : nullptr;
  if (bad.kind == Tok::Assign && prev && prev->kind == Tok::Ident && prev2 &&
      (prev2->kind == Tok::LParen || prev2->kind == Tok::Comma))
    return "named arguments are written '" + prev->text + ": value' in tk";
  // Python's blocks: `for i in range(n):`, `if c: return`, `else:`.
  if (bad.kind == Tok::Colon) {
    size_t first = at;
    while (first > 0 && tokens[first - 1].loc.line == bad.loc.line) --first;
    const Token &head = tokens[first];
    const char *shape = head.kind == Tok::KwFor     ? "for i in range(n) { ... }"
                        : head.kind == Tok::KwIf    ? "if COND { ... } else { ... }"
                        : head.kind == Tok::KwWhile ? "while COND { ... }"
                        : head.kind == Tok::KwElse  ? "} else { ... }"
                        : isWord(&head, "elif")     ? "} else if COND { ... }"
                        : isWord(&head, "def")      ? "kernel NAME(x: *f32, n: i32) { ... } or fn NAME(...) -> T { ... }"
                                                    : nullptr;
    if (shape) return std::string("tk writes blocks in braces, not ':' and indentation: '") + shape + "'";
  }
  // `kernel k(x_ptr, n)`: a parameter without its type.
  if ((bad.kind == Tok::Comma || bad.kind == Tok::RParen) && prev && prev->kind == Tok::Ident && prev2 &&
      (prev2->kind == Tok::LParen || prev2->kind == Tok::Comma)) {
    for (size_t i = at - 1; i-- > 1;) {
      const Tok k = tokens[i].kind;
      if (k == Tok::RParen || k == Tok::LBrace || k == Tok::RBrace || k == Tok::Semi) break;
      if (k == Tok::LParen && tokens[i - 1].kind == Tok::Ident && i > 1 &&
          (tokens[i - 2].kind == Tok::KwKernel || tokens[i - 2].kind == Tok::KwFn))
        return "a parameter needs a type: '" + prev->text + ": *f32' for a pointer, '" + prev->text +
               ": i32' for a number, 'const " + prev->text + ": i32 = 64' for a compile-time one";
    }
  }
  return "";
}

std::string dotHint(const std::vector<Token> &before, std::string_view rest) {
  const Token *prev = before.empty() ? nullptr : &before.back();
  std::string member = identAt(rest);
  if (prev && prev->kind == Tok::Ident && prev->text == "tl") {
    if (std::string t = tkType(member); !t.empty()) return "'tl." + member + "' is '" + t + "' in tk";
    if (member == "constexpr") return "a compile-time parameter is 'const NAME: i32 = VALUE' in tk";
    if (auto tk = tkSpellingOf(member)) {
      if (tk->empty()) return "tk has no 'tl." + member + "' yet (docs/triton.md lists what it has)";
      if (*tk == member) return "tk has no 'tl.' prefix: 'tl." + member + "' is '" + member + "'";
      return "'tl." + member + "' is '" + *tk + "' in tk";
    }
    if (!member.empty())
      return "tk has no 'tl.' prefix, and 'tl." + member + "' is no Triton built-in tk knows (docs/triton.md lists them)";
  }
  if (prev && endsOperand(*prev) && !member.empty())
    return "tk values have no members: '." + member + "' has no tk spelling (a pointer's element type is in its "
           "declaration, a tile's shape in its arange/zeros)";
  return "";
}

}  // namespace tk::parser
