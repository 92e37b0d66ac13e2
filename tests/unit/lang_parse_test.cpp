// The lexer's tokens and the parser's AST dump for small inputs, and the
// depth limits that keep both safe on pathological input.
#include <gtest/gtest.h>

#include <ctime>

#include "lang/Frontend.h"
#include "parser/Lexer.h"
#include "parser/Parser.h"

namespace tk::lang {
namespace {

std::string tokens(const std::string &src) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  fe.loadSource(src, "t.tk");
  return fe.dumpTokens();
}

TEST(LangLexer, TokensWithPositions) {
  EXPECT_EQ(tokens("let x = a[:, None] <= 0x1F;"),
            "1:1 KW_LET 'let'\n1:5 IDENT 'x'\n1:7 ASSIGN '='\n1:9 IDENT 'a'\n1:10 LBRACKET '['\n"
            "1:11 COLON ':'\n1:12 COMMA ','\n1:14 KW_NONE 'None'\n1:18 RBRACKET ']'\n1:20 LE '<='\n"
            "1:23 INT '0x1F'\n1:27 SEMI ';'\n1:28 END\n");
}

TEST(LangLexer, NumbersTypesCommentsAndStrings) {
  EXPECT_EQ(tokens("// c\n1.5 1e-5 7 /* a\n b */ f16 *bf16 \"s\\n\" && || -> += >>"),
            "2:1 FLOAT '1.5'\n2:5 FLOAT '1e-5'\n2:10 INT '7'\n3:7 TYPE 'f16'\n3:11 STAR '*'\n"
            "3:12 TYPE 'bf16'\n3:17 STRING 's\n'\n3:23 ANDAND '&&'\n3:26 OROR '||'\n3:29 ARROW '->'\n"
            "3:32 PLUS_ASSIGN '+='\n3:35 SHR '>>'\n3:37 END\n");
}

TEST(LangParser, AstDump) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  ASSERT_TRUE(fe.loadSource("kernel k(x: *f32 align(4), const B: i32 = 2 * 8) {\n"
                            "  let v = -load(x + arange(B), mask: true) as f16 * 2;\n"
                            "}\n",
                            "t.tk"))
      << diags.render();
  EXPECT_EQ(fe.dumpAst(),
            "module \"t.tk\"\n"
            "  kernel k @1:8\n"
            "    param x: *f32 align(4) @1:10\n"
            "    param const B: i32 @1:34\n"
            "      binary * @1:45\n"
            "        int 2 @1:43\n"
            "        int 8 @1:47\n"
            "    let v @2:3\n"
            "      binary * @2:51\n"
            "        cast f16 @2:44\n"
            "          unary - @2:11\n"
            "            call load @2:12\n"
            "              binary + @2:19\n"
            "                name x @2:17\n"
            "                call arange @2:21\n"
            "                  name B @2:28\n"
            "              arg mask:\n"
            "                bool true @2:38\n"
            "        int 2 @2:53\n");
}

TEST(LangParser, PrecedenceIsCLike) {
  DiagnosticEngine diags;
  Frontend fe(diags);
  ASSERT_TRUE(fe.loadSource("kernel k() { let v = a || b && c | d ^ e & f == g < h << i + j * k; }", "t.tk"));
  std::string ast = fe.dumpAst();
  // Each operator nests one level deeper than the one before it.
  const char *ops[] = {"||", "&&", "|", "^", "&", "==", "<", "<<", "+", "*"};
  size_t pos = 0;
  int indent = 0;
  for (const char *op : ops) {
    size_t at = ast.find(std::string("binary ") + op + " ", pos);
    ASSERT_NE(at, std::string::npos) << op;
    size_t lineStart = ast.rfind('\n', at) + 1;
    int ind = static_cast<int>(at - lineStart);
    EXPECT_GT(ind, indent) << op;
    indent = ind;
    pos = at;
  }
}

TEST(LangParser, WholeSketchGrammarParses) {
  // The whole statement grammar parses (checking rejects only the one
  // construct that is not supported yet, if any).
  DiagnosticEngine diags;
  Frontend fe(diags);
  fe.setFileReader([](const std::string &path) -> std::optional<std::string> {
    if (path == "a.tk") return std::string("fn g(x: f32) -> f32 { return x; }\n");
    return std::nullopt;
  });
  fe.loadSource("import \"a.tk\";\nfn f(x: f32) -> f32 { return x * 2.0; }\n"
                "kernel k(n: i32) { var acc = 0; for i in range(0, n, 2) { acc += i; }\n"
                "  if acc > 3 { acc -= 1; } else if acc < 0 { acc = 0; } else { acc *= 2; }\n"
                "  static_assert(1 < 2, \"ok\"); print(\"x\", acc); { let y = [1, 2]; } return; }\n",
                "t.tk");
  for (const Diagnostic &d : diags.diagnostics())
    EXPECT_TRUE(d.message.find("not supported yet") != std::string::npos) << d.message;
  EXPECT_NE(fe.dumpAst().find("for i"), std::string::npos);
  EXPECT_NE(fe.dumpAst().find("else"), std::string::npos);
}

