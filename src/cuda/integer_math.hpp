// TFLite's integer requantization for the integer program's steps, host and device alike: the
// definitions of tflite/fixed_point.hpp and kernels/requant_scaled.hpp written again with TI_HD,
// since the CUDA module sits below the tflite one (docs/architecture.md's layers). The engine's
// tests hold each of these to those definitions on random and edge operands.
#pragma once

#include <math.h>
#include <stdint.h>

#include "cuda/host_device.hpp"

namespace tickinfer::cuda::intmath {

// gemmlowp SaturatingRoundingDoublingHighMul.
TI_HD inline int32_t doubling_high_mul(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) return INT32_MAX;
  const int64_t ab = int64_t(a) * int64_t(b);
  const int64_t nudge = ab >= 0 ? (int64_t(1) << 30) : (1 - (int64_t(1) << 30));
  return int32_t((ab + nudge) / (int64_t(1) << 31));
}

// gemmlowp RoundingDivideByPOT, exponent in [0, 31].
TI_HD inline int32_t divide_by_pot(int32_t x, int exponent) {
  const int32_t mask = int32_t((int64_t(1) << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

TI_HD inline int32_t shift_left_wrapping(int32_t x, int n) { return n >= 32 ? 0 : int32_t(uint32_t(x) << n); }

// MultiplyByQuantizedMultiplier, rounding twice (TFLite's default build) or once.
TI_HD inline int32_t multiply(int32_t x, int32_t multiplier, int shift, bool single) {
  if (!single) {
    const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    return divide_by_pot(doubling_high_mul(shift_left_wrapping(x, left), multiplier), right);
  }
  const int total = 31 - shift;
  const int64_t round = int64_t(1) << (total - 1);
  return int32_t((int64_t(x) * multiplier + round) >> total);
}

// FULLY_CONNECTED's double-precision scaling (TFLite 2.20's reference kernel): the product
// rounded half away from zero, x86's INT32_MIN outside int32, the zero point added with wrap-around.
TI_HD inline int8_t requant_scaled(int32_t acc, double scale, int32_t zp, int32_t lo, int32_t hi) {
  const double r = round(double(acc) * scale);
  int32_t v = (r >= -2147483648.0 && r < 2147483648.0) ? int32_t(r) : INT32_MIN;
  v = int32_t(uint32_t(v) + uint32_t(zp));
  return int8_t(v < lo ? lo : (v > hi ? hi : v));
}

TI_HD inline int8_t clamp_s8(int32_t v, int32_t lo, int32_t hi) { return int8_t(v < lo ? lo : (v > hi ? hi : v)); }

// gemmlowp's fixed-point reciprocal as TFLite's int8 SOFTMAX takes it (tflite/fixed_point_math.hpp's
// get_reciprocal and what it calls): raw int32 values, I integer bits meaning raw / 2^(31 - I).
TI_HD inline int32_t wrapping_add(int32_t a, int32_t b) { return int32_t(uint32_t(a) + uint32_t(b)); }
TI_HD inline int32_t wrapping_sub(int32_t a, int32_t b) { return int32_t(uint32_t(a) - uint32_t(b)); }

// SaturatingRoundingMultiplyByPOT: x * 2^e, saturating for e > 0, rounding for e < 0.
TI_HD inline int32_t multiply_by_pot(int32_t x, int e) {
  if (e == 0) return x;
  if (e < 0) return divide_by_pot(x, -e);
  const int32_t threshold = int32_t((int64_t(1) << (31 - e)) - 1);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return shift_left_wrapping(x, e);
}

// 1 / (1 + a) for a in [0, 1), 0 integer bits in and out (Newton-Raphson, 3 steps).
TI_HD inline int32_t one_over_one_plus_x(int32_t a) {
  const int64_t s = int64_t(a) + INT32_MAX;
  const int32_t half_denominator = int32_t((s + (s >= 0 ? 1 : -1)) / 2);
  int32_t x = wrapping_add(1515870810, doubling_high_mul(half_denominator, -1010580540));  // 48/17 - 32/17 d
  for (int i = 0; i < 3; ++i) {
    const int32_t one_minus = wrapping_sub(int32_t(1) << 29, doubling_high_mul(half_denominator, x));
    x = wrapping_add(x, multiply_by_pot(doubling_high_mul(x, one_minus), 2));
  }
  return multiply_by_pot(x, 1);
}

// 1 / x for x > 0 with `integer_digits` integer bits: a value in [0.5, 1) and the power of two
// it is off by.
TI_HD inline int32_t reciprocal(int32_t x, int integer_digits, int* bits_over_unit) {
#if defined(__CUDA_ARCH__)
  const int headroom_plus_one = x ? __clz(x) : 32;
#else
  const int headroom_plus_one = x ? __builtin_clz(uint32_t(x)) : 32;
#endif
  *bits_over_unit = integer_digits - headroom_plus_one;
  const uint32_t shifted = headroom_plus_one >= 32 ? 0u : uint32_t(x) << headroom_plus_one;
  return one_over_one_plus_x(int32_t(shifted - (uint32_t(1) << 31)));
}

}  // namespace tickinfer::cuda::intmath
