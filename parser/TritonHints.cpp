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
      {"int8", "i8"},     {"int16", "i16"},     {"int32", "i32"},   {"int64", "i64"}};
  auto it = types.find(triton);
  return it == types.end() ? "" : it->second;
}

std::string identAt(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && (std::isalnum(static_cast<unsigned char>(s[n])) || s[n] == '_')) ++n;
  return std::string(s.substr(0, n));
}

}  // namespace

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
  return "";
}

std::string dotHint(const std::vector<Token> &before, std::string_view rest) {
  const Token *prev = before.empty() ? nullptr : &before.back();
  std::string member = identAt(rest);
  if (prev && prev->kind == Tok::Ident && prev->text == "tl") {
    if (std::string t = tkType(member); !t.empty()) return "'tl." + member + "' is '" + t + "' in tk";
    if (member == "constexpr") return "a compile-time parameter is 'const NAME: i32 = VALUE' in tk";
    if (!member.empty()) return "tk has no 'tl.' prefix: 'tl." + member + "' is '" + member + "'";
  }
  if (prev && endsOperand(*prev) && !member.empty())
    return "tk values have no members: '." + member + "' has no tk spelling (a pointer's element type is in its "
           "declaration, a tile's shape in its arange/zeros)";
  return "";
}

}  // namespace tk::parser
