// The .tk grammar (Bison, LALR(1), C++). Actions build the AST of
// syntax/AST.h through ParseContext, which also caps the depth of trees. One
// grammar has two entries: the driver injects START_MODULE before a file's
// tokens and START_EXPR before a lone expression's (host expressions such as
// `--grid cdiv(n, BLOCK)`).
%require "3.8"
%language "c++"
%define api.namespace {tk::parser::yy}
%define api.parser.class {Parser}
%define api.value.type variant
%define api.token.constructor
%define api.location.type {tk::parser::SrcPos}
%define parse.error custom
%define parse.lac full
%locations
%param {tk::parser::ParseContext &ctx}

%code requires {
#include "parser/Parser.h"
namespace tk::parser::yy {
using namespace tk::lang::ast;
struct CallArgs { std::vector<ExprPtr> args; std::vector<std::string> names; std::vector<Loc> nameLocs; };
struct ElsePart { bool present = false; std::vector<StmtPtr> body; };
struct NameList { std::vector<std::string> names; std::vector<Loc> locs; };
}
}

%code {
#include "parser/TritonHints.h"
#define YYLLOC_DEFAULT(Cur, Rhs, N) \
  do { (Cur) = (N) ? YYRHSLOC(Rhs, 1) : YYRHSLOC(Rhs, 0); } while (0)
namespace tk::parser::yy {
Parser::symbol_type yylex(ParseContext &ctx);

// `let first, rest... = value`: every name the statement binds, in order.
static void bindNames(Stmt &s, std::string first, Loc firstLoc, NameList rest) {
  s.name = first;
  s.names.push_back(std::move(first));
  s.nameLocs.push_back(firstLoc);
  for (size_t i = 0; i < rest.names.size(); ++i) {
    s.names.push_back(std::move(rest.names[i]));
    s.nameLocs.push_back(rest.locs[i]);
  }
}
}
}

// The tokens, as parser/Tokens.def declares them (Bison cannot include it):
// each keyword's and operator's alias is its spelling in quotes, which
// lang_parse_test checks against the table.
%token END 0 "end of file"
%token START_MODULE "start of a file" START_EXPR "start of an expression"
%token <std::string> IDENT "identifier" TYPENAME "type name" STRING "string literal"
%token <int64_t> INT "integer literal"
%token <double> FLOAT "floating-point literal"
%token KERNEL "'kernel'" FN "'fn'" IMPORT "'import'" LET "'let'" VAR "'var'" CONST "'const'"
%token ALIGN "'align'" FOR "'for'" IN "'in'" IF "'if'" ELSE "'else'" RETURN "'return'" AS "'as'"
%token TRUE "'true'" FALSE "'false'" NONE "'None'"
%token WHILE "'while'" BREAK "'break'" CONTINUE "'continue'"
%token DOT "'.'"
%token LPAREN "'('" RPAREN "')'" LBRACKET "'['" RBRACKET "']'" LBRACE "'{'" RBRACE "'}'"
%token COMMA "','" COLON "':'" SEMI "';'" ARROW "'->'"
%token ASSIGN "'='" PLUS_ASSIGN "'+='" MINUS_ASSIGN "'-='" STAR_ASSIGN "'*='" SLASH_ASSIGN "'/='"
%token PLUS "'+'" MINUS "'-'" STAR "'*'" SLASH "'/'" PERCENT "'%'" SHL "'<<'" SHR "'>>'"
%token LT "'<'" LE "'<='" GT "'>'" GE "'>='" EQEQ "'=='" NE "'!='"
%token AMP "'&'" CARET "'^'" PIPE "'|'" ANDAND "'&&'" OROR "'||'" BANG "'!'" TILDE "'~'" AT "'@'"

