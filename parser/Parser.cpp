// The parser's driver and node factory: runs the Bison parser over the
// tokens (a file, or one expression) and keeps every tree within ast::kMaxDepth.
#include "parser/Parser.h"

#include <algorithm>

#include "grammar.hpp"

namespace tk::parser {

using namespace lang::ast;

ExprPtr ParseContext::leaf(ExprKind k, const Location &loc, std::string text) {
  auto e = std::make_unique<Expr>();
  e->kind = k;
  e->loc = loc;
  e->text = std::move(text);
  return e;
}

void ParseContext::tooDeep(const Location &loc) {
  if (reportedDepth_) return;
  reportedDepth_ = true;
  diags_.error(loc, "expression nested too deeply (the limit is " + std::to_string(kMaxDepth) + ")");
}

ExprPtr ParseContext::finish(ExprPtr e) {
  int depth = 0;
  for (const ExprPtr &a : e->args) depth = std::max(depth, a->depth);
  e->depth = depth + 1;
  if (e->depth <= kMaxDepth) return e;
  // Keep the depth at the limit so every enclosing node is dropped as well,
  // one at a time, while each tree freed here stays shallow.
  tooDeep(e->loc);
  auto err = leaf(ExprKind::Error, e->loc);
  err->depth = kMaxDepth + 1;
  return err;
}

ExprPtr ParseContext::unary(std::string op, ExprPtr a, const Location &loc) {
  auto e = leaf(ExprKind::Unary, loc, std::move(op));
  e->args.push_back(std::move(a));
  return finish(std::move(e));
}

ExprPtr ParseContext::binary(std::string op, ExprPtr a, ExprPtr b, const Location &loc) {
  auto e = leaf(ExprKind::Binary, loc, std::move(op));
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return finish(std::move(e));
}

StmtPtr ParseContext::finish(StmtPtr s) {
  int depth = 0;
  for (const StmtPtr &c : s->body) depth = std::max(depth, c->depth);
  for (const StmtPtr &c : s->elseBody) depth = std::max(depth, c->depth);
  s->depth = depth + 1;
  if (s->depth <= kMaxDepth) return s;
  if (!reportedDepth_) {
    reportedDepth_ = true;
    diags_.error(s->loc, "statements nested too deeply (the limit is " + std::to_string(kMaxDepth) + ")");
  }
  auto err = std::make_unique<Stmt>();
  err->kind = StmtKind::Error;
  err->loc = s->loc;
  err->depth = kMaxDepth + 1;
  return err;
}

std::unique_ptr<Module> parse(const std::vector<Token> &tokens, const std::string &file,
                              lang::DiagnosticEngine &diags, const std::vector<int> &quietLines) {
  auto m = std::make_unique<Module>();
  m->file = file;
  ParseContext ctx(tokens, diags, *m, quietLines);
  yy::Parser parser(ctx);
  parser.parse();
  return m;
}

ExprPtr parseExpression(const std::vector<Token> &tokens, const std::string &file, lang::DiagnosticEngine &diags,
                        const std::vector<int> &quietLines) {
  Module scratch;  // names the file in locations; the Expr entry adds no decls
  scratch.file = file;
  int errorsBefore = diags.errorCount();
  ParseContext ctx(tokens, diags, scratch, quietLines, ParseContext::Entry::Expr);
  yy::Parser parser(ctx);
  if (parser.parse() != 0 || diags.errorCount() != errorsBefore) return nullptr;
  return ctx.takeExpr();
}

StmtPtr ParseContext::brokenStatement(const Location &loc) {
  auto s = std::make_unique<lang::ast::Stmt>();
  s->kind = lang::ast::StmtKind::Error;
  s->loc = loc;
  // The ';' that ended the statement, then the token after the one before it.
  size_t end = lastIndex();
  while (end > 0 && tokens_[end].kind != Tok::Semi) --end;
  size_t start = end;
  while (start > 0 && tokens_[start - 1].kind != Tok::Semi && tokens_[start - 1].kind != Tok::LBrace &&
         tokens_[start - 1].kind != Tok::RBrace)
    --start;
  if (start >= end || (tokens_[start].kind != Tok::KwLet && tokens_[start].kind != Tok::KwVar)) return s;
  for (size_t i = start + 1; i < end && tokens_[i].kind != Tok::Assign; ++i) {
    const Token &t = tokens_[i];
    if (t.kind == Tok::Ident) {
      s->names.push_back(t.text);
      s->nameLocs.push_back(t.loc);
    } else if (t.kind != Tok::Comma && t.kind != Tok::LParen && t.kind != Tok::RParen) {
      break;
    }
  }
  return s;
}

}  // namespace tk::parser
