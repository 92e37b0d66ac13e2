// The libdevice-free math of NvptxTarget: PTX approx instructions (as CUDA's
// __expf etc.) and short sequences built on them. Bounds in docs/backends.md.
#pragma once

#include "lower/Target.h"

namespace tk::nvptx {

// f(x), or f(x, y) for a binary `f`, of f32 or f64 scalars of one type. f64
// is exact where PTX has an f64 instruction (sqrt.rn, div.rn, cvt.rmi/rpi/
// rzi/rni; hypot and fmod are built of them), else computed in f32 and
// widened. Not for div_rn, sqrt_rn, fdiv: NvptxTarget gives those itself.
llvm::Value *approxMath(llvm::IRBuilderBase &b, lower::MathFn f, llvm::Value *x, llvm::Value *y);

}  // namespace tk::nvptx
