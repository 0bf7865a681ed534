#pragma once
// 16-bit fixed-point logistic and tanh of the integer (8x8_16) LSTM, bit for bit as TFLite
// computes them (tensor_utils ApplySigmoid / ApplyTanh, which call gemmlowp's fixed-point
// `logistic` and `tanh` on int16 raw values).
//
// Notation: a Q<m> value is an int16 raw r meaning r / 2^(15 - m) (m integer bits, 15 - m
// fractional bits). The gate pre-activations are Q3 (scale 2^-12); the cell state is
// Q(15 + cell_scale) for a cell-state scale of 2^cell_scale; the results are Q0 (scale 2^-15).
//
// Every intermediate is an int16 as in gemmlowp: additions and negations wrap, products round to
// nearest with ties up (SaturatingRoundingDoublingHighMul), right shifts round half away from
// zero, left shifts saturate. Constants are gemmlowp's int32 Q0/Q2 constants rounded to int16.
//
// These functions are the reference. The scalar step kernels look them up in 65536-entry tables
// built from them (below); the AVX2 kernels compute them in vector lanes (fx16_avx2.hpp).
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <type_traits>
#include <utility>

namespace tickinfer::tfl::ops::lstm::fx16 {

// --- int16 primitives ---------------------------------------------------------------------------

inline int16_t wrap(int32_t v) { return static_cast<int16_t>(v); }  // modular, as C++20 defines it

// (a * b * 2) / 2^16 to nearest: a nudge of 2^14 (1 - 2^14 for a negative product) and a
// truncating division, so ties go up (-1.5 -> -1); -1 * -1 saturates to the largest value.
inline int16_t mul(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return std::numeric_limits<int16_t>::max();
  const int32_t ab = int32_t{a} * int32_t{b};
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return wrap((ab + nudge) / (1 << 15));  // division truncates toward zero
}

// x / 2^e rounded half away from zero (gemmlowp RoundingDivideByPOT), e in [0, 31].
inline int32_t rounding_divide_by_pot(int32_t x, int e) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << e) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> e) + (remainder > threshold ? 1 : 0);
}

// x * 2^e: saturating for e > 0, rounding for e < 0.
template <int E>
inline int16_t mul_by_pot(int16_t x) {
  if constexpr (E > 0) {
    constexpr int32_t threshold = (1 << (15 - E)) - 1;
    if (x > threshold) return std::numeric_limits<int16_t>::max();
    if (x < -threshold) return std::numeric_limits<int16_t>::min();
    return wrap(int32_t{x} * (1 << E));
  } else if constexpr (E < 0) {
    return wrap(rounding_divide_by_pot(x, -E));
  } else {
    return x;
  }
}

// gemmlowp's int32 raw constants, as its RescaleConstantInitializer narrows them to int16.
constexpr int16_t constant16(int32_t raw32) {
  const int32_t mask = 0xFFFF;
  const int32_t remainder = raw32 & mask;
  const int32_t threshold = (mask >> 1) + (raw32 < 0 ? 1 : 0);
  return static_cast<int16_t>((raw32 >> 16) + (remainder > threshold ? 1 : 0));
}

inline int16_t saturating_add(int16_t a, int16_t b) {
  const int32_t s = int32_t{a} + int32_t{b};
  return static_cast<int16_t>(s > 32767 ? 32767 : s < -32768 ? -32768 : s);
}

// (a + b) / 2 rounded half away from zero.
inline int16_t rounding_half_sum(int16_t a, int16_t b) {
  const int32_t sum = int32_t{a} + int32_t{b};
  return wrap((sum + (sum >= 0 ? 1 : -1)) / 2);
}

constexpr int16_t kOneQ0 = 32767;  // Q0 "one" is the largest raw value
constexpr int16_t kOneQ2 = 1 << 13;

// --- exp ----------------------------------------------------------------------------------------

// exp(a) for a Q0 a in [-1/4, 0): Taylor expansion around -1/8.
inline int16_t exp_on_interval_between_negative_one_quarter_and_0_excl(int16_t a) {
  constexpr int16_t kConstantTerm = constant16(1895147668);  // exp(-1/8)
  constexpr int16_t kOneThird = constant16(715827883);
  const int16_t x = wrap(a + (1 << 12));  // a + 1/8
  const int16_t x2 = mul(x, x);
  const int16_t x3 = mul(x2, x);
  const int16_t x4 = mul(x2, x2);
  const int16_t x4_over_4 = mul_by_pot<-2>(x4);
  const int16_t poly = mul_by_pot<-1>(wrap(mul(wrap(x4_over_4 + x3), kOneThird) + x2));
  return saturating_add(kConstantTerm, mul(kConstantTerm, wrap(x + poly)));
}

// The barrel shifter of exp_on_negative_values: exp(-2^e) for e = kExpBarrelFirst + i, as
// gemmlowp's Q0 int32 raw constants. Shared with the vector form (fx16_avx2.hpp).
inline constexpr int kExpBarrelFirst = -2;
inline constexpr int32_t kExpBarrel[] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};

template <int IB, int I, class Step>
constexpr void barrel_term(Step& step) {
  if constexpr (IB > kExpBarrelFirst + I) step.template operator()<kExpBarrelFirst + I>(constant16(kExpBarrel[I]));
}
// step.template operator()<e>(multiplier as int16) for every term a Q<IB> value reaches (e < IB),
// smallest e first.
template <int IB, class Step>
constexpr void for_each_barrel_term(Step&& step) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    (barrel_term<IB, I>(step), ...);
  }(std::make_integer_sequence<int, static_cast<int>(std::size(kExpBarrel))>{});
}

