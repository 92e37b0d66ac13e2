// The two variants of a stdlib kernel a launch can run, for the stdlib's
// numerics tests: the general one, compiled as the source says, and the one
// the launch's integer arguments select (values equal to 1 or multiples of
// 16: tk::launchSpecialisation, what tk::JitKernel, `tkc run` and the tuner
// launch). Each test runs its inputs through both, so a fact the compiler
// uses wrongly (a vector access past a row's end, a constant 1 folded into
// the wrong place) fails against the same double reference as the general
// code does.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tk/jit.h"
#include "tk/runtime.h"

namespace tk::test {

enum class Variant { General, Specialised };
inline constexpr Variant kVariants[] = {Variant::General, Variant::Specialised};

inline const char *variantName(Variant v) { return v == Variant::General ? "general" : "specialised"; }

// Kernel `kernel` of `path`, compiled with `opts`, launched as variant `v`.
class VariantKernel {
 public:
  VariantKernel(tk::Device &dev, const std::string &path, const std::string &kernel, const tk::CompileOptions &opts,
                Variant v)
      : dev_(dev), general_(dev.load(tk::Compiler::compileFile(path, kernel, opts))) {
    if (v == Variant::Specialised) jit_.emplace(dev, path, kernel, opts);
  }

  // False when variant `v` of a launch with `args` is the general one
  // already run (no argument gives a fact): the caller skips it.
  bool differs(const std::vector<tk::Arg> &args) const {
    return !jit_ || !tk::launchSpecialisation(general_.bundle().params, args).empty();
  }

  // The general variant (its consts are every variant's).
  const tk::Kernel &general() const { return general_; }

  // The kernel a launch with `args` runs.
  const tk::Kernel &kernel(const std::vector<tk::Arg> &args) { return jit_ ? jit_->variant(args) : general_; }

  tk::LaunchStats launch(tk::Dim3 grid, const std::vector<tk::Arg> &args) {
    if (!jit_) return dev_.launch(general_, grid, args);
    // The variant really assumes what the values give (or the test would
    // run the general code twice and prove nothing).
    EXPECT_EQ(jit_->variant(args).bundle().assumed.empty(),
              tk::launchSpecialisation(general_.bundle().params, args).empty());
    return jit_->launch(grid, args);
  }

 private:
  tk::Device &dev_;
  tk::Kernel general_;
  std::optional<tk::JitKernel> jit_;
};

}  // namespace tk::test
