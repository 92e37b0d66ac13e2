// The tile-IR passes of lower/ (layout assignment) as tools see them, next to
// ir/'s: tk-opt --pass=assign-layouts.
#pragma once

#include <string>
#include <vector>

#include "ir/passes/Passes.h"

namespace tk::lower {

// ir::registeredPasses() followed by lower/'s own.
const std::vector<ir::PassInfo> &allPasses();
// The pass with this flag among allPasses(), or null.
const ir::PassInfo *findPass(const std::string &flag);

}  // namespace tk::lower
