// TFLite's fixed-point requantization, checked against values worked out by hand from the
// formulas in the interop facts (section 6) and gemmlowp's definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tflite/fixed_point.hpp"

using namespace tickinfer::tfl;

namespace {
constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
}  // namespace

TEST(QuantizeMultiplier, PowersOfTwoAndFractions) {
  auto a = quantize_multiplier(0.5, Rounding::Double);
  EXPECT_EQ(a.multiplier, 1 << 30);
  EXPECT_EQ(a.shift, 0);
  auto b = quantize_multiplier(1.0, Rounding::Double);
  EXPECT_EQ(b.multiplier, 1 << 30);
  EXPECT_EQ(b.shift, 1);
  auto c = quantize_multiplier(0.75, Rounding::Double);
  EXPECT_EQ(c.multiplier, 1610612736);  // 0.75 * 2^31
  EXPECT_EQ(c.shift, 0);
  auto d = quantize_multiplier(0.125, Rounding::Single);
  EXPECT_EQ(d.multiplier, 1 << 30);
  EXPECT_EQ(d.shift, -2);
}

TEST(QuantizeMultiplier, ZeroAndTinyBecomeZero) {
  auto z = quantize_multiplier(0.0, Rounding::Double);
  EXPECT_EQ(z.multiplier, 0);
  EXPECT_EQ(z.shift, 0);
  auto t = quantize_multiplier(std::ldexp(1.0, -40), Rounding::Double);  // exponent -39 < -31
  EXPECT_EQ(t.multiplier, 0);
  EXPECT_EQ(t.shift, 0);
}

TEST(QuantizeMultiplier, RoundingUpTo2Pow31Renormalizes) {
  // q = 1 - 2^-40 rounds to 2^31 * 1.0, which is halved with the exponent incremented.
  auto m = quantize_multiplier(1.0 - std::ldexp(1.0, -40), Rounding::Double);
  EXPECT_EQ(m.multiplier, 1 << 30);
  EXPECT_EQ(m.shift, 1);
}

TEST(QuantizeMultiplier, SingleRoundingClampsShiftTo30) {
  auto d = quantize_multiplier(std::ldexp(1.0, 40), Rounding::Double);
  EXPECT_EQ(d.multiplier, 1 << 30);
  EXPECT_EQ(d.shift, 41);
  auto s = quantize_multiplier(std::ldexp(1.0, 40), Rounding::Single);
  EXPECT_EQ(s.multiplier, kMax);
  EXPECT_EQ(s.shift, 30);
}

TEST(SaturatingRoundingDoublingHighMul, Cases) {
  EXPECT_EQ(saturating_rounding_doubling_high_mul(kMin, kMin), kMax);
  EXPECT_EQ(saturating_rounding_doubling_high_mul(1 << 30, 1 << 30), 1 << 29);
  EXPECT_EQ(saturating_rounding_doubling_high_mul(3, 1 << 30), 2);    // 1.5 -> 2
  EXPECT_EQ(saturating_rounding_doubling_high_mul(-3, 1 << 30), -1);  // (-3*2^30 + 1 - 2^30) / 2^31 truncates to -1
  EXPECT_EQ(saturating_rounding_doubling_high_mul(-5, 1 << 30), -2);  // -2.5 -> -2
  EXPECT_EQ(saturating_rounding_doubling_high_mul(kMin, 1 << 30), -(1 << 30));
}

TEST(RoundingDivideByPOT, TiesAwayFromZero) {
  EXPECT_EQ(rounding_divide_by_pot(5, 1), 3);
  EXPECT_EQ(rounding_divide_by_pot(-5, 1), -3);
  EXPECT_EQ(rounding_divide_by_pot(6, 2), 2);
  EXPECT_EQ(rounding_divide_by_pot(-6, 2), -2);
  EXPECT_EQ(rounding_divide_by_pot(-7, 2), -2);  // -1.75
  EXPECT_EQ(rounding_divide_by_pot(7, 0), 7);
  EXPECT_EQ(rounding_divide_by_pot(kMin, 31), -1);
  EXPECT_EQ(rounding_divide_by_pot(kMax, 31), 1);
}

TEST(MultiplyByQuantizedMultiplier, DoubleAndSingleDifferOnDoubleTies) {
  // 101 * 0.25 = 25.25. Double: 101 * 0.5 = 50.5 -> 51, then 51 / 2 = 25.5 -> 26. Single: 25.
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Double>(101, 1 << 30, -1), 26);
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Single>(101, 1 << 30, -1), 25);
  EXPECT_EQ(multiply_by_quantized_multiplier(101, 1 << 30, -1, Rounding::Double), 26);
  EXPECT_EQ(multiply_by_quantized_multiplier(101, 1 << 30, -1, Rounding::Single), 25);
}

