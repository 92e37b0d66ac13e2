// The sim runtime the JIT'd kernels call: thread and block ids, barriers,
// warp shuffles, ldmatrix, mma and wgmma (collectives that yield to the block
// scheduler), checked and counted memory accesses, and the f16/bf16
// conversion libcalls; the entry points of cp.async, mbarriers, named
// barriers and bulk tensor copies (loads and stores), whose work is in
// their own files.
#include "backend/sim/Runtime.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backend/sim/CountInstructions.h"
#include "backend/sim/InstrumentMemory.h"
#include "backend/sim/InstrumentOverflow.h"
#include "backend/sim/Mbarrier.h"
#include "backend/sim/NamedBarrier.h"
#include "backend/sim/SimTarget.h"
#include "backend/sim/TensorCopy.h"
#include "backend/sim/Wgmma.h"
#include "tk/gpu.h"

namespace tk::sim {

thread_local ThreadCtx *tlsThread = nullptr;

void LaunchCtx::fail(std::string message) {
  std::lock_guard lock(errorMu);
  if (failed.load(std::memory_order_relaxed)) return;
  error = std::move(message);
  failed.store(true, std::memory_order_release);
}

void AlignedBuffer::reserve(size_t bytes) {
  if (bytes <= size_ && p_) return;
  size_t rounded = (std::max<size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  auto *p = static_cast<char *>(std::aligned_alloc(kAlign, rounded));
  if (!p) throw SimError("sim: out of memory for a " + std::to_string(bytes) + "-byte runtime buffer");
  std::memset(p, 0, rounded);
  p_.reset(p);
  size_ = rounded;
}

void AlignedBuffer::Free::operator()(char *p) const { std::free(p); }

void yieldToScheduler(ThreadCtx *t) {
  asanStartSwitch(&t->asanFakeStack, t->schedStackBottom, t->schedStackSize);
  boost::context::detail::transfer_t back = boost::context::detail::jump_fcontext(t->sched, t);
  asanFinishSwitch(t->asanFakeStack, &t->schedStackBottom, &t->schedStackSize);
  t->sched = back.fctx;
}

std::string hexAddress(uintptr_t a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)a);
  return buf;
}

std::string threadWhere(const ThreadCtx *t) {
  const BlockCtx *b = t->block;
  return "block (" + std::to_string(b->id[0]) + "," + std::to_string(b->id[1]) + "," + std::to_string(b->id[2]) +
         "), thread " + std::to_string(t->tid);
}

std::string siteLoc(const Site &s) { return s.loc.empty() ? "" : " (" + s.loc + ")"; }

void *redirectToScratch(ThreadCtx *t, const Site &s) {
  AlignedBuffer &scratch = t->block->worker->scratch;
  std::memset(scratch.data(), 0, s.bytes);
  return scratch.data();
}

bool activeRange(const Site &s, uintptr_t a, uint64_t mask, uintptr_t &lo, uintptr_t &hi) {
  if (!s.masked) {
    lo = a;
    hi = a + s.bytes;
    return true;
  }
  if (mask == 0) return false;
  lo = a + uintptr_t(std::countr_zero(mask)) * s.elemBytes;
  hi = a + uintptr_t(64 - std::countl_zero(mask)) * s.elemBytes;
  return true;
}

std::string blockName(const BlockCtx &b) {
  return "block (" + std::to_string(b.id[0]) + "," + std::to_string(b.id[1]) + "," + std::to_string(b.id[2]) + ")";
}

std::string siteSuffix(const LaunchCtx &l, uint32_t site) {
  if (site == ~0u) return "";
  const std::string &loc = l.program->sites.sites[site].loc;
  return loc.empty() ? "" : " (" + loc + ")";
}