%type <ExprPtr> expr primary postfix call index arg_value rhs
%type <std::vector<ExprPtr>> expr_list expr_list_opt index_list
%type <CallArgs> args args_opt
%type <TypeRef> type
%type <std::vector<TypeRef>> type_list
%type <std::vector<Param>> params params_opt
%type <Param> param
%type <int64_t> align_opt
%type <ExprPtr> default_opt
%type <std::vector<StmtPtr>> stmts block
%type <ElsePart> else_part
%type <StmtPtr> stmt if_stmt
%type <StmtPtr> loop_jump
%type <std::string> assign_op
%type <NameList> name_list
%type <Decl> decl_body
%type <std::vector<Attribute>> attributes
%type <Attribute> attribute

%left OROR
%left ANDAND
%left PIPE
%left CARET
%left AMP
%left EQEQ NE
%left LT LE GT GE
%left SHL SHR
%left PLUS MINUS
%left STAR SLASH PERCENT
%precedence AS
%precedence UNARY

%%

// The injected first token picks the entry; after START_MODULE the parser is
// in the state a plain `module` grammar starts in, so files parse (and
// recover from errors) exactly as they would without the second entry.
start:
  START_MODULE module
| START_EXPR expr { ctx.setExpr(std::move($2)); }
;

module:
  %empty
| module decl
;

decl:
  decl_body { ctx.module().decls.push_back(std::move($1)); }
| attributes decl_body { $2.attributes = std::move($1); ctx.module().decls.push_back(std::move($2)); }
| error RBRACE { yyerrok; }
| error SEMI { yyerrok; }
;

decl_body:
  IMPORT STRING SEMI { $$.kind = DeclKind::Import; $$.loc = ctx.loc(@1); $$.name = $2; }
| KERNEL IDENT LPAREN params_opt RPAREN block {
    $$.kind = DeclKind::Kernel; $$.loc = ctx.loc(@2); $$.name = $2; $$.params = std::move($4); $$.body = std::move($6);
  }
| FN IDENT LPAREN params_opt RPAREN ARROW type block {
    $$.kind = DeclKind::Fn; $$.loc = ctx.loc(@2); $$.name = $2; $$.params = std::move($4);
    $$.hasResult = true; $$.result = $7; $$.body = std::move($8);
  }
| FN IDENT LPAREN params_opt RPAREN block {
    $$.kind = DeclKind::Fn; $$.loc = ctx.loc(@2); $$.name = $2; $$.params = std::move($4); $$.body = std::move($6);
  }
;

attributes:
  attribute { $$.push_back(std::move($1)); }
| attributes attribute { $$ = std::move($1); $$.push_back(std::move($2)); }
;

// `@tune(configs: [...], key: [n])`: the arguments are a call's. Which
// attributes exist, and on which declarations, the front end checks.
attribute:
  AT call { $$.loc = ctx.loc(@1); $$.call = std::move($2); }
| AT IDENT { $$.loc = ctx.loc(@1); $$.call = ctx.finish(ctx.leaf(ExprKind::Call, ctx.loc(@2), $2)); }
;

params_opt:
  %empty { }
| params { $$ = std::move($1); }
| params COMMA { $$ = std::move($1); }
;

params:
  param { $$.push_back(std::move($1)); }
| params COMMA param { $$ = std::move($1); $$.push_back(std::move($3)); }
;

param:
  IDENT COLON type align_opt default_opt {
    $$.name = $1; $$.type = $3; $$.hasAlign = $4 >= 0; $$.align = $$.hasAlign ? $4 : 0; $$.alignLoc = ctx.loc(@4);
    $$.defaultValue = std::move($5); $$.loc = ctx.loc(@1);
  }
| IDENT COLON type align_opt attributes default_opt {
    $$.name = $1; $$.type = $3; $$.hasAlign = $4 >= 0; $$.align = $$.hasAlign ? $4 : 0; $$.alignLoc = ctx.loc(@4);
    $$.attributes = std::move($5); $$.defaultValue = std::move($6); $$.loc = ctx.loc(@1);
  }
| CONST IDENT COLON type default_opt {
    $$.name = $2; $$.type = $4; $$.isConst = true; $$.defaultValue = std::move($5); $$.loc = ctx.loc(@2);
  }
