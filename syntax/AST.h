// The abstract syntax tree of a .tk file, as the parser builds it: imports,
// kernels and fns with their parameters, statements and expressions. The
// parser caps the depth of every tree (kMaxDepth), so recursive walks and
// destructors over it stay shallow whatever the input.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "syntax/Location.h"

namespace tk::lang::ast {

using Loc = tk::Location;

// Deeper expressions and statements are replaced by an error node.
constexpr int kMaxDepth = 256;

// A written type: a scalar name behind `ptrDepth` stars (`**f32` has 2),
// or a tuple of types (`(i32, f32)`: `elems`, and no name).
struct TypeRef {
  std::string name;  // "f32", "i32", "bool", ...
  int ptrDepth = 0;
  Loc loc;
  std::vector<TypeRef> elems;  // a tuple's element types
  bool isTuple() const { return !elems.empty(); }
  std::string str() const;
};

enum class ExprKind {
  Int,     // intValue
  Float,   // floatValue
  Bool,    // intValue 0/1
  String,  // text
  None,    // `None` (an index)
  Slice,   // `:` (an index)
  Name,    // text
  Type,    // a type name in value position, e.g. `zeros(s, f32)`: type
  Unary,   // op, args[0]
  Binary,  // op, args[0], args[1]
  Call,    // text = callee, args, argNames ("" positional)
  Index,   // args[0] = base, args[1..] = indices
  Cast,    // args[0] as type
  List,    // args
  Tuple,   // args: `(a, b)`, `(a,)`, and `return a, b` / `x, y = ...` unparenthesised
  Error,   // a node dropped after an error
};

struct Expr {
  ExprKind kind;
  Loc loc;
  int depth = 1;  // 1 + the deepest child
  std::string text;  // name, callee, string value, or the operator spelling
  int64_t intValue = 0;
  double floatValue = 0;
  TypeRef type;
  std::vector<std::unique_ptr<Expr>> args;
  std::vector<std::string> argNames;  // Call: parallel to args
  std::vector<Loc> argNameLocs;       // Call: where each name is written (positional: the argument)
};
using ExprPtr = std::unique_ptr<Expr>;

// A deep copy (the parser's depth cap keeps the recursion shallow).
ExprPtr clone(const Expr &e);

enum class StmtKind {
  Let,     // let name = value, or let a, b = split(t)
  Var,     // var name = value, or var a, b = split(t)
  Assign,  // target op value, op one of = += -= *= /=
  Expr,    // value;
  For,     // for name in value { body }
  If,      // if value { body } else { elseBody }
  Return,  // return [value];
  Block,   // { body }
  While,     // while value { body }
  Break,     // break;
  Continue,  // continue;
  Error,
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Stmt {
  StmtKind kind;
  Loc loc;
  int depth = 1;
  std::string name;  // Let/Var/For: the bound name; Assign: the operator
  // Let/Var binding several values (`let a, b = split(t)`): every name in
  // order (names[0] == name) and where each is written; empty otherwise.
  std::vector<std::string> names;
  std::vector<Loc> nameLocs;
  ExprPtr target;    // Assign
  ExprPtr value;     // Let/Var/Assign/Expr/Return (may be null)/For (the range)/If (cond)
  std::vector<StmtPtr> body;
  std::vector<StmtPtr> elseBody;
  bool hasElse = false;
};

// `@NAME(args)` (or `@NAME`) before a declaration, e.g. `@tune(configs: [...],
// key: [n])`, or after a parameter's type, e.g. `n: i32 @multiple_of(16)`.
// The parser takes any name; the front end knows which exist.
struct Attribute {
  Loc loc;       // the '@'
  ExprPtr call;  // a Call: text = NAME, args and argNames as written
};

struct Param {
  std::string name;
  TypeRef type;
  bool isConst = false;
  ExprPtr defaultValue;  // may be null
  bool hasAlign = false;  // `align(N)` was written
  int64_t align = 0;
  Loc alignLoc;
  std::vector<Attribute> attributes;  // after the type: @no_specialize, @multiple_of(N)
  // `x: desc<T, [B0, B1]>`, a tensor descriptor built on the host
  // (tk::TensorDescriptor): `type` is the element type T, descBlock the
  // block shape as written (`desc<T, N>` leaves it empty, descRank N).
  bool isDescriptor = false;
  std::vector<ExprPtr> descBlock;
  int64_t descRank = 0;
  Loc descLoc;  // the block shape (or rank)
  Loc loc;
};

enum class DeclKind { Kernel, Fn, Import };

struct Decl {
  DeclKind kind;
  Loc loc;
  std::string name;  // kernel/fn name, or the import path
  std::vector<Param> params;
  bool hasResult = false;  // fn -> T
  TypeRef result;
  std::vector<StmtPtr> body;
  std::vector<Attribute> attributes;  // in source order
};

struct Module {
  std::string file;
  std::vector<Decl> decls;
};

// An indented tree, one node per line.
std::string dump(const Module &m);

}  // namespace tk::lang::ast
