// StackPool: mmap'd fiber stacks with a PROT_NONE guard page below each, so a
// stack overflow faults at once instead of corrupting the next stack.
#include "backend/sim/Fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "backend/sim/Simulator.h"

namespace tk::sim {

StackPool::StackPool(size_t stackBytes) : page_(size_t(sysconf(_SC_PAGESIZE))) {
  bytes_ = (stackBytes + page_ - 1) / page_ * page_;
}

StackPool::~StackPool() {
  for (char *m : maps_) munmap(m, bytes_ + page_);
}

void StackPool::reserve(size_t n) {
  while (maps_.size() < n) {
    void *m = mmap(nullptr, bytes_ + page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) throw SimError(std::string("sim: cannot map a fiber stack: ") + std::strerror(errno));
    // Each guard page costs the process two memory mappings; past the
    // kernel's limit (vm.max_map_count) mprotect fails and the stack goes
    // without a guard rather than failing the launch.
    (void)mprotect(m, page_, PROT_NONE);
    maps_.push_back(static_cast<char *>(m));
  }
}

FiberContext StackPool::makeContext(size_t i, void (*fn)(boost::context::detail::transfer_t)) const {
  char *top = maps_[i] + page_ + bytes_;  // stacks grow down, towards the guard page
  return boost::context::detail::make_fcontext(top, bytes_, fn);
}

}  // namespace tk::sim
