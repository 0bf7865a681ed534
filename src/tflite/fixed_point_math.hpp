#pragma once
// gemmlowp's fixed-point transcendental functions, as TFLite's reference int8 kernels use them
// (SOFTMAX: exp on negative values and a reciprocal; RSQRT: an inverse square root), written on
// raw int32 values. A value with I integer bits is raw / 2^(31 - I). Each function reproduces the
// reference bit for bit, including its saturation and rounding.
#include <cstdint>
#include <limits>

#include "tflite/fixed_point.hpp"

namespace tickinfer::tfl::fx {

inline constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
inline constexpr int32_t kMin = std::numeric_limits<int32_t>::min();

// Raw int32 addition/subtraction wrap like gemmlowp's (no undefined behaviour here).
inline int32_t add(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
inline int32_t sub(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b)); }
// FixedPoint operator*: the integer bits of the operands add up.
inline int32_t mul(int32_t a, int32_t b) { return saturating_rounding_doubling_high_mul(a, b); }

// SaturatingRoundingMultiplyByPOT: x * 2^e, saturating for e > 0, rounding for e < 0.
inline int32_t mul_pot(int32_t x, int e) {
  if (e == 0) return x;
  if (e < 0) return rounding_divide_by_pot(x, -e);
  const int32_t threshold = static_cast<int32_t>((int64_t{1} << (31 - e)) - 1);
  if (x > threshold) return kMax;
  if (x < -threshold) return kMin;
  return shift_left_wrapping(x, e);
}

// Rescale<to>(value with `from` integer bits).
inline int32_t rescale(int32_t x, int from, int to) { return mul_pot(x, from - to); }

// RoundingHalfSum: (a + b) / 2 rounded half away from zero.
inline int32_t rounding_half_sum(int32_t a, int32_t b) {
  const int64_t s = static_cast<int64_t>(a) + b;
  return static_cast<int32_t>((s + (s >= 0 ? 1 : -1)) / 2);
}

// exp(a) for a in [-1/4, 0), 0 integer bits in and out.
inline int32_t exp_on_interval_between_negative_one_quarter_and_0_excl(int32_t a) {
  const int32_t constant_term = 1895147668;      // exp(-1/8)
  const int32_t constant_1_over_3 = 715827883;   // 1/3
  const int32_t x = add(a, int32_t{1} << 28);    // a + 1/8
  const int32_t x2 = mul(x, x);
  const int32_t x3 = mul(x2, x);
  const int32_t x4 = mul(x2, x2);
  const int32_t x4_over_4 = mul_pot(x4, -2);
  const int32_t poly = mul_pot(add(mul(add(x4_over_4, x3), constant_1_over_3), x2), -1);
  return add(constant_term, mul(constant_term, add(x, poly)));
}

// exp(a) for a <= 0 with `integer_bits` integer bits in; 0 integer bits out.
inline int32_t exp_on_negative_values(int32_t a, int integer_bits) {
  const int frac = 31 - integer_bits;
  const int32_t one_quarter = int32_t{1} << (frac - 2);
  const int32_t mask = one_quarter - 1;
  const int32_t a_mod_quarter_minus_one_quarter = sub(a & mask, one_quarter);
  int32_t result = exp_on_interval_between_negative_one_quarter_and_0_excl(
      rescale(a_mod_quarter_minus_one_quarter, integer_bits, 0));
  const int32_t remainder = sub(a_mod_quarter_minus_one_quarter, a);
  // exp(-2^e) for e = -2 .. 4, applied for each set bit of the remainder (a barrel shifter).
  static constexpr int32_t kMultipliers[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int e = -2; e <= 4; ++e) {
    if (integer_bits > e) {
      const int shift = frac + e;
      if (remainder & (int32_t{1} << shift)) result = mul(result, kMultipliers[e + 2]);
    }
  }
  if (integer_bits > 5) {
    const int32_t clamp = -(int32_t{1} << (36 - integer_bits));  // -32
    if (a < clamp) result = 0;
  }
  if (a == 0) result = kMax;
  return result;
}

