// Notes for what a Triton user writes first (docs/triton.md): each names the
// tk spelling and is attached to the error that spelling causes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parser/Lexer.h"

namespace tk::parser {

// A syntax error at tokens[at] (the unexpected token): a note for `a // b`
// on the line before (a comment in tk), `and`/`or`/`not`, or `axis=0`; "" if
// none applies.
std::string syntaxErrorHint(const std::vector<Token> &tokens, size_t at);

// An unexpected '.' after `before` (the tokens so far), followed by `rest`
// of the source: a note for `x.to(T)` and `tl.NAME`; "" if none applies.
std::string dotHint(const std::vector<Token> &before, std::string_view rest);

// The tk spelling of Triton's `tl.NAME` (parser/TritonNames.def): "" where
// tk has none yet, nullopt for a name Triton's table does not list.
std::optional<std::string> tkSpellingOf(const std::string &tritonName);

// Every Triton name the table lists, with its tk spelling (for tests).
std::vector<std::pair<std::string, std::string>> tritonNames();

}  // namespace tk::parser