/* A tensor descriptor built on the host: `a: desc<f16, [BM, BK]>` (the
   block shape), or `desc<f16, 2>` (the rank alone, which the front end
   refuses with the spelling it wants). The name is checked there too. */
| IDENT COLON IDENT LT type COMMA LBRACKET expr_list RBRACKET GT default_opt {
    $$.name = $1; $$.type = $5; $$.isDescriptor = true; $$.descBlock = std::move($8); $$.descLoc = ctx.loc(@7);
    $$.loc = ctx.loc(@1); $$.defaultValue = std::move($11);
    if ($3 != "desc") ctx.diags().error(ctx.loc(@3), "unknown parameter type '" + $3 + "<...>' (a tensor descriptor is desc<T, [B0, B1, ...]>)");
  }
| IDENT COLON IDENT LT type COMMA INT GT default_opt {
    $$.name = $1; $$.type = $5; $$.isDescriptor = true; $$.descRank = $7; $$.descLoc = ctx.loc(@7);
    $$.loc = ctx.loc(@1); $$.defaultValue = std::move($9);
    if ($3 != "desc") ctx.diags().error(ctx.loc(@3), "unknown parameter type '" + $3 + "<...>' (a tensor descriptor is desc<T, [B0, B1, ...]>)");
  }
;

// `align(N)` after a pointer type.
align_opt:
  %empty { $$ = -1; }
| ALIGN LPAREN INT RPAREN { $$ = $3; }
;

default_opt:
  %empty { }
| ASSIGN expr { $$ = std::move($2); }
;

// A name is a type const (`x: *T`), or `str`/`type` after `const NAME:`;
// the front end resolves it.
type:
  TYPENAME { $$.name = $1; $$.loc = ctx.loc(@1); }
| IDENT { $$.name = $1; $$.loc = ctx.loc(@1); }
| STAR type { $$ = $2; $$.ptrDepth += 1; $$.loc = ctx.loc(@1); }
/* A tuple of types, `(i32, f32)` or `(i32,)`; `(T)` is T. */
| LPAREN type RPAREN { $$ = $2; }
| LPAREN type COMMA RPAREN { $$.elems.push_back($2); $$.loc = ctx.loc(@1); }
| LPAREN type COMMA type_list RPAREN {
    $$.elems.push_back($2);
    for (auto &t : $4) $$.elems.push_back(std::move(t));
    $$.loc = ctx.loc(@1);
  }
;

type_list:
  type { $$.push_back($1); }
| type_list COMMA type { $$ = std::move($1); $$.push_back($3); }
;

block:
  LBRACE stmts RBRACE { $$ = std::move($2); }
;

name_list:
  IDENT { $$.names.push_back($1); $$.locs.push_back(ctx.loc(@1)); }
| name_list COMMA IDENT { $$ = std::move($1); $$.names.push_back($3); $$.locs.push_back(ctx.loc(@3)); }
;

stmts:
  %empty { }
| stmts stmt { $$ = std::move($1); $$.push_back(std::move($2)); }
;

stmt:
  LET IDENT ASSIGN rhs SEMI {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Let; $$->loc = ctx.loc(@1); $$->name = $2;
    $$->value = std::move($4); $$ = ctx.finish(std::move($$));
  }
| LET IDENT COMMA name_list ASSIGN rhs SEMI {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Let; $$->loc = ctx.loc(@1);
    bindNames(*$$, $2, ctx.loc(@2), std::move($4)); $$->value = std::move($6); $$ = ctx.finish(std::move($$));
  }
| VAR IDENT COMMA name_list ASSIGN rhs SEMI {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Var; $$->loc = ctx.loc(@1);
    bindNames(*$$, $2, ctx.loc(@2), std::move($4)); $$->value = std::move($6); $$ = ctx.finish(std::move($$));
  }
