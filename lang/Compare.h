// The comparison operators of tk, applied to two host values of one type:
// shared by constant folding (lang/Typing.cpp) and host expressions
// (lang/HostExpr.cpp) so both read `<`, `==`, ... the same way.
#pragma once

#include <string>

namespace tk::lang {

// `op` is one of < <= > >= == !=.
template <typename T>
bool compareValues(const std::string &op, T a, T b) {
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  if (op == ">=") return a >= b;
  if (op == "==") return a == b;
  return a != b;
}

}  // namespace tk::lang
