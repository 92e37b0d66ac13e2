// The tile IR's optimisation passes and the pipeline that runs them. Each
// pass is a free function in its own file, returning whether it changed the
// function. Other libraries (lower/) add their passes to a PassPipeline with
// a std::function.
#pragma once

#include <functional>
#include <iosfwd>
#include <set>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace tk::ir {

// Folds constants, applies algebraic identities and simplifies shape ops of
// splats, repeatedly, until nothing changes (Canonicalize.cpp).
bool canonicalize(Function &fn);
// Replaces a pure op by an earlier identical one (same kind, operands,
// attributes and result type) that dominates it (EliminateCommonSubexpressions.cpp).
bool eliminateCommonSubexpressions(Function &fn);
// Erases pure ops whose results are unused (EliminateDeadCode.cpp).
bool eliminateDeadCode(Function &fn);
// Splits `p + (u + w)`, u the same along the tile's last dim (a row's
// start), into `(p + u) + w` (ReassociatePointerOffsets.cpp).
bool reassociatePointerOffsets(Function &fn);
// Moves pure ops of a `for` body whose operands are all defined outside the
// loop to just before it, innermost loops first (LoopInvariantCodeMotion.cpp).
bool loopInvariantCodeMotion(Function &fn);
// Outside loops, moves each non-volatile `load` down its block to just
// before its first user, the first op that is not pure or the first that
// computes a pointer (SinkLoads.cpp).
bool sinkLoads(Function &fn);
// Pads every tile dim to the next power of two and masks the padding
// wherever an op could see it (PadTiles.cpp).
bool padTiles(Function &fn);
// Rewrites every op that computes on f8e4m3/f8e5m2 values to compute on f32,
// through casts; loads, stores and moves keep the bytes (EmulateFp8.cpp).
bool emulateFp8(Function &fn);
// A pass as the registry (driver/Pipeline.cpp, tk::pipeline::passes()) and
// the tools know it; `flag` is what --pass= and --print-after take.
struct PassInfo {
  const char *flag;     // "canonicalize", "cse", "licm", "dce", ...
  const char *summary;  // one line for --list-passes and docs/ir.md
  bool (*run)(Function &);
};

struct PipelineOptions {
  // Verify the input and the IR after every pass that changed it; off, the
  // result is still verified once, after the last pass (as LLVM's opt
  // without -verify-each). Either way a broken IR throws.
  bool verifyEach = true;
  std::set<std::string> printAfter;  // pass flags after which to print the module to `dump`
  bool printAfterAll = false;
  bool printLocations = false;   // locations in the printed dumps
  std::ostream *dump = nullptr;  // where the dumps go; none when null
};

// An ordered list of passes run over every function of a module.
class PassPipeline {
 public:
  using PassFn = std::function<bool(Function &)>;

  // Any pass: `flag` names it in dumps and errors.
  PassPipeline &add(const std::string &flag, PassFn run);

  // Runs the passes in order. Returns whether any pass changed anything.
  // Throws tk::InternalError("verifier failed after pass 'cse': ...") when
  // the IR is broken ("... after the pipeline" without verifyEach).
  bool run(Module &module, const PipelineOptions &opts = {}) const;

  std::vector<std::string> flags() const;

 private:
  struct Entry {
    std::string flag;
    PassFn run;
  };
  std::vector<Entry> passes_;
};

}  // namespace tk::ir
