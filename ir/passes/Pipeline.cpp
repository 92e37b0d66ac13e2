// The pass registry (flag -> function) and PassPipeline, which runs passes in
// order with the verifier and --print-after dumps between them.
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "ir/passes/Passes.h"

namespace tk::ir {

const std::vector<PassInfo> &registeredPasses() {
  static const std::vector<PassInfo> passes = {
      {"canonicalize", "fold constants, apply algebraic identities, simplify shape ops of splats", canonicalize},
      {"cse", "replace pure ops by identical earlier ones", eliminateCommonSubexpressions},
      {"licm", "move loop-invariant pure ops out of for bodies", loopInvariantCodeMotion},
      {"dce", "erase pure ops whose results are unused", eliminateDeadCode},
  };
  return passes;
}

const PassInfo *findPass(const std::string &flag) {
  for (const PassInfo &p : registeredPasses())
    if (flag == p.flag) return &p;
  return nullptr;
}

PassPipeline &PassPipeline::add(const std::string &flag) {
  const PassInfo *p = findPass(flag);
  if (!p) {
    std::string known;
    for (const PassInfo &r : registeredPasses()) known += std::string(known.empty() ? "" : ", ") + r.flag;
    throw std::runtime_error("unknown pass '" + flag + "' (known: " + known + ")");
  }
  return addRegistered(*p);
}

PassPipeline &PassPipeline::addList(const std::string &flags) {
  std::stringstream ss(flags);
  std::string flag;
  while (std::getline(ss, flag, ','))
    if (!flag.empty()) add(flag);
  return *this;
}

PassPipeline &PassPipeline::addRegistered(const PassInfo &pass) { return add(pass.flag, pass.run); }

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
  if (opts.verifyEach && !verifyModule(module, error)) throw std::runtime_error("verifier failed on the input:\n" + error);
  bool changed = false;
  for (const Entry &pass : passes_) {
    bool passChanged = false;
    for (auto &fn : module.functions) passChanged |= pass.run(*fn);
    changed |= passChanged;
    // A pass that changed nothing left the IR the verifier last accepted:
    // verifying it again would cost a walk of the whole module for nothing.
    if (opts.verifyEach && passChanged && !verifyModule(module, error))
      throw std::runtime_error("verifier failed after pass '" + pass.flag + "':\n" + error);
    if (opts.dump && (opts.printAfterAll || opts.printAfter.count(pass.flag))) {
      PrintOptions po;
      po.locations = opts.printLocations;
      *opts.dump << "// -----// IR Dump After " << pass.flag << " //----- //\n" << printModule(module, po) << "\n";
    }
  }
  return changed;
}

PassPipeline defaultOptimizationPipeline() {
  PassPipeline p;
  p.add("canonicalize");
  p.add("cse");
  p.add("licm");
  p.add("cse");  // hoisted values meet their twins outside the loop
  p.add("dce");
  p.add("canonicalize");  // CSE exposes more folds (x - x once both sides are one value)
  p.add("dce");
  return p;
}

}  // namespace tk::ir
