// The .tk parser: tokens (from the re2c lexer) -> AST, through the Bison
// grammar in grammar.y. Syntax errors go to the diagnostics; the tree is
// returned even then (with error nodes) so later errors can still be found.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "syntax/AST.h"
#include "syntax/Diagnostics.h"
#include "parser/Lexer.h"

namespace tk::parser {

// Parses `tokens` (ending with End) of `file`.
// Syntax errors on `quietLines` (lines with a lexical error) are not
// reported: they are nearly always caused by that error.
std::unique_ptr<lang::ast::Module> parse(const std::vector<Token> &tokens, const std::string &file,
                                         lang::DiagnosticEngine &diags, const std::vector<int> &quietLines = {});

// Parses `tokens` as one expression that spans them all (the grammar's
// `START_EXPR expr` entry), e.g. a host expression such as `cdiv(n, BLOCK)`.
// Null after a syntax error, which goes to `diags`; locations name `file`.
lang::ast::ExprPtr parseExpression(const std::vector<Token> &tokens, const std::string &file,
                                   lang::DiagnosticEngine &diags, const std::vector<int> &quietLines = {});

// The generated parser's name for token `t` ("'kernel'", "'+='",
// "identifier"): its %token alias in grammar.y, which tests check against
// parser/Tokens.def.
const char *grammarTokenName(Tok t);

// Bison's location: line and column only, to keep the parser stack small;
// actions turn it into an Location with ParseContext::loc.
struct SrcPos {
  int line = 0, col = 0;
};

// The state the grammar's actions share: the token stream, the diagnostics,
// and the node factory that caps tree depth at ast::kMaxDepth.
class ParseContext {
 public:
  // Which of the grammar's entries a parse starts at: the lexer-driver
  // injects START_MODULE or START_EXPR before the first token.
  enum class Entry { Module, Expr };

  ParseContext(const std::vector<Token> &tokens, lang::DiagnosticEngine &diags, lang::ast::Module &m,
               const std::vector<int> &quietLines, Entry entry = Entry::Module)
      : tokens_(tokens), diags_(diags), module_(m), quietLines_(quietLines), entry_(entry) {}

  Entry entry() const { return entry_; }
  // The entry's start token, once: the first call to yylex gets it.
  std::optional<Entry> takeEntry() {
    if (entryTaken_) return std::nullopt;
    entryTaken_ = true;
    return entry_;
  }
  // The expression the Expr entry parsed.
  void setExpr(lang::ast::ExprPtr e) { expr_ = std::move(e); }
  lang::ast::ExprPtr takeExpr() { return std::move(expr_); }

  const Token &next() {
    const Token &t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  const Token &last() const { return tokens_[pos_ == 0 ? 0 : pos_ - 1]; }
  // The tokens, and the index of last() in them.
  const std::vector<Token> &tokens() const { return tokens_; }
  size_t lastIndex() const { return pos_ == 0 ? 0 : pos_ - 1; }
  lang::DiagnosticEngine &diags() { return diags_; }
  bool suppressed(int line) const {
    for (int l : quietLines_)
      if (l == line) return true;
    return false;
  }
  Location loc(const SrcPos &p) const { return Location{module_.file, p.line, p.col}; }
  lang::ast::Module &module() { return module_; }

  using ExprPtr = lang::ast::ExprPtr;
  using StmtPtr = lang::ast::StmtPtr;
  ExprPtr leaf(lang::ast::ExprKind k, const Location &loc, std::string text = {});
  // Sets the depth from the children; a node deeper than the limit becomes
  // an Error node (its children are freed here, while they are shallow).
  ExprPtr finish(ExprPtr e);
  ExprPtr unary(std::string op, ExprPtr a, const Location &loc);
  ExprPtr binary(std::string op, ExprPtr a, ExprPtr b, const Location &loc);
  StmtPtr finish(StmtPtr s);
  // A statement dropped after a syntax error: when it was a `let`/`var`,
  // the names it meant to bind, so later uses stay quiet (one mistake, one
  // error) rather than each reporting an unknown name.
  StmtPtr brokenStatement(const Location &loc);

 private:
  void tooDeep(const Location &loc);

  const std::vector<Token> &tokens_;
  size_t pos_ = 0;
  lang::DiagnosticEngine &diags_;
  lang::ast::Module &module_;
  const std::vector<int> &quietLines_;
  Entry entry_;
  bool entryTaken_ = false;
  lang::ast::ExprPtr expr_;
  bool reportedDepth_ = false;
};

}  // namespace tk::parser