/* `let (a, b) = t;`: the names of a tuple's elements, `_` for one not kept. */
| LET LPAREN IDENT COMMA name_list RPAREN ASSIGN rhs SEMI {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Let; $$->loc = ctx.loc(@1);
    bindNames(*$$, $3, ctx.loc(@3), std::move($5)); $$->value = std::move($8); $$ = ctx.finish(std::move($$));
  }
| VAR LPAREN IDENT COMMA name_list RPAREN ASSIGN rhs SEMI {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Var; $$->loc = ctx.loc(@1);
    bindNames(*$$, $3, ctx.loc(@3), std::move($5)); $$->value = std::move($8); $$ = ctx.finish(std::move($$));
  }
| VAR IDENT ASSIGN rhs SEMI {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Var; $$->loc = ctx.loc(@1); $$->name = $2;
    $$->value = std::move($4); $$ = ctx.finish(std::move($$));
  }
| expr assign_op rhs SEMI {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Assign; $$->loc = ctx.loc(@2); $$->name = $2;
    $$->target = std::move($1); $$->value = std::move($3); $$ = ctx.finish(std::move($$));
  }
/* `a, b = f(...);`: the targets as a tuple. */
| expr COMMA expr_list ASSIGN rhs SEMI {
    auto t = ctx.leaf(ExprKind::Tuple, $1->loc); t->args.push_back(std::move($1));
    for (auto &x : $3) t->args.push_back(std::move(x));
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Assign; $$->loc = ctx.loc(@4); $$->name = "=";
    $$->target = ctx.finish(std::move(t)); $$->value = std::move($5); $$ = ctx.finish(std::move($$));
  }
| expr SEMI {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Expr; $$->loc = $1->loc;
    $$->value = std::move($1); $$ = ctx.finish(std::move($$));
  }
| FOR IDENT IN expr block {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::For; $$->loc = ctx.loc(@1); $$->name = $2;
    $$->value = std::move($4); $$->body = std::move($5); $$ = ctx.finish(std::move($$));
  }
| if_stmt { $$ = std::move($1); }
| loop_jump { $$ = std::move($1); }
| RETURN SEMI {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Return; $$->loc = ctx.loc(@1);
  }
| RETURN rhs SEMI {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Return; $$->loc = ctx.loc(@1);
    $$->value = std::move($2); $$ = ctx.finish(std::move($$));
  }
| block {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Block; $$->loc = ctx.loc(@1);
    $$->body = std::move($1); $$ = ctx.finish(std::move($$));
  }
| error SEMI { yyerrok; $$ = ctx.brokenStatement(ctx.loc(@1)); }
;

// `while cond { ... }`, `break;` and `continue;` (lang/ControlFlow.cpp).
loop_jump:
  WHILE expr block {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::While; $$->loc = ctx.loc(@1);
    $$->value = std::move($2); $$->body = std::move($3); $$ = ctx.finish(std::move($$));
  }
| BREAK SEMI { $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Break; $$->loc = ctx.loc(@1); }
| CONTINUE SEMI { $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::Continue; $$->loc = ctx.loc(@1); }
;

assign_op:
  ASSIGN { $$ = "="; }
| PLUS_ASSIGN { $$ = "+="; }
| MINUS_ASSIGN { $$ = "-="; }
| STAR_ASSIGN { $$ = "*="; }
| SLASH_ASSIGN { $$ = "/="; }
;

if_stmt:
  IF expr block else_part {
    $$ = std::make_unique<Stmt>(); $$->kind = StmtKind::If; $$->loc = ctx.loc(@1); $$->value = std::move($2);
    $$->body = std::move($3);
    $$->hasElse = $4.present;
    $$->elseBody = std::move($4.body);
    $$ = ctx.finish(std::move($$));
  }
;

else_part:
  %empty { }
| ELSE block { $$.present = true; $$.body = std::move($2); }
| ELSE if_stmt { $$.present = true; $$.body.push_back(std::move($2)); }
;

expr:
  postfix { $$ = std::move($1); }
