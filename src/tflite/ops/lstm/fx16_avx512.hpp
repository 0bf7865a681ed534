#pragma once
// The integer LSTM's 16-bit fixed-point logistic and tanh (sequence_lstm_int16_math.hpp) on 32
// int16 lanes (AVX-512BW), bit for bit: the AVX2 form's arithmetic (fx16_avx2.hpp, where each
// cheap instruction is argued exact), with mask registers where that form blends: a barrel term
// is one vptestmw and one masked vpmulhrsw instead of and, compare, multiply and blend. Every
// function equals the scalar reference's table on all 65536 inputs (quant_lstm_kernels_test).
// Include only from translation units compiled with the AVX-512 flags.
#include "kernels/x86_intrinsics.hpp"

#include <cstdint>

#include "tflite/ops/lstm/sequence_lstm_int16_math.hpp"

namespace tickinfer::tfl::ops::lstm::fx16::avx512 {

// K vectors side by side, as in the AVX2 form: one function is one long dependent chain.
template <int K>
struct Vecs {
  __m512i v[K];
  __m512i& operator[](int j) { return v[j]; }
  const __m512i& operator[](int j) const { return v[j]; }
};

template <int K, class F, class... A>
inline Vecs<K> each(F f, const A&... a) {
  Vecs<K> r;
#pragma GCC unroll 8
  for (int j = 0; j < K; ++j) r[j] = f(a[j]...);
  return r;
}

inline __m512i splat(int16_t v) { return _mm512_set1_epi16(v); }
inline __m512i mul(__m512i a, __m512i b) { return _mm512_mulhrs_epi16(a, b); }
inline __m512i adds(__m512i a, __m512i b) { return _mm512_adds_epi16(a, b); }
inline __m512i add(__m512i a, __m512i b) { return _mm512_add_epi16(a, b); }
inline __m512i sub(__m512i a, __m512i b) { return _mm512_sub_epi16(a, b); }
inline __m512i times4_saturating(__m512i x) {
  const __m512i x2 = adds(x, x);
  return adds(x2, x2);
}

template <int K>
inline Vecs<K> mul(const Vecs<K>& a, const Vecs<K>& b) { return each<K>([](__m512i u, __m512i v) { return mul(u, v); }, a, b); }
template <int K>
inline Vecs<K> mul(const Vecs<K>& a, int16_t c) {
  const __m512i cv = splat(c);
  return each<K>([cv](__m512i u) { return mul(u, cv); }, a);
}
template <int K>
inline Vecs<K> add(const Vecs<K>& a, const Vecs<K>& b) {
  return each<K>([](__m512i u, __m512i v) { return add(u, v); }, a, b);
}
template <int K>
inline Vecs<K> add(const Vecs<K>& a, int16_t c) {
  const __m512i cv = splat(c);
  return each<K>([cv](__m512i u) { return add(u, cv); }, a);
}

// exp(a) for a in [-1/4, 0) as Q0 (the AVX2 form's argument holds lane for lane).
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
  const __m512i c = splat(kConstantTerm);
  return each<K>([c](__m512i u) { return adds(c, mul(c, u)); }, add(x, poly));
}

// exp(a) for Q<IB> a <= 0 as Q0, IB in [0, 7]; a == 0 is left to the callers.
template <int IB, int K>
inline Vecs<K> exp_on_negative_values(const Vecs<K>& a) {
  constexpr int kFrac = 15 - IB;
  constexpr int16_t kOneQuarter = static_cast<int16_t>(1 << (kFrac - 2));
  const __m512i quarter = splat(kOneQuarter), mask = splat(static_cast<int16_t>(kOneQuarter - 1));
  const Vecs<K> a_mod_quarter_minus_one_quarter =
      each<K>([=](__m512i u) { return sub(_mm512_and_si512(u, mask), quarter); }, a);
  Vecs<K> result = exp_on_interval_between_negative_one_quarter_and_0_excl<K>(
      each<K>([](__m512i u) { return _mm512_slli_epi16(u, IB); }, a_mod_quarter_minus_one_quarter));
  const Vecs<K> remainder = each<K>([](__m512i u, __m512i v) { return sub(u, v); }, a_mod_quarter_minus_one_quarter, a);
  for_each_barrel_term<IB>([&]<int kE>(int16_t multiplier) {
    const __m512i bit = splat(static_cast<int16_t>(1 << (kFrac + kE))), m = splat(multiplier);
    result = each<K>(
        [=](__m512i r, __m512i rem) {
          return _mm512_mask_mulhrs_epi16(r, _mm512_test_epi16_mask(rem, bit), r, m);
        },
        result, remainder);
  });
  if constexpr (IB > 5) {  // below the clamp the result is 0
    const __m512i clamp = splat(constant16(-(1 << (36 - IB))));
    result = each<K>([clamp](__m512i r, __m512i u) { return _mm512_maskz_mov_epi16(_mm512_cmpge_epi16_mask(u, clamp), r); },
                     result, a);
  }
  return result;
}

