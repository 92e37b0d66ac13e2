// The tokens of a .tk file and the re2c lexer that produces them (lexer.re).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "syntax/Location.h"
#include "syntax/Diagnostics.h"

namespace tk::parser {

// Declared in parser/Tokens.def.
enum class Tok {
#define TK_VALUE_TOKEN(Enum, BISON, DUMP) Enum,
#define TK_KEYWORD(Enum, BISON, SPELLING) Enum,
#define TK_PUNCT(Enum, BISON, SPELLING) Enum,
#include "parser/Tokens.def"
};

// A keyword's or an operator's spelling ("kernel", "+="); null for tokens
// whose text varies (identifiers, literals, type names, the end).
const char *tokSpelling(Tok t);

// "IDENT", "INT", "KW_KERNEL", "LPAREN", ...
const char *tokName(Tok t);

struct Token {
  Tok kind = Tok::End;
  std::string text;  // the spelling; for strings, the value with escapes resolved
  Location loc;
  int64_t intValue = 0;
  double floatValue = 0;
  bool commentFollows = false;  // a `//` comment follows on the same line (for TritonHints)
};

// Brackets of any kind nested deeper than this stop the lexer with an error.
constexpr int kMaxNesting = 256;

struct LexResult {
  std::vector<Token> tokens;  // always ends with an End token
  bool stopped = false;       // lexing gave up early (nesting or error limit)
  std::vector<int> errorLines;  // lines with a lexical error
};

// Lexes `text` (which may hold any bytes); errors go to `diags`.
LexResult lex(const std::string &text, const std::string &file, lang::DiagnosticEngine &diags);

// One token per line: "line:col KIND 'text'".
std::string dumpTokens(const std::vector<Token> &tokens);

}  // namespace tk::parser
