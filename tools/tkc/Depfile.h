// Makefile depfiles (`tkc compile --depfile`): each path escaped by make's
// rules, so a file name cannot add a target, a variable or a recipe.
#pragma once

#include <string>
#include <vector>

namespace tkc {

// "T1 T2: D1 D2 ..." with every path escaped: a space, tab, '#', ':' and
// the wildcards '*?[' take a backslash, '$' doubles. A path with a newline,
// carriage return or backslash has no make spelling that both make and
// ninja read alike: tk::Error naming it.
std::string depfileText(const std::vector<std::string> &targets, const std::vector<std::string> &deps);

}  // namespace tkc