// 1 / (1 + a) for a in [0, 1), 0 integer bits in and out (Newton-Raphson, 3 steps).
inline int32_t one_over_one_plus_x_for_x_in_0_1(int32_t a) {
  const int32_t half_denominator = rounding_half_sum(a, kMax);
  const int32_t constant_48_over_17 = 1515870810;     // 2 integer bits
  const int32_t constant_neg_32_over_17 = -1010580540;
  int32_t x = add(constant_48_over_17, mul(half_denominator, constant_neg_32_over_17));
  const int32_t one_f2 = int32_t{1} << 29;
  for (int i = 0; i < 3; ++i) {
    const int32_t half_denominator_times_x = mul(half_denominator, x);
    const int32_t one_minus = sub(one_f2, half_denominator_times_x);
    x = add(x, rescale(mul(x, one_minus), 4, 2));
  }
  return rescale(x, 1, 0);  // ExactMulByPot<-1> makes it 1 integer bit, then back to 0
}

// TFLite GetReciprocal: 1 / x for x > 0 with `x_integer_digits` integer bits, as a value in
// [0.5, 1) (0 integer bits) and the power of two it is off by (num_bits_over_unit).
inline int32_t get_reciprocal(int32_t x, int x_integer_digits, int* num_bits_over_unit) {
  const int headroom_plus_one = x ? __builtin_clz(static_cast<uint32_t>(x)) : 32;
  *num_bits_over_unit = x_integer_digits - headroom_plus_one;
  const uint32_t shifted = headroom_plus_one >= 32 ? 0u : static_cast<uint32_t>(x) << headroom_plus_one;
  const int32_t shifted_sum_minus_one = static_cast<int32_t>(shifted - (uint32_t{1} << 31));
  return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one);
}

// TFLite GetInvSqrtQuantizedMultiplierExp: 1 / sqrt(input) as multiplier * 2^shift (shift
// positive = left after `reverse_shift` = -1 is applied, as the RSQRT kernel passes it).
inline void inv_sqrt_quantized_multiplier_exp(int32_t input, int reverse_shift, int32_t* out_mult, int* out_shift) {
  if (input <= 1) {
    *out_mult = kMax;
    *out_shift = 0;
    return;
  }
  int shift = 11;
  while (input >= (int32_t{1} << 29)) {
    input /= 4;
    ++shift;
  }
  const unsigned max_left_shift_bits = static_cast<unsigned>(__builtin_clz(static_cast<uint32_t>(input))) - 1;
  const unsigned left_shift_bit_pairs = max_left_shift_bits / 2 - 1;
  shift -= static_cast<int>(left_shift_bit_pairs);
  input <<= 2 * left_shift_bit_pairs;
  // Newton-Raphson on values with 3 integer bits, starting from 1, five steps.
  const int32_t fixedpoint_input = input >> 1;
  const int32_t fixedpoint_half_input = mul_pot(fixedpoint_input, -1);
  const int32_t fixedpoint_half_three = (int32_t{1} << 28) + (int32_t{1} << 27);
  int32_t x = int32_t{1} << 28;  // 1.0 with 3 integer bits
  for (int i = 0; i < 5; ++i) {
    const int32_t x3 = rescale(mul(mul(x, x), x), 9, 3);
    x = rescale(sub(mul(fixedpoint_half_three, x), mul(fixedpoint_half_input, x3)), 6, 3);
  }
  const int32_t fixedpoint_half_sqrt_2 = 1518500250;
  x = mul(x, fixedpoint_half_sqrt_2);
  int32_t m = x;
  if (shift < 0) {
    m = shift_left_wrapping(m, -shift);
    shift = 0;
  }
  *out_mult = m;
  *out_shift = shift * reverse_shift;
}

}  // namespace tickinfer::tfl::fx