| MINUS expr %prec UNARY { $$ = ctx.unary("-", std::move($2), ctx.loc(@1)); }
| BANG expr %prec UNARY { $$ = ctx.unary("!", std::move($2), ctx.loc(@1)); }
| TILDE expr %prec UNARY { $$ = ctx.unary("~", std::move($2), ctx.loc(@1)); }
| expr AS type {
    $$ = ctx.leaf(ExprKind::Cast, ctx.loc(@2)); $$->type = $3; $$->args.push_back(std::move($1));
    $$ = ctx.finish(std::move($$));
  }
| expr STAR expr { $$ = ctx.binary("*", std::move($1), std::move($3), ctx.loc(@2)); }
| expr SLASH expr { $$ = ctx.binary("/", std::move($1), std::move($3), ctx.loc(@2)); }
| expr PERCENT expr { $$ = ctx.binary("%", std::move($1), std::move($3), ctx.loc(@2)); }
| expr PLUS expr { $$ = ctx.binary("+", std::move($1), std::move($3), ctx.loc(@2)); }
| expr MINUS expr { $$ = ctx.binary("-", std::move($1), std::move($3), ctx.loc(@2)); }
| expr SHL expr { $$ = ctx.binary("<<", std::move($1), std::move($3), ctx.loc(@2)); }
| expr SHR expr { $$ = ctx.binary(">>", std::move($1), std::move($3), ctx.loc(@2)); }
| expr LT expr { $$ = ctx.binary("<", std::move($1), std::move($3), ctx.loc(@2)); }
| expr LE expr { $$ = ctx.binary("<=", std::move($1), std::move($3), ctx.loc(@2)); }
| expr GT expr { $$ = ctx.binary(">", std::move($1), std::move($3), ctx.loc(@2)); }
| expr GE expr { $$ = ctx.binary(">=", std::move($1), std::move($3), ctx.loc(@2)); }
| expr EQEQ expr { $$ = ctx.binary("==", std::move($1), std::move($3), ctx.loc(@2)); }
| expr NE expr { $$ = ctx.binary("!=", std::move($1), std::move($3), ctx.loc(@2)); }
| expr AMP expr { $$ = ctx.binary("&", std::move($1), std::move($3), ctx.loc(@2)); }
| expr CARET expr { $$ = ctx.binary("^", std::move($1), std::move($3), ctx.loc(@2)); }
| expr PIPE expr { $$ = ctx.binary("|", std::move($1), std::move($3), ctx.loc(@2)); }
| expr ANDAND expr { $$ = ctx.binary("&&", std::move($1), std::move($3), ctx.loc(@2)); }
| expr OROR expr { $$ = ctx.binary("||", std::move($1), std::move($3), ctx.loc(@2)); }
;

postfix:
  primary { $$ = std::move($1); }
| postfix LBRACKET index_list RBRACKET {
    $$ = ctx.leaf(ExprKind::Index, ctx.loc(@2)); $$->args.push_back(std::move($1));
    for (auto &i : $3) $$->args.push_back(std::move(i));
    $$ = ctx.finish(std::move($$));
  }
/* Triton's `x.to(T)` is `x as T` (the lexer makes DOT only before `to(`,
   `load(` and `store(`); `x.to(T, bitcast: b)` carries b as the cast's
   second operand; `fp_downcast_rounding: "rtne"` is tk's rounding anyway,
   and "rtz" is kept as the cast's text.
   A tensor descriptor's `d.load([..])` and `d.store([..], t)` are the calls
   `load(d, [..])` and `store(d, [..], t)`. */
