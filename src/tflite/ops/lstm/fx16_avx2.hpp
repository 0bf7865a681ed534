#pragma once
// The integer LSTM's 16-bit fixed-point logistic and tanh (sequence_lstm_int16_math.hpp) on 16
// int16 lanes, bit for bit: every function here equals the scalar reference's table on all 65536
// inputs (tests/quant_lstm_kernels_test.cpp, through the AVX2 activation kernel). Include only from
// translation units compiled for AVX2.
//
// Why compute rather than look up: a table lookup costs two loads and a store per element; this is
// about 90 instructions per 16 elements as compiled (353 for four vectors of logistic), 19 of them
// vpmulhrsw, so it pays only on a core with more than one vector multiply pipe. Which form runs is
// measured at prepare (sequence_lstm_int8_kernels.hpp).
//
// Where the scalar reference saturates or rounds in a way one instruction does not, the input
// ranges make the cheap form exact, argued at each use:
//  - vpmulhrsw is fx16::mul except for -32768 * -32768, which no product here can meet;
//  - a rounding right shift of a value known non-negative is vpmulhrsw by a power of two;
//  - a saturating multiply by 4 is two saturating doublings (vpaddsw).
#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "tflite/ops/lstm/sequence_lstm_int16_math.hpp"

namespace tickinfer::tfl::ops::lstm::fx16::avx2 {

// K vectors evaluated side by side: every step below is applied to all K before the next, so the
// core overlaps K independent chains (one function is one long chain of dependent operations;
// alone, it runs at its latency, not at the core's throughput).
template <int K>
struct Vecs {
  __m256i v[K];
  __m256i& operator[](int j) { return v[j]; }
  const __m256i& operator[](int j) const { return v[j]; }
};

template <int K, class F, class... A>
inline Vecs<K> each(F f, const A&... a) {
  Vecs<K> r;
#pragma GCC unroll 8
  for (int j = 0; j < K; ++j) r[j] = f(a[j]...);
  return r;
}

inline __m256i splat(int16_t v) { return _mm256_set1_epi16(v); }
inline __m256i mul(__m256i a, __m256i b) { return _mm256_mulhrs_epi16(a, b); }
inline __m256i times4_saturating(__m256i x) {
  const __m256i x2 = _mm256_adds_epi16(x, x);
  return _mm256_adds_epi16(x2, x2);
}

template <int K>
inline Vecs<K> mul(const Vecs<K>& a, const Vecs<K>& b) { return each<K>([](__m256i u, __m256i v) { return mul(u, v); }, a, b); }
template <int K>
inline Vecs<K> mul(const Vecs<K>& a, int16_t c) {
  const __m256i cv = splat(c);
  return each<K>([cv](__m256i u) { return mul(u, cv); }, a);
}
template <int K>
inline Vecs<K> add(const Vecs<K>& a, const Vecs<K>& b) {
  return each<K>([](__m256i u, __m256i v) { return _mm256_add_epi16(u, v); }, a, b);
}
template <int K>
inline Vecs<K> add(const Vecs<K>& a, int16_t c) {
  const __m256i cv = splat(c);
  return each<K>([cv](__m256i u) { return _mm256_add_epi16(u, cv); }, a);
}

// exp(a) for a in [-1/4, 0) as Q0: a's raw values lie in [-2^13, 0), so x = a + 1/8 and every
// power of it stay within 2^12 in magnitude (no -32768 operand); x^4 >= 0 and
// x^2 + (x^4 / 4 + x^3) / 3 >= 0 (|x^3| <= x^2 / 8), so the halving and quartering round as
// vpmulhrsw by 2^14 and 2^13 does.
template <int K>
inline Vecs<K> exp_on_interval_between_negative_one_quarter_and_0_excl(const Vecs<K>& a) {
  constexpr int16_t kConstantTerm = constant16(1895147668);
  constexpr int16_t kOneThird = constant16(715827883);
  const Vecs<K> x = add(a, int16_t{1 << 12});
  const Vecs<K> x2 = mul(x, x);
  const Vecs<K> x3 = mul(x2, x);
  const Vecs<K> x4 = mul(x2, x2);
  const Vecs<K> x4_over_4 = mul(x4, int16_t{1 << 13});
  const Vecs<K> sum = add(mul(add(x4_over_4, x3), kOneThird), x2);
  const Vecs<K> poly = mul(sum, int16_t{1 << 14});
  const __m256i c = splat(kConstantTerm);
  return each<K>([c](__m256i u) { return _mm256_adds_epi16(c, mul(c, u)); }, add(x, poly));
}

// exp(a) for Q<IB> a <= 0 as Q0, IB in [0, 7]. The a == 0 case is left to the callers (logistic
// and tanh answer it themselves). The barrel's partial results lie in [0, 32767] and its
// constants are positive, so every product is vpmulhrsw's.
template <int IB, int K>
inline Vecs<K> exp_on_negative_values(const Vecs<K>& a) {
  constexpr int kFrac = 15 - IB;
  constexpr int16_t kOneQuarter = static_cast<int16_t>(1 << (kFrac - 2));
  const __m256i quarter = splat(kOneQuarter), mask = splat(static_cast<int16_t>(kOneQuarter - 1));
  const Vecs<K> a_mod_quarter_minus_one_quarter =
      each<K>([=](__m256i u) { return _mm256_sub_epi16(_mm256_and_si256(u, mask), quarter); }, a);
  // In [-2^(13 - IB), 0) raw, so the left shift by IB cannot saturate.
  Vecs<K> result = exp_on_interval_between_negative_one_quarter_and_0_excl<K>(
      each<K>([](__m256i u) { return _mm256_slli_epi16(u, IB); }, a_mod_quarter_minus_one_quarter));
  const Vecs<K> remainder =
      each<K>([](__m256i u, __m256i v) { return _mm256_sub_epi16(u, v); }, a_mod_quarter_minus_one_quarter, a);
  for_each_barrel_term<IB>([&]<int kE>(int16_t multiplier) {
    const __m256i bit = splat(static_cast<int16_t>(1 << (kFrac + kE))), m = splat(multiplier);
    result = each<K>(
        [=](__m256i r, __m256i rem) {
          const __m256i set = _mm256_cmpeq_epi16(_mm256_and_si256(rem, bit), bit);
          return _mm256_blendv_epi8(r, mul(r, m), set);
        },
        result, remainder);
  });
  if constexpr (IB > 5) {
    const __m256i clamp = splat(constant16(-(1 << (36 - IB))));
    result = each<K>([clamp](__m256i r, __m256i u) { return _mm256_andnot_si256(_mm256_cmpgt_epi16(clamp, u), r); },
                     result, a);
  }
  return result;
}

// Q2 estimate of 1 / d for d in [1/2, 1] (raw [16384, 32767]): the estimates stay positive and
// below 2 (raw < 2^14), so no product meets -32768 * -32768.
template <int K>
inline Vecs<K> reciprocal_estimate_q2(const Vecs<K>& half_denominator) {
  constexpr int16_t k48Over17 = constant16(1515870810);
  constexpr int16_t kNeg32Over17 = constant16(-1010580540);
  Vecs<K> x = add(mul(half_denominator, kNeg32Over17), k48Over17);
  const __m256i one = splat(kOneQ2);
  for (int i = 0; i < 3; ++i) {
    const Vecs<K> one_minus_dx = each<K>([one](__m256i u) { return _mm256_sub_epi16(one, u); }, mul(half_denominator, x));
    x = add(x, each<K>([](__m256i u) { return times4_saturating(u); }, mul(x, one_minus_dx)));
  }
  return x;
}

// (e + 1) / 2 rounded up, for e in [0, 32767]: the unsigned average's rounding.
template <int K>
inline Vecs<K> half_of_one_plus(const Vecs<K>& e) {
  const __m256i one = splat(kOneQ0);
  return each<K>([one](__m256i u) { return _mm256_avg_epu16(u, one); }, e);
}

// -|a| (-32768 stays -32768, as the reference's wrapping negation leaves it).
template <int K>
inline Vecs<K> minus_abs(const Vecs<K>& a) {
  return each<K>([](__m256i u) { return _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_abs_epi16(u)); }, a);
}

