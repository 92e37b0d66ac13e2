// Fibers for GPU threads: a pool of guarded stacks reused across blocks, and
// the two context switches (scheduler -> thread, thread -> scheduler) built on
// Boost.Context's fcontext primitives.
//
// Why fcontext and not boost::context::fiber: a block whose threads deadlock
// (a divergent barrier) leaves fibers suspended forever. A fiber object would
// unwind their stacks with an exception through JIT-compiled frames; a raw
// fcontext can simply be abandoned and its stack reused.
#pragma once

#include <boost/context/detail/fcontext.hpp>
#include <cstddef>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define TK_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TK_SIM_ASAN 1
#endif
#endif
#ifdef TK_SIM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace tk::sim {

using FiberContext = boost::context::detail::fcontext_t;

class StackPool {
 public:
  static constexpr size_t kDefaultStackBytes = size_t(128) << 10;
  explicit StackPool(size_t stackBytes = kDefaultStackBytes);
  ~StackPool();
  StackPool(const StackPool &) = delete;
  StackPool &operator=(const StackPool &) = delete;

  // Makes sure stacks 0..n-1 exist (mapped lazily: untouched pages cost nothing).
  void reserve(size_t n);
  // A fresh context on stack i that will call fn(transfer) when first resumed.
  FiberContext makeContext(size_t i, void (*fn)(boost::context::detail::transfer_t)) const;
  size_t stackBytes() const { return bytes_; }
  const void *stackBottom(size_t i) const { return maps_[i] + page_; }

 private:
  size_t bytes_, page_;
  std::vector<char *> maps_;  // each: one guard page, then bytes_ of stack
};

// AddressSanitizer must be told about every stack switch, or it reports
// false stack errors; these compile to nothing without ASan.
inline void asanStartSwitch(void **fakeStack, const void *bottom, size_t size) {
#ifdef TK_SIM_ASAN
  __sanitizer_start_switch_fiber(fakeStack, bottom, size);
#endif
}
inline void asanFinishSwitch(void *fakeStack, const void **oldBottom, size_t *oldSize) {
#ifdef TK_SIM_ASAN
  __sanitizer_finish_switch_fiber(fakeStack, oldBottom, oldSize);
#endif
}

}  // namespace tk::sim
