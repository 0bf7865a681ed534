#pragma once
// MultiplyByQuantizedMultiplier on 16 int32 lanes (AVX-512F/BW), both roundings, for the int8
// kernels compiled with the AVX-512 flags (requant_s8_avx512.cpp, conv_s8_vnni.cpp). Include
// only from such files. Single rounding is the AVX2 version's arithmetic (gemv_s8_avx2.cpp derives
// both roundings); double rounding is folded into one 64-bit rounding (DoubleRounding16, below).
// Both equal the scalar reference bit for bit (quant_int8_kernels_test).
#include "kernels/x86_intrinsics.hpp"

#include <cstdint>

#include "tflite/kernels/gemv_s8.hpp"

namespace tickinfer::tfl::kernels::avx512_lanes {

// GCC 12's unmasked forms of these intrinsics pass an "undefined" vector that its own
// -Wmaybe-uninitialized then reports; the zero-masked forms with every lane selected compile to
// the same instructions without it.
constexpr __mmask16 k32 = 0xFFFF;  // all 16 int32 lanes
constexpr __mmask8 k64 = 0xFF;     // all 8 int64 lanes

inline __m512i max32(__m512i a, __m512i b) { return _mm512_maskz_max_epi32(k32, a, b); }
inline __m512i min32(__m512i a, __m512i b) { return _mm512_maskz_min_epi32(k32, a, b); }
inline __m512i shl32v(__m512i a, __m512i n) { return _mm512_maskz_sllv_epi32(k32, a, n); }
inline __m512i shl64(__m512i a, unsigned n) { return _mm512_maskz_slli_epi64(k64, a, n); }
inline __m512i shr64(__m512i a, unsigned n) { return _mm512_maskz_srli_epi64(k64, a, n); }
inline __m512i shl64v(__m512i a, __m512i n) { return _mm512_maskz_sllv_epi64(k64, a, n); }
inline __m512i shr64v(__m512i a, __m512i n) { return _mm512_maskz_srlv_epi64(k64, a, n); }
// Signed 32 x 32 -> 64-bit products of the even lanes (vpmuldq); odd lanes: shr64 by 32 first.
inline __m512i mul_even(__m512i a, __m512i b) { return _mm512_maskz_mul_epi32(k64, a, b); }
// Odd int32 lanes from the low halves of `odd`'s int64 lanes, even ones from `even`'s.
inline __m512i interleave(__m512i even, __m512i odd) { return _mm512_mask_blend_epi32(0xAAAA, even, shl64(odd, 32)); }

// RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(a, m), r) (TFLite's double rounding)
// as one 64-bit rounding per lane. SRDHM(a, m) = h = floor(p / 2^31) with p = a m + 2^30
// (gemv_s8_avx2.cpp; m is never INT32_MIN, so nothing saturates); RDBPOT(h, r) =
// floor((h + 2^(r-1) - [h < 0]) / 2^r) for r >= 1 (its + 1 where the remainder passes half, half
// plus one for negative h), h for r = 0. Both floors in one: q = floor((a m + 2^30 +
// (2^(r-1) - [p < 0]) 2^31) / 2^(31 + r)), [h < 0] = [p < 0]. |a m| < 2^62, so the sum stays
// inside int64. Four shifts a vector, not eight: shifts are what bound this on the cores that
// split 512-bit operations. The per-lane constants are made once (a conv tile applies them to
// 8 positions).
struct DoubleRounding16 {
  __m512i m, m_odd, left;
  __m512i add_even, add_odd, below_even, below_odd, shift_even, shift_odd;

  DoubleRounding16() = default;  // for copies of constants made earlier (trivially copyable)
  DoubleRounding16(__m512i multiplier, __m512i shift) : m(multiplier) {
    const __m512i zero = _mm512_setzero_si512();
    left = max32(shift, zero);
    const __m512i r = max32(_mm512_sub_epi32(zero, shift), zero);
    m_odd = shr64(m, 32);
    half_constants(_mm512_and_si512(r, _mm512_set1_epi64(0xffffffffLL)), add_even, below_even, shift_even);
    half_constants(shr64(r, 32), add_odd, below_odd, shift_odd);
  }

  // Constants made earlier and stored (sizeof(DoubleRounding16) bytes at p), loaded member by
  // member. Measured against a memcpy of the whole into a local: tcn's VNNI convolutions 1.46 us
  // each with these loads, 1.55 with the memcpy (the compiler copied it through the stack first).
  // Beside a conv tile's 16 sums the registers still run out, and the compiler keeps some of
  // these on the stack as memory operands.
  static DoubleRounding16 load(const void* p) {
    const __m512i* v = static_cast<const __m512i*>(p);
    DoubleRounding16 r;
    r.m = _mm512_loadu_si512(v + 0);
    r.m_odd = _mm512_loadu_si512(v + 1);
    r.left = _mm512_loadu_si512(v + 2);
    r.add_even = _mm512_loadu_si512(v + 3);
    r.add_odd = _mm512_loadu_si512(v + 4);
    r.below_even = _mm512_loadu_si512(v + 5);
    r.below_odd = _mm512_loadu_si512(v + 6);
    r.shift_even = _mm512_loadu_si512(v + 7);
    r.shift_odd = _mm512_loadu_si512(v + 8);
    return r;
  }

