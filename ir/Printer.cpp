// Writes the tile IR's text form (see docs/ir.md, "Text form"). The parser
// in Parser.cpp reads exactly this; keep the two in step.
#include "ir/Printer.h"

#include <set>
#include <sstream>

namespace tk::ir {

bool isBareIdentifier(const std::string &s) {
  if (s.empty()) return false;
  auto head = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!head(s[0])) return false;
  for (char c : s)
    if (!head(c) && !(c >= '0' && c <= '9') && c != '.' && c != '$') return false;
  return true;
}

std::string quoteString(const std::string &s) {
  static const char *hex = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Strings go through quoteString (control characters escaped) so that every
// attribute stays on one line; numbers and lists print as attrStr does.
static std::string printAttr(const Attr &a) {
  if (auto *s = std::get_if<std::string>(&a)) return quoteString(*s);
  return attrStr(a);
}

static std::string printKey(const std::string &k) { return isBareIdentifier(k) ? k : quoteString(k); }

static std::string printAttrDict(const std::map<std::string, Attr> &attrs) {
  std::string s = "{";
  bool first = true;
  for (const auto &[k, v] : attrs) {
    s += (first ? "" : ", ") + printKey(k) + " = " + printAttr(v);
    first = false;
  }
  return s + "}";
}

static std::string printLoc(const Location &l) {
  return "loc(" + quoteString(l.file) + ":" + std::to_string(l.line) + ":" + std::to_string(l.col) + ")";
}

// A parameter name the parser accepts and that cannot collide with the
// numbered values: identifier characters, not all digits.
static std::string sanitizeParamName(const std::string &name, size_t index) {
  std::string s;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '.' || c == '$';
    s += ok ? c : '_';
  }
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) s = "arg" + (s.empty() ? std::to_string(index) : s);
  return s;
}

static void numberBlock(const Block &b, std::map<const Value *, std::string> &names, int &next) {
  for (const auto &op : b.ops()) {
    // Numbered in the order the text shows them: results, then region
    // arguments and the regions' ops.
    for (const Value *r : op->results()) names[r] = "%" + std::to_string(next++);
    for (const auto &region : op->regions()) {
      for (const auto &arg : region->arguments()) names[arg.get()] = "%" + std::to_string(next++);
      numberBlock(*region, names, next);
    }
  }
}

ValueNames::ValueNames(const Function &fn) {
  std::set<std::string> used;
  for (size_t i = 0; i < fn.body.arguments().size(); ++i) {
    std::string base = sanitizeParamName(i < fn.params.size() ? fn.params[i].name : "", i);
    std::string name = base;
    for (int k = 1; used.count(name); ++k) name = base + "_" + std::to_string(k);
    used.insert(name);
    paramNames_.push_back(name);
    names_[fn.body.argument(i)] = "%" + name;
  }
  int next = 0;
  numberBlock(fn.body, names_, next);
}

std::string ValueNames::operator()(const Value *v) const {
  auto it = names_.find(v);
  return it == names_.end() ? "%<unknown>" : it->second;
}

namespace {

// "%a, %b = " (nothing for an op without results).
std::string resultNames(const Op &op, const ValueNames &names) {
  std::string s;
  for (size_t i = 0; i < op.numResults(); ++i) s += (i ? ", " : "") + names(op.result(i));
  return s.empty() ? s : s + " = ";
}

// " : t1, t2" (nothing for an op without results).
std::string resultTypes(const Op &op) {
  std::string s;
  for (size_t i = 0; i < op.numResults(); ++i) s += (i ? ", " : " : ") + op.result(i)->type().str();
  return s;
}

class Printer {
 public:
  Printer(const Function &fn, const PrintOptions &opts) : fn_(fn), opts_(opts), names_(fn) {}

  std::string run() {
    out_ << "kernel @" << (isBareIdentifier(fn_.name) ? fn_.name : quoteString(fn_.name)) << "(";
    for (size_t i = 0; i < fn_.body.arguments().size(); ++i) {
      const Value *arg = fn_.body.argument(i);
      out_ << (i ? ", " : "") << names_(arg) << ": " << arg->type().str();
      if (i < fn_.params.size() && fn_.params[i].align)
        out_ << " {align = " << fn_.params[i].align << "}";
      if (i < fn_.params.size() && fn_.params[i].divisibility)
        out_ << " {div = " << fn_.params[i].divisibility << "}";
    }
    out_ << ")";
    if (!fn_.attrs.empty()) out_ << " " << printAttrDict(fn_.attrs);
    if (opts_.locations && fn_.loc.known()) out_ << " " << printLoc(fn_.loc);
    out_ << " {\n";
    printOps(fn_.body, 1);
    out_ << "}\n";
    return out_.str();
  }

 private:
  void indent(int depth) {
    for (int i = 0; i < depth; ++i) out_ << "  ";
  }

  void printOps(const Block &b, int depth) {
    for (const auto &op : b.ops()) printOp(*op, depth);
  }

  void printOp(const Op &op, int depth) {
    indent(depth);
    out_ << resultNames(op, names_);
    out_ << op.info().mnemonic;
    for (size_t i = 0; i < op.numOperands(); ++i) out_ << (i ? ", " : " ") << names_(op.operand(i));
    auto &regions = op.regions();
    if (!regions.empty()) {
      out_ << " (";
      for (size_t r = 0; r < regions.size(); ++r) {
        out_ << (r ? ", {\n" : "{\n");
        const Block &region = *regions[r];
        if (!region.arguments().empty()) {
          indent(depth);
          out_ << "^(";
          for (size_t i = 0; i < region.arguments().size(); ++i) {
            const Value *arg = region.argument(i);
            out_ << (i ? ", " : "") << names_(arg) << ": " << arg->type().str();
          }
          out_ << "):\n";
        }
        printOps(region, depth + 1);
        indent(depth);
        out_ << "}";
      }
      out_ << ")";
    }
    if (!op.attrs().empty()) out_ << " " << printAttrDict(op.attrs());
    out_ << resultTypes(op);
    if (opts_.locations && op.loc().known()) out_ << " " << printLoc(op.loc());
    if (opts_.nameHints && op.numResults() == 1 && isBareIdentifier(op.result()->nameHint()))
      out_ << "  // " << op.result()->nameHint();
    out_ << "\n";
  }

  const Function &fn_;
  const PrintOptions &opts_;
  ValueNames names_;
  std::ostringstream out_;
};

}  // namespace

std::string printFunction(const Function &fn, const PrintOptions &opts) { return Printer(fn, opts).run(); }

std::string printModule(const Module &module, const PrintOptions &opts) {
  std::string s;
  for (size_t i = 0; i < module.functions.size(); ++i) {
    if (i) s += "\n";
    s += printFunction(*module.functions[i], opts);
  }
  return s;
}

std::string printOpSummary(const Op &op, const ValueNames &names) {
  std::string s = resultNames(op, names);
  s += op.info().mnemonic;
  for (size_t i = 0; i < op.numOperands(); ++i) s += (i ? ", " : " ") + names(op.operand(i));
  if (!op.regions().empty()) s += " ({...})";
  if (!op.attrs().empty()) s += " " + printAttrDict(op.attrs());
  return s + resultTypes(op);
}

}  // namespace tk::ir
