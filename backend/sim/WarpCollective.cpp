// Warp collectives, run by the block scheduler once the whole warp has
// arrived: shuffles, and ldmatrix / mma.sync with the fragment layouts of the
// PTX ISA ("Warp-level matrix instructions": "Matrix fragments for
// mma.m16n8k16 with floating point type", "... mma.m16n8k8" (.tf32),
// "... mma.m16n8k32" (.s8) and "ldmatrix").
#include "backend/sim/WarpCollective.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "backend/sim/Coalescing.h"
#include "backend/sim/Wgmma.h"
#include "tk/fp8.h"
#include "tk/gpu.h"

namespace tk::sim {

namespace {

// Two lanes wait at the same collective: the same operation at the same site
// (.aligned: every lane must execute the same ldmatrix or mma instruction).
// Shuffles pair up across sites, as they always have.
bool sameCollective(const ThreadCtx &x, const ThreadCtx &y) {
  if (x.warpOp != y.warpOp) return false;
  if (x.warpOp == WarpOp::Shuffle) return true;
  return x.warpSite == y.warpSite && x.mx.num == y.mx.num && x.mx.trans == y.mx.trans && x.mx.kind == y.mx.kind;
}

void runShuffle(ThreadCtx *lanes, uint32_t n) {
  // Each lane reads lane ^ mask; a lane past a partial last warp reads its
  // own value.
  for (uint32_t j = 0; j < n; ++j) {
    uint32_t src = j ^ lanes[j].shflMask;
    lanes[j].shflOut = src < n ? lanes[src].shflIn : lanes[j].shflIn;
  }
}

// A row address lane `t` gave ldmatrix that is outside the block's shared
// memory or not 16-byte aligned: the launch's fault (the first one wins).
void badRow(const ThreadCtx &t, uintptr_t base, bool inBounds) {
  const BlockCtx &b = *t.block;
  LaunchCtx &l = *b.launch;
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)t.mx.row);
  std::string at = t.mx.row >= base ? "at shared offset " + std::to_string(t.mx.row - base) : std::string("at ") + hex;
  std::string head = "kernel " + l.kernel->name + ": ";
  std::string tail = siteSuffix(l, t.warpSite) + ", " + blockName(b) + ", thread " + std::to_string(t.tid);
  if (!inBounds)
    l.fail(head + "out-of-bounds ldmatrix row read of 16 bytes " + at + tail + ": the block has " +
           std::to_string(b.sharedBytes) + " bytes of shared memory");
  else
    l.fail(head + "misaligned ldmatrix row address " + at + tail + ": a row must be 16-byte aligned");
}

// ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16. Lane 8i + r gives
// the address of row r of matrix i (lanes past 8 * num are ignored). Each
// row is 16 bytes, 8 b16 elements; lane l receives in register i the
// elements (l / 4, 2 (l % 4)) and (l / 4, 2 (l % 4) + 1) of matrix i (of its
// transpose with .trans), the first in the low half.
void runLdmatrix(Simulator::Worker &w, ThreadCtx *lanes) {
  BlockCtx &b = w.block;
  const uint32_t num = lanes[0].mx.num, site = lanes[0].warpSite;
  const bool trans = lanes[0].mx.trans;
  const uintptr_t base = uintptr_t(b.shared);
  uint16_t m[4][8][8] = {};  // [matrix][row][column]; rows with a bad address read zeros
  uint32_t wavefronts = 0;
  for (uint32_t i = 0; i < num; ++i) {
    // One phase per matrix: its 8 rows, 32 words over the 32 banks.
    uint64_t words[32];
    size_t nw = 0;
    for (uint32_t r = 0; r < 8; ++r) {
      const ThreadCtx &t = lanes[8 * i + r];
      uintptr_t a = t.mx.row;
      bool inBounds = a >= base && a - base + 16 <= b.sharedBytes;
      if (!inBounds || (a - base) % 16 != 0) {
        badRow(t, base, inBounds);
        continue;
      }
      uint32_t offset = uint32_t(a - base);
      if (w.race.enabled()) {
        RaceShadow::Race race;
        if (w.race.access(t.tid, site, /*write=*/false, offset, 16, race)) b.launch->fail(raceMessage(b, race));
      }
      std::memcpy(m[i][r], b.shared + offset, 16);
      for (uint32_t q = 0; q < 4; ++q) words[nw++] = offset / 4 + q;
    }
    std::sort(words, words + nw);
    nw = size_t(std::unique(words, words + nw) - words);
    wavefronts += bankWavefronts(words, nw);
  }
  b.counters.sharedRequests += 1;
  b.counters.sharedWavefronts += wavefronts;
  if (w.perSite && site != ~0u) {
    SiteCounters &p = w.perSite[site];
    p.requests += 1;
    p.bytes += 128 * num;  // 8 rows of 16 bytes per matrix
    p.wavefronts += wavefronts;
  }
  for (uint32_t l = 0; l < kWarpSize; ++l) {
    const uint32_t g = l / 4, c = 2 * (l % 4);
    for (uint32_t i = 0; i < num; ++i) {
      uint16_t lo = trans ? m[i][c][g] : m[i][g][c];
      uint16_t hi = trans ? m[i][c + 1][g] : m[i][g][c + 1];
      lanes[l].mx.out[i] = uint32_t(lo) | uint32_t(hi) << 16;
    }
  }
}

