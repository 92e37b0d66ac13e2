// Printing and reading back source locations (syntax/Location.h).
#include "syntax/Location.h"

#include <cstdlib>

namespace tk {

std::string Location::str() const {
  if (!known()) return "<unknown>";
  return (file.empty() ? std::string("<input>") : file) + ":" + std::to_string(line) + ":" + std::to_string(col);
}

Location Location::parse(const std::string &text) {
  size_t c2 = text.rfind(':');
  size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : text.rfind(':', c2 - 1);
  if (c1 == std::string::npos) return {text, 0, 0};
  return {text.substr(0, c1), std::atoi(text.c_str() + c1 + 1), std::atoi(text.c_str() + c2 + 1)};
}

}  // namespace tk
