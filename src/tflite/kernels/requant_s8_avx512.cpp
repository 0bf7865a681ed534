// The per-row requantization of gemv_s8.hpp on 16 lanes (AVX-512F/BW), for the VNNI kernel set:
// twice the lanes of the AVX2 version per instruction, the same arithmetic (gemv_s8_avx2.cpp
// derives both roundings), and AVX-512's compare masks and saturating vpmovsdb in place of
// AVX2's sign-mask arithmetic and two-step packs. Bit-exact with the scalar reference
// (quant_int8_kernels_test); rows % 16 go to the AVX2 version.
#include <immintrin.h>

#include "tflite/kernels/gemv_s8.hpp"

namespace tickinfer::tfl::kernels {

namespace {

// GCC 12's unmasked forms of these intrinsics pass an "undefined" vector that its own
// -Wmaybe-uninitialized then reports; the zero-masked forms with every lane selected compile to
// the same instructions without it.
constexpr __mmask16 k32 = 0xFFFF;  // all 16 int32 lanes
constexpr __mmask8 k64 = 0xFF;     // all 8 int64 lanes

inline __m512i max32(__m512i a, __m512i b) { return _mm512_maskz_max_epi32(k32, a, b); }
inline __m512i min32(__m512i a, __m512i b) { return _mm512_maskz_min_epi32(k32, a, b); }
inline __m512i shl32v(__m512i a, __m512i n) { return _mm512_maskz_sllv_epi32(k32, a, n); }
inline __m512i sar32v(__m512i a, __m512i n) { return _mm512_maskz_srav_epi32(k32, a, n); }
inline __m512i shr32(__m512i a, unsigned n) { return _mm512_maskz_srli_epi32(k32, a, n); }
inline __m512i shl64(__m512i a, unsigned n) { return _mm512_maskz_slli_epi64(k64, a, n); }
inline __m512i shr64(__m512i a, unsigned n) { return _mm512_maskz_srli_epi64(k64, a, n); }
inline __m512i shl64v(__m512i a, __m512i n) { return _mm512_maskz_sllv_epi64(k64, a, n); }
inline __m512i shr64v(__m512i a, __m512i n) { return _mm512_maskz_srlv_epi64(k64, a, n); }
// Signed 32 x 32 -> 64-bit products of the even lanes (vpmuldq); odd lanes: shr64 by 32 first.
inline __m512i mul_even(__m512i a, __m512i b) { return _mm512_maskz_mul_epi32(k64, a, b); }
// Odd int32 lanes from the low halves of `odd`'s int64 lanes, even ones from `even`'s.
inline __m512i interleave(__m512i even, __m512i odd) { return _mm512_mask_blend_epi32(0xAAAA, even, shl64(odd, 32)); }

template <Rounding R>
inline __m512i mbqm16(__m512i x, __m512i m, __m512i shift) {
  const __m512i zero = _mm512_setzero_si512();
  if constexpr (R == Rounding::Double) {
    const __m512i left = max32(shift, zero);
    const __m512i right = max32(_mm512_sub_epi32(zero, shift), zero);
    const __m512i a = shl32v(x, left);
    const __m512i nudge = _mm512_set1_epi64(int64_t{1} << 30);
    // floor((a m + 2^30) / 2^31) per lane (SaturatingRoundingDoublingHighMul, gemv_s8_avx2.cpp).
    const __m512i pe = _mm512_add_epi64(mul_even(a, m), nudge);
    const __m512i po = _mm512_add_epi64(mul_even(shr64(a, 32), shr64(m, 32)), nudge);
    const __m512i h = interleave(shr64(pe, 31), shr64(po, 31));
    // RoundingDivideByPOT(h, right): + 1 where the remainder exceeds half the divisor (half plus
    // one for negative h).
    const __m512i one = _mm512_set1_epi32(1);
    const __m512i mask = _mm512_sub_epi32(shl32v(one, right), one);
    const __m512i rem = _mm512_and_si512(h, mask);
    const __m512i thr = _mm512_add_epi32(shr32(mask, 1), shr32(h, 31));
    const __m512i q = sar32v(h, right);
    return _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(rem, thr), q, one);
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

}  // namespace

template <Rounding R>
void requantize_s32_to_s8_avx512(const int32_t* acc, int rows, const RequantParams& p, int8_t* y) noexcept {
  const __m512i zp = _mm512_set1_epi32(p.output_zero_point);
  const __m512i lo = _mm512_set1_epi32(p.act_min);
  const __m512i hi = _mm512_set1_epi32(p.act_max);
  int r = 0;
  for (; r + 16 <= rows; r += 16) {
    __m512i a = _mm512_loadu_si512(acc + r);
    if (p.bias) a = _mm512_add_epi32(a, _mm512_loadu_si512(p.bias + r));
    const __m512i m = _mm512_loadu_si512(p.multiplier + r), s = _mm512_loadu_si512(p.shift + r);
    const __m512i v = min32(max32(_mm512_add_epi32(mbqm16<R>(a, m, s), zp), lo), hi);
    // Clamped to [act_min, act_max] inside int8: the saturating narrowing is exact.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + r), _mm512_maskz_cvtsepi32_epi8(k32, v));
  }
  if (r < rows) requantize_s32_to_s8_avx2<R>(acc + r, rows - r, requant_rows_from(p, r), y + r);
}

template void requantize_s32_to_s8_avx512<Rounding::Double>(const int32_t*, int, const RequantParams&, int8_t*) noexcept;
template void requantize_s32_to_s8_avx512<Rounding::Single>(const int32_t*, int, const RequantParams&, int8_t*) noexcept;

}  // namespace tickinfer::tfl::kernels