// 1 / (1 + exp(-|a|)) folded by a's sign: logistic on Q3 raw values, as Q0.
template <int K>
inline Vecs<K> logistic_q3(const Vecs<K>& a) {
  const Vecs<K> e = exp_on_negative_values<3, K>(minus_abs(a));
  // 1 / (1 + e): the Q2 estimate halved is Q1 with the same raw; Q1 -> Q0 saturates.
  const Vecs<K> r = reciprocal_estimate_q2(half_of_one_plus(e));
  const __m256i one = splat(kOneQ0), half = splat(constant16(1 << 30)), zero = _mm256_setzero_si256();
  return each<K>(
      [=](__m256i rv, __m256i u) {
        const __m256i if_positive = _mm256_adds_epi16(rv, rv);
        const __m256i folded = _mm256_blendv_epi8(_mm256_sub_epi16(one, if_positive), if_positive,
                                                  _mm256_cmpgt_epi16(u, zero));
        return _mm256_blendv_epi8(folded, half, _mm256_cmpeq_epi16(u, zero));
      },
      r, a);
}

// tanh on Q<IB> raw values (IB in [0, 6]), as Q0: (1 - e) / (1 + e) with e = exp(-2|a|), the
// sign of a put back (and 0 for a == 0) by vpsignw.
template <int IB, int K>
inline Vecs<K> tanh(const Vecs<K>& a) {
  const Vecs<K> r = reciprocal_estimate_q2(half_of_one_plus(exp_on_negative_values<IB + 1, K>(minus_abs(a))));
  const __m256i one = splat(kOneQ2);
  return each<K>([one](__m256i rv, __m256i u) { return _mm256_sign_epi16(times4_saturating(_mm256_sub_epi16(rv, one)), u); },
                 r, a);
}

}  // namespace tickinfer::tfl::ops::lstm::fx16::avx2
