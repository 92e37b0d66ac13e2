// A recursive-descent reader of the tile IR's text form, character by
// character (tile types like `tile<64x128xf32>` do not split into ordinary
// tokens). Each grammar rule sits above the function that parses it. Errors
// unwind as tk::IRParseError, "file:line:col: error: ...".
#include "ir/Parser.h"

#include <charconv>
#include <set>
#include <stdexcept>

#include "ir/Printer.h"

namespace tk::ir {
namespace {

// Nesting (regions, slice layouts) deeper than this is refused rather than
// risking the stack on hostile input. The front end nests up to 256
// statements deep and 128 guards of possible jumps (lang/Jumps.cpp).
constexpr int kMaxDepth = 512;

bool isIdentHead(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentHead(c) || isDigit(c) || c == '.' || c == '$'; }

class Parser {
 public:
  Parser(const std::string &text, const std::string &file) : src_(text), file_(file) {}

  // module ::= function*
  std::unique_ptr<Module> parseModule() {
    auto module = std::make_unique<Module>();
    std::set<std::string> names;
    ws();
    while (!atEnd()) {
      size_t start = pos_;
      auto fn = parseFunction();
      if (!names.insert(fn->name).second) fail(start, "redefinition of kernel @" + fn->name);
      module->functions.push_back(std::move(fn));
      ws();
    }
    return module;
  }

