// Must not compile: a size_t for an i32 parameter. The launch templates of
// tk/runtime.h and tk/jit.h say so in one static_assert (tests/unit/runtime_interop.cmake).
#include <cstddef>

#include "tk/jit.h"
#include "tk/runtime.h"

void launch(tk::Device &dev, const tk::Kernel &k, tk::JitKernel &jit, const tk::Buffer &x, size_t n) {
  dev(k, {1}, x, x, x, n);
  jit({1}, x, x, x, n);
}