TEST(LangParser, DesignSketchKernelsParse) {
  // The two seed kernels of docs' design sketch: they parse and lower as
  // written.
  const char *src = R"(
kernel layernorm_tanh_linear_relu(x: *f32, w: *f32, b: f32, out: *f32,
                                  rows: i32, eps: f32,
                                  const D: i32 = 256, const BLOCK_R: i32 = 4) {
    let r = program_id(0) * BLOCK_R + arange(BLOCK_R);
    let c = arange(D);
    let v = load(x + r[:, None] * D + c[None, :], mask: r[:, None] < rows, other: 0.0);
    let mean = sum(v, axis: 1) / D;
    let d = v - mean[:, None];
    let rstd = rsqrt(sum(d * d, axis: 1) / D + eps);
    let y = sum(tanh(d * rstd[:, None]) * load(w + c)[None, :], axis: 1) + b;
    store(out + r, relu(y), mask: r < rows);
}
kernel similarity(x: *f32, y: *f32, out: *i32, n: i32, d: i32,
                  const BI: i32 = 64, const BJ: i32 = 64) {
    let i = program_id(0) * BI + arange(BI);
    let j = program_id(1) * BJ + arange(BJ);
    var acc = zeros([BI, BJ], i32);
    for s in range(0, n) {
        let xi = load(x + s * d + i, mask: i < d);
        let yj = load(y + s * d + j, mask: j < d);
        acc += (abs(xi[:, None] - yj[None, :]) < 1.0) as i32;
    }
    store(out + i[:, None] * d + j[None, :], acc, mask: i[:, None] < d && j[None, :] < d);
}
)";
  DiagnosticEngine diags;
  Frontend fe(diags);
  ASSERT_TRUE(fe.loadSource(src, "design.tk")) << diags.render();
  ASSERT_EQ(fe.kernels().size(), 2u);
  // Both lower as written: reductions, and a runtime loop carrying a tile.
  EXPECT_NE(fe.lowerKernel("layernorm_tanh_linear_relu", {}, 4), nullptr) << diags.render();
  EXPECT_NE(fe.lowerKernel("similarity", {}, 4), nullptr) << diags.render();
  EXPECT_FALSE(diags.hasErrors()) << diags.render();
}

// "Quickly": the sanitizer build (make asan) runs several times slower. The
// bound is on this process's CPU time, not the wall clock, so that other
// jobs on a loaded machine (ctest -j, parallel builds) cannot fail it; a
// parser that went quadratic again would still take minutes.
double cpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }
#if defined(__SANITIZE_ADDRESS__)
constexpr double kQuickly = 60;
#else
constexpr double kQuickly = 5;
#endif

// Deep input is cut off by a limit, with one error, quickly.
void expectDepthError(const std::string &src, const std::string &message) {
  const double start = cpuSeconds();
  DiagnosticEngine diags;
  Frontend fe(diags);
  EXPECT_FALSE(fe.loadSource(src, "deep.tk"));
  for (const KernelSig &k : fe.kernels()) fe.lowerKernel(k.name, {}, 4);
  bool found = false;
  for (const Diagnostic &d : diags.diagnostics()) found |= d.message.find(message) != std::string::npos;
  EXPECT_TRUE(found) << diags.render().substr(0, 2000);
  EXPECT_LT(cpuSeconds() - start, kQuickly);
}

TEST(LangParser, DeepNestingIsAnError) {
  const int n = 100000;
  std::string open(n, '('), close(n, ')');
  expectDepthError("kernel k() { let a = " + open + "1" + close + "; }", "nested too deeply");
  expectDepthError("kernel k() { let a = " + std::string(n, '[') + "; }", "nested too deeply");
  expectDepthError("kernel k() " + std::string(n, '{') + std::string(n, '}'), "nested too deeply");
  std::string unary;
  for (int i = 0; i < n; ++i) unary += "- ";
  expectDepthError("kernel k() { let a = " + unary + "1; }", "nested too deeply");
  std::string chain = "1";
  for (int i = 0; i < n; ++i) chain += "+1";
  expectDepthError("kernel k() { let a = " + chain + "; }", "nested too deeply");
  std::string bang(n, '!');
  expectDepthError("kernel k() { let a = " + bang + "true; }", "nested too deeply");
  std::string elseIf = "kernel k() { if true { }";
  for (int i = 0; i < n; ++i) elseIf += " else if true { }";
  expectDepthError(elseIf + " }", "nested too deeply");
  std::string casts = "kernel k() { let a = 1";
  for (int i = 0; i < n; ++i) casts += " as f32";
  expectDepthError(casts + "; }", "nested too deeply");
  std::string idx = "kernel k() { let a = x";
  for (int i = 0; i < n; ++i) idx += "[:]";
  expectDepthError(idx + "; }", "nested too deeply");
}

