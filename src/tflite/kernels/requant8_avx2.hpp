#pragma once
// Internal to the AVX2 int8 kernels (compiled with the AVX2 flags): TFLite's
// MultiplyByQuantizedMultiplier on 8 int32 lanes (Requant8) and the narrowing store after it,
// shared by the gemv/gemm requantization (gemv_s8_avx2.cpp) and the implicit-GEMM convolution
// (conv_s8_avx2.cpp).
#include <immintrin.h>

#include <cstdint>

#include "tflite/fixed_point.hpp"

namespace tickinfer::tfl::kernels::avx2_requant {
// Internal linkage: this code is compiled with the AVX2 flags, and a copy kept from a translation
// unit compiled with others (AVX-512) must not be the one every caller links to.
namespace {

// MultiplyByQuantizedMultiplier on 8 lanes, each with its own multiplier m >= 0 and shift; the
// constants that depend only on them are made once (a conv's channels requantize several output
// positions with the same ones).
//
// Double rounding. SRDHM(a, m) = trunc((a*m + nudge) / 2^31) with nudge 2^30 (ab >= 0) or
// 1 - 2^30 (ab < 0). For ab < 0, trunc(v / 2^31) = floor((v + 2^31 - 1) / 2^31), and
// v + 2^31 - 1 = ab + 2^30: so in both cases the result is floor((ab + 2^30) / 2^31), whose low 32
// bits a logical 64-bit shift gives too. (m >= 0, so the INT32_MIN * INT32_MIN case cannot occur.)
// RoundingDivideByPOT then follows its definition lane by lane.
//
// Single rounding. (x*m + 2^(t-1)) >> t with t = 31 - shift in [1, 62], arithmetic. Adding 2^62
// makes the sum non-negative (|x*m| < 2^62), so a logical shift works; it adds exactly
// 2^(62-t) to the quotient, subtracted again afterwards (low 32 bits, wrapping).
template <Rounding R>
class Requant8 {
 public:
  Requant8(__m256i m, __m256i shift) : m_(m), m_odd_(_mm256_srli_epi64(m, 32)) {
    const __m256i zero = _mm256_setzero_si256();
    if constexpr (R == Rounding::Double) {
      a_ = _mm256_max_epi32(shift, zero);                                       // left
      b_ = _mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero);               // right
      const __m256i one = _mm256_set1_epi32(1);
      c_ = _mm256_sub_epi32(_mm256_sllv_epi32(one, b_), one);                   // mask
      d_ = _mm256_srli_epi32(c_, 1);                                            // mask / 2
    } else {
      const __m256i t = _mm256_sub_epi32(_mm256_set1_epi32(31), shift);
      // 64-bit lanes: even lanes use t of lanes 0,2,4,6; odd lanes of 1,3,5,7.
      const __m256i one64 = _mm256_set1_epi64x(1), c62 = _mm256_set1_epi64x(62);
      const __m256i bias = _mm256_set1_epi64x(int64_t{1} << 62);
      a_ = _mm256_and_si256(t, _mm256_set1_epi64x(0xffffffffLL));  // te
      b_ = _mm256_srli_epi64(t, 32);                                // to
      c_ = _mm256_add_epi64(_mm256_sllv_epi64(one64, _mm256_sub_epi64(a_, one64)), bias);  // re
      d_ = _mm256_add_epi64(_mm256_sllv_epi64(one64, _mm256_sub_epi64(b_, one64)), bias);  // ro
      e_ = _mm256_sllv_epi64(one64, _mm256_sub_epi64(c62, a_));
      f_ = _mm256_sllv_epi64(one64, _mm256_sub_epi64(c62, b_));
    }
  }

  // kShiftLeft false: double rounding without the left shift, for lanes whose shift is at most 0
  // (a_ is 0 there, so the result is the same).
  template <bool kShiftLeft = true>
  __m256i apply(__m256i x) const {
    if constexpr (R == Rounding::Double) {
      const __m256i zero = _mm256_setzero_si256();
      const __m256i a = kShiftLeft ? _mm256_sllv_epi32(x, a_) : x;
      const __m256i nudge = _mm256_set1_epi64x(int64_t{1} << 30);
      const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(a, m_), nudge);
      const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), m_odd_), nudge);
      const __m256i h = _mm256_blend_epi32(_mm256_srli_epi64(pe, 31), _mm256_slli_epi64(po, 1), 0xAA);
      // RoundingDivideByPOT(h, right): thr = mask / 2 + (h < 0).
      const __m256i thr = _mm256_sub_epi32(d_, _mm256_cmpgt_epi32(zero, h));
      return _mm256_sub_epi32(_mm256_srav_epi32(h, b_), _mm256_cmpgt_epi32(_mm256_and_si256(h, c_), thr));
    } else {
      const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(x, m_), c_);
      const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), m_odd_), d_);
      const __m256i qe = _mm256_sub_epi64(_mm256_srlv_epi64(pe, a_), e_);
      const __m256i qo = _mm256_sub_epi64(_mm256_srlv_epi64(po, b_), f_);
      return _mm256_blend_epi32(qe, _mm256_slli_epi64(qo, 32), 0xAA);
    }
  }

 private:
  __m256i m_, m_odd_;
  __m256i a_, b_, c_, d_;  // double: left, right, mask, mask / 2; single: te, to, re, ro
  __m256i e_ = _mm256_setzero_si256(), f_ = _mm256_setzero_si256();  // single: the 2^(62 - t) to remove
};

inline __m256i load8(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// 32 requantized values, the four vectors' lanes in order (+ zero point, clamped), stored as int8
// at y. The zero point is added in 32 bits (wrapping, as store8_s8 and the reference do); the two
// narrowings saturate before the clamp, which gives the same bytes: each saturation is monotone
// and the clamp's range lies inside it.
inline void store32_s8(__m256i q0, __m256i q1, __m256i q2, __m256i q3, __m256i zp, __m256i lo8, __m256i hi8,
                       int8_t* y) {
  const __m256i a = _mm256_packs_epi32(_mm256_add_epi32(q0, zp), _mm256_add_epi32(q1, zp));
  const __m256i b = _mm256_packs_epi32(_mm256_add_epi32(q2, zp), _mm256_add_epi32(q3, zp));
  // The packs work within 128-bit halves: 4-byte groups q0[0:4] q1[0:4] q2[0:4] q3[0:4], then
  // the same of lanes 4 to 7; put back in order.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const __m256i v = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(a, b), order);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(y), _mm256_min_epi8(_mm256_max_epi8(v, lo8), hi8));
}

// 8 requantized values (+ zero point, clamped) stored as int8 at y.
inline void store8_s8(__m256i q, __m256i zp, __m256i lo, __m256i hi, int8_t* y) {
  const __m256i v = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(q, zp), lo), hi);
  const __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(y), _mm_packs_epi16(p16, p16));
}

}  // namespace
}  // namespace tickinfer::tfl::kernels::avx2_requant