std::string raceMessage(const BlockCtx &b, const RaceShadow::Race &r) {
  const LaunchCtx &l = *b.launch;
  if (r.first.async)
    return "kernel " + l.kernel->name + ": shared-memory race on byte at offset " + hexAddress(r.offset) + " (" +
           blockName(b) + "): thread " + std::to_string(r.second.tid) + (r.second.write ? " wrote it" : " read it") +
           siteLoc(l.program->sites.sites[r.second.site]) + " while thread " + std::to_string(r.first.tid) +
           "'s cp.async" + siteLoc(l.program->sites.sites[r.first.site]) +
           " into it was in flight (no cp.async.wait_group completed it)";
  auto who = [&](const RaceShadow::Access &a) {
    return "thread " + std::to_string(a.tid) + (a.write ? " wrote it" : " read it") +
           siteLoc(l.program->sites.sites[a.site]);
  };
  return "kernel " + l.kernel->name + ": shared-memory race on byte at offset " + hexAddress(r.offset) + " (block (" +
         std::to_string(b.id[0]) + "," + std::to_string(b.id[1]) + "," + std::to_string(b.id[2]) +
         ")): " + who(r.first) + " and " + who(r.second) + " with no barrier between";
}

namespace {

// The race check of one in-bounds shared access at `offset` (of its first
// element, for a masked one). Atomics are left out: they may meet freely.
void checkRace(ThreadCtx *t, const Site &s, uint32_t siteId, uintptr_t offset, uint64_t mask) {
  BlockCtx *b = t->block;
  LaunchCtx *l = b->launch;
  if (s.isAtomic() || l->failed.load(std::memory_order_relaxed)) return;
  RaceShadow &shadow = b->worker->race;
  RaceShadow::Race r;
  bool found = false;
  if (!s.masked) {
    found = shadow.access(t->tid, siteId, s.isStore(), uint32_t(offset), s.bytes, r);
  } else {
    for (uint32_t e = 0; e * s.elemBytes < s.bytes && !found; ++e)
      if (mask >> e & 1)
        found =
            shadow.access(t->tid, siteId, s.isStore(), uint32_t(offset + uintptr_t(e) * s.elemBytes), s.elemBytes, r);
  }
  if (found) l->fail(raceMessage(*b, r));
}

void *sharedAccess(void *p, uint32_t siteId, uint64_t mask) {
  ThreadCtx *t = tlsThread;
  BlockCtx *b = t->block;
  const Site &s = b->launch->program->sites.sites[siteId];
  uint32_t k = t->occurrences[siteId]++;
  uintptr_t a = uintptr_t(p), lo, hi, base = uintptr_t(b->shared);
  if (!activeRange(s, a, mask, lo, hi)) {
    b->worker->grouper.record(t->warp, t->lane, siteId, k, 0, 0, b->counters);
    return p;
  }
  if (lo < base || hi > base + b->sharedBytes) {
    LaunchCtx *l = b->launch;
    if (!l->failed.load(std::memory_order_relaxed)) {
      std::string at = lo >= base ? "at shared offset " + std::to_string(lo - base) : "at " + hexAddress(lo);
      l->fail("kernel " + l->kernel->name + ": out-of-bounds shared " + s.verb() + " of " + std::to_string(hi - lo) +
              " bytes " + at + siteLoc(s) + ", " + threadWhere(t) + ": the block has " + std::to_string(b->sharedBytes) +
              " bytes of shared memory");
    }
    return redirectToScratch(t, s);
  }
  if (b->worker->race.enabled()) checkRace(t, s, siteId, a - base, mask);
  if (s.isStore() || s.isAtomic()) {
    t->wg.unfencedWrite = b->counters.barriers + 1;
    checkWgmmaOverwrite(*t, lo - base, hi - lo, [&] {
      return std::string("shared ") + s.verb() + " of " + std::to_string(hi - lo) + " bytes" + siteLoc(s);
    });
  }
  if (SiteCounters *ps = b->worker->perSite)
    ps[siteId].bytes += s.masked ? uint64_t(std::popcount(mask)) * s.elemBytes : s.bytes;
  b->worker->grouper.record(t->warp, t->lane, siteId, k, a - base, s.masked ? mask : ~uint64_t(0), b->counters);
  return p;
}

void barrierAt(uint32_t site) {
  ThreadCtx *t = tlsThread;
  if (t->block->atBarrier == 0 || t->block->barrierSite == ~0u) t->block->barrierSite = site;
  t->wait = Wait::Barrier;
  yieldToScheduler(t);
}

// Waits at warp collective `op` until the whole warp is there and the
// scheduler has run it (WarpCollective.cpp).
void atWarpCollective(ThreadCtx *t, WarpOp op, uint32_t site) {
  t->warpOp = op;
  t->warpSite = site;
  t->wait = Wait::Warp;
  yieldToScheduler(t);
}

// The value of lane (lane ^ laneMask).
uint32_t shuffle(uint32_t v, uint32_t laneMask, uint32_t site) {
  ThreadCtx *t = tlsThread;
  t->shflIn = v;
  t->shflMask = laneMask & (kWarpSize - 1);
  atWarpCollective(t, WarpOp::Shuffle, site);
  return t->shflOut;
}

// The 16-byte vectors the JIT'd code gets ldmatrix's and mma's results in
// (returned in a vector register, as LLVM returns <4 x i32> and <4 x float>).
using Regs4 = int32_t __attribute__((vector_size(16)));
using Floats4 = float __attribute__((vector_size(16)));

Regs4 ldmatrix(void *row, int32_t num, int32_t trans, uint32_t site) {
  ThreadCtx *t = tlsThread;
  t->mx.row = uintptr_t(row);
  t->mx.num = uint32_t(num);
  t->mx.trans = trans != 0;
  atWarpCollective(t, WarpOp::Ldmatrix, site);
  const uint32_t *o = t->mx.out;
  return Regs4{int32_t(o[0]), int32_t(o[1]), int32_t(o[2]), int32_t(o[3])};
}

Floats4 mma(const uint32_t a[4], const uint32_t b[2], const float c[4], int32_t kind, uint32_t site) {
  ThreadCtx *t = tlsThread;
  std::copy(a, a + 4, t->mx.a);
  std::copy(b, b + 2, t->mx.b);
  for (int i = 0; i < 4; ++i) t->mx.c[i] = std::bit_cast<uint32_t>(c[i]);
  t->mx.kind = uint32_t(kind);
  atWarpCollective(t, WarpOp::Mma, site);
  const uint32_t *o = t->mx.out;
  return Floats4{std::bit_cast<float>(o[0]), std::bit_cast<float>(o[1]), std::bit_cast<float>(o[2]),
                 std::bit_cast<float>(o[3])};
}

// wgmma.mma_async: a warpgroup collective (Wgmma.cpp) on the thread's
// accumulators at `acc`, which it replaces by tokens.
void wgmma(uint64_t descA, uint64_t descB, float *acc, int32_t n, int32_t flags, uint32_t site) {
  ThreadCtx *t = tlsThread;
  t->wg.descA = descA;
  t->wg.descB = descB;
  t->wg.acc = acc;
  t->wg.n = uint32_t(n);
  t->wg.flags = uint32_t(flags);
  atWarpCollective(t, WarpOp::Wgmma, site);
}

}  // namespace

