// The runtime half of sim:overflow (InstrumentOverflow.h): after each
// checked i32 operation on the way to an address, recompute it exactly in
// i64 and fail the launch at the first result i32 cannot hold. The thread
// goes on with the wrapped value, as a GPU would; the launch reports once
// its blocks in flight are done, like any other fault.
#include "backend/sim/Runtime.h"

namespace tk::sim {

namespace {

const char *symbol(IndexOp op) {
  switch (op) {
    case IndexOp::Add: return "+";
    case IndexOp::Sub: return "-";
    case IndexOp::Mul: return "*";
    case IndexOp::Shl: return "<<";
    case IndexOp::Trunc: return "as i32";
  }
  return "?";
}

void report(ThreadCtx *t, const Site &s, const std::string &what) {
  LaunchCtx *l = t->block->launch;
  if (l->failed.load(std::memory_order_relaxed)) return;
  l->fail("kernel " + l->kernel->name + ": i32 overflow in an index" + siteLoc(s) + ", " + threadWhere(t) + ": " +
          what + "; the value reaches the address of the " + s.reaches + " (compute the index in i64)");
}

}  // namespace

void checkIndexI32(int32_t a, int32_t b, uint32_t siteId) {
  ThreadCtx *t = tlsThread;
  const Site &s = t->block->launch->program->sites.sites[siteId];
  int64_t exact = 0;
  switch (s.indexOp) {
    case IndexOp::Add: exact = int64_t(a) + b; break;
    case IndexOp::Sub: exact = int64_t(a) - b; break;
    case IndexOp::Mul: exact = int64_t(a) * b; break;
    case IndexOp::Shl:
      if (b < 0 || b > 31) return;  // LLVM's shl by 32 or more is poison, not a wrap: nothing to compare
      exact = int64_t(a) * (int64_t(1) << b);
      break;
    case IndexOp::Trunc: return;
  }
  if (exact == int64_t(int32_t(exact))) return;
  report(t, s,
         std::to_string(a) + " " + symbol(s.indexOp) + " " + std::to_string(b) + " = " + std::to_string(exact) +
             ", which wraps to " + std::to_string(int32_t(uint32_t(uint64_t(exact)))) + " in i32");
}

void checkIndexTrunc(int64_t v, uint32_t siteId) {
  if (v == int64_t(int32_t(v))) return;
  ThreadCtx *t = tlsThread;
  const Site &s = t->block->launch->program->sites.sites[siteId];
  report(t, s, "the i64 " + std::to_string(v) + " " + symbol(IndexOp::Trunc) + " is " +
                   std::to_string(int32_t(uint32_t(uint64_t(v)))));
}

}  // namespace tk::sim
