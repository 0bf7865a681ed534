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

}  // namespace tickinfer::cuda::intmath