float bf16ToFloat(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32:
// D = A B + C, A 16x16, B 16x8, C and D 16x8 f32. With g = lane / 4 and
// t = lane % 4, a lane holds (two elements per register, the first in the
// low half):
//   A: a0 (g, 2t..2t+1), a1 (g+8, 2t..2t+1), a2 (g, 2t+8..2t+9), a3 (g+8, 2t+8..2t+9)
//   B: b0 (2t..2t+1, g), b1 (2t+8..2t+9, g)
//   C, D: c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1)
// Products of f16 or bf16 values are exact in f32; they are added to C in f32
// in the order k = 0..15. A GPU leaves the order (and the rounding of its
// intermediate sums) unspecified, so its D may differ in the last bits.
//
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: A 16x8, B 8x8, one
// tf32 per register (an f32 of which the tensor core reads the sign,
// exponent and top 10 mantissa bits: the low 13 are dropped here):
//   A: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
//   B: b0 (t, g), b1 (t+4, g)
// Products of tf32 values are exact in f32 and summed as above.
//
// mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32: A 16x32, B 32x8, four
// s8 per register (the first in the low byte), C and D s32:
//   A: a0 (g, 4t..4t+3), a1 (g+8, 4t..4t+3), a2 (g, 4t+16..4t+19), a3 (g+8, 4t+16..4t+19)
//   B: b0 (4t..4t+3, g), b1 (4t+16..4t+19, g)
// Sums wrap modulo 2^32 (no .satfinite), so the order does not matter.
// mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}x2.f32 (sm_89+): the same
// fragments with fp8 codes for s8 (tk/fp8.h decodes them), C and D f32;
// products are exact in f32 and summed as above.
// In every shape each register covers 4 bytes of k, and C/D are alike.
template <typename Acc, typename Value, typename ValueB>
void multiply(ThreadCtx *lanes, int K, Value value, int perReg, ValueB valueB) {
  double A[16][32], B[32][8];
  Acc C[16][8];
  for (uint32_t l = 0; l < kWarpSize; ++l) {
    const MatrixOperands &x = lanes[l].mx;
    const int g = int(l / 4), t = int(l % 4);
    const int half = K / 2;  // registers 2 and 3 of A (1 of B) cover k past half
    for (int e = 0; e < perReg; ++e) {
      const int k = perReg * t + e;
      A[g][k] = value(x.a[0], e);
      A[g + 8][k] = value(x.a[1], e);
      A[g][k + half] = value(x.a[2], e);
      A[g + 8][k + half] = value(x.a[3], e);
      B[k][g] = valueB(x.b[0], e);
      B[k + half][g] = valueB(x.b[1], e);
    }
    for (int h = 0; h < 2; ++h) {
      C[g][2 * t + h] = std::bit_cast<Acc>(x.c[h]);
      C[g + 8][2 * t + h] = std::bit_cast<Acc>(x.c[2 + h]);
    }
  }
  Acc D[16][8];
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 8; ++c) {
      Acc d = C[r][c];
      for (int k = 0; k < K; ++k) {
        if constexpr (std::is_same_v<Acc, float>)
          d = d + float(A[r][k]) * float(B[k][c]);
        else  // s32 wraps: add as unsigned
          d = int32_t(uint32_t(d) + uint32_t(int32_t(A[r][k]) * int32_t(B[k][c])));
      }
      D[r][c] = d;
    }
  for (uint32_t l = 0; l < kWarpSize; ++l) {
    const uint32_t g = l / 4, t = l % 4;
    for (int h = 0; h < 2; ++h) {
      lanes[l].mx.out[h] = std::bit_cast<uint32_t>(D[g][2 * t + h]);
      lanes[l].mx.out[2 + h] = std::bit_cast<uint32_t>(D[g + 8][2 * t + h]);
    }
  }
}

template <typename Acc, typename Value>
void multiply(ThreadCtx *lanes, int K, Value value, int perReg) {
  multiply<Acc>(lanes, K, value, perReg, value);
}


