// PTX -> cubin through the toolkit's ptxas, with the resources `ptxas -v`
// reports per kernel (registers, spills, shared memory).
#pragma once

#include <string>
#include <vector>

#include "backend/nvptx/Toolkit.h"

namespace tk::nvptx {

struct PtxasKernelInfo {
  std::string name;
  int registers = -1;
  int spillStoreBytes = 0, spillLoadBytes = 0;
  int stackBytes = 0;
  int sharedBytes = 0;  // static shared memory (dynamic shared is given at launch)
};

struct PtxasInfo {
  bool ran = false;  // false when the toolkit has no ptxas (log says so)
  std::string log;   // ptxas's output
  // Over all kernels: the most registers, the summed spills and the most
  // static shared memory; per kernel in `kernels`.
  int registers = -1;
  int spillStoreBytes = 0, spillLoadBytes = 0;
  int sharedBytes = 0;
  std::vector<PtxasKernelInfo> kernels;
  std::vector<char> cubin;
};

// Runs `ptxas -v -arch=<arch>` on `ptx` (no shell involved). Throws
// tk::Error for an unknown arch and, with ptxas's log, when ptxas cannot
// run or rejects the PTX.
PtxasInfo runPtxas(const std::string &ptx, const std::string &arch, const Toolkit &tk);

// Parses the `ptxas -v` log into per-kernel resources and the totals above.
void parsePtxasLog(const std::string &log, PtxasInfo &info);

}  // namespace tk::nvptx