// exp(a) for a Q<IB> a <= 0, as Q0.
template <int IB>
inline int16_t exp_on_negative_values(int16_t a) {
  constexpr int kFrac = 15 - IB;
  constexpr int16_t kOneQuarter = static_cast<int16_t>(1 << (kFrac - 2));
  const int16_t mask = wrap(kOneQuarter - 1);
  const int16_t a_mod_quarter_minus_one_quarter = wrap((a & mask) - kOneQuarter);
  int16_t result = exp_on_interval_between_negative_one_quarter_and_0_excl(
      mul_by_pot<IB>(a_mod_quarter_minus_one_quarter));
  const int16_t remainder = wrap(a_mod_quarter_minus_one_quarter - a);

  // Multiply by exp(-2^e) for every bit e of the remainder above the quarter.
  for_each_barrel_term<IB>([&]<int kE>(int16_t multiplier) {
    if (remainder & wrap(1 << (kFrac + kE))) result = mul(result, multiplier);
  });

  if constexpr (IB > 5) {  // below -32 the result is 0
    constexpr int16_t kClamp = constant16(-(1 << (36 - IB)));
    if (a < kClamp) result = 0;
  }
  if (a == 0) result = kOneQ0;
  return result;
}

// --- Newton-Raphson reciprocals (Q0 in, Q0 out) ---------------------------------------------------

// Q2 estimate of 1 / half_denominator, 3 Newton-Raphson steps from 48/17 - 32/17 d.
inline int16_t reciprocal_estimate_q2(int16_t half_denominator) {
  constexpr int16_t k48Over17 = constant16(1515870810);
  constexpr int16_t kNeg32Over17 = constant16(-1010580540);
  int16_t x = wrap(k48Over17 + mul(half_denominator, kNeg32Over17));
  for (int i = 0; i < 3; ++i) {
    const int16_t one_minus_dx = wrap(kOneQ2 - mul(half_denominator, x));
    x = wrap(x + mul_by_pot<2>(mul(x, one_minus_dx)));
  }
  return x;
}

// 1 / (1 + a) for a in (0, 1).
inline int16_t one_over_one_plus_x_for_x_in_0_1(int16_t a) {
  const int16_t x = reciprocal_estimate_q2(rounding_half_sum(a, kOneQ0));
  return mul_by_pot<1>(x);  // Q2 halved is Q1 with the same raw; Q1 -> Q0
}

// (1 - a) / (1 + a) for a in (0, 1).
inline int16_t one_minus_x_over_one_plus_x_for_x_in_0_1(int16_t a) {
  const int16_t x = reciprocal_estimate_q2(rounding_half_sum(a, kOneQ0));
  return mul_by_pot<2>(wrap(x - kOneQ2));  // Q2 -> Q0
}

// --- logistic and tanh --------------------------------------------------------------------------

// 1 / (1 + exp(-a)) for a Q<IB> a, as Q0.
template <int IB>
inline int16_t logistic(int16_t a) {
  if (a == 0) return constant16(1 << 30);  // one half
  const int16_t abs_a = a > 0 ? a : wrap(-a);
  const int16_t if_positive = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values<IB>(wrap(-abs_a)));
  return a > 0 ? if_positive : wrap(kOneQ0 - if_positive);
}

// tanh(a) for a Q<IB> a, as Q0.
template <int IB>
inline int16_t tanh(int16_t a) {
  if (a == 0) return 0;
  const int16_t n = a < 0 ? a : wrap(-a);  // -|a|
  // exp(2n): the raw value read with one more integer bit is 2n.
  const int16_t t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values<IB + 1>(n));
  return a < 0 ? wrap(-t) : t;
}

// --- tables -------------------------------------------------------------------------------------

// f(raw) for every int16 raw value, indexed by raw + 32768. Two entries of zero padding at the
// end let a vector gather read 32 bits at any index.
using Table = std::array<int16_t, 65536 + 2>;

// logistic on Q3 (the gates) and tanh on Q0..Q6 (Q3: the cell gate; Q(15 + cell_scale): the
// cell state). Built once per process, on first use (thread-safe static initialisation).
const Table& logistic_q3_table();
const Table& tanh_table(int integer_bits);  // integer_bits in [0, 6]

// One of those functions as the step kernels take it: which it is, for the kernels that compute
// it in vector lanes (fx16_avx2.hpp), and its table, for those that look it up.
struct Activation {
  int tanh_integer_bits = -1;  // -1: logistic on Q3; 0..6: tanh on Q<tanh_integer_bits>
  const Table* table = nullptr;
};
Activation logistic_q3_activation();
Activation tanh_activation(int integer_bits);  // integer_bits in [0, 6]

// body.template operator()<bits>() for f's function (bits -1: logistic Q3), so vector kernels
// get one instance per function the LSTM uses.
template <class Body>
inline void with_function(const Activation& f, Body&& body) {
  switch (f.tanh_integer_bits) {
    case -1: body.template operator()<-1>(); break;
    case 0: body.template operator()<0>(); break;
    case 1: body.template operator()<1>(); break;
    case 2: body.template operator()<2>(); break;
    case 3: body.template operator()<3>(); break;
    case 4: body.template operator()<4>(); break;
    case 5: body.template operator()<5>(); break;
    default: body.template operator()<6>(); break;
  }
}

}  // namespace tickinfer::tfl::ops::lstm::fx16
