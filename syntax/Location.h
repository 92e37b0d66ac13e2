// A position in a .tk (or .tir) source: what every diagnostic, AST node and
// tile-IR op carries, so an error anywhere in the pipeline names its line.
#pragma once

#include <string>

namespace tk {

// A source location; file names are interned by the front end.
struct Location {
  std::string file;  // empty: unknown
  int line = 0, col = 0;
  bool known() const { return line > 0; }
  std::string str() const;  // "file:line:col" or "<unknown>"
  // The inverse of str() for a known location: "file:line:col" -> the
  // location; text without two numbered fields gives {text, 0, 0}. The sim
  // reads it back from `!tk.loc` (lower/LocMetadata.h).
  static Location parse(const std::string &text);
};

}  // namespace tk
