// The tile-IR pipeline: optimise, then give every tile a layout, then tidy up
// what layout assignment duplicated.
#include "lower/Pipeline.h"

#include "lower/AssignLayouts.h"

namespace tk::lower {

ir::PassPipeline tilePipeline() {
  ir::PassPipeline p = ir::defaultOptimizationPipeline();
  p.add("assign-layouts", assignLayouts);
  p.add("cse");
  p.add("dce");
  return p;
}

}  // namespace tk::lower