| postfix DOT IDENT LPAREN args_opt RPAREN {
    const size_t n = $5.args.size();
    if ($3 == "load" || $3 == "store") {
      $$ = ctx.leaf(ExprKind::Call, ctx.loc(@3), $3);
      $$->args.push_back(std::move($1));
      $$->argNames.push_back("");
      $$->argNameLocs.push_back(ctx.loc(@1));
      for (size_t i = 0; i < n; ++i) {
        $$->args.push_back(std::move($5.args[i]));
        $$->argNames.push_back($5.names[i]);
        $$->argNameLocs.push_back($5.nameLocs[i]);
      }
      $$ = ctx.finish(std::move($$));
    } else {
    const bool rounding = n == 2 && $5.names[1] == "fp_downcast_rounding";
    if (rounding && ($5.args[1]->kind != ExprKind::String ||
                     ($5.args[1]->text != "rtne" && $5.args[1]->text != "rtz"))) {
      ctx.diags().error($5.args[1]->loc, "fp_downcast_rounding of '.to(...)' takes \"rtne\" (round to nearest even, "
                                         "tk's rounding) or \"rtz\" (toward zero)");
      $$ = ctx.leaf(ExprKind::Error, ctx.loc(@2));
    } else if (n >= 1 && n <= 2 && $5.names[0].empty() && $5.args[0]->kind == ExprKind::Type &&
        (n == 1 || $5.names[1] == "bitcast" || rounding)) {
      $$ = ctx.leaf(ExprKind::Cast, ctx.loc(@2)); $$->type = $5.args[0]->type; $$->args.push_back(std::move($1));
      if (n == 2 && !rounding) $$->args.push_back(std::move($5.args[1]));
      if (rounding && $5.args[1]->text == "rtz") $$->text = "rtz";
    } else {
      ctx.diags().error(ctx.loc(@2), "'.to(...)' takes one element type, as in 'x.to(f16)' (tk's 'x as f16'), "
                                     "'bitcast: true' or 'fp_downcast_rounding: \"rtne\"'");
      $$ = ctx.leaf(ExprKind::Error, ctx.loc(@2));
    }
    $$ = ctx.finish(std::move($$));
    }
  }
;

index_list:
  index { $$.push_back(std::move($1)); }
| index_list COMMA index { $$ = std::move($1); $$.push_back(std::move($3)); }
;

index:
  COLON { $$ = ctx.leaf(ExprKind::Slice, ctx.loc(@1), ":"); }
| expr { $$ = std::move($1); }
;

primary:
  INT { $$ = ctx.leaf(ExprKind::Int, ctx.loc(@1)); $$->intValue = $1; }
| FLOAT { $$ = ctx.leaf(ExprKind::Float, ctx.loc(@1)); $$->floatValue = $1; }
| TRUE { $$ = ctx.leaf(ExprKind::Bool, ctx.loc(@1), "true"); $$->intValue = 1; }
| FALSE { $$ = ctx.leaf(ExprKind::Bool, ctx.loc(@1), "false"); }
| STRING { $$ = ctx.leaf(ExprKind::String, ctx.loc(@1), $1); }
| NONE { $$ = ctx.leaf(ExprKind::None, ctx.loc(@1), "None"); }
| IDENT { $$ = ctx.leaf(ExprKind::Name, ctx.loc(@1), $1); }
| TYPENAME { $$ = ctx.leaf(ExprKind::Type, ctx.loc(@1), $1); $$->type.name = $1; $$->type.loc = ctx.loc(@1); }
/* A pointer type as a cast's argument: `bitcast(addr, *f16)`, `x.to(*f16)`. */
| STAR type { $$ = ctx.leaf(ExprKind::Type, ctx.loc(@1), $2.str()); $$->type = $2; $$->type.ptrDepth += 1; $$->type.loc = ctx.loc(@1); }
| LPAREN expr RPAREN { $$ = std::move($2); }
| LPAREN expr COMMA expr_list_opt RPAREN {
    $$ = ctx.leaf(ExprKind::Tuple, ctx.loc(@1)); $$->args.push_back(std::move($2));
    for (auto &x : $4) $$->args.push_back(std::move(x));
    $$ = ctx.finish(std::move($$));
  }
