#pragma once
// Inline AVX2 pieces the integer LSTM's step kernels share (sequence_lstm_int8_kernels_avx2.cpp,
// sequence_lstm_int8_activations_avx2.cpp): gemmlowp's requantizations on 8 int32 lanes, the
// int16 <-> int32 moves, and the hidden state's requantization of 8 products. Include only from
// translation units compiled for AVX2.
//
// The requantizations here take one multiplier and shift for all lanes and shift by a count
// register; the int8 kernels' Requant8 (tflite/kernels/gemv_s8_avx2.cpp) takes one per lane and
// shifts by vectors. Built on Requant8 with the lanes all equal, lstm_window's int8 step measured
// 4 % slower on the first Zen (61.4 against 58.9 us, same run), so the two stay apart.
#include <immintrin.h>

#include <cstdint>

namespace tickinfer::tfl::ops::lstm::avx2 {

// gemmlowp RoundingDivideByPOT on 8 int32 lanes, one exponent e in [0, 31]:
// (x >> e) + (remainder > (mask >> 1) + (x < 0)).
inline __m256i rounding_divide_by_pot8(__m256i x, int e) {
  const __m256i mask = _mm256_set1_epi32(static_cast<int32_t>((int64_t{1} << e) - 1));
  const __m256i rem = _mm256_and_si256(x, mask);
  const __m256i negative = _mm256_cmpgt_epi32(_mm256_setzero_si256(), x);  // -1 where x < 0
  const __m256i thr = _mm256_sub_epi32(_mm256_srli_epi32(mask, 1), negative);
  // cmpgt gives -1 where a round-up is due: subtracting it adds 1.
  return _mm256_sub_epi32(_mm256_sra_epi32(x, _mm_cvtsi32_si128(e)), _mm256_cmpgt_epi32(rem, thr));
}

// MultiplyByQuantizedMultiplier, double rounding, one multiplier m >= 0 and shift for all lanes.
// SaturatingRoundingDoublingHighMul(a, m) = trunc((a m + nudge) / 2^31), nudge 2^30 or 1 - 2^30 by
// the sign of a m; for a negative product trunc((p + 1 - 2^30) / 2^31) equals
// floor((p + 2^30) / 2^31), so every lane is the arithmetic floor of (p + 2^30) / 2^31: bits 31 to
// 62 of the 64-bit sum, which a logical right shift by 31 (even lanes) or a left shift by 1 (odd
// lanes, read from the upper half) puts in place (m >= 0: the INT32_MIN^2 case cannot occur).
// The constants are made once per kernel call; apply<false> is for a shift with no right part
// (shift >= 0), which skips the rounding division.
class DoubleRounding8 {
 public:
  DoubleRounding8(int32_t m, int shift)
      : m_(_mm256_set1_epi32(m)),
        nudge_(_mm256_set1_epi64x(int64_t{1} << 30)),
        left_(_mm_cvtsi32_si128(shift > 0 ? shift : 0)),
        right_(_mm_cvtsi32_si128(shift > 0 ? 0 : -shift)),
        mask_(_mm256_set1_epi32(static_cast<int32_t>((int64_t{1} << (shift > 0 ? 0 : -shift)) - 1))),
        half_mask_(_mm256_srli_epi32(mask_, 1)),
        divides_(shift < 0) {}

  bool divides() const { return divides_; }

  template <bool kDivides>
  __m256i apply(__m256i x) const {
    const __m256i a = _mm256_sll_epi32(x, left_);
    const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(a, m_), nudge_);
    const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), m_), nudge_);
    const __m256i h = _mm256_blend_epi32(_mm256_srli_epi64(pe, 31), _mm256_slli_epi64(po, 1), 0xAA);
    if constexpr (!kDivides) {
      return h;
    } else {
      // RoundingDivideByPOT: (h >> e) + (remainder > (mask >> 1) + (h < 0)).
      const __m256i negative = _mm256_cmpgt_epi32(_mm256_setzero_si256(), h);
      const __m256i thr = _mm256_sub_epi32(half_mask_, negative);
      return _mm256_sub_epi32(_mm256_sra_epi32(h, right_), _mm256_cmpgt_epi32(_mm256_and_si256(h, mask_), thr));
    }
  }

 private:
  __m256i m_, nudge_;
  __m128i left_, right_;
  __m256i mask_, half_mask_;
  bool divides_;
};

inline __m256i mbqm_double8(__m256i x, int32_t m, int shift) {
  const DoubleRounding8 r(m, shift);
  return r.divides() ? r.apply<true>(x) : r.apply<false>(x);
}

// int32 lanes clamped to the int16 range, still int32.
inline __m256i clamp16_8(__m256i v) {
  return _mm256_max_epi32(_mm256_min_epi32(v, _mm256_set1_epi32(32767)), _mm256_set1_epi32(-32768));
}

inline __m256i load8(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// 8 int16 -> 8 int32
inline __m256i load8_s16(const int16_t* p) {
  return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// 8 int32 -> 8 int16, saturating (the values here always fit or are meant to saturate).
inline __m128i pack8_sat(__m256i v) {
  return _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

// 8 int32 -> 8 int16 keeping the low 16 bits (C++'s narrowing conversion).
inline __m128i pack8_wrap(__m256i v) {
  const __m256i lo = _mm256_srai_epi32(_mm256_slli_epi32(v, 16), 16);
  return pack8_sat(lo);
}

// MultiplyByQuantizedMultiplier, single rounding: (x m + 2^(t-1)) >> t arithmetic, t = 31 - shift
// in [1, 62]. |x m| < 2^62, so adding 2^62 makes the 64-bit sum non-negative and a logical shift
// exact; the added 2^62 contributes exactly 2^(62-t) to the quotient, removed again.
inline __m256i mbqm_single8(__m256i x, int32_t m, int shift) {
  const int t = 31 - shift;
  const __m256i mv = _mm256_set1_epi32(m);
  const __m256i add = _mm256_set1_epi64x((int64_t{1} << (t - 1)) + (int64_t{1} << 62));
  const __m256i sub = _mm256_set1_epi64x(int64_t{1} << (62 - t));
  const __m128i count = _mm_cvtsi32_si128(t);
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(x, mv), add);
  const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), mv), add);
  const __m256i qe = _mm256_sub_epi64(_mm256_srl_epi64(pe, count), sub);
  const __m256i qo = _mm256_sub_epi64(_mm256_srl_epi64(po, count), sub);
  return _mm256_blend_epi32(qe, _mm256_slli_epi64(qo, 32), 0xAA);
}

inline __m256i load16(const int16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline void store16(int16_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }

// 8 hidden values from 8 output gates and the cell state's tanh (8 int16 lanes each):
// int16(sat(MBQM(o * tanh_c) + zp)), the int8 clamp left to the caller's final pack.
template <bool kDouble>
inline __m128i hidden8(__m128i o, __m128i tanh_c, int32_t m, int shift, __m256i zp) {
  const __m256i prod = _mm256_mullo_epi32(_mm256_cvtepi16_epi32(o), _mm256_cvtepi16_epi32(tanh_c));
  const __m256i q = kDouble ? mbqm_double8(prod, m, shift) : mbqm_single8(prod, m, shift);
  return pack8_sat(_mm256_add_epi32(q, zp));
}

}  // namespace tickinfer::tfl::ops::lstm::avx2