TEST(LangParser, HugeTokensAndLines) {
  const double start = cpuSeconds();
  DiagnosticEngine diags;
  Frontend fe(diags);
  std::string name(1 << 20, 'a');
  fe.loadSource("kernel k() { let b = " + name + " + 1; }\n" + std::string(1 << 20, ' ') + "@", "big.tk");
  fe.lowerKernel("k", {}, 4);
  ASSERT_EQ(diags.diagnostics().size(), 2u) << diags.render().substr(0, 1000);
  EXPECT_NE(diags.diagnostics()[0].message.find("unexpected character '@'"), std::string::npos);
  EXPECT_NE(diags.diagnostics()[1].message.find("unknown name 'aaaa"), std::string::npos);
  // Long lines are shown as a window around the caret.
  std::string rendered = diags.render();
  EXPECT_LT(rendered.size(), 4096u);
  EXPECT_NE(rendered.find("...          "), std::string::npos);
  EXPECT_LT(cpuSeconds() - start, kQuickly);
}

TEST(LangParser, GarbageBytesNeverCrash) {
  std::string junk;
  uint32_t seed = 12345;
  for (int i = 0; i < (1 << 20); ++i) {
    seed = seed * 1664525u + 1013904223u;
    junk += static_cast<char>(seed >> 24);
  }
  DiagnosticEngine diags;
  Frontend fe(diags);
  EXPECT_FALSE(fe.loadSource(junk, "junk.tk"));
  EXPECT_LE(diags.errorCount(), DiagnosticEngine::kMaxErrors + 1);
  EXPECT_EQ(diags.diagnostics().back().message, "too many errors; stopping here");
  DiagnosticEngine d2;
  Frontend fe2(d2);
  EXPECT_FALSE(fe2.loadSource(std::string("kernel k() {\0}", 14), "nul.tk"));
  EXPECT_NE(d2.render().find("nul.tk:1:13: error: unexpected NUL byte"), std::string::npos) << d2.render();
}

// parser/Tokens.def is the one declaration of the tokens; grammar.y's
// %token aliases are a copy Bison needs, checked here.
struct TableToken {
  parser::Tok kind;
  const char *spelling;  // null for value tokens
};
const std::vector<TableToken> &tableTokens() {
  static const std::vector<TableToken> all = {
#define TK_VALUE_TOKEN(Enum, BISON, DUMP) {parser::Tok::Enum, nullptr},
#define TK_KEYWORD(Enum, BISON, SPELLING) {parser::Tok::Enum, SPELLING},
#define TK_PUNCT(Enum, BISON, SPELLING) {parser::Tok::Enum, SPELLING},
#include "parser/Tokens.def"
  };
  return all;
}

TEST(TokenTable, GrammarAliasesAreTheSpellings) {
  for (const TableToken &t : tableTokens()) {
    std::string grammar = parser::grammarTokenName(t.kind);
    if (t.spelling) {
      EXPECT_EQ(grammar, "'" + std::string(t.spelling) + "'") << parser::tokName(t.kind);
      EXPECT_STREQ(parser::tokSpelling(t.kind), t.spelling);
    } else {
      EXPECT_FALSE(grammar.empty()) << parser::tokName(t.kind);
      EXPECT_EQ(parser::tokSpelling(t.kind), nullptr);
    }
  }
}

TEST(TokenTable, EverySpellingLexesToItsToken) {
  for (const TableToken &t : tableTokens()) {
    if (!t.spelling) continue;
    // `@` is a token only right before an attribute's name, `.` only after
    // an operand and before `to(` (x.to(T)).
    const bool dot = t.kind == parser::Tok::Dot;
    std::string text = (dot ? "x" : "") + std::string(t.spelling) + (t.kind == parser::Tok::At ? "x" : dot ? "to(" : "");
    DiagnosticEngine diags;
    parser::LexResult r = parser::lex(text, "t.tk", diags);
    ASSERT_GE(r.tokens.size(), dot ? 3u : 2u) << text;
    if (dot) r.tokens.erase(r.tokens.begin());
    EXPECT_EQ(r.tokens[0].kind, t.kind) << text << ": " << parser::tokName(r.tokens[0].kind);
    EXPECT_EQ(r.tokens[0].text, t.spelling);
    EXPECT_EQ(diags.errorCount(), 0) << diags.render();
  }
  for (const char *type : {
#define TK_TYPE_NAME(SPELLING) SPELLING,
#include "parser/Tokens.def"
       }) {
    DiagnosticEngine diags;
    EXPECT_EQ(parser::lex(type, "t.tk", diags).tokens[0].kind, parser::Tok::TypeName) << type;
  }
}

}  // namespace
}  // namespace tk::lang