// ---- print and assert ------------------------------------------------------

namespace {

// One line of device `print`, formatted now and kept with the block until it ends.
void printLine(uint32_t element, const char *format, va_list args) {
  ThreadCtx *t = tlsThread;
  va_list again;
  va_copy(again, args);
  char small[256];
  int n = std::vsnprintf(small, sizeof small, format, args);
  std::string line;
  if (n >= 0 && size_t(n) < sizeof small) {
    line.assign(small, size_t(n));
  } else if (n > 0) {
    line.resize(size_t(n));
    std::vsnprintf(line.data(), size_t(n) + 1, format, again);
  }
  va_end(again);
  t->block->printed.push_back(BlockCtx::Line{t->printGroup, element, t->tid, std::move(line)});
}

// A failed device assert fails the launch (the first fault wins); the thread
// goes on, as after a bad access, and the launch reports once it is over.
void assertFailed(const char *message, const char *loc) {
  ThreadCtx *t = tlsThread;
  LaunchCtx *l = t->block->launch;
  if (l->failed.load(std::memory_order_relaxed)) return;
  std::string text = message ? message : "";
  l->fail("kernel " + l->kernel->name + ": assertion failed (" + loc + "), " + threadWhere(t) +
          (text.empty() ? "" : ": " + text));
}

}  // namespace