  __m512i apply(__m512i x) const { return apply_right_only(shl32v(x, left)); }
  // apply() where no lane's shift is positive (left = 0: a multiplier below 1, the usual case),
  // one operation fewer; a caller knows this from the shifts it prepared the constants from.
  __m512i apply_right_only(__m512i a) const {
    const __m512i qe = half(mul_even(a, m), add_even, below_even, shift_even);
    const __m512i qo = half(mul_even(shr64(a, 32), m_odd), add_odd, below_odd, shift_odd);
    // The odd results' low halves into the odd int32 lanes (one masked in-lane shuffle).
    return _mm512_mask_shuffle_epi32(qe, 0xAAAA, qo, _MM_PERM_CDAB);
  }

 private:
  // rr: r per int64 lane. add = 2^30 + 2^(r-1) 2^31 (2^30 for r = 0); t < below <=> p < 0 where
  // that takes 2^31 off (never for r = 0); shift = 31 + r.
  static void half_constants(__m512i rr, __m512i& add, __m512i& below, __m512i& sh) {
    const __mmask8 rounds = _mm512_cmpneq_epi64_mask(rr, _mm512_setzero_si512());
    const __m512i big = _mm512_maskz_sllv_epi64(rounds, _mm512_set1_epi64(1), _mm512_add_epi64(rr, _mm512_set1_epi64(30)));
    add = _mm512_add_epi64(big, _mm512_set1_epi64(int64_t{1} << 30));
    below = _mm512_mask_blend_epi64(rounds, _mm512_set1_epi64(INT64_MIN), big);
    sh = _mm512_add_epi64(rr, _mm512_set1_epi64(31));
  }
  static __m512i half(__m512i prod, __m512i add, __m512i below, __m512i sh) {
    __m512i t = _mm512_add_epi64(prod, add);
    t = _mm512_mask_sub_epi64(t, _mm512_cmplt_epi64_mask(t, below), t, _mm512_set1_epi64(int64_t{1} << 31));
    return _mm512_maskz_srav_epi64(k64, t, sh);
  }
};

template <Rounding R>
inline __m512i mbqm16(__m512i x, __m512i m, __m512i shift) {
  if constexpr (R == Rounding::Double) {
    return DoubleRounding16(m, shift).apply(x);
  } else {
    // (x m + 2^(t-1)) >> t, t = 31 - shift, through a non-negative 64-bit sum (+ 2^62, whose
    // 2^(62-t) in the quotient comes off again).
    const __m512i t = _mm512_sub_epi32(_mm512_set1_epi32(31), shift);
    const __m512i te = _mm512_and_si512(t, _mm512_set1_epi64(0xffffffffLL));
    const __m512i to = shr64(t, 32);
    const __m512i one64 = _mm512_set1_epi64(1);
    const __m512i bias = _mm512_set1_epi64(int64_t{1} << 62);
    const __m512i c62 = _mm512_set1_epi64(62);
    const __m512i re = _mm512_add_epi64(shl64v(one64, _mm512_sub_epi64(te, one64)), bias);
    const __m512i ro = _mm512_add_epi64(shl64v(one64, _mm512_sub_epi64(to, one64)), bias);
    const __m512i pe = _mm512_add_epi64(mul_even(x, m), re);
    const __m512i po = _mm512_add_epi64(mul_even(shr64(x, 32), shr64(m, 32)), ro);
    const __m512i qe = _mm512_sub_epi64(shr64v(pe, te), shl64v(one64, _mm512_sub_epi64(c62, te)));
    const __m512i qo = _mm512_sub_epi64(shr64v(po, to), shl64v(one64, _mm512_sub_epi64(c62, to)));
    return interleave(qe, qo);
  }
}

// One vector of 16 accumulators (bias already added) to int8: requantized, + zero point,
// clamped to [lo, hi] inside int8, so the saturating narrowing is exact.
template <Rounding R>
inline __m128i requant16(__m512i a, __m512i m, __m512i s, __m512i zp, __m512i lo, __m512i hi) {
  return _mm512_maskz_cvtsepi32_epi8(k32, min32(max32(_mm512_add_epi32(mbqm16<R>(a, m, s), zp), lo), hi));
}
// The same from a requantization already made for the vector's channels.
inline __m128i narrow16(__m512i q, __m512i zp, __m512i lo, __m512i hi) {
  return _mm512_maskz_cvtsepi32_epi8(k32, min32(max32(_mm512_add_epi32(q, zp), lo), hi));
}

}  // namespace tickinfer::tfl::kernels::avx512_lanes