  std::string format(size_t pos, const std::string &message) const {
    int line = 1, col = 1;
    for (size_t i = 0; i < pos && i < src_.size(); ++i) {
      if (src_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return file_ + ":" + std::to_string(line) + ":" + std::to_string(col) + ": error: " + message;
  }

 private:
  // ------------------------------------------------------------ lexing

  bool atEnd() const { return pos_ >= src_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }
  bool startsWith(const char *s) const { return src_.compare(pos_, std::char_traits<char>::length(s), s) == 0; }

  [[noreturn]] void fail(size_t pos, const std::string &msg) const { throw IRParseError(format(pos, msg)); }
  [[noreturn]] void fail(const std::string &msg) const { fail(pos_, msg); }

  std::string describeHere() const {
    if (atEnd()) return "end of input";
    char c = peek();
    if (c == '\n') return "end of line";
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return "a non-printable character";
    return "'" + std::string(1, c) + "'";
  }

  // Spaces, newlines and `//` comments.
  void ws() {
    while (!atEnd()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '/' && peek(1) == '/') {
        while (!atEnd() && peek() != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  // Spaces on the current line only.
  void wsLine() {
    while (peek() == ' ' || peek() == '\t' || peek() == '\r') ++pos_;
  }

  bool consume(char c) {
    ws();
    if (peek() != c || atEnd()) return false;
    ++pos_;
    return true;
  }

  void expect(char c, const char *what = nullptr) {
    if (!consume(c))
      fail(std::string("expected '") + c + "'" + (what ? std::string(" ") + what : "") + ", found " + describeHere());
  }

  // ident ::= [A-Za-z_][A-Za-z0-9_.$]*
  std::string identifier(const char *what) {
    ws();
    if (!isIdentHead(peek())) fail(std::string("expected ") + what + ", found " + describeHere());
    size_t start = pos_;
    while (isIdentChar(peek())) ++pos_;
    return src_.substr(start, pos_ - start);
  }

  void keyword(const char *kw) {
    ws();
    size_t start = pos_;
    std::string quoted = std::string("'") + kw + "'";
    std::string id = identifier(quoted.c_str());
    if (id != kw) fail(start, std::string("expected '") + kw + "', found '" + id + "'");
  }

  // int ::= '-'? [0-9]+
  int64_t integer(const char *what) {
    ws();
    size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (!isDigit(peek())) fail(start, std::string("expected ") + what + ", found " + describeHere());
    while (isDigit(peek())) ++pos_;
    int64_t v = 0;
    auto r = std::from_chars(src_.data() + start, src_.data() + pos_, v);
    if (r.ec != std::errc() || r.ptr != src_.data() + pos_) fail(start, std::string(what) + " out of range");
    return v;
  }

  int smallInt(const char *what) {
    size_t start = pos_;
    int64_t v = integer(what);
    if (v < -(1 << 30) || v > (1 << 30)) fail(start, std::string(what) + " out of range");
    return static_cast<int>(v);
  }

  // string ::= '"' (char | '\' ('"' | '\' | 'n' | 't' | 'x' hex hex))* '"'
  std::string stringLiteral() {
    ws();
    if (peek() != '"') fail("expected a string, found " + describeHere());
    size_t start = pos_++;
    std::string out;
    while (true) {
      if (atEnd() || peek() == '\n') fail(start, "unterminated string");
      char c = src_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      char e = peek();
      ++pos_;
      if (e == '"' || e == '\\') {
        out += e;
      } else if (e == 'n') {
        out += '\n';
      } else if (e == 't') {
        out += '\t';
      } else if (e == 'x') {
        auto hex = [&](char h) -> int {
          if (isDigit(h)) return h - '0';
          if (h >= 'a' && h <= 'f') return h - 'a' + 10;
          if (h >= 'A' && h <= 'F') return h - 'A' + 10;
          fail(pos_, "expected two hex digits after \\x");
        };
        int hi = hex(peek()), lo = hex(peek(1));
        pos_ += 2;
        out += static_cast<char>(hi * 16 + lo);
      } else {
        fail(pos_ - 2, "unknown escape in string");
      }
    }
  }

  // value-name ::= '%' [A-Za-z0-9_.$]+
  std::string valueName() {
    ws();
    if (peek() != '%') fail("expected a value name '%...', found " + describeHere());
    size_t start = pos_++;
    while (isIdentChar(peek())) ++pos_;
    if (pos_ == start + 1) fail(start, "expected a name after '%'");
    return src_.substr(start, pos_ - start);
  }

  // ------------------------------------------------------------ values

  Value *lookup(const std::string &name, size_t at) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) return found->second;
    }
    fail(at, "use of undefined value " + name);
  }

  void define(const std::string &name, Value *v, size_t at) {
    for (auto &scope : scopes_)
      if (scope.count(name)) fail(at, "redefinition of value " + name);
    scopes_.back()[name] = v;
  }

  // ------------------------------------------------------------ types

  // scalar ::= 'i1' | 'i8' | 'i16' | 'i32' | 'i64' | 'f16' | 'bf16' | 'f32' | 'f64' | 'f8e4m3' | 'f8e5m2'
  ScalarKind scalar() {
    ws();
    size_t start = pos_;
    std::string id = identifier("a type");
    auto k = scalarFromName(id);
    if (!k) fail(start, "unknown element type '" + id + "'");
    return *k;
  }

  // elem ::= scalar | 'ptr' '<' elem '>'     (at most kMaxPtrDepth deep)
  ElemType elemType(int depth = 0) {
    ws();
    if (startsWith("ptr<")) {
      size_t start = pos_;
      if (depth == kMaxPtrDepth)
        fail(start, "pointers nest at most " + std::to_string(kMaxPtrDepth) + " deep ('ptr<ptr<f32>>')");
      pos_ += 3;
      expect('<');
      ElemType e = elemType(depth + 1).pointer();
      expect('>', "to close 'ptr<'");
      return e;
    }
    return ElemType{scalar(), 0};
  }

  // type ::= elem | 'tile' '<' (int 'x')+ elem [',' layout] '>'
  Type type() {
    ws();
    if (!startsWith("tile<")) {
      if (isIdentHead(peek()) || atEnd()) return Type{elemType(), {}, nullptr};
      fail("expected a type, found " + describeHere());
    }
    pos_ += 5;
    Type t;
    ws();
    do {
      size_t start = pos_;
      if (!isDigit(peek())) fail("expected a tile dimension, found " + describeHere());
      while (isDigit(peek())) ++pos_;
      int64_t d = 0;
      auto r = std::from_chars(src_.data() + start, src_.data() + pos_, d);
      if (r.ec != std::errc() || d > (int64_t(1) << 40)) fail(start, "tile dimension out of range");
      t.shape.push_back(d);
      if (peek() != 'x') fail("expected 'x' after a tile dimension, found " + describeHere());
      ++pos_;
    } while (isDigit(peek()));
    t.elem = elemType();
    if (consume(',')) t.layout = layout(0);
    expect('>', "to close 'tile<'");
    return t;
  }

  std::vector<int> intList() {
    expect('[');
    std::vector<int> v;
    if (consume(']')) return v;
    do v.push_back(smallInt("an integer")); while (consume(','));
    expect(']');
    return v;
  }

  // layout ::= '#blocked' '<' list ',' list ',' list ',' list '>'
  //          | '#slice' '<' int ',' layout '>'
  LayoutRef layout(int depth) {
    if (depth > kMaxDepth) fail("layout nested too deeply");
    ws();
    size_t start = pos_;
    if (!consume('#')) fail("expected a layout '#blocked<...>' or '#slice<...>', found " + describeHere());
    std::string kind = identifier("a layout kind");
    expect('<');
    LayoutRef l;
    if (kind == "blocked") {
      auto spt = intList();
      expect(',');
      auto tpw = intList();
      expect(',');
      auto wpc = intList();
      expect(',');
      auto order = intList();
      l = Layout::blocked(std::move(spt), std::move(tpw), std::move(wpc), std::move(order));
    } else if (kind == "slice") {
      int dim = smallInt("a slice dimension");
      expect(',');
      l = Layout::slice(dim, layout(depth + 1));
    } else {
      fail(start, "unknown layout '#" + kind + "'");
    }
    expect('>', "to close the layout");
    return l;
  }

  // ------------------------------------------------------------ attributes

  // attr ::= int | float | string | '[' [int (',' int)*] ']'
  // float ::= a number with '.', 'e' or 'E'; 'inf'; 'nan' (each may be negative)
  Attr attrValue() {
    ws();
    if (peek() == '"') return stringLiteral();
    if (peek() == '[') {
      ++pos_;
      std::vector<int64_t> v;
      if (consume(']')) return v;
      do v.push_back(integer("an integer")); while (consume(','));
      expect(']', "to close the list");
      return v;
    }
    size_t start = pos_;
    if (peek() == '-' || peek() == '+') ++pos_;
    while (isDigit(peek()) || isIdentHead(peek()) || peek() == '.' ||
           ((peek() == '-' || peek() == '+') && (src_[pos_ - 1] == 'e' || src_[pos_ - 1] == 'E')))
      ++pos_;
    std::string tok = src_.substr(start, pos_ - start);
    if (tok.empty() || tok == "-" || tok == "+") fail(start, "expected an attribute value, found " + describeHere());
    std::string body = tok[0] == '-' || tok[0] == '+' ? tok.substr(1) : tok;
    bool isFloatTok = body == "inf" || body == "nan" || tok.find_first_of(".eE") != std::string::npos;
    if (!isFloatTok) {
      bool digits = !body.empty();
      for (char c : body) digits = digits && isDigit(c);
      if (!digits || tok[0] == '+') fail(start, "invalid attribute value '" + tok + "'");
      int64_t v = 0;
      auto r = std::from_chars(tok.data(), tok.data() + tok.size(), v);
      if (r.ec != std::errc() || r.ptr != tok.data() + tok.size()) fail(start, "integer out of range: " + tok);
      return v;
    }
    if (tok[0] == '+' || !(isDigit(body[0]) || body == "inf" || body == "nan"))
      fail(start, "invalid number '" + tok + "'");
    double d = 0;
    auto r = std::from_chars(tok.data(), tok.data() + tok.size(), d);
    if (r.ec != std::errc() || r.ptr != tok.data() + tok.size()) fail(start, "invalid float '" + tok + "'");
    return d;
  }

  // attr-dict ::= '{' [key '=' attr (',' key '=' attr)*] '}'
  // key ::= ident | string
  std::map<std::string, Attr> attrDict() {
    expect('{');
    std::map<std::string, Attr> attrs;
    if (consume('}')) return attrs;
    do {
      ws();
      size_t start = pos_;
      std::string key = peek() == '"' ? stringLiteral() : identifier("an attribute name");
      expect('=', "after the attribute name");
      if (attrs.count(key)) fail(start, "duplicate attribute '" + key + "'");
      attrs[key] = attrValue();
    } while (consume(','));
    expect('}', "to close the attributes");
    return attrs;
  }

  // loc ::= 'loc' '(' string ':' int ':' int ')'
  // On the line it annotates, so that a trailing `// hint` is not skipped.
  bool atLoc() {
    wsLine();
    return startsWith("loc(") || (startsWith("loc") && !isIdentChar(peek(3)));
  }
  Location location() {
    keyword("loc");
    expect('(');
    Location l;
    l.file = stringLiteral();
    expect(':');
    l.line = smallInt("a line number");
    expect(':');
    l.col = smallInt("a column number");
    expect(')', "to close 'loc('");
    return l;
  }

  // ------------------------------------------------------------ ops

  // region ::= '{' ['^' '(' value-name ':' type (',' ...)* ')' ':'] op* '}'
  std::unique_ptr<Block> region(int depth) {
    if (depth > kMaxDepth) fail("regions nested too deeply");
    expect('{');
    auto block = std::make_unique<Block>();
    scopes_.emplace_back();
    if (consume('^')) {
      expect('(');
      if (!consume(')')) {
        do {
          size_t at = (ws(), pos_);
          std::string name = valueName();
          expect(':');
          define(name, block->addArgument(type()), at);
        } while (consume(','));
        expect(')', "to close the region arguments");
      }
      expect(':', "after the region arguments");
    }
    opsUntilBrace(*block, depth);
    scopes_.pop_back();
    return block;
  }

  void opsUntilBrace(Block &block, int depth) {
    while (true) {
      ws();
      if (atEnd()) fail("expected '}' to close the block, found end of input");
      if (consume('}')) return;
      block.push_back(op(depth));
    }
  }

  // op ::= [value-name (',' value-name)* '='] mnemonic [value-name (',' value-name)*]
  //        ['(' region (',' region)* ')'] [attr-dict] [':' type (',' type)*] [loc] ['//' name-hint]
  std::unique_ptr<Op> op(int depth) {
    ws();
    size_t start = pos_;
    std::vector<std::pair<std::string, size_t>> resultNames;
    if (peek() == '%') {
      do {
        ws();
        size_t at = pos_;
        resultNames.push_back({valueName(), at});
      } while (consume(','));
      expect('=', "after the result names");
    }
    ws();
    size_t mnemonicPos = pos_;
    std::string mnemonic = identifier("an op name");
    auto kind = opFromMnemonic(mnemonic);
    if (!kind) fail(mnemonicPos, "unknown op '" + mnemonic + "'");
    const OpInfo &info = opInfo(*kind);
    if (info.numResults == 1 && resultNames.size() != 1)
      fail(start, "op '" + mnemonic + "' has a result: expected '%name = " + mnemonic + " ...'");
    if (info.numResults == 0 && !resultNames.empty()) fail(start, "op '" + mnemonic + "' has no result");

    // Operands start on the op's line, so that `return` on its own line is
    // not read as taking the next line's result as an operand.
    std::vector<Value *> operands;
    wsLine();
    if (peek() == '%') {
      do {
        ws();
        size_t at = pos_;
        operands.push_back(lookup(valueName(), at));
      } while (consume(','));
    }
    std::vector<std::unique_ptr<Block>> regions;
    ws();
    if (peek() == '(') {
      ++pos_;
      do regions.push_back(region(depth + 1)); while (consume(','));
      expect(')', "to close the regions");
    }
    std::map<std::string, Attr> attrs;
    ws();
    if (peek() == '{') attrs = attrDict();
    std::vector<Type> resultTypes;
    if (!resultNames.empty()) {
      if (!consume(':')) fail("expected ': type' after op '" + mnemonic + "', found " + describeHere());
      // The types end on the op's line: a `// name` hint may follow.
      resultTypes.push_back(type());
      for (wsLine(); peek() == ','; wsLine()) {
        ++pos_;
        resultTypes.push_back(type());
      }
      if (resultTypes.size() != resultNames.size())
        fail("op '" + mnemonic + "' names " + std::to_string(resultNames.size()) + " results but gives " +
             std::to_string(resultTypes.size()) + " types");
    } else if (consume(':')) {
      fail(pos_ - 1, "op '" + mnemonic + "' has no result, so no type");
    }
    Location loc;
    if (atLoc()) loc = location();

    auto op = std::make_unique<Op>(*kind, std::move(operands), std::nullopt, loc);
    op->attrs() = std::move(attrs);
    for (auto &r : regions) {
      r->setParentOp(op.get());
      op->regions().push_back(std::move(r));
    }
    for (size_t i = 0; i < resultNames.size(); ++i)
      define(resultNames[i].first, op->addResult(resultTypes[i]), resultNames[i].second);
    if (op->numResults() == 1) {
      // `// name` right after the op on its line is the result's name hint.
      wsLine();
      if (peek() == '/' && peek(1) == '/') {
        size_t from = pos_ + 2;
        size_t end = src_.find('\n', from);
        if (end == std::string::npos) end = src_.size();
        std::string hint = src_.substr(from, end - from);
        while (!hint.empty() && (hint.front() == ' ' || hint.front() == '\t')) hint.erase(0, 1);
        while (!hint.empty() && (hint.back() == ' ' || hint.back() == '\t' || hint.back() == '\r')) hint.pop_back();
        if (isBareIdentifier(hint)) op->result()->setNameHint(hint);
        pos_ = end;
      }
    }
    return op;
  }

  // ------------------------------------------------------------ functions

  // function ::= 'kernel' '@' (ident | string) '(' [param (',' param)*] ')'
  //              [attr-dict] [loc] '{' op* '}'
  // param    ::= value-name ':' type ['{' 'align' '=' int '}']
  std::unique_ptr<Function> parseFunction() {
    keyword("kernel");
    auto fn = std::make_unique<Function>();
    expect('@', "before the kernel name");
    fn->name = peek() == '"' ? stringLiteral() : identifier("a kernel name");
    scopes_.assign(1, {});
    expect('(');
    if (!consume(')')) {
      do {
        ws();
        size_t at = pos_;
        std::string name = valueName();
        expect(':', "after the parameter name");
        Type t = type();
        int64_t align = 0, divisibility = 0;
        if (consume('{')) {
          size_t keyAt = (ws(), pos_);
          std::string key = identifier("'align' or 'div'");
          if (key != "align" && key != "div") fail(keyAt, "unknown parameter attribute (only 'align' and 'div')");
          expect('=');
          size_t valAt = (ws(), pos_);
          int64_t v = integer(key == "align" ? "an alignment" : "a divisor");
          if (v <= 0) fail(valAt, key == "align" ? "alignment must be positive" : "a divisor must be positive");
          (key == "align" ? align : divisibility) = v;
          expect('}');
        }
        define(name, fn->addParam(name.substr(1), t, align), at);
        fn->params.back().divisibility = divisibility;
      } while (consume(','));
      expect(')', "to close the parameters");
    }
    // `{` opens the attributes when a key and '=' follow (or it is empty and
    // the body follows), else the body.
    ws();
    if (peek() == '{' && braceOpensAttrs()) fn->attrs = attrDict();
    if (atLoc()) fn->loc = location();
    expect('{', "to open the kernel body");
    opsUntilBrace(fn->body, 0);
    scopes_.clear();
    return fn;
  }

  bool braceOpensAttrs() {
    size_t save = pos_;
    ++pos_;
    ws();
    bool attrs = false;
    if (peek() == '}') {
      ++pos_;
      ws();
      attrs = peek() == '{' || startsWith("loc");
    } else if (peek() == '"') {
      attrs = true;
    } else if (isIdentHead(peek())) {
      while (isIdentChar(peek())) ++pos_;
      ws();
      attrs = peek() == '=';
    }
    pos_ = save;
    return attrs;
  }

  const std::string &src_;
  std::string file_;
  size_t pos_ = 0;
  std::vector<std::map<std::string, Value *>> scopes_;
};

}  // namespace

std::unique_ptr<Module> parseModule(const std::string &text, const std::string &filename) {
  Parser p(text, filename);
  try {
    return p.parseModule();
  } catch (const IRParseError &) {
    throw;
  } catch (const std::exception &e) {
    throw IRParseError(filename + ":1:1: error: " + e.what());
  }
}

std::unique_ptr<Module> parseModule(const std::string &text, const std::string &filename, std::string &error) {
  try {
    auto m = parseModule(text, filename);
    error.clear();
    return m;
  } catch (const IRParseError &e) {
    error = e.what();
  }
  return nullptr;
}

}  // namespace tk::ir
