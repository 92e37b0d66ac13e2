// Makefile depfiles with every path escaped (see Depfile.h).
#include "Depfile.h"

#include "CppNames.h"

#include "tk/error.h"

namespace tkc {

namespace {
std::string escape(const std::string &path) {
  std::string out;
  for (char c : path) {
    if (c == '\n' || c == '\r' || c == '\\')
      // The path as a C string literal: its line breaks must not break the message.
      throw tk::Error("--depfile: cannot write the path " + cppString(path) + " in a depfile (it holds a " +
                      (c == '\\' ? "backslash" : "line break") + ")");
    if (c == '$') out += "$$";
    else if (c == ' ' || c == '\t' || c == '#' || c == ':' || c == '*' || c == '?' || c == '[') out += std::string("\\") + c;
    else out += c;
  }
  return out;
}
}  // namespace

std::string depfileText(const std::vector<std::string> &targets, const std::vector<std::string> &deps) {
  std::string d;
  for (const std::string &t : targets) d += (d.empty() ? "" : " ") + escape(t);
  d += ":";
  for (const std::string &f : deps) d += " \\\n  " + escape(f);
  return d + "\n";
}

}  // namespace tkc
