// "did you mean": the nearest known name to an unknown one, for the
// front end's unknown-name and unknown-function errors, and what a call of
// no known function may have meant.
#include <algorithm>

#include "lang/IRGen.h"
#include "parser/TritonHints.h"

namespace tk::lang {

// The closest of `candidates` to `name`, or "": at most one edit away for
// names of up to 5 characters, two for longer ones, none for 1-2. An edit
// is an insertion, a deletion, a substitution or a swap of two neighbours
// ('sqtr' is one edit from 'sqrt'). Callers pass names of one kind only
// (functions for a call, values for a name), and a Triton built-in tk lacks
// never gets here (Builtins.cpp says so instead of guessing).
std::string IRGen::closest(const std::string &name, const std::vector<std::string> &candidates) {
  if (name.size() > 64 || name.size() <= 2) return {};
  std::string best;
  size_t bestDist = name.size() <= 5 ? 2 : 3;
  for (const std::string &c : candidates) {
    if (c == name || c.size() > name.size() + 2 || c.size() + 2 < name.size()) continue;
    // Optimal string alignment distance, three rows.
    std::vector<size_t> before(c.size() + 1), prev(c.size() + 1), row(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= name.size(); ++i) {
      row[0] = i;
      for (size_t j = 1; j <= c.size(); ++j) {
        row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (name[i - 1] != c[j - 1])});
        if (i > 1 && j > 1 && name[i - 1] == c[j - 2] && name[i - 2] == c[j - 1])
          row[j] = std::min(row[j], before[j - 2] + 1);
      }
      before.swap(prev);
      prev.swap(row);
    }
    const size_t d = prev[c.size()];
    if (d < bestDist || (d == bestDist && c < best)) {
      bestDist = d;
      best = c;
    }
  }
  return best;
}

// A call of no built-in and no fn: what it may have meant. A Triton
// built-in tk lacks says so (never a near name: `sort` is not `sqrt`).
TV IRGen::unknownCall(const ast::Expr &e) {
  const std::string &name = e.text;
  auto triton = parser::tkSpellingOf(name);
  if (lookup(name)) error(e.loc, quoted(name) + " is not a function");
  else if (triton && triton->empty())  // Triton's, and no near spelling is what was meant
    error(e.loc, "unknown function " + quoted(name) + ": tk has no Triton 'tl." + name +
                     "' yet (docs/triton.md lists what it has)");
  else if (triton && *triton != name)
    error(e.loc, "unknown function " + quoted(name) + " (Triton's 'tl." + name + "' is " + quoted(*triton) +
                     " in tk)");
  else {
    std::vector<std::string> callable = builtinNames();
    if (fnTable_)
      for (const auto &[n, d] : fnTable_->fns) callable.push_back(n);
    std::string guess = closest(name, callable);
    error(e.loc, "unknown function " + quoted(name) + (guess.empty() ? "" : " (did you mean " + quoted(guess) + "?)"));
  }
  return invalid();
}

}  // namespace tk::lang
