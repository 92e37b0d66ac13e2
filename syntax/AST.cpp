// Prints the AST as an indented tree (`tkc compile --emit ast`), one node per
// line with its line:col.
#include "syntax/AST.h"

#include <cstdio>

namespace tk::lang::ast {

std::string TypeRef::str() const {
  if (!isTuple()) return std::string(ptrDepth, '*') + name;
  std::string s = "(";
  for (size_t i = 0; i < elems.size(); ++i) s += (i ? ", " : "") + elems[i].str();
  return s + (elems.size() == 1 ? ",)" : ")");
}

namespace {
std::string where(const Loc &l) { return " @" + std::to_string(l.line) + ":" + std::to_string(l.col); }

std::string floatText(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void dumpExpr(const Expr &e, int indent, std::string &out) {
  out.append(static_cast<size_t>(indent) * 2, ' ');
  switch (e.kind) {
    case ExprKind::Int: out += "int " + std::to_string(e.intValue); break;
    case ExprKind::Float: out += "float " + floatText(e.floatValue); break;
    case ExprKind::Bool: out += e.intValue ? "bool true" : "bool false"; break;
    case ExprKind::String: out += "string \"" + e.text + "\""; break;
    case ExprKind::None: out += "none"; break;
    case ExprKind::Slice: out += "slice"; break;
    case ExprKind::Name: out += "name " + e.text; break;
    case ExprKind::Type: out += "type " + e.type.str(); break;
    case ExprKind::Unary: out += "unary " + e.text; break;
    case ExprKind::Binary: out += "binary " + e.text; break;
    case ExprKind::Call: out += "call " + e.text; break;
    case ExprKind::Index: out += "index"; break;
    case ExprKind::Cast: out += "cast " + e.type.str(); break;
    case ExprKind::List: out += "list"; break;
    case ExprKind::Tuple: out += "tuple"; break;
    case ExprKind::Error: out += "error"; break;
  }
  out += where(e.loc) + "\n";
  for (size_t i = 0; i < e.args.size(); ++i) {
    if (e.kind == ExprKind::Call && !e.argNames[i].empty()) {
      out.append(static_cast<size_t>(indent + 1) * 2, ' ');
      out += "arg " + e.argNames[i] + ":\n";
      dumpExpr(*e.args[i], indent + 2, out);
    } else {
      dumpExpr(*e.args[i], indent + 1, out);
    }
  }
}

void dumpStmts(const std::vector<StmtPtr> &body, int indent, std::string &out);

// An attribute prints as its call: `attribute @tune @L:C`, then the arguments.
void dumpAttribute(const Attribute &a, int indent, std::string &out) {
  out.append(static_cast<size_t>(indent) * 2, ' ');
  out += "attribute @" + a.call->text + where(a.loc) + "\n";
  for (size_t i = 0; i < a.call->args.size(); ++i) {
    if (!a.call->argNames[i].empty()) {
      out.append(static_cast<size_t>(indent + 1) * 2, ' ');
      out += "arg " + a.call->argNames[i] + ":\n";
      dumpExpr(*a.call->args[i], indent + 2, out);
    } else {
      dumpExpr(*a.call->args[i], indent + 1, out);
    }
  }
}

void dumpStmt(const Stmt &s, int indent, std::string &out) {
  out.append(static_cast<size_t>(indent) * 2, ' ');
  switch (s.kind) {
    case StmtKind::Let:
    case StmtKind::Var: {
      out += s.kind == StmtKind::Let ? "let " : "var ";
      if (s.names.empty()) {
        out += s.name;
        break;
      }
      for (size_t i = 0; i < s.names.size(); ++i) out += (i ? ", " : "") + s.names[i];
      break;
    }
    case StmtKind::Assign: out += "assign " + s.name; break;
    case StmtKind::Expr: out += "expr"; break;
    case StmtKind::For: out += "for " + s.name; break;
    case StmtKind::If: out += "if"; break;
    case StmtKind::Return: out += "return"; break;
    case StmtKind::Block: out += "block"; break;
    case StmtKind::While: out += "while"; break;
    case StmtKind::Break: out += "break"; break;
    case StmtKind::Continue: out += "continue"; break;
    case StmtKind::Error: out += "error"; break;
  }
  out += where(s.loc) + "\n";
  if (s.target) dumpExpr(*s.target, indent + 1, out);
  if (s.value) dumpExpr(*s.value, indent + 1, out);
  dumpStmts(s.body, indent + 1, out);
  if (s.hasElse) {
    out.append(static_cast<size_t>(indent) * 2, ' ');
    out += "else\n";
    dumpStmts(s.elseBody, indent + 1, out);
  }
}

void dumpStmts(const std::vector<StmtPtr> &body, int indent, std::string &out) {
  for (const StmtPtr &s : body) dumpStmt(*s, indent, out);
}
}  // namespace

ExprPtr clone(const Expr &e) {
  auto c = std::make_unique<Expr>();
  c->kind = e.kind;
  c->loc = e.loc;
  c->depth = e.depth;
  c->text = e.text;
  c->intValue = e.intValue;
  c->floatValue = e.floatValue;
  c->type = e.type;
  c->argNames = e.argNames;
  c->argNameLocs = e.argNameLocs;
  for (const ExprPtr &a : e.args) c->args.push_back(clone(*a));
  return c;
}

std::string dump(const Module &m) {
  std::string out = "module \"" + m.file + "\"\n";
  for (const Decl &d : m.decls) {
    switch (d.kind) {
      case DeclKind::Import:
        out += "  import \"" + d.name + "\"" + where(d.loc) + "\n";
        for (const Attribute &a : d.attributes) dumpAttribute(a, 2, out);
        continue;
      case DeclKind::Kernel: out += "  kernel " + d.name; break;
      case DeclKind::Fn: out += "  fn " + d.name; break;
    }
    if (d.hasResult) out += " -> " + d.result.str();
    out += where(d.loc) + "\n";
    for (const Attribute &a : d.attributes) dumpAttribute(a, 2, out);
    for (const Param &p : d.params) {
      out += std::string("    param ") + (p.isConst ? "const " : "") + p.name + ": ";
      out += p.isDescriptor ? "desc<" + p.type.str() + ", " +
                                  (p.descBlock.empty() ? std::to_string(p.descRank) : "[block]") + ">"
                            : p.type.str();
      if (p.hasAlign) out += " align(" + std::to_string(p.align) + ")";
      out += where(p.loc) + "\n";
      for (const Attribute &a : p.attributes) dumpAttribute(a, 3, out);
      for (const ExprPtr &b : p.descBlock) dumpExpr(*b, 3, out);
      if (p.defaultValue) dumpExpr(*p.defaultValue, 3, out);
    }
    dumpStmts(d.body, 2, out);
  }
  return out;
}

}  // namespace tk::lang::ast
