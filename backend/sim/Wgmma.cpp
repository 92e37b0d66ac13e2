// wgmma.mma_async on the sim, with the PTX ISA's semantics: the descriptors
// are decoded into shared-memory addresses, A (64xk) and B (kxn; k = 16 for
// f16/bf16, 32 for the 8-bit floats: 32 bytes of each row either way) are
// read there when the warpgroup issues it, and D = A B + C lands in each
// thread's registers in the ISA's D fragment layout for m64nNk{16,32} with
// .f32 accumulators -- warp w of the warpgroup owns rows 16w .. 16w + 15, and
// within a warp the layout of mma.m16n8's C fragment, repeated per n8:
//   d[4j + 0, 1]: row 16w + g,     columns 8j + 2t, 8j + 2t + 1
//   d[4j + 2, 3]: row 16w + g + 8, columns 8j + 2t, 8j + 2t + 1
// (g = lane / 4, t = lane % 4). The values reach the registers at the
// wait_group that completes the instruction's group; until then the
// registers hold tokens (see WgmmaThread).
#include "backend/sim/Wgmma.h"
#include "tk/fp8.h"
#include "tk/gpu.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace tk::sim {

namespace {

// Tokens: signalling NaNs (the quiet bit clear) tagged 0x2d in mantissa bits
// 16-21, the result's number mod 2^16 in the low 16 bits. Moves keep them;
// arithmetic on one gives a NaN.
constexpr uint32_t kTokenTag = 0x7fad0000u, kTokenMask = 0xffff0000u, kMaxResults = 1u << 15;
float token(uint64_t number) { return std::bit_cast<float>(kTokenTag | uint32_t(number & 0xffff)); }
// The position in s.results of the result `v` names, if it is a token of
// one still held (not yet dropped by a wait_group). Fewer than 2^15 are
// held, so the token of a result dropped fewer than 2^15 numbers before
// `base` never aliases a held one.
bool heldResult(const WgmmaThread &s, float v, size_t &at) {
  const uint32_t bits = std::bit_cast<uint32_t>(v);
  if ((bits & kTokenMask) != kTokenTag) return false;
  at = ((bits & 0xffff) - uint32_t(s.base)) & 0xffff;
  return at < s.results.size();
}
bool isToken(float v) { return (std::bit_cast<uint32_t>(v) & kTokenMask) == kTokenTag; }

float bf16ToFloat(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

// An operand's element type, from the instruction's flags.
enum class Elem { F16, BF16, E4M3, E5M2 };
Elem elemOf(uint32_t flags, uint32_t e4m3, uint32_t e5m2) {
  return flags & e4m3 ? Elem::E4M3 : flags & e5m2 ? Elem::E5M2 : flags & kWgmmaBf16 ? Elem::BF16 : Elem::F16;
}
Elem elemA(uint32_t flags) { return elemOf(flags, kWgmmaE4m3A, kWgmmaE5m2A); }
Elem elemB(uint32_t flags) { return elemOf(flags, kWgmmaE4m3B, kWgmmaE5m2B); }
uint32_t elemBytes(Elem e) { return e == Elem::E4M3 || e == Elem::E5M2 ? 1 : 2; }
// Element q of a 16-byte row read from shared memory.
float decode(const uint8_t *row, uint32_t q, Elem e) {
  if (e == Elem::E4M3) return tk::fp8BitsToFloat(row[q], tk::kE4M3);
  if (e == Elem::E5M2) return tk::fp8BitsToFloat(row[q], tk::kE5M2);
  uint16_t h;
  std::memcpy(&h, row + 2 * q, 2);
  return e == Elem::BF16 ? bf16ToFloat(h) : halfBitsToFloat(h);
}

std::string where(const BlockCtx &b, const ThreadCtx &t) {
  return siteSuffix(*b.launch, t.warpSite) + " in " + blockName(b);
}

// The same instruction with the same shared operands (A from registers
// differs per thread by nature).
bool sameWgmma(const ThreadCtx &x, const ThreadCtx &y) {
  return x.warpOp == y.warpOp && x.warpSite == y.warpSite && (x.wg.flags & 8 || x.wg.descA == y.wg.descA) &&
         x.wg.descB == y.wg.descB && x.wg.n == y.wg.n && x.wg.flags == y.wg.flags;
}

// A (64x16) from the 128 threads' register fragments: warp w4 holds rows
// 16 w4 .. 16 w4 + 15; register q of lane (g, t) holds row 16 w4 + g +
// 8 (q % 2), columns 8 (q / 2) + 2t and + 1, the first in the low half.
void registerFragmentA(const ThreadCtx *threads, bool bf16, float (&A)[64][32]) {
  for (uint32_t i = 0; i < 128; ++i) {
    const uint32_t w4 = i / kWarpSize, g = (i % kWarpSize) / 4, t = i % 4;
    for (uint32_t q = 0; q < 4; ++q)
      for (uint32_t e = 0; e < 2; ++e) {
        const uint16_t h = uint16_t(threads[i].wg.a[q] >> (16 * e));
        A[16 * w4 + g + 8 * (q % 2)][8 * (q / 2) + 2 * t + e] = bf16 ? bf16ToFloat(h) : halfBitsToFloat(h);
      }
  }
}

// Runs the instruction for the 128 threads of a warpgroup (all at the same
// wgmma with the same operands).
void execute(Simulator::Worker &w, ThreadCtx *threads) {
  BlockCtx &b = w.block;
  LaunchCtx &l = *b.launch;
  const ThreadCtx &t0 = threads[0];
  const uint32_t n = t0.wg.n, site = t0.warpSite;
  const uint32_t flags = t0.wg.flags;
  const bool bf16 = flags & kWgmmaBf16, mA = flags & kWgmmaMMajorA, mB = flags & kWgmmaNMajorB,
             regA = flags & kWgmmaRegA;
  const Elem ea = elemA(flags), eb = elemB(flags);
  const uint32_t K = 32 / elemBytes(ea);
  const std::string head = "kernel " + l.kernel->name + ": " + wgmmaName(t0) + where(b, t0) + ", warpgroup " +
                           std::to_string(t0.warp / 4) + ": ";
  const MatrixDescriptor dA = decodeDescriptor(t0.wg.descA), dB = decodeDescriptor(t0.wg.descB);
  for (const MatrixDescriptor *d : {&dA, &dB}) {
    if (regA && d == &dA) continue;
    const char *which = d == &dA ? "A" : "B";
    if (d->swizzleBytes && d->baseOffset)
      return l.fail(head + "the descriptor of " + which + " has matrix base offset " + std::to_string(d->baseOffset) +
                    ", which the sim does not model (start the swizzle pattern on its boundary instead)");
    if (d->swizzleBytes && (d->start >> 7) & (d->swizzleBytes / 16 - 1))
      return l.fail(head + "the descriptor of " + which + " starts at shared address " + std::to_string(d->start) +
                    ", inside a " + std::to_string(d->swizzleBytes * 8) +
                    "-byte swizzle pattern: with base offset 0 the pattern must start on a " +
                    std::to_string(d->swizzleBytes * 8) + "-byte boundary");
  }
  // Generic-proxy writes reach wgmma's async-proxy reads only through a
  // fence.proxy.async by the writer before the barrier that orders them.
  for (uint32_t i = 0; i < b.nthreads; ++i)
    if (uint64_t u = w.threads[i].wg.unfencedWrite; u && u - 1 < b.counters.barriers)
      return l.fail(head + "thread " + std::to_string(i) +
                    " wrote shared memory before the last barrier with no fence.proxy.async after the write; "
                    "wgmma reads shared memory through the async proxy");
  for (uint32_t i = 0; i < 128; ++i) {
    const ThreadCtx &t = threads[i];
    if (!t.wg.fenced)
      for (uint32_t r = 0; r < n / 2; ++r)
        if (!isToken(t.wg.acc[r]))
          return l.fail(head + "thread " + std::to_string(t.tid) +
                        " passes accumulators written by other instructions with no wgmma.fence since its last "
                        "wgmma.wait_group");
  }

  // A and B through their descriptors: one 16-byte row of a core matrix (8
  // or 16 elements along the operand's contiguous dim) at a time.
  float A[64][32], B[32][256];
  uint64_t requests = 0, wavefronts = 0;
  bool ok = true;
  std::vector<uint32_t> chunks;  // the 16-byte chunks it reads, until its wait
  auto read = [&](const MatrixDescriptor &d, bool mnMajor, Elem e, uint32_t extent, auto &&store) {
    const uint32_t per = 16 / elemBytes(e);  // elements per 16 bytes
    for (uint32_t mg = 0; mg < extent / 8 && ok; ++mg)
      for (uint32_t kh = 0; kh < 2 && ok; ++kh) {
        uint64_t words[32];
        for (uint32_t r = 0; r < 8; ++r) {
          // K-major: row r of the core matrix is mn = 8 mg + r, k = 8 kh .. +7;
          // MN-major: it is k = 8 kh + r, mn = 8 mg .. +7.
          const uint32_t mn = mnMajor ? 8 * mg : 8 * mg + r, k = mnMajor ? 8 * kh + r : per * kh;
          const uint32_t a = operandAddress(d, mnMajor, mn, k, elemBytes(e));
          if (uint64_t(a) + 16 > b.sharedBytes) {
            ok = false;
            return l.fail(head + "out-of-bounds read of 16 bytes at shared offset " + std::to_string(a) +
                          " (the block has " + std::to_string(b.sharedBytes) + " bytes of shared memory)");
          }
          if (w.race.enabled()) {
            RaceShadow::Race race;
            if (w.race.access(t0.tid, site, /*write=*/false, a, 16, race)) l.fail(raceMessage(b, race));
          }
          chunks.push_back(a / 16);
          for (uint32_t q = 0; q < per; ++q)
            store(mnMajor ? mn + q : mn, mnMajor ? k : k + q, decode(reinterpret_cast<const uint8_t *>(b.shared) + a, q, e));
          for (uint32_t q = 0; q < 4; ++q) words[4 * r + q] = a / 4 + q;
        }
        std::sort(words, words + 32);
        size_t nw = size_t(std::unique(words, words + 32) - words);
        ++requests;
        wavefronts += bankWavefronts(words, nw);
      }
  };
  if (regA)
    registerFragmentA(threads, bf16, A);
  else
    read(dA, mA, ea, 64, [&](uint32_t m, uint32_t k, float v) { A[m][k] = v; });
  read(dB, mB, eb, n, [&](uint32_t col, uint32_t k, float v) { B[k][col] = v; });
  if (!ok) return;
  b.counters.sharedRequests += requests;
  b.counters.sharedWavefronts += wavefronts;
  if (w.perSite && site != ~0u) {
    SiteCounters &p = w.perSite[site];
    p.requests += requests;
    p.bytes += 16 * 8 * requests;
    p.wavefronts += wavefronts;
  }

  for (uint32_t i = 0; i < 128; ++i) {
    ThreadCtx &t = threads[i];
    WgmmaThread &s = t.wg;
    if (s.results.size() + n / 2 > kMaxResults)
      return l.fail(head + "thread " + std::to_string(t.tid) + " has more than " + std::to_string(kMaxResults) +
                    " wgmma results in flight: commit and wait for them");
    const uint32_t w4 = (t.tid / kWarpSize) % 4, g = (t.tid % kWarpSize) / 4, tq = t.tid % 4;
    for (uint32_t r = 0; r < n / 2; ++r) {
      const uint32_t j = r / 4, e = r % 4, row = 16 * w4 + g + 8 * (e / 2), col = 8 * j + 2 * tq + (e % 2);
      // A token of a result in flight is a valid input (the ISA's chained
      // accumulators); one of a dropped result was read without its wait.
      size_t at;
      float c = s.acc[r];
      if (isToken(c)) c = heldResult(s, c, at) ? s.results[at] : std::bit_cast<float>(0x7fc00000u);
      // Products of f16/bf16/fp8 values are exact in f32, added in k order
      // (a GPU's order and intermediate rounding are unspecified).
      for (uint32_t k = 0; k < K; ++k) c = c + A[row][k] * B[k][col];
      s.results.push_back(c);
      s.acc[r] = token(s.base + s.results.size() - 1);
    }
    if (i == 0) {
      BlockCtx::WgmmaReads reads{s.base + s.results.size(), wgmmaName(t0) + siteSuffix(l, site), std::move(chunks)};
      for (uint32_t c : reads.chunks) ++b.wgmmaReading[c];
      b.wgmmaReadingCount += reads.chunks.size();
      b.wgmmaInFlight[t0.warp / 4].push_back(std::move(reads));
    }
  }
}

}  // namespace

MatrixDescriptor decodeDescriptor(uint64_t d) {
  MatrixDescriptor m;
  m.start = uint32_t(d & 0x3fff) << 4;
  m.leadingBytes = uint32_t(d >> 16 & 0x3fff) << 4;
  m.strideBytes = uint32_t(d >> 32 & 0x3fff) << 4;
  m.baseOffset = uint32_t(d >> 49 & 0x7);
  static const uint32_t swizzle[4] = {0, 128, 64, 32};
  m.swizzleBytes = swizzle[d >> 62 & 0x3];
  return m;
}

// The canonical layouts, in bytes for 2-byte elements (T = 8 elements per
// 16 bytes, S the swizzle width, E = S / 2 elements per swizzled row):
//   K-major, none:  ((8, m), (T, 2)) : ((16, SBO), (2, LBO))
//   K-major, S:     ((8, m), (16))   : ((S, SBO), (2))
//   MN-major, none: ((T, m), (8, 2)) : ((2, SBO), (16, LBO))
//   MN-major, S:    ((E, m), (8, 2)) : ((2, LBO), (S, SBO))
// K-major layouts are the same in bytes for 1-byte elements (T = 16).
uint32_t operandAddress(const MatrixDescriptor &d, bool mnMajor, uint32_t mn, uint32_t k, uint32_t elemBytes) {
  const uint32_t S = d.swizzleBytes, kb = k * elemBytes;
  uint32_t a = d.start;
  if (!mnMajor && !S) a += mn / 8 * d.strideBytes + mn % 8 * 16 + kb / 16 * d.leadingBytes + kb % 16;
  if (!mnMajor && S) a += mn / 8 * d.strideBytes + mn % 8 * S + kb;
  if (mnMajor && !S) a += mn / 8 * d.strideBytes + mn % 8 * 2 + k / 8 * d.leadingBytes + k % 8 * 16;
  if (mnMajor && S) a += mn / (S / 2) * d.leadingBytes + mn % (S / 2) * 2 + k / 8 * d.strideBytes + k % 8 * S;
  if (S) a ^= (a >> 7 & (S / 16 - 1)) << 4;
  return a;
}

std::string wgmmaName(const ThreadCtx &t) {
  static const char *names[] = {"f16", "bf16", "e4m3", "e5m2"};
  const Elem a = elemA(t.wg.flags), b = elemB(t.wg.flags);
  std::string name = "wgmma.mma_async.m64n" + std::to_string(t.wg.n) + "k" + std::to_string(32 / elemBytes(a)) + "." +
                     names[int(a)];
  return a == b ? name : name + "." + names[int(b)];
}

Resume arriveAtWgmma(Simulator::Worker &w, uint32_t warp) {
  BlockCtx &b = w.block;
  LaunchCtx &l = *b.launch;
  ThreadCtx *lanes = &w.threads[warp * kWarpSize];
  const uint32_t nl = b.warps[warp].lanes;
  const std::string head = "kernel " + l.kernel->name + ": " + wgmmaName(lanes[0]) + where(b, lanes[0]) + ", warp " +
                           std::to_string(warp) + ": ";
  if (nl < kWarpSize) {
    l.fail(head + "the warp has only " + std::to_string(nl) + " lanes; wgmma needs all " + std::to_string(kWarpSize) +
           " of the 4 warps");
    return {warp, 1};
  }
  for (uint32_t j = 1; j < nl; ++j)
    if (!sameWgmma(lanes[0], lanes[j])) {
      l.fail(head + "lane " + std::to_string(j) + " is at another collective or passes other operands than lane 0");
      return {warp, 1};
    }
  const uint32_t group = warp / 4, first = 4 * group;
  if (first + 4 > b.warps.size()) {
    l.fail(head + "the block has " + std::to_string(b.warps.size()) + " warps; wgmma needs the 4 warps of warpgroup " +
           std::to_string(group));
    return {warp, 1};
  }
  if (++b.warpgroupArrived[group] < 4) return {warp, 0};
  b.warpgroupArrived[group] = 0;
  ThreadCtx *threads = &w.threads[first * kWarpSize];
  for (uint32_t i = kWarpSize; i < 4 * kWarpSize; i += kWarpSize)
    if (!sameWgmma(threads[0], threads[i])) {
      l.fail(head + "the warps of warpgroup " + std::to_string(group) +
             " meet at different wgmma instructions or pass "
             "different operands (warp " +
             std::to_string(first) + " and warp " + std::to_string(first + i / kWarpSize) + ")");
      return {first, 4};
    }
  execute(w, threads);
  return {first, 4};
}

void wgmmaWait(ThreadCtx &t, uint32_t pending, float *acc, uint32_t count) {
  WgmmaThread &s = t.wg;
  size_t groups = 0;
  while (s.groupEnds.size() - groups > pending) s.completed = s.groupEnds[groups++];
  s.groupEnds.erase(s.groupEnds.begin(), s.groupEnds.begin() + ptrdiff_t(groups));
  // The completed instructions read nothing more (a group completes for the
  // whole warpgroup, so the first of its threads to wait releases them).
  BlockCtx &b = *t.block;
  auto &inFlight = b.wgmmaInFlight[t.warp / 4];
  size_t done = 0;
  while (done < inFlight.size() && inFlight[done].resultsEnd <= s.completed) {
    for (uint32_t c : inFlight[done].chunks) --b.wgmmaReading[c];
    b.wgmmaReadingCount -= inFlight[done].chunks.size();
    ++done;
  }
  inFlight.erase(inFlight.begin(), inFlight.begin() + ptrdiff_t(done));
  // The completed results reach the registers passed through the wait;
  // then they are dropped: a token of one read later was read without a
  // wait that covers it, and gives a NaN.
  const size_t complete = size_t(s.completed - s.base);
  for (uint32_t i = 0; i < count; ++i)
    if (size_t at; heldResult(s, acc[i], at) && at < complete) acc[i] = s.results[at];
  s.results.erase(s.results.begin(), s.results.begin() + ptrdiff_t(complete));
  s.base = s.completed;
  s.fenced = false;
}

void checkWgmmaOverwrite(ThreadCtx &t, uint64_t offset, uint64_t bytes, const std::function<std::string()> &what) {
  BlockCtx &b = *t.block;
  if (!b.wgmmaReadingCount || bytes == 0) return;
  for (uint64_t c = offset / 16; c <= (offset + bytes - 1) / 16 && c < b.wgmmaReading.size(); ++c) {
    if (!b.wgmmaReading[c]) continue;
    LaunchCtx &l = *b.launch;
    for (uint32_t g = 0; g < b.wgmmaInFlight.size(); ++g)
      for (const BlockCtx::WgmmaReads &r : b.wgmmaInFlight[g])
        if (std::find(r.chunks.begin(), r.chunks.end(), uint32_t(c)) != r.chunks.end())
          return l.fail("kernel " + l.kernel->name + ": " + what() + ", " + blockName(b) + ", thread " +
                        std::to_string(t.tid) + ", writes shared offset " + std::to_string(16 * c) + " while " +
                        r.what + " of warpgroup " + std::to_string(g) +
                        " still reads it: a wgmma.wait_group must complete it first");
  }
}

void wgmmaCommit(ThreadCtx &t) { t.wg.groupEnds.push_back(t.wg.base + t.wg.results.size()); }

}  // namespace tk::sim
