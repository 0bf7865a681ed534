// AVX2 int8 kernels. Dot products: sign-extend 16 int8 to int16 and vpmaddwd (products of int8
// pairs summed in pairs never saturate, so the result is exact). Requantization: 8 outputs at a
// time with the exact integer formulas of tflite/fixed_point.hpp (see the derivations inline).
#include <immintrin.h>

#include "tflite/fixed_point.hpp"
#include "tflite/kernels/gemv_s8.hpp"

namespace tickinfer::tfl::kernels {
namespace {

// Horizontal sums of four 8-lane accumulators -> 4 int32.
inline __m128i hsum4(__m256i a0, __m256i a1, __m256i a2, __m256i a3) {
  const __m256i t01 = _mm256_hadd_epi32(a0, a1);
  const __m256i t23 = _mm256_hadd_epi32(a2, a3);
  const __m256i t = _mm256_hadd_epi32(t01, t23);  // [r0 r1 r2 r3 | r0 r1 r2 r3] partial halves
  return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

inline __m256i load16_s8_as_s16(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

}  // namespace

void gemv_s8s8_s32_avx2(const int8_t* w, int rows, int stride, const int8_t* x, int32_t* acc) noexcept {
  int r = 0;
  for (; r + 4 <= rows; r += 4) {
    const int8_t* w0 = w + static_cast<size_t>(r) * stride;
    const int8_t* w1 = w0 + stride;
    const int8_t* w2 = w1 + stride;
    const int8_t* w3 = w2 + stride;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (int c = 0; c < stride; c += 16) {
      const __m256i xv = load16_s8_as_s16(x + c);
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(load16_s8_as_s16(w0 + c), xv));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(load16_s8_as_s16(w1 + c), xv));
      a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(load16_s8_as_s16(w2 + c), xv));
      a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(load16_s8_as_s16(w3 + c), xv));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(acc + r), hsum4(a0, a1, a2, a3));
  }
  for (; r < rows; ++r) {
    const int8_t* w0 = w + static_cast<size_t>(r) * stride;
    __m256i a0 = _mm256_setzero_si256();
    for (int c = 0; c < stride; c += 16) {
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(load16_s8_as_s16(w0 + c), load16_s8_as_s16(x + c)));
    }
    const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1));
    const __m128i s2 = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    acc[r] = _mm_cvtsi128_si32(_mm_add_epi32(s2, _mm_shuffle_epi32(s2, 0xb1)));
  }
}

// The rows layout (matrices holding -128) is the fallback set: one gemv per vector.
void gemm_s8s8_s32_avx2(const int8_t* w, int rows, int stride, const int8_t* x, int n, int32_t* acc) noexcept {
  const size_t acc_step = static_cast<size_t>(s8_padded_rows(rows));
  for (int p = 0; p < n; ++p) {
    gemv_s8s8_s32_avx2(w, rows, stride, x + static_cast<size_t>(p) * stride, acc + static_cast<size_t>(p) * acc_step);
  }
}

namespace {

// MultiplyByQuantizedMultiplier on 8 lanes.
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
inline __m256i mbqm8(__m256i x, __m256i m, __m256i shift) {
  const __m256i zero = _mm256_setzero_si256();
  if constexpr (R == Rounding::Double) {
    const __m256i left = _mm256_max_epi32(shift, zero);
    const __m256i right = _mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero);
    const __m256i a = _mm256_sllv_epi32(x, left);
    const __m256i nudge = _mm256_set1_epi64x(int64_t{1} << 30);
    const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(a, m), nudge);
    const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(m, 32)), nudge);
    const __m256i he = _mm256_srli_epi64(pe, 31);
    const __m256i ho = _mm256_slli_epi64(_mm256_srli_epi64(po, 31), 32);
    const __m256i h = _mm256_blend_epi32(he, ho, 0xAA);
    // RoundingDivideByPOT(h, right)
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one);
    const __m256i rem = _mm256_and_si256(h, mask);
    const __m256i thr = _mm256_add_epi32(_mm256_srli_epi32(mask, 1), _mm256_and_si256(_mm256_cmpgt_epi32(zero, h), one));
    return _mm256_sub_epi32(_mm256_srav_epi32(h, right), _mm256_cmpgt_epi32(rem, thr));
  } else {
    const __m256i t = _mm256_sub_epi32(_mm256_set1_epi32(31), shift);
    // 64-bit lanes: even lanes use t of lanes 0,2,4,6; odd lanes of 1,3,5,7.
    const __m256i lo32 = _mm256_set1_epi64x(0xffffffffLL);
    const __m256i te = _mm256_and_si256(t, lo32);
    const __m256i to = _mm256_srli_epi64(t, 32);
    const __m256i one64 = _mm256_set1_epi64x(1);
    const __m256i bias = _mm256_set1_epi64x(int64_t{1} << 62);
    const __m256i re = _mm256_add_epi64(_mm256_sllv_epi64(one64, _mm256_sub_epi64(te, one64)), bias);
    const __m256i ro = _mm256_add_epi64(_mm256_sllv_epi64(one64, _mm256_sub_epi64(to, one64)), bias);
    const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(x, m), re);
    const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(m, 32)), ro);
    const __m256i c62 = _mm256_set1_epi64x(62);
    const __m256i qe = _mm256_sub_epi64(_mm256_srlv_epi64(pe, te), _mm256_sllv_epi64(one64, _mm256_sub_epi64(c62, te)));
    const __m256i qo = _mm256_sub_epi64(_mm256_srlv_epi64(po, to), _mm256_sllv_epi64(one64, _mm256_sub_epi64(c62, to)));
    return _mm256_blend_epi32(qe, _mm256_slli_epi64(qo, 32), 0xAA);
  }
}

}  // namespace

template <Rounding R>
void requantize_s32_to_s8_avx2(const int32_t* acc, int rows, const RequantParams& p, int8_t* y) noexcept {
  const __m256i zp = _mm256_set1_epi32(p.output_zero_point);
  const __m256i lo = _mm256_set1_epi32(p.act_min);
  const __m256i hi = _mm256_set1_epi32(p.act_max);
  int r = 0;
  for (; r + 8 <= rows; r += 8) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + r));
    if (p.bias) a = _mm256_add_epi32(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.bias + r)));
    const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.multiplier + r));
    const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.shift + r));
    __m256i v = _mm256_add_epi32(mbqm8<R>(a, m, s), zp);
    v = _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
    const __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + r), _mm_packs_epi16(p16, p16));
  }
  if (r < rows) requantize_s32_to_s8_scalar<R>(acc + r, rows - r, requant_rows_from(p, r), y + r);
}

template void requantize_s32_to_s8_avx2<Rounding::Double>(const int32_t*, int, const RequantParams&, int8_t*) noexcept;
template void requantize_s32_to_s8_avx2<Rounding::Single>(const int32_t*, int, const RequantParams&, int8_t*) noexcept;

}  // namespace tickinfer::tfl::kernels
