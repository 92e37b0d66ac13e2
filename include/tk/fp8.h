// f32/f64 <-> the two 8-bit float formats of Hopper and Ada (OCP FP8):
// e4m3 ("fn": bias 7, no infinities, NaN only as S.1111.111, largest 448)
// and e5m2 (bias 15, IEEE-like: infinities and NaNs, largest 57344).
// Encoding rounds to nearest even and saturates as PTX's
// `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32` does: a finite value beyond the
// largest and an infinity give the largest finite value of their sign, NaN
// gives the canonical NaN 0x7f. Decoding is exact. The one implementation
// the compiler (constants), the sim's tests and programs that upload fp8
// data share; lower/Fp8.cpp builds the same steps in LLVM IR. Header-only.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace tk {

// The constants of one format.
struct Fp8Format {
  int expBits, manBits, bias;
  uint8_t maxCode;  // the largest finite magnitude's code
  float maxValue;   // and its value
  bool hasInf;      // e5m2: exponent all ones is inf (mantissa 0) or NaN
};
inline constexpr Fp8Format kE4M3{4, 3, 7, 0x7e, 448.0f, false};
inline constexpr Fp8Format kE5M2{5, 2, 15, 0x7b, 57344.0f, true};
inline constexpr uint8_t kFp8NaN = 0x7f;

inline uint8_t floatToFp8Bits(float f, const Fp8Format &fmt) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint8_t sign = uint8_t((x >> 24) & 0x80);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return kFp8NaN;
  const float af = std::bit_cast<float>(a);
  if (af >= fmt.maxValue) return sign | fmt.maxCode;  // satfinite: inf too
  const int minExp = 1 - fmt.bias;                      // the smallest normal's exponent
  if (af < std::ldexp(1.0f, minExp)) {
    // Subnormal (or zero): a count of 2^(minExp - manBits), scaled exactly
    // and rounded to nearest even; a count of 2^manBits is the smallest
    // normal's code, so the carry is right.
    const float q = std::nearbyint(std::ldexp(af, fmt.manBits - minExp));
    return sign | uint8_t(q);
  }
  const uint32_t v = a - (uint32_t(127 - fmt.bias) << 23);  // rebias
  const int shift = 23 - fmt.manBits;
  uint32_t r = v >> shift;
  const uint32_t rem = v & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (r & 1))) ++r;  // below the largest: never overflows
  return sign | uint8_t(r);
}

inline uint8_t doubleToFp8Bits(double d, const Fp8Format &fmt) {
  if (std::isnan(d)) return kFp8NaN;
  // Round to odd into float, then to nearest even into fp8: one correct
  // rounding, as float keeps more than two bits beyond fp8's.
  const double a = std::fabs(d);
  float f = float(std::fmin(a, 1e30));
  if (double(f) > a) f = std::nextafter(f, 0.0f);
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (double(f) != a) bits |= 1;
  const uint8_t r = floatToFp8Bits(std::bit_cast<float>(bits), fmt);
  return std::signbit(d) ? uint8_t(r | 0x80) : r;
}

inline float fp8BitsToFloat(uint8_t c, const Fp8Format &fmt) {
  const int e = (c >> fmt.manBits) & ((1 << fmt.expBits) - 1), m = c & ((1 << fmt.manBits) - 1);
  const float sign = (c & 0x80) ? -1.0f : 1.0f;
  const int top = (1 << fmt.expBits) - 1;
  if (fmt.hasInf && e == top) return m == 0 ? sign * INFINITY : NAN;
  if (!fmt.hasInf && e == top && m == (1 << fmt.manBits) - 1) return NAN;
  if (e == 0) return sign * std::ldexp(float(m), 1 - fmt.bias - fmt.manBits);
  return sign * std::ldexp(1.0f + std::ldexp(float(m), -fmt.manBits), e - fmt.bias);
}

// Host element types of fp8 buffers (tk::DType::F8E4M3, F8E5M2): the bits,
// converted explicitly.
struct Float8e4m3 {
  uint8_t bits = 0;
  static Float8e4m3 fromFloat(float f) { return {floatToFp8Bits(f, kE4M3)}; }
  float toFloat() const { return fp8BitsToFloat(bits, kE4M3); }
};
struct Float8e5m2 {
  uint8_t bits = 0;
  static Float8e5m2 fromFloat(float f) { return {floatToFp8Bits(f, kE5M2)}; }
  float toFloat() const { return fp8BitsToFloat(bits, kE5M2); }
};

}  // namespace tk
