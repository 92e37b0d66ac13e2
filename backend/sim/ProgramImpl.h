// Program's insides, shared by Program.cpp (which builds them) and the
// launcher (which runs them). No LLVM headers: the JIT is only held here.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "backend/sim/CountInstructions.h"
#include "backend/sim/Simulator.h"
#include "backend/sim/SiteTable.h"

namespace llvm::orc {
class LLJIT;
}

namespace tk::sim {

struct KernelInfo {
  std::string name;
  // The `<name>.tk_entry` trampoline; `runs` is the thread's block run counts
  // (countInstructions).
  void (*entry)(void **args, uint64_t *runs) = nullptr;
  unsigned numParams = 0;
  int numThreads = 0;  // from SimTarget::markKernel
};

struct Program::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  SiteTable sites;
  std::vector<BlockCost> blocks;  // per basic block id (countInstructions)
  std::map<std::string, KernelInfo> kernels;
  ~Impl();
};

}  // namespace tk::sim
