// Helpers of the sim's TMA tests (sim_tma_test.cpp, sim_tma_store_test.cpp):
// a kernel section one thread runs, a tensor map built by hand, and the PTX
// ISA's swizzle written out so the tests do not share the sim's code.
#pragma once

#include <functional>
#include <vector>

#include "backend/sim/TensorMap.h"
#include "tests/unit/sim_KernelBuilder.h"

namespace tk::sim::test {

// Runs `body` in thread `which` only.
inline void onlyThread(KernelBuilder &k, llvm::Value *tid, int which, const std::function<void()> &body) {
  auto &b = k.b();
  auto *then = k.block("only"), *join = k.block("join");
  b.CreateCondBr(b.CreateICmpEQ(tid, b.getInt32(uint32_t(which))), then, join);
  b.SetInsertPoint(then);
  body();
  b.CreateBr(join);
  b.SetInsertPoint(join);
}

// A tensor map of `dims` elements (innermost first), dense unless `pitch`
// (elements from one row to the next, >= dims[0]: the padding is memory the
// tensor does not own) is given for a 2-d one.
inline TensorMap makeMap(const void *base, uint32_t elemBytes, std::vector<uint64_t> dims, std::vector<uint32_t> box,
                         uint32_t swizzle, uint64_t pitch = 0) {
  TensorMap m{};
  m.base = uint64_t(uintptr_t(base));
  m.rank = uint32_t(dims.size());
  m.elemBytes = elemBytes;
  m.swizzle = swizzle;
  uint64_t stride = elemBytes;
  for (size_t d = 0; d < dims.size(); ++d) {
    m.dims[d] = dims[d];
    m.strides[d] = stride;
    m.box[d] = box[d];
    stride *= d == 0 && pitch ? pitch : dims[d];
  }
  m.magic = kTensorMapMagic;
  return m;
}

// The spec's swizzle of shared address `a`: bits [4, 4 + log2(bytes / 16))
// ^= bits [7, ..).
inline uint32_t swizzle(uint32_t a, uint32_t bytes) { return bytes ? a ^ (((a >> 7) & (bytes / 16 - 1)) << 4) : a; }

}  // namespace tk::sim::test
