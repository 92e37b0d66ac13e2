// Names, strings and numbers written into generated launchers (see CppNames.h).
#include "CppNames.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "tk/error.h"

namespace tkc {

namespace {

// C++20's keywords and alternative tokens.
const std::set<std::string> kKeywords = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
    "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
    "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
    "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
    "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short", "signed",
    "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw",
    "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
    "wchar_t", "while", "xor", "xor_eq", "restrict", "_Bool"};

// Macros a C or C++ program commonly has defined (the C library's, glibc's,
// compilers' predefined ones), which would rewrite the name.
const std::set<std::string> kMacros = {
    "NULL", "EOF", "BUFSIZ", "FILENAME_MAX", "assert", "errno", "stdin", "stdout", "stderr", "major", "minor",
    "makedev", "unix", "linux", "i386", "offsetof", "setjmp", "va_arg", "va_start", "va_end", "va_copy", "INFINITY",
    "NAN", "HUGE_VAL", "INT_MAX", "INT_MIN", "UINT_MAX", "LONG_MAX", "SIZE_MAX", "CHAR_BIT", "RAND_MAX", "EXIT_SUCCESS",
    "EXIT_FAILURE", "M_PI", "M_E", "min", "max", "isnan", "isinf", "signbit", "fpclassify", "alloca", "TRUE", "FALSE",
    "TK_OK"};

// Names the launcher declares beside the parameters (its functions'
// parameters, its namespace's helpers and the types it uses), which a
// parameter or kernel of that name would collide with. Its locals are all
// named tk_*, a prefix kernels and parameters may not take.
const std::set<std::string> kLauncherNames = {
    "s", "grid", "config", "gridOf", "GridOf", "device", "stream", "error", "library", "kBundles", "tk", "std",
    "size_t", "uintptr_t", "uint64_t", "int64_t", "int32_t", "int16_t", "int8_t", "uint32_t", "uint16_t", "uint8_t",
    "main"};

bool isIdentifier(const std::string &n) {
  if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) return false;
  for (char c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// Why `name` cannot stand for itself in the generated C++, or "".
std::string whyNot(const std::string &name) {
  if (!isIdentifier(name)) return "is not a C++ identifier";
  if (kKeywords.count(name)) return "is a C++ keyword";
  if (name.find("__") != std::string::npos || (name[0] == '_' && name.size() > 1 && std::isupper(name[1])))
    return "is reserved to the C++ implementation";
  if (kMacros.count(name)) return "is a macro common C and C++ programs define";
  if (kLauncherNames.count(name)) return "is a name the generated launcher uses itself";
  if (name.compare(0, 3, "tk_") == 0) return "starts with tk_, which the generated launcher keeps for its own names";
  // kBundle0, kCubin0_sm_80, kCubins0: the embedded data.
  auto numbered = [&](const std::string &prefix) {
    return name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
           std::isdigit(static_cast<unsigned char>(name[prefix.size()]));
  };
  if (numbered("kBundle") || numbered("kCubin") || numbered("kCubins")) return "is a name the generated launcher uses itself";
  return "";
}

}  // namespace

void checkCppNames(const std::vector<std::pair<std::string, std::vector<tk::KernelParam>>> &kernels,
                   const std::string &lib, const std::string &base) {
  for (char c : base)
    if (std::iscntrl(static_cast<unsigned char>(c)) || c == '"' || c == '\\')
      throw tk::Error("--emit cpp: the output name '" + base +
                      "' cannot be #included (it holds a quote, backslash or control character)");
  // Every file-level name the launchers declare, and who declares it.
  std::map<std::string, std::string> declared;
  auto declare = [&](const std::string &name, const std::string &by) {
    auto [it, fresh] = declared.emplace(name, by);
    if (!fresh)
      throw tk::Error("--emit cpp: " + by + " would declare '" + name + "', as " + it->second +
                      " does; rename one (or the output)");
  };
  for (const char *suffix : {"_hash", "_detail", "_load", "_unload", "_load_c", "_unload_c"})
    declare(lib + suffix, "the output '" + base + "'");
  for (const auto &[kernel, params] : kernels) {
    if (std::string why = whyNot(kernel); !why.empty())
      throw tk::Error("--emit cpp: kernel name '" + kernel + "' " + why + "; rename the kernel");
    const std::string by = "kernel '" + kernel + "'";
    for (const char *suffix : {"", "_config", "_select", "_c", "_c_stream"}) declare(kernel + suffix, by);
    for (const tk::KernelParam &p : params) {
      if (std::string why = whyNot(p.name); !why.empty())
        throw tk::Error("--emit cpp: kernel '" + kernel + "': parameter name '" + p.name + "' " + why +
                        "; rename the parameter");
      if (p.name == kernel || p.name == kernel + "_config" || p.name == kernel + "_select" || p.name == lib + "_detail" ||
          p.name == lib + "_hash")
        throw tk::Error("--emit cpp: kernel '" + kernel + "': parameter name '" + p.name +
                        "' is a name the generated launcher uses itself; rename the parameter");
    }
  }
}

std::string cppString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (std::iscntrl(u) || c == '?') {  // '?': no trigraph, whatever the compiler's mode
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string cppComment(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '/' && !out.empty() && out.back() == '*') out += ' ';  // "*/" would end a /* comment
    out += std::iscntrl(static_cast<unsigned char>(c)) ? '?' : c;
  }
  return out;
}

std::string cppNumber(const std::string &value, const std::string &what) {
  if (value == "true") return "1";
  if (value == "false") return "0";
  const char *begin = value.c_str();
  char *end = nullptr;
  const double d = std::strtod(begin, &end);
  if (value.empty() || end != begin + value.size() || !std::isfinite(d) || std::isspace(static_cast<unsigned char>(value[0])))
    throw tk::Error(what + ": '" + cppComment(value) + "' is not a number");
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  std::string out = buf;
  // A double literal even when the value is whole ("4096" -> "4096.0").
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

// A raw string literal of `text`, its delimiter chosen not to occur in it.
std::string rawLiteral(const std::string &text) {
  std::string delim = "tk";
  for (int i = 0; text.find(")" + delim + "\"") != std::string::npos; ++i) delim = "tk" + std::to_string(i);
  return "R\"" + delim + "(" + text + ")" + delim + "\"";
}

// `bytes` as the initialiser of an unsigned char array, 16 a line.
std::string byteArray(const std::vector<char> &bytes) {
  std::string out = "{";
  char hex[16];
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(hex, sizeof hex, "%s0x%02x,", i % 16 ? " " : "\n    ", static_cast<unsigned char>(bytes[i]));
    out += hex;
  }
  return out + "\n}";
}

}  // namespace tkc
