// The comparison operators of tk, applied to two host values of one type,
// for host expressions (lang/HostExpr.cpp), which sit below the tile IR and
// so cannot use ir/Fold.h's foldCompare (constant folding's); both order as
// C does.
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
