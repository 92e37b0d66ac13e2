// Kernels compiled at their first launch and specialised on the values of
// their integer arguments, as a @triton.jit function is. See docs/api.md.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tk/runtime.h"

namespace tk {

// Kernel `kernel` of a .tk file, ready to launch on `device`. Each launch
// looks at its integer arguments: a value of 1 or a multiple of 16 is a fact
// the compiler can use (the constant 1; divisibility, hence 16-byte vector
// accesses), so the launch runs the variant compiled for exactly the facts
// its values give -- compiling it through the compile cache the first time
// those facts are seen. Parameters declared `@no_specialize` are never
// specialised on; `@multiple_of(N)` ones are always assumed (and checked).
class JitKernel {
 public:
  // `opts.assume` must be empty: the launches' values decide it. Throws
  // CompileError when the file has errors, Error when it has no such kernel.
  JitKernel(Device &device, std::string path, std::string kernel, CompileOptions opts = {});
  ~JitKernel();
  JitKernel(JitKernel &&) noexcept;
  JitKernel &operator=(JitKernel &&) noexcept;

  // Launches the variant for these arguments (see the class comment).
  LaunchStats launch(Dim3 grid, const std::vector<Arg> &args, const LaunchOptions &opts = {});
  template <class... A>
  LaunchStats operator()(Dim3 grid, A &&...args) {
    return launch(grid, std::vector<Arg>{detail::toArg(std::forward<A>(args))...});
  }
  // The variant a launch with `args` runs, compiled and loaded on first use.
  const Kernel &variant(const std::vector<Arg> &args);
  // What a launch with `args` specialises on: the integer arguments whose
  // values give a fact, with those values (CompileOptions::assume).
  std::map<std::string, int64_t> specialisation(const std::vector<Arg> &args) const;
  // Variants compiled so far by this object.
  size_t variantCount() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The specialisation a launch of a kernel with parameters `params` (a
// bundle's, or Compiler::kernels') and arguments `args` gets: JitKernel's
// rule, shared with `tkc run`, `tkc report` and the tuner. Arguments that are
// not integers, or do not line up with the parameters, give nothing here (the
// launch itself reports them).
std::map<std::string, int64_t> launchSpecialisation(const std::vector<KernelParam> &params,
                                                    const std::vector<Arg> &args);

}  // namespace tk