void *checkedSharedAccess(void *p, uint32_t site, uint64_t mask) { return sharedAccess(p, site, mask); }

// ---- the entry points, with the C ABI the JIT'd code calls -------------------
// f16 and bf16 travel in the low 16 bits of an XMM register on x86-64; _Float16
// is the C type with that ABI (bf16 is carried in it bit for bit).

namespace {
_Float16 carry(uint16_t bits) { return std::bit_cast<_Float16>(bits); }
}  // namespace

extern "C" {
static int32_t rtTid() { return int32_t(tlsThread->tid); }
static int32_t rtCtaid(int32_t axis) { return axis >= 0 && axis < 3 ? int32_t(tlsThread->block->id[axis]) : 0; }
static int32_t rtNctaid(int32_t axis) {
  return axis >= 0 && axis < 3 ? int32_t(tlsThread->block->launch->cfg.grid[axis]) : 1;
}
static void rtBarrier() { barrierAt(~0u); }
static void rtBarrierAt(int32_t site) { barrierAt(uint32_t(site)); }
static int32_t rtShflI32(int32_t v, int32_t mask) { return int32_t(shuffle(uint32_t(v), uint32_t(mask), ~0u)); }
static float rtShflF32(float v, int32_t mask) {
  return std::bit_cast<float>(shuffle(std::bit_cast<uint32_t>(v), uint32_t(mask), ~0u));
}
static int32_t rtShflI32At(int32_t v, int32_t mask, int32_t site) {
  return int32_t(shuffle(uint32_t(v), uint32_t(mask), uint32_t(site)));
}
static float rtShflF32At(float v, int32_t mask, int32_t site) {
  return std::bit_cast<float>(shuffle(std::bit_cast<uint32_t>(v), uint32_t(mask), uint32_t(site)));
}
static Regs4 rtLdmatrixAt(void *row, int32_t num, int32_t trans, int32_t site) {
  return ldmatrix(row, num, trans, uint32_t(site));
}
static Floats4 rtMmaAt(int32_t a0, int32_t a1, int32_t a2, int32_t a3, int32_t b0, int32_t b1, float c0, float c1,
                       float c2, float c3, int32_t kind, int32_t site) {
  const uint32_t a[4] = {uint32_t(a0), uint32_t(a1), uint32_t(a2), uint32_t(a3)}, b[2] = {uint32_t(b0), uint32_t(b1)};
  const float c[4] = {c0, c1, c2, c3};
  return mma(a, b, c, kind, uint32_t(site));
}
static void rtWgmma(uint64_t descA, uint64_t descB, float *acc, int32_t n, int32_t flags) {
  wgmma(descA, descB, acc, n, flags, ~0u);
}
static void rtWgmmaAt(uint64_t descA, uint64_t descB, float *acc, int32_t n, int32_t flags, int32_t site) {
  wgmma(descA, descB, acc, n, flags, uint32_t(site));
}
static void rtWgmmaA(int32_t a0, int32_t a1, int32_t a2, int32_t a3) {
  uint32_t *a = tlsThread->wg.a;
  a[0] = uint32_t(a0), a[1] = uint32_t(a1), a[2] = uint32_t(a2), a[3] = uint32_t(a3);
}
static void rtWgmmaWait(int32_t pending, float *acc, int32_t count) {
  wgmmaWait(*tlsThread, uint32_t(pending), acc, uint32_t(count));
}
static void rtWgmmaFence() { tlsThread->wg.fenced = true; }
static void rtWgmmaCommit() { wgmmaCommit(*tlsThread); }
static void rtFenceProxyAsync() { tlsThread->wg.unfencedWrite = 0; }
static void *rtSharedBase() { return tlsThread->block->shared; }
static void rtPrint(int32_t element, const char *format, ...) {
  va_list args;
  va_start(args, format);
  printLine(uint32_t(element), format, args);
  va_end(args);
}
static void rtPrintGroup() { ++tlsThread->printGroup; }
static uint64_t *rtBlockRuns() { return tlsThread->blockRuns; }
static void rtAssertFail(const char *message, const char *loc) { assertFailed(message, loc); }
static void *rtGlobalAccess(void *p, int32_t site) { return checkedGlobalAccess(p, uint32_t(site), ~uint64_t(0)); }
static void *rtSharedAccess(void *p, int32_t site) { return sharedAccess(p, uint32_t(site), ~uint64_t(0)); }
static void *rtGlobalAccessMasked(void *p, int32_t site, uint64_t m) {
  return checkedGlobalAccess(p, uint32_t(site), m);
}
static void *rtSharedAccessMasked(void *p, int32_t site, uint64_t m) { return sharedAccess(p, uint32_t(site), m); }
static void *rtGlobalAccessRooted(void *p, int32_t site, void *root) {
  return checkedGlobalAccess(p, uint32_t(site), ~uint64_t(0), uintptr_t(root));
}
static void *rtGlobalAccessMaskedRooted(void *p, int32_t site, uint64_t m, void *root) {
  return checkedGlobalAccess(p, uint32_t(site), m, uintptr_t(root));
}

static void rtCpAsyncAt(void *dst, const void *src, int32_t bytes, int32_t srcBytes, int32_t globalSite,
                        int32_t sharedSite) {
  cpAsyncIssue(dst, src, bytes, srcBytes, uint32_t(globalSite), uint32_t(sharedSite));
}
static void rtIndexI32(int32_t a, int32_t b, int32_t site) { checkIndexI32(a, b, uint32_t(site)); }
static void rtIndexTrunc(int64_t v, int32_t site) { checkIndexTrunc(v, uint32_t(site)); }
static void rtCpAsyncCommit() { cpAsyncCommit(); }
static void rtCpAsyncWait(int32_t n) { cpAsyncWait(n); }
static void rtMbarrierInit(void *bar, int32_t count) { mbarrierInit(bar, count, ~0u); }
static void rtMbarrierInitAt(void *bar, int32_t count, int32_t site) { mbarrierInit(bar, count, uint32_t(site)); }
static void rtMbarrierInval(void *bar) { mbarrierInval(bar, ~0u); }
static void rtMbarrierInvalAt(void *bar, int32_t site) { mbarrierInval(bar, uint32_t(site)); }
static void rtMbarrierArriveExpectTx(void *bar, int32_t bytes) { mbarrierArriveExpectTx(bar, bytes, ~0u); }
static void rtMbarrierArriveExpectTxAt(void *bar, int32_t bytes, int32_t site) {
  mbarrierArriveExpectTx(bar, bytes, uint32_t(site));
}
static void rtMbarrierArrive(void *bar) { mbarrierArrive(bar, ~0u); }
static void rtMbarrierArriveAt(void *bar, int32_t site) { mbarrierArrive(bar, uint32_t(site)); }
static void rtNamedBarrier(int32_t id, int32_t threads) { namedBarrierArrive(id, threads, ~0u); }
static void rtNamedBarrierAt(int32_t id, int32_t threads, int32_t site) {
  namedBarrierArrive(id, threads, uint32_t(site));
}
static void rtMbarrierWait(void *bar, int32_t parity) { mbarrierWait(bar, parity, ~0u); }
static void rtMbarrierWaitAt(void *bar, int32_t parity, int32_t site) { mbarrierWait(bar, parity, uint32_t(site)); }
static void rtTmaLoadAt(void *dst, const void *map, void *bar, int32_t rank, int32_t c0, int32_t c1, int32_t c2,
                        int32_t c3, int32_t c4, int32_t site) {
  const int32_t coords[5] = {c0, c1, c2, c3, c4};
  tmaLoad(dst, map, bar, rank, coords, uint32_t(site));
}
static void rtTmaStoreAt(const void *src, const void *map, int32_t rank, int32_t c0, int32_t c1, int32_t c2, int32_t c3,
                         int32_t c4, int32_t site) {
  const int32_t coords[5] = {c0, c1, c2, c3, c4};
  tmaStore(src, map, rank, coords, uint32_t(site));
}
// The store completed at issue, so no group is ever in flight: nothing to
// close or wait for (SimTarget checked the count).
static void rtBulkCommitGroup() {}
static void rtBulkWaitGroupRead(int32_t) {}
static float rtExtendHfSf(_Float16 h) { return halfBitsToFloat(std::bit_cast<uint16_t>(h)); }
static _Float16 rtTruncSfHf(float f) { return carry(floatToHalfBits(f)); }
static _Float16 rtTruncDfHf(double d) { return carry(doubleToHalfBits(d)); }
static _Float16 rtTruncSfBf(float f) { return carry(floatToBf16Bits(f)); }
static _Float16 rtTruncDfBf(double d) { return carry(doubleToBf16Bits(d)); }
static uint16_t rtGnuF2hIeee(float f) { return floatToHalfBits(f); }
static float rtGnuH2fIeee(uint16_t h) { return halfBitsToFloat(h); }
}

