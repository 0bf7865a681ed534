// The integer LSTM's 16-bit fixed-point primitives, checked against values derived by hand from
// gemmlowp's definitions (round half away from zero, saturation), against the real functions
// within the int16 method's precision, and the prepare-time tables against the functions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "tflite/ops/lstm/sequence_lstm_int16_math.hpp"

namespace {

namespace fx16 = tickinfer::tfl::ops::lstm::fx16;

TEST(QuantLstmFixedPoint, RoundingDivideByPowerOfTwoRoundsHalfAwayFromZero) {
  EXPECT_EQ(fx16::rounding_divide_by_pot(5, 1), 3);    // 2.5 -> 3
  EXPECT_EQ(fx16::rounding_divide_by_pot(-5, 1), -3);  // -2.5 -> -3
  EXPECT_EQ(fx16::rounding_divide_by_pot(3, 1), 2);    // 1.5 -> 2
  EXPECT_EQ(fx16::rounding_divide_by_pot(-3, 1), -2);
  EXPECT_EQ(fx16::rounding_divide_by_pot(5, 2), 1);    // 1.25 -> 1
  EXPECT_EQ(fx16::rounding_divide_by_pot(-6, 2), -2);  // -1.5 -> -2
  EXPECT_EQ(fx16::rounding_divide_by_pot(1 << 20, 15), 32);
}

TEST(QuantLstmFixedPoint, Int16ProductIsDoublingHighMulWithSaturation) {
  EXPECT_EQ(fx16::mul(16384, 16384), 8192);     // 0.5 * 0.5 = 0.25
  EXPECT_EQ(fx16::mul(-16384, 16384), -8192);
  EXPECT_EQ(fx16::mul(-32768, -32768), 32767);  // (-1)(-1) saturates
  // The nudge is 2^14 for a non-negative product and 1 - 2^14 for a negative one before a
  // truncating division, so ties go up: 1.5 -> 2 but -1.5 -> -1.
  EXPECT_EQ(fx16::mul(3, 16384), 2);
  EXPECT_EQ(fx16::mul(-3, 16384), -1);
  EXPECT_EQ(fx16::mul(-5, 16384), -2);          // -2.5 -> -2
}

TEST(QuantLstmFixedPoint, MultiplyByPowerOfTwoSaturatesLeftAndRoundsRight) {
  EXPECT_EQ(fx16::mul_by_pot<2>(8191), 32764);
  EXPECT_EQ(fx16::mul_by_pot<2>(8192), 32767);
  EXPECT_EQ(fx16::mul_by_pot<2>(-8192), -32768);
  EXPECT_EQ(fx16::mul_by_pot<-1>(3), 2);
  EXPECT_EQ(fx16::constant16(1 << 30), 16384);     // one half, Q0
  EXPECT_EQ(fx16::constant16(1895147668), 28918);  // exp(-1/8) * 2^15 = 28917.7
}

TEST(QuantLstmFixedPoint, LogisticAndTanhFixedPoints) {
  EXPECT_EQ(fx16::logistic<3>(0), 16384);
  EXPECT_EQ(fx16::tanh<3>(0), 0);
  EXPECT_EQ(fx16::tanh<4>(0), 0);
  for (int r = -32767; r <= 32767; r += 37) {
    const auto x = static_cast<int16_t>(r);
    // By construction: logistic(-x) = one - logistic(x) and tanh(-x) = -tanh(x).
    EXPECT_EQ(fx16::logistic<3>(x) + fx16::logistic<3>(static_cast<int16_t>(-r)), 32767) << r;
    EXPECT_EQ(fx16::tanh<3>(x), -fx16::tanh<3>(static_cast<int16_t>(-r))) << r;
  }
}

// The int16 method is accurate to a few parts in 2^15 over the whole input range.
TEST(QuantLstmFixedPoint, CloseToTheRealFunctions) {
  double worst_sigmoid = 0, worst_tanh3 = 0, worst_tanh4 = 0;
  for (int r = -32768; r <= 32767; ++r) {
    const auto x = static_cast<int16_t>(r);
    worst_sigmoid = std::max(worst_sigmoid, std::fabs(fx16::logistic<3>(x) - 32768.0 / (1.0 + std::exp(-r / 4096.0))));
    worst_tanh3 = std::max(worst_tanh3, std::fabs(fx16::tanh<3>(x) - 32768.0 * std::tanh(r / 4096.0)));
    worst_tanh4 = std::max(worst_tanh4, std::fabs(fx16::tanh<4>(x) - 32768.0 * std::tanh(r / 2048.0)));
  }
  EXPECT_LE(worst_sigmoid, 8.0);
  EXPECT_LE(worst_tanh3, 16.0);
  EXPECT_LE(worst_tanh4, 16.0);
}

int16_t tanh_of(int integer_bits, int16_t x) {
  switch (integer_bits) {
    case 0: return fx16::tanh<0>(x);
    case 1: return fx16::tanh<1>(x);
    case 2: return fx16::tanh<2>(x);
    case 3: return fx16::tanh<3>(x);
    case 4: return fx16::tanh<4>(x);
    case 5: return fx16::tanh<5>(x);
    default: return fx16::tanh<6>(x);
  }
}

// The tables hold the function's value for every int16 input (index: input + 32768).
TEST(QuantLstmFixedPoint, TablesEqualTheFunctions) {
  const fx16::Table& sig = fx16::logistic_q3_table();
  for (int r = -32768; r <= 32767; ++r) {
    const auto x = static_cast<int16_t>(r);
    ASSERT_EQ(sig[static_cast<size_t>(r + 32768)], fx16::logistic<3>(x)) << r;
  }
  for (int ib = 0; ib <= 6; ++ib) {
    const fx16::Table& t = fx16::tanh_table(ib);
    for (int r = -32768; r <= 32767; ++r) {
      const auto x = static_cast<int16_t>(r);
      ASSERT_EQ(t[static_cast<size_t>(r + 32768)], tanh_of(ib, x)) << "integer bits " << ib << " input " << r;
    }
  }
}

}  // namespace
