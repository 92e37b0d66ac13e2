// The tile-IR pipeline: optimise, pipeline the operands of dots in loops
// through shared rings, then give every tile a layout, then tidy up what
// layout assignment duplicated.
#include "lower/Pipeline.h"

#include "lower/AssignLayouts.h"
#include "lower/PipelineDotOperands.h"

namespace tk::lower {

ir::PassPipeline tilePipeline() {
  ir::PassPipeline p = ir::defaultOptimizationPipeline();
  p.add("pipeline-dot-operands", pipelineDotOperands);
  p.add("assign-layouts", assignLayouts);
  p.add("cse");
  p.add("dce");
  return p;
}

}  // namespace tk::lower
