// Printing source locations (syntax/Location.h).
#include "syntax/Location.h"

namespace tk {

std::string Location::str() const {
  if (!known()) return "<unknown>";
  return (file.empty() ? std::string("<input>") : file) + ":" + std::to_string(line) + ":" + std::to_string(col);
}

}  // namespace tk
