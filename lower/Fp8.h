// Conversions between f32 and the 8-bit floats, built from integer and f32
// instructions every target runs (an fp8 value is an i8 in LLVM IR): the
// steps of include/tk/fp8.h, so the sim and the GPU give the same bits.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "ir/IR.h"

namespace tk::lower {

// An f32 to the i8 code of `k` (f8e4m3 or f8e5m2): nearest even, saturating
// to the largest finite value, NaN to 0x7f (PTX's cvt.rn.satfinite).
llvm::Value *floatToFp8(llvm::IRBuilderBase &b, llvm::Value *f, ir::ScalarKind k);
// The i8 code of `k` to its f32 value, exactly.
llvm::Value *fp8ToFloat(llvm::IRBuilderBase &b, llvm::Value *code, ir::ScalarKind k);

}  // namespace tk::lower
