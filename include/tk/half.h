// f32/f64 <-> f16 and bf16 bits, correctly rounded (to nearest even): the
// one implementation the sim's runtime, tkc's buffer fills and programs that
// upload f16/bf16 data share; and the f16/bf16 scalar kernel arguments.
// Header-only, no dependencies.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace tk {

inline uint16_t floatToHalfBits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return sign | (x > 0x7f800000u ? uint16_t(0x7e00 | ((x >> 13) & 0x3ff)) : 0x7c00);
  if (x >= std::bit_cast<uint32_t>(65520.0f)) return sign | 0x7c00;  // halfway to 65536 and up: inf
  uint32_t r, rem, half;
  if (x < std::bit_cast<uint32_t>(0x1p-14f)) {
    if (x < std::bit_cast<uint32_t>(0x1p-26f)) return sign;
    // Subnormal half: units of 2^-24. value = m * 2^(e-150).
    uint32_t e = x >> 23, m = (x & 0x7fffffu) | 0x800000u, shift = 126 - e;
    r = m >> shift;
    rem = m & ((1u << shift) - 1);
    half = 1u << (shift - 1);
  } else {
    uint32_t v = x - (112u << 23);  // rebias 127 -> 15
    r = v >> 13;
    rem = v & 0x1fffu;
    half = 0x1000u;
  }
  if (rem > half || (rem == half && (r & 1))) ++r;  // a carry into the exponent is right
  return sign | uint16_t(r);
}

inline uint16_t doubleToHalfBits(double d) {
  uint64_t x = std::bit_cast<uint64_t>(d);
  uint16_t sign = uint16_t((x >> 48) & 0x8000);
  x &= 0x7fffffffffffffffull;
  if (x >= 0x7ff0000000000000ull)
    return sign | (x > 0x7ff0000000000000ull ? uint16_t(0x7e00 | ((x >> 42) & 0x3ff)) : 0x7c00);
  if (x >= std::bit_cast<uint64_t>(65520.0)) return sign | 0x7c00;
  uint64_t r, rem, half;
  if (x < std::bit_cast<uint64_t>(0x1p-14)) {
    if (x < std::bit_cast<uint64_t>(0x1p-26)) return sign;
    uint64_t e = x >> 52, m = (x & ((1ull << 52) - 1)) | (1ull << 52), shift = 1051 - e;
    r = m >> shift;
    rem = m & ((1ull << shift) - 1);
    half = 1ull << (shift - 1);
  } else {
    uint64_t v = x - (uint64_t(1008) << 52);  // rebias 1023 -> 15
    r = v >> 42;
    rem = v & ((1ull << 42) - 1);
    half = 1ull << 41;
  }
  if (rem > half || (rem == half && (r & 1))) ++r;
  return sign | uint16_t(r);
}

inline uint16_t floatToBf16Bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

inline uint16_t doubleToBf16Bits(double d) {
  if (std::isnan(d)) return floatToBf16Bits(float(d));
  // Round to odd into float, then to nearest even into bf16: one correct
  // rounding, as float keeps more than two extra bits beyond bf16's.
  double a = std::fabs(d);
  float f = float(a);
  if (double(f) > a) f = std::nextafter(f, 0.0f);
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (double(f) != a) bits |= 1;
  uint16_t r = floatToBf16Bits(std::bit_cast<float>(bits));
  return std::signbit(d) ? uint16_t(r | 0x8000) : r;
}

inline float halfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 31) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    float v = std::ldexp(float(m), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
}

inline float bf16BitsToFloat(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

// A 16-bit float kernel argument, rounded once on the host (to nearest
// even) by Encode and read back by Decode. One template for both formats;
// each instantiation is its own type, so tk::Arg tells them apart.
template <uint16_t (*Encode)(double), float (*Decode)(uint16_t)>
struct Float16Arg {
  uint16_t bits = 0;
  Float16Arg() = default;
  explicit Float16Arg(double v) : bits(Encode(v)) {}
  static Float16Arg fromBits(uint16_t b) {
    Float16Arg h;
    h.bits = b;
    return h;
  }
  float value() const { return Decode(bits); }
};

// f16 and bf16 scalar kernel arguments: `dev(kernel, grid, x, tk::Half(0.5), n)`.
using Half = Float16Arg<doubleToHalfBits, halfBitsToFloat>;
using BFloat16 = Float16Arg<doubleToBf16Bits, bf16BitsToFloat>;

}  // namespace tk