void runMma(ThreadCtx *lanes) {
  switch (lanes[0].mx.kind) {
    case kMmaTf32:
      return multiply<float>(
          lanes, 8, [](uint32_t reg, int) { return double(std::bit_cast<float>(reg & 0xffffe000u)); }, 1);
    case kMmaS8:
      return multiply<int32_t>(
          lanes, 32, [](uint32_t reg, int e) { return double(int8_t(uint8_t(reg >> (8 * e)))); }, 4);
    case kMmaE4M3:
    case kMmaE5M2:
    case kMmaE4M3E5M2:
    case kMmaE5M2E4M3: {
      const uint32_t kind = lanes[0].mx.kind;
      const tk::Fp8Format &fa = kind == kMmaE5M2 || kind == kMmaE5M2E4M3 ? tk::kE5M2 : tk::kE4M3;
      const tk::Fp8Format &fb = kind == kMmaE5M2 || kind == kMmaE4M3E5M2 ? tk::kE5M2 : tk::kE4M3;
      auto codes = [](const tk::Fp8Format &f) {
        return [&f](uint32_t reg, int e) { return double(tk::fp8BitsToFloat(uint8_t(reg >> (8 * e)), f)); };
      };
      return multiply<float>(lanes, 32, codes(fa), 4, codes(fb));
    }
    default: {
      const bool bf16 = lanes[0].mx.kind == kMmaBf16;
      return multiply<float>(
          lanes, 16,
          [bf16](uint32_t reg, int e) {
            uint16_t h = uint16_t(reg >> (16 * e));
            return double(bf16 ? bf16ToFloat(h) : halfBitsToFloat(h));
          },
          2);
    }
  }
}

// What the lanes of a failed collective read (the launch reports the fault).
void zeroResults(ThreadCtx *lanes, uint32_t n) {
  for (uint32_t k = 0; k < n; ++k) {
    lanes[k].shflOut = 0;
    std::fill(lanes[k].mx.out, lanes[k].mx.out + 4, 0u);
  }
}

}  // namespace

std::string warpCollectiveName(const ThreadCtx &t) {
  switch (t.warpOp) {
    case WarpOp::Shuffle:
      return "warp shuffle";
    case WarpOp::Ldmatrix:
      return "ldmatrix.x" + std::to_string(t.mx.num) + (t.mx.trans ? ".trans" : "");
    case WarpOp::Mma:
      return t.mx.kind == kMmaTf32 ? "mma.m16n8k8.tf32"
             : t.mx.kind == kMmaS8 ? "mma.m16n8k32.s8"
             : t.mx.kind == kMmaE4M3 ? "mma.m16n8k32.e4m3"
             : t.mx.kind == kMmaE5M2 ? "mma.m16n8k32.e5m2"
             : t.mx.kind == kMmaE4M3E5M2 ? "mma.m16n8k32.e4m3.e5m2"
             : t.mx.kind == kMmaE5M2E4M3 ? "mma.m16n8k32.e5m2.e4m3"
                                   : std::string("mma.m16n8k16.") + (t.mx.kind == kMmaBf16 ? "bf16" : "f16");
    case WarpOp::Wgmma:
      return wgmmaName(t);
  }
  return "?";
}

void completeWarpCollective(Simulator::Worker &w, ThreadCtx *lanes, uint32_t n) {
  BlockCtx &b = w.block;
  LaunchCtx &l = *b.launch;
  const uint32_t warp = lanes[0].warp;
  auto name = [&](const ThreadCtx &t) { return warpCollectiveName(t) + siteSuffix(l, t.warpSite); };
  for (uint32_t j = 1; j < n; ++j)
    if (!sameCollective(lanes[0], lanes[j])) {
      l.fail("kernel " + l.kernel->name + ": the lanes of warp " + std::to_string(warp) + " in " + blockName(b) +
             " meet at different warp collectives: lane 0 at " + name(lanes[0]) + ", lane " + std::to_string(j) +
             " at " + name(lanes[j]));
      zeroResults(lanes, n);
      return;
    }
  if (lanes[0].warpOp == WarpOp::Shuffle) return runShuffle(lanes, n);
  if (n < kWarpSize) {
    // A partial last warp: the lanes past the block do not exist, and
    // ldmatrix and mma need all 32.
    l.fail("kernel " + l.kernel->name + ": " + name(lanes[0]) + " in " + blockName(b) + ", warp " +
           std::to_string(warp) + ": the warp has only " + std::to_string(n) + " lanes (the block has " +
           std::to_string(b.nthreads) + " threads); " + warpCollectiveName(lanes[0]) + " needs all " + std::to_string(kWarpSize));
    zeroResults(lanes, n);
    return;
  }
  if (lanes[0].warpOp == WarpOp::Ldmatrix)
    runLdmatrix(w, lanes);
  else
    runMma(lanes);
}

}  // namespace tk::sim