| LBRACKET expr_list_opt RBRACKET {
    $$ = ctx.leaf(ExprKind::List, ctx.loc(@1)); $$->args = std::move($2); $$ = ctx.finish(std::move($$));
  }
| call { $$ = std::move($1); }
;

// The value of a binding, an assignment or a `return`: an expression, or
// Python's unparenthesised tuple (`return a, b;`).
rhs:
  expr { $$ = std::move($1); }
| expr COMMA expr_list {
    $$ = ctx.leaf(ExprKind::Tuple, $1->loc); $$->args.push_back(std::move($1));
    for (auto &x : $3) $$->args.push_back(std::move(x));
    $$ = ctx.finish(std::move($$));
  }
;

expr_list_opt:
  %empty { }
| expr_list { $$ = std::move($1); }
| expr_list COMMA { $$ = std::move($1); }
;

expr_list:
  expr { $$.push_back(std::move($1)); }
| expr_list COMMA expr { $$ = std::move($1); $$.push_back(std::move($3)); }
;

call:
  IDENT LPAREN args_opt RPAREN {
    $$ = ctx.leaf(ExprKind::Call, ctx.loc(@1), $1); $$->args = std::move($3.args); $$->argNames = std::move($3.names);
    $$->argNameLocs = std::move($3.nameLocs); $$ = ctx.finish(std::move($$));
  }
;

args_opt:
  %empty { }
| args { $$ = std::move($1); }
| args COMMA { $$ = std::move($1); }
;

args:
  arg_value { $$.names.push_back(""); $$.nameLocs.push_back($1->loc); $$.args.push_back(std::move($1)); }
| IDENT COLON expr { $$.names.push_back($1); $$.nameLocs.push_back(ctx.loc(@1)); $$.args.push_back(std::move($3)); }
| args COMMA arg_value {
    $$ = std::move($1); $$.names.push_back(""); $$.nameLocs.push_back($3->loc); $$.args.push_back(std::move($3));
  }
| args COMMA IDENT COLON expr {
    $$ = std::move($1); $$.names.push_back($3); $$.nameLocs.push_back(ctx.loc(@3)); $$.args.push_back(std::move($5));
  }
;

arg_value:
  expr { $$ = std::move($1); }
;

%%

