// Reads the tile IR's text form (the one Printer.h writes, with or without
// locations and layouts) back into a Module.
#pragma once

#include <memory>
#include <string>

#include "ir/IR.h"
#include "tk/error.h"

namespace tk::ir {

// Parses `text`; on malformed input throws tk::IRParseError, what() being
// "filename:line:col: error: message". Never crashes. Only the syntax and the
// names are checked: run the verifier (Verifier.h) on the result.
std::unique_ptr<Module> parseModule(const std::string &text, const std::string &filename);
// The same, returning null and setting `error` to that message instead.
std::unique_ptr<Module> parseModule(const std::string &text, const std::string &filename, std::string &error);

}  // namespace tk::ir