TEST(MultiplyByQuantizedMultiplier, NegativeTies) {
  // -1.5: double rounding gives -1 (SRDHM truncation), single gives (-3*2^30 + 2^30) >> 31 = -1.
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Double>(-3, 1 << 30, 0), -1);
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Single>(-3, 1 << 30, 0), -1);
  // -2.5 with shift 0: double SRDHM(-5, 2^30) = -2; single (-5*2^30 + 2^30) >> 31 = -2.
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Double>(-5, 1 << 30, 0), -2);
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Single>(-5, 1 << 30, 0), -2);
  // -1.25 (x=-5, M=0.25): double -2 then RDBP(-2, 1) = -1; single floor(-0.75) = -1.
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Double>(-5, 1 << 30, -1), -1);
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Single>(-5, 1 << 30, -1), -1);
  // -2.5 via a right shift: double SRDHM(-20, 2^30) = -10, then RDBP(-10, 2) = -2.5 -> -3.
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Double>(-20, 1 << 30, -2), -3);
  // single: (-20*2^30 + 2^32) >> 33 = floor(-2.0) = -2 (ties toward +inf).
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Single>(-20, 1 << 30, -2), -2);
}

TEST(MultiplyByQuantizedMultiplier, LeftShifts) {
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Double>(3, 1 << 30, 2), 6);
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Single>(3, 1 << 30, 2), 6);
  // Shift clamp of single rounding: M = 2^40 becomes (2^31 - 1) * 2^-1 ~ 2^30.
  auto s = quantize_multiplier(std::ldexp(1.0, 40), Rounding::Single);
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Single>(1, s.multiplier, s.shift), 1 << 30);
}

TEST(MultiplyByQuantizedMultiplier, ExtremeInputs) {
  // INT32_MIN * 0.5: double SRDHM(INT32_MIN, 2^30) = -2^30; single (-2^31 * 2^30 + 2^30) >> 31 = -2^30.
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Double>(kMin, 1 << 30, 0), -(1 << 30));
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Single>(kMin, 1 << 30, 0), -(1 << 30));
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Double>(kMax, kMax, 0), kMax - 1);
  EXPECT_EQ(multiply_by_quantized_multiplier<Rounding::Double>(1000, 1 << 30, -31), 0);
}

TEST(QuantizedActivationRange, FusedActivations) {
  int32_t lo, hi;
  ASSERT_TRUE(quantized_activation_range(FusedActivation::Relu, 0.5f, -10, -128, 127, &lo, &hi));
  EXPECT_EQ(lo, -10);
  EXPECT_EQ(hi, 127);
  ASSERT_TRUE(quantized_activation_range(FusedActivation::Relu6, 0.5f, -10, -128, 127, &lo, &hi));
  EXPECT_EQ(lo, -10);
  EXPECT_EQ(hi, 2);
  ASSERT_TRUE(quantized_activation_range(FusedActivation::ReluN1To1, 0.5f, -10, -128, 127, &lo, &hi));
  EXPECT_EQ(lo, -12);
  EXPECT_EQ(hi, -8);
  ASSERT_TRUE(quantized_activation_range(FusedActivation::Relu6, 0.01f, 0, -128, 127, &lo, &hi));
  EXPECT_EQ(hi, 127);  // 600 clamps to the int8 range
  EXPECT_FALSE(quantized_activation_range(FusedActivation::Tanh, 0.5f, 0, -128, 127, &lo, &hi));
}

// Prepare-time bounds from a file's scales: a hostile scale puts 6 / scale past int32 (inf in
// float), where a plain conversion is undefined; the bound saturates instead (the fuzzer found a
// CONCATENATION requantization at -6e17).
TEST(RoundToInt32Saturated, EqualsTheConversionInRangeAndSaturatesOutside) {
  for (float x : {-2.5f, -0.5f, 0.49f, 0.5f, 1.5f, 1234567.0f, -1073741760.0f}) {
    EXPECT_EQ(round_to_int32_saturated(x), static_cast<int32_t>(std::round(x))) << x;
  }
  EXPECT_EQ(round_to_int32_saturated(6e38f * 10.0f), 1 << 30);  // inf
  EXPECT_EQ(round_to_int32_saturated(-6.03482e17f), -(1 << 30));
  EXPECT_EQ(round_to_int32_saturated(std::nanf("")), 0);
  int32_t lo = 0, hi = 0;
  ASSERT_TRUE(quantized_activation_range(FusedActivation::Relu6, 1e-38f, 5, -128, 127, &lo, &hi));
  EXPECT_EQ(lo, 5);    // 0 -> the zero point
  EXPECT_EQ(hi, 127);  // 6 / 1e-38 saturates, then clamps to the int8 range
}