std::vector<std::pair<const char *, void *>> runtimeSymbols() {
  return {
      {kFnTid, reinterpret_cast<void *>(&rtTid)},
      {kFnCtaid, reinterpret_cast<void *>(&rtCtaid)},
      {kFnNctaid, reinterpret_cast<void *>(&rtNctaid)},
      {kFnBarrier, reinterpret_cast<void *>(&rtBarrier)},
      {kFnBarrierAt, reinterpret_cast<void *>(&rtBarrierAt)},
      {kFnShflI32, reinterpret_cast<void *>(&rtShflI32)},
      {kFnShflF32, reinterpret_cast<void *>(&rtShflF32)},
      {kFnShflI32At, reinterpret_cast<void *>(&rtShflI32At)},
      {kFnShflF32At, reinterpret_cast<void *>(&rtShflF32At)},
      {kFnLdmatrixAt, reinterpret_cast<void *>(&rtLdmatrixAt)},
      {kFnMmaAt, reinterpret_cast<void *>(&rtMmaAt)},
      {kFnWgmma, reinterpret_cast<void *>(&rtWgmma)},
      {kFnWgmmaAt, reinterpret_cast<void *>(&rtWgmmaAt)},
      {kFnWgmmaA, reinterpret_cast<void *>(&rtWgmmaA)},
      {kFnWgmmaWait, reinterpret_cast<void *>(&rtWgmmaWait)},
      {kFnWgmmaFence, reinterpret_cast<void *>(&rtWgmmaFence)},
      {kFnWgmmaCommit, reinterpret_cast<void *>(&rtWgmmaCommit)},
      {kFnFenceProxyAsync, reinterpret_cast<void *>(&rtFenceProxyAsync)},
      {kFnSharedBase, reinterpret_cast<void *>(&rtSharedBase)},
      {kFnPrint, reinterpret_cast<void *>(&rtPrint)},
      {kFnPrintGroup, reinterpret_cast<void *>(&rtPrintGroup)},
      {kFnBlockRuns, reinterpret_cast<void *>(&rtBlockRuns)},
      {kFnAssertFail, reinterpret_cast<void *>(&rtAssertFail)},
      {kFnGlobalAccess, reinterpret_cast<void *>(&rtGlobalAccess)},
      {kFnSharedAccess, reinterpret_cast<void *>(&rtSharedAccess)},
      {kFnGlobalAccessMasked, reinterpret_cast<void *>(&rtGlobalAccessMasked)},
      {kFnSharedAccessMasked, reinterpret_cast<void *>(&rtSharedAccessMasked)},
      {kFnGlobalAccessRooted, reinterpret_cast<void *>(&rtGlobalAccessRooted)},
      {kFnGlobalAccessMaskedRooted, reinterpret_cast<void *>(&rtGlobalAccessMaskedRooted)},
      {kFnCpAsyncAt, reinterpret_cast<void *>(&rtCpAsyncAt)},
      {kFnCpAsyncCommit, reinterpret_cast<void *>(&rtCpAsyncCommit)},
      {kFnIndexI32, reinterpret_cast<void *>(&rtIndexI32)},
      {kFnIndexTrunc, reinterpret_cast<void *>(&rtIndexTrunc)},
      {kFnCpAsyncWait, reinterpret_cast<void *>(&rtCpAsyncWait)},
      {kFnMbarrierInit, reinterpret_cast<void *>(&rtMbarrierInit)},
      {kFnMbarrierInitAt, reinterpret_cast<void *>(&rtMbarrierInitAt)},
      {kFnMbarrierInval, reinterpret_cast<void *>(&rtMbarrierInval)},
      {kFnMbarrierInvalAt, reinterpret_cast<void *>(&rtMbarrierInvalAt)},
      {kFnMbarrierArriveExpectTx, reinterpret_cast<void *>(&rtMbarrierArriveExpectTx)},
      {kFnMbarrierArriveExpectTxAt, reinterpret_cast<void *>(&rtMbarrierArriveExpectTxAt)},
      {kFnMbarrierArrive, reinterpret_cast<void *>(&rtMbarrierArrive)},
      {kFnMbarrierArriveAt, reinterpret_cast<void *>(&rtMbarrierArriveAt)},
      {kFnNamedBarrier, reinterpret_cast<void *>(&rtNamedBarrier)},
      {kFnNamedBarrierAt, reinterpret_cast<void *>(&rtNamedBarrierAt)},
      {kFnMbarrierWait, reinterpret_cast<void *>(&rtMbarrierWait)},
      {kFnMbarrierWaitAt, reinterpret_cast<void *>(&rtMbarrierWaitAt)},
      {kFnTmaLoadAt, reinterpret_cast<void *>(&rtTmaLoadAt)},
      {kFnTmaStoreAt, reinterpret_cast<void *>(&rtTmaStoreAt)},
      {kFnBulkCommitGroup, reinterpret_cast<void *>(&rtBulkCommitGroup)},
      {kFnBulkWaitGroupRead, reinterpret_cast<void *>(&rtBulkWaitGroupRead)},
      {"__extendhfsf2", reinterpret_cast<void *>(&rtExtendHfSf)},
      {"__truncsfhf2", reinterpret_cast<void *>(&rtTruncSfHf)},
      {"__truncdfhf2", reinterpret_cast<void *>(&rtTruncDfHf)},
      {"__truncsfbf2", reinterpret_cast<void *>(&rtTruncSfBf)},
      {"__truncdfbf2", reinterpret_cast<void *>(&rtTruncDfBf)},
      {"__gnu_f2h_ieee", reinterpret_cast<void *>(&rtGnuF2hIeee)},
      {"__gnu_h2f_ieee", reinterpret_cast<void *>(&rtGnuH2fIeee)},
  };
}

}  // namespace tk::sim
