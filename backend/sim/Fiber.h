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

 private:
  size_t bytes_, page_;
  std::vector<char *> maps_;  // each: one guard page, then bytes_ of stack
};

}  // namespace tk::sim
