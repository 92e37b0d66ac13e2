// PassPipeline: runs passes in order with the verifier and --print-after
// dumps between them. Which passes exist, and the order the compiler runs
// them in, is driver/Pipeline.cpp's.
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "ir/passes/Passes.h"
#include "tk/error.h"

namespace tk::ir {

PassPipeline &PassPipeline::add(const std::string &flag, PassFn run) {
  passes_.push_back({flag, std::move(run)});
  return *this;
}

std::vector<std::string> PassPipeline::flags() const {
  std::vector<std::string> out;
  for (const Entry &e : passes_) out.push_back(e.flag);
  return out;
}

bool PassPipeline::run(Module &module, const PipelineOptions &opts) const {
  std::string error;
  if (opts.verifyEach && !verifyModule(module, error))
    throw tk::InternalError("verifier failed on the input:\n" + error);
  bool changed = false;
  for (const Entry &pass : passes_) {
    bool passChanged = false;
    for (auto &fn : module.functions) passChanged |= pass.run(*fn);
    changed |= passChanged;
    // A pass that changed nothing left the IR the verifier last accepted:
    // verifying it again would cost a walk of the whole module for nothing.
    if (opts.verifyEach && passChanged && !verifyModule(module, error))
      throw tk::InternalError("verifier failed after pass '" + pass.flag + "':\n" + error);
    if (opts.dump && (opts.printAfterAll || opts.printAfter.count(pass.flag))) {
      PrintOptions po;
      po.locations = opts.printLocations;
      *opts.dump << "// -----// IR Dump After " << pass.flag << " //----- //\n" << printModule(module, po) << "\n";
    }
  }
  if (!opts.verifyEach && changed && !verifyModule(module, error))
    throw tk::InternalError("verifier failed after the pipeline (run with --verify-each to find the pass):\n" + error);
  return changed;
}

}  // namespace tk::ir
