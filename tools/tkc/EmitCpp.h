// `tkc compile --emit cpp`: a C++ header and source with the compiled
// variants of some kernels embedded and one typed launcher per kernel
// (docs/aot.md). The generated code needs tk::runtime only.
#pragma once

#include <string>
#include <vector>

#include "tk/compiler.h"

namespace tkc {

struct EmitCppOptions {
  std::string file;                  // the .tk source
  std::vector<std::string> kernels;  // -k, in order; none: every kernel of the file
  // -k names the file does not define are skipped (tk_add_kernels passes
  // every file all of its KERNELS); an error only when none is left.
  bool skipMissing = false;
  // -D NAME=VALUE as given: a name given several values compiles one variant
  // per combination, and the launcher dispatches on the values.
  std::vector<std::string> defines;
  // JSON reports of `tkc tune --json`: the best config per key values, each
  // compiled; the launcher picks the config of the nearest key values.
  std::vector<std::string> tuneTables;
  // "auto": integer launch parameters also get variants compiled for values
  // that are multiples of 16 and equal to 1, chosen at launch; "none": only
  // the general variant.
  std::string specialise = "auto";
  // Embed each variant's cubin per arch when the CUDA toolkit's ptxas is
  // found (--no-cubin: PTX only).
  bool cubins = true;
  tk::CompileOptions compile;  // archs, num_warps, import paths, cache...
  std::string output;          // DIR/name: writes DIR/name.h, DIR/name_c.h and DIR/name.cpp
  std::string depfile;         // when set, a Makefile depfile of the inputs
};

// Compiles every variant and writes the files (atomically). Throws
// tk::CompileError for source errors, tk::Error for the rest.
void emitCpp(const EmitCppOptions &opts);

}  // namespace tkc
