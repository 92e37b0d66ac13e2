// countInstructions: make every basic block of the optimised sim module count
// how often each thread runs it, and price each block once, as a GPU would
// count its instructions, so a launch can report executed instructions.
#pragma once

#include <cstdint>
#include <vector>

namespace llvm {
class Instruction;
class Module;
}  // namespace llvm

namespace tk::sim {

// ptr __tk_sim_block_runs(): the current thread's run counts, one i64 per
// counted class of basic blocks of the program (backend/sim/Runtime.cpp).
inline constexpr const char *kFnBlockRuns = "__tk_sim_block_runs";
// A function with this attribute (a kernel's trampoline) is handed the run
// counts as its last parameter instead.
inline constexpr const char *kBlockRunsArgAttr = "tk-block-runs-arg";
// Metadata `!tk.uncounted !{}` marks the sim's own plumbing (the trampoline's
// loads of argument addresses), which a GPU does not run.
inline constexpr const char *kMdUncounted = "tk.uncounted";

// What one run of a basic block (or of a class of blocks that run together)
// executes, counted the way the GPU would run the same IR (docs/sim.md,
// "Instruction counts").
struct BlockCost {
  uint32_t instructions = 0;  // everything executed, the two below included
  uint32_t fp = 0;            // floating-point arithmetic, compares and conversions
  uint32_t special = 0;       // math on the SFU or in a long libdevice sequence
  BlockCost &operator+=(const BlockCost &o) {
    instructions += o.instructions;
    fp += o.fp;
    special += o.special;
    return *this;
  }
};

// The cost of one instruction (exposed for tests).
BlockCost instructionCost(const llvm::Instruction &i);

// Groups the basic blocks of every function defined in `m` into classes that
// always run equally often (a block with the highest dominator it
// post-dominates in the same loop), appends one BlockCost per class, the sum
// of its blocks', and inserts at the top of the class's first block
// `++runs[id]`, `runs` being what __tk_sim_block_runs() returned on entry to
// the function. Run it after the last IR optimisation: the counts then
// describe the code that runs, and the increments are neither counted nor
// moved.
void countInstructions(llvm::Module &m, std::vector<BlockCost> &blocks);

}  // namespace tk::sim
