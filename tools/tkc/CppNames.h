// What `tkc compile --emit cpp` writes into C++ from its inputs: names of
// kernels and parameters checked against C++ keywords, common macros and the
// launcher's own names; strings escaped; numbers written canonically;
// comment text kept on one line. Nothing from a .tk file, a file name or a
// tuning table reaches the generated code unchecked.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tk/compiler.h"

namespace tkc {

// Throws tk::Error naming the identifier when a kernel's or a parameter's
// name would not be that name in the generated C++ (a keyword, a reserved
// name, a common macro, a name the launcher declares, one kernel's derived
// name equal to another's), or when `lib` (from the -o file name) cannot
// name a C++ namespace and two #include lines.
void checkCppNames(const std::vector<std::pair<std::string, std::vector<tk::KernelParam>>> &kernels,
                   const std::string &lib, const std::string &base);

// `s` as a C++ string literal: quotes, backslashes and every control
// character escaped.
std::string cppString(const std::string &s);

// `s` fit for a // or /* comment: control characters (a newline would end
// the comment and start code) shown as '?', and "*/" broken up.
std::string cppComment(const std::string &s);

// A tuning-table key value as a C++ double literal; tk::Error naming
// `what` unless it is a finite number (or true/false).
std::string cppNumber(const std::string &value, const std::string &what);

// A raw string literal of `text`, its delimiter chosen not to occur in it.
std::string rawLiteral(const std::string &text);

// `bytes` as the initialiser of an unsigned char array, 16 a line.
std::string byteArray(const std::vector<char> &bytes);

}  // namespace tkc
