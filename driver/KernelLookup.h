// Internal to driver/ and what stands on it: a kernel's signature in a
// loaded .tk file, and where imports are found -- one lookup for the
// compiler, the tuner and tkc.
#pragma once

#include <string>
#include <vector>

#include "lang/Frontend.h"
#include "tk/compiler.h"

namespace tk::detail {

// The signature of `kernel` among the `kernels` of file `path`; tk::Error
// naming the file's kernels when there is none of that name.
lang::KernelSig findKernel(const std::vector<lang::KernelSig> &kernels, const std::string &path,
                           const std::string &kernel);

// Where imports are looked for beyond the importing file's folder: -I paths,
// $TK_PATH, then "tk/" names in the stdlib (CompileOptions::importPaths).
std::vector<lang::Frontend::ImportRoot> importRoots(const CompileOptions &opts);

// What a SourceFile loaded, for the tuner: its kernels as the front end
// declares them (@tune spaces included), and the sources it read (a compile
// key hashes them).
struct SourceFileAccess {
  static std::vector<lang::KernelSig> kernels(const SourceFile &file);
  static const lang::SourceManager &sources(const SourceFile &file);
};

}  // namespace tk::detail