// Q2 estimate of 1 / d for d in [1/2, 1], three Newton-Raphson steps.
template <int K>
inline Vecs<K> reciprocal_estimate_q2(const Vecs<K>& half_denominator) {
  constexpr int16_t k48Over17 = constant16(1515870810);
  constexpr int16_t kNeg32Over17 = constant16(-1010580540);
  Vecs<K> x = add(mul(half_denominator, kNeg32Over17), k48Over17);
  const __m512i one = splat(kOneQ2);
  for (int i = 0; i < 3; ++i) {
    const Vecs<K> one_minus_dx = each<K>([one](__m512i u) { return sub(one, u); }, mul(half_denominator, x));
    x = add(x, each<K>([](__m512i u) { return times4_saturating(u); }, mul(x, one_minus_dx)));
  }
  return x;
}

// (e + 1) / 2 rounded up, for e in [0, 32767].
template <int K>
inline Vecs<K> half_of_one_plus(const Vecs<K>& e) {
  const __m512i one = splat(kOneQ0);
  return each<K>([one](__m512i u) { return _mm512_avg_epu16(u, one); }, e);
}

// -|a| (-32768 stays -32768).
template <int K>
inline Vecs<K> minus_abs(const Vecs<K>& a) {
  return each<K>([](__m512i u) { return sub(_mm512_setzero_si512(), _mm512_abs_epi16(u)); }, a);
}

// logistic on Q3 raw values, as Q0.
template <int K>
inline Vecs<K> logistic_q3(const Vecs<K>& a) {
  const Vecs<K> e = exp_on_negative_values<3, K>(minus_abs(a));
  const Vecs<K> r = reciprocal_estimate_q2(half_of_one_plus(e));
  const __m512i one = splat(kOneQ0), half = splat(constant16(1 << 30)), zero = _mm512_setzero_si512();
  return each<K>(
      [=](__m512i rv, __m512i u) {
        const __m512i if_positive = adds(rv, rv);
        const __m512i folded =
            _mm512_mask_blend_epi16(_mm512_cmpgt_epi16_mask(u, zero), sub(one, if_positive), if_positive);
        return _mm512_mask_blend_epi16(_mm512_cmpeq_epi16_mask(u, zero), folded, half);
      },
      r, a);
}

// tanh on Q<IB> raw values (IB in [0, 6]), as Q0: vpsignw's rule (negate for a < 0, 0 for
// a == 0; -32768 negates to itself) by masks.
template <int IB, int K>
inline Vecs<K> tanh(const Vecs<K>& a) {
  const Vecs<K> r = reciprocal_estimate_q2(half_of_one_plus(exp_on_negative_values<IB + 1, K>(minus_abs(a))));
  const __m512i one = splat(kOneQ2), zero = _mm512_setzero_si512();
  return each<K>(
      [=](__m512i rv, __m512i u) {
        const __m512i v = times4_saturating(sub(rv, one));
        const __m512i signed_v = _mm512_mask_sub_epi16(v, _mm512_movepi16_mask(u), zero, v);
        return _mm512_maskz_mov_epi16(_mm512_test_epi16_mask(u, u), signed_v);
      },
      r, a);
}

}  // namespace tickinfer::tfl::ops::lstm::fx16::avx512
