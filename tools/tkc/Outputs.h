// tkc's commands write their outputs through one function (the one output
// writer of runtime/OutputFiles.h): all or none.
#pragma once

#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "runtime/OutputFiles.h"

namespace tkc {

// Writes the command's outputs (each path "" or "-" is stdout) all or none,
// through the one output writer.
inline bool writeOutputs(std::vector<std::pair<std::string, std::string>> outputs) {
  tk::files::OutputSet set;
  for (auto &[path, text] : outputs) {
    if (path.empty() || path == "-") {
      path = "-";
      if (!text.empty() && text.back() != '\n') text += '\n';
    }
    set.add(path, text);
  }
  std::string error;
  if (set.commit(error)) return true;
  std::cerr << "tkc: error: " << error << "\n";
  return false;
}

}  // namespace tkc