namespace tk::parser::yy {

Parser::symbol_type yylex(ParseContext &ctx) {
  if (auto entry = ctx.takeEntry()) {
    SrcPos l{1, 1};
    return *entry == ParseContext::Entry::Expr ? Parser::make_START_EXPR(l) : Parser::make_START_MODULE(l);
  }
  const Token &t = ctx.next();
  SrcPos l{t.loc.line, t.loc.col};
  switch (t.kind) {
    case Tok::End: return Parser::make_END(l);
    case Tok::Ident: return Parser::make_IDENT(t.text, l);
    case Tok::Int: return Parser::make_INT(t.intValue, l);
    case Tok::Float: return Parser::make_FLOAT(t.floatValue, l);
    case Tok::String: return Parser::make_STRING(t.text, l);
    case Tok::TypeName: return Parser::make_TYPENAME(t.text, l);
    // Keywords and operators carry no value: one case each, from Tokens.def.
#define TK_KEYWORD(Enum, BISON, SPELLING) case Tok::Enum: return Parser::make_##BISON(l);
#define TK_PUNCT(Enum, BISON, SPELLING) case Tok::Enum: return Parser::make_##BISON(l);
#include "parser/Tokens.def"
  }
  return Parser::make_END(l);
}

// "unexpected identifier 'foo', expected ';' or ')'". The tokens that can
// start an expression, and the binary operators, are summed up as "an
// expression" and "an operator" so the list stays short.
void Parser::report_syntax_error(const context &yyctx) const {
  if (ctx.suppressed(yyctx.location().line)) return;
  std::string msg = "unexpected ";
  symbol_kind_type got = yyctx.token();
  const Token &t = ctx.last();
  if (got == symbol_kind::S_YYEOF) {
    msg += ctx.entry() == ParseContext::Entry::Expr ? "end of the expression" : "end of file";
  } else {
    msg += symbol_name(got);
    if (t.kind == Tok::Ident || t.kind == Tok::Int || t.kind == Tok::Float || t.kind == Tok::TypeName)
      msg += " '" + (t.text.size() > 40 ? t.text.substr(0, 40) + "..." : t.text) + "'";
  }
  symbol_kind_type expected[YYNTOKENS];
  int n = yyctx.expected_tokens(expected, YYNTOKENS);
  std::vector<std::string> names;
  bool op = false, expr = false;
  for (int i = 0; i < n; ++i) expr |= expected[i] == symbol_kind::S_INT;
  auto startsExpr = [](symbol_kind_type k) {
    switch (k) {
      case symbol_kind::S_IDENT: case symbol_kind::S_TYPENAME: case symbol_kind::S_STRING:
      case symbol_kind::S_INT: case symbol_kind::S_FLOAT: case symbol_kind::S_TRUE:
      case symbol_kind::S_FALSE: case symbol_kind::S_NONE: case symbol_kind::S_LPAREN:
      case symbol_kind::S_LBRACKET: case symbol_kind::S_MINUS: case symbol_kind::S_BANG:
      case symbol_kind::S_TILDE: case symbol_kind::S_STAR: return true;  // STAR: `*f16`, a cast's type
      default: return false;
    }
  };
  for (int i = 0; i < n; ++i) {
    if (expr && startsExpr(expected[i])) continue;
    // An attribute is never what a misplaced token was meant to be, and
    // leaving '@' out keeps the messages of files without one as they were.
    // Nor is '.': the lexer makes one only before `to(` (x.to(T)).
    if (expected[i] == symbol_kind::S_AT || expected[i] == symbol_kind::S_DOT) continue;
    if (expected[i] >= symbol_kind::S_PLUS && expected[i] <= symbol_kind::S_OROR) op = true;
    else if (expected[i] == symbol_kind::S_AS || expected[i] == symbol_kind::S_LBRACKET) op = true;
    else if (expected[i] == symbol_kind::S_YYEOF && ctx.entry() == ParseContext::Entry::Expr)
      names.push_back("the end of the expression");
    else names.push_back(symbol_name(expected[i]));
  }
  if (expr) names.push_back("an expression");
  if (op) names.push_back("an operator");
  if (!names.empty() && names.size() <= 6) {
    msg += ", expected ";
    for (size_t i = 0; i < names.size(); ++i) {
      if (i) msg += i + 1 == names.size() ? " or " : ", ";
      msg += names[i];
    }
  }
  ctx.diags().error(ctx.loc(yyctx.location()), msg);
  // Triton spellings get a note with tk's (parser/TritonHints.cpp).
  if (std::string hint = syntaxErrorHint(ctx.tokens(), ctx.lastIndex()); !hint.empty())
    ctx.diags().note(ctx.loc(yyctx.location()), hint);
}

void Parser::error(const location_type &loc, const std::string &msg) { ctx.diags().error(ctx.loc(loc), msg); }

}  // namespace tk::parser::yy

namespace tk::parser {

namespace {
// Bison numbers END (token 0) as S_YYEOF; every other token as S_NAME.
struct K : yy::Parser::symbol_kind {
  static constexpr symbol_kind_type S_END = S_YYEOF;
};
}  // namespace

const char *grammarTokenName(Tok t) {
  switch (t) {
#define TK_VALUE_TOKEN(Enum, BISON, DUMP) case Tok::Enum: return yy::Parser::symbol_name(K::S_##BISON);
#define TK_KEYWORD(Enum, BISON, SPELLING) case Tok::Enum: return yy::Parser::symbol_name(K::S_##BISON);
#define TK_PUNCT(Enum, BISON, SPELLING) case Tok::Enum: return yy::Parser::symbol_name(K::S_##BISON);
#include "parser/Tokens.def"
  }
  return "";
}

}  // namespace tk::parser
