// Registers lower/'s tile-IR passes beside ir/'s.
#include "lower/Passes.h"

#include "lower/AssignLayouts.h"
#include "lower/PipelineDotOperands.h"

namespace tk::lower {

const std::vector<ir::PassInfo> &allPasses() {
  static const std::vector<ir::PassInfo> passes = [] {
    std::vector<ir::PassInfo> all = ir::registeredPasses();
    all.push_back({"pipeline-dot-operands",
                   "turn the operand loads of tensor-core dots in loops into cp.async rings of num_stages slots",
                   pipelineDotOperands});
    all.push_back({"assign-layouts", "give every tile a distributed layout; anchors loads/stores, vector widths",
                   assignLayouts});
    return all;
  }();
  return passes;
}

const ir::PassInfo *findPass(const std::string &flag) {
  for (const ir::PassInfo &p : allPasses())
    if (flag == p.flag) return &p;
  return nullptr;
}

}  // namespace tk::lower
