#pragma once
// TFLite's integer requantization arithmetic (interop facts, section 6), bit for bit.
//
// A real multiplier M is stored as an int32 `multiplier` in [2^30, 2^31) (or 0) and a power-of-two
// `shift` (positive = left), M ~= multiplier * 2^(shift - 31). Applying it to an int32 accumulator
// rounds in one of two ways, both reproduced exactly:
//  * Rounding::Double (TFLite's default build, used by its reference kernels):
//    RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x << left, m), right).
//  * Rounding::Single (a TFLITE_SINGLE_ROUNDING build): (x * m + 2^(30 - shift)) >> (31 - shift).
// Kernels are templated on the mode and pick the instantiation at prepare time, so the inner
// loops never branch on it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "tflite/prepared_op.hpp"

namespace tickinfer::tfl {

struct QuantizedMultiplier {
  int32_t multiplier = 0;  // in [2^30, 2^31 - 1], or 0 when M is 0 or too small
  int shift = 0;           // power of two, positive = left
};

// TfLiteRound: round half away from zero (std::round), for doubles and floats.
// round(x) as an int32 for quantization bounds computed at prepare time from a file's scales:
// saturated to +-2^30 (NaN gives 0), so a hostile scale (6 / 1e-38 is inf in float) gives a
// defined, saturating bound instead of an undefined conversion, and adding a zero point cannot
// overflow. Equals static_cast<int32_t>(std::round(x)) wherever |x| < 2^30.
inline int32_t round_to_int32_saturated(float x) {
  constexpr float kLimit = 1073741824.0f;  // 2^30
  if (!(x == x)) return 0;
  return static_cast<int32_t>(std::round(std::fmax(-kLimit, std::fmin(kLimit, x))));
}
inline double round_half_away(double x) { return std::round(x); }
inline float round_half_away(float x) { return std::round(x); }

// QuantizeMultiplier: M = q * 2^e with q in [0.5, 1); multiplier = round(q * 2^31).
// In single-rounding mode the shift is clamped to at most 30 (with multiplier 2^31 - 1), as
// TFLite does so that 31 - shift stays a valid right shift.
inline QuantizedMultiplier quantize_multiplier(double m, Rounding rounding) {
  QuantizedMultiplier r;
  if (m == 0.0 || !std::isfinite(m)) return r;
  int e = 0;
  const double q = std::frexp(m, &e);
  int64_t q_fixed = static_cast<int64_t>(std::round(q * static_cast<double>(int64_t{1} << 31)));
  if (q_fixed == (int64_t{1} << 31)) {
    q_fixed /= 2;
    ++e;
  }
  if (e < -31) {
    e = 0;
    q_fixed = 0;
  }
  if (rounding == Rounding::Single && e > 30) {
    e = 30;
    q_fixed = (int64_t{1} << 31) - 1;
  }
  r.multiplier = static_cast<int32_t>(q_fixed);
  r.shift = e;
  return r;
}

// gemmlowp SaturatingRoundingDoublingHighMul: high 32 bits of 2ab, rounded half away from zero;
// INT32_MIN * INT32_MIN saturates to INT32_MAX.
inline int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));  // division truncates toward 0
}

// gemmlowp RoundingDivideByPOT: x / 2^exponent rounded half away from zero; exponent in [0, 31].
inline int32_t rounding_divide_by_pot(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// a + b with the wrap-around of TFLite's plain int32 accumulators (what every vector kernel's
// lanes do), without C++'s undefined behaviour: a hostile file's biases or depths may overflow.
inline int32_t wrapping_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

// x * 2^n with the wrap-around of TFLite's plain int32 multiply (no undefined behaviour here);
// n >= 32 (a multiplier of 2^32 or more, never produced by real scales) gives 0, as vpsllvd does.
inline int32_t shift_left_wrapping(int32_t x, int n) {
  return n >= 32 ? 0 : static_cast<int32_t>(static_cast<uint32_t>(x) << n);
}

// MultiplyByQuantizedMultiplier(x, multiplier, shift) in the given rounding mode.
// Requires multiplier >= 0 and shift in [-31, 30] (what quantize_multiplier produces).
template <Rounding R>
inline int32_t multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int shift) {
  if constexpr (R == Rounding::Double) {
    const int left = shift > 0 ? shift : 0;
    const int right = shift > 0 ? 0 : -shift;
    return rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(shift_left_wrapping(x, left), multiplier), right);
  } else {
    const int total = 31 - shift;
    const int64_t round = int64_t{1} << (total - 1);
    const int64_t result = (static_cast<int64_t>(x) * multiplier + round) >> total;
    return static_cast<int32_t>(result);
  }
}

// Runtime-mode convenience for prepare-time code (not for inner loops).
inline int32_t multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int shift,
                                                Rounding rounding) {
  return rounding == Rounding::Double
             ? multiply_by_quantized_multiplier<Rounding::Double>(x, multiplier, shift)
             : multiply_by_quantized_multiplier<Rounding::Single>(x, multiplier, shift);
}

// The int8 output range narrowed by a fused activation (CalculateActivationRangeQuantized):
// RELU from zp + round(0 / scale); RELU6 up to zp + round(6 / scale); RELU_N1_TO_1 uses -1 and 1.
// Each bound is clamped to [qmin, qmax]. Other activations (TANH, SIGN_BIT) are not fusable into
// a quantized kernel: returns false.
inline bool quantized_activation_range(FusedActivation act, float scale, int32_t zero_point,
                                       int32_t qmin, int32_t qmax, int32_t* lo, int32_t* hi) {
  auto quantize = [&](float v) { return zero_point + round_to_int32_saturated(v / scale); };
  int32_t a = qmin, b = qmax;
  switch (act) {
    case FusedActivation::None: break;
    case FusedActivation::Relu: a = std::max(qmin, quantize(0.0f)); break;
    case FusedActivation::Relu6:
      a = std::max(qmin, quantize(0.0f));
      b = std::min(qmax, quantize(6.0f));
      break;
    case FusedActivation::ReluN1To1:
      a = std::max(qmin, quantize(-1.0f));
      b = std::min(qmax, quantize(1.0f));
      break;
    default: return false;
  }
  *lo = a;
  *hi = b;
  return true;
}

}  // namespace tickinfer::tfl
