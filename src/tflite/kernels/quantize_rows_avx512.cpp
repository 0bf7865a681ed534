// AVX-512 forms of the hybrid row quantization's loops (quantize_rows.hpp), 16 lanes, the
// portable loops' operations lane for lane (-ffp-contract=off: no FMA):
//  - the body: p = x * inv; p + (p < 0 ? -0.5 : 0.5) by a mask blend; the clamp to [-1024, 1024]
//    with NaN to -1024 as max(v, -1024) then min(., 1024) (maxps returns its second operand when
//    the first is NaN); truncating conversion, + zp, the int32 clamp, a narrowing store (within
//    int8 after the clamp, so its saturation never acts);
//  - min/max: four pairs of accumulators, minps(x, l) = x < l ? x : l, the loop's std::min.

#include <algorithm>

#include "kernels/x86_intrinsics.hpp"
#include "tflite/kernels/quantize_rows.hpp"

namespace tickinfer::tfl::kernels {


void quantize_row_body_avx512(const float* x, int n, float inv, int32_t zp, int32_t lo, int32_t hi, int8_t* q) noexcept {
  const __m512 invv = _mm512_set1_ps(inv);
  const __m512 zero = _mm512_setzero_ps();
  const __m512 half = _mm512_set1_ps(0.5f), mhalf = _mm512_set1_ps(-0.5f);
  const __m512 top = _mm512_set1_ps(1024.0f), bottom = _mm512_set1_ps(-1024.0f);
  const __m512i zpv = _mm512_set1_epi32(zp), lov = _mm512_set1_epi32(lo), hiv = _mm512_set1_epi32(hi);
  const auto sixteen = [&](const float* xs, __mmask16 m, int8_t* qs) {
    const __m512 p = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, xs), invv);
    const __m512 v = _mm512_add_ps(p, _mm512_mask_blend_ps(_mm512_cmp_ps_mask(p, zero, _CMP_LT_OQ), half, mhalf));
    const __m512 c = _mm512_min_ps(_mm512_max_ps(v, bottom), top);
    __m512i r = _mm512_add_epi32(_mm512_cvttps_epi32(c), zpv);
    r = _mm512_min_epi32(_mm512_max_epi32(r, lov), hiv);
    _mm512_mask_cvtsepi32_storeu_epi8(qs, m, r);
  };
  int i = 0;
  for (; i + 16 <= n; i += 16) sixteen(x + i, 0xffff, q + i);
  if (i < n) sixteen(x + i, static_cast<__mmask16>((1u << (n - i)) - 1), q + i);  // n - i == 8
}

void min_max_avx512(const float* x, int n, float* lo, float* hi) noexcept {
  if (n < 16) {  // no whole vector: setting up and folding the accumulators would cost more
    for (int i = 0; i < n; ++i) *lo = std::min(*lo, x[i]), *hi = std::max(*hi, x[i]);
    return;
  }
  __m512 l[4], h[4];
  for (int k = 0; k < 4; ++k) l[k] = _mm512_set1_ps(*lo), h[k] = _mm512_set1_ps(*hi);
  int i = 0;
  for (; i + 64 <= n; i += 64) {
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m512 a = _mm512_loadu_ps(x + i + 16 * k);
      l[k] = _mm512_min_ps(a, l[k]);
      h[k] = _mm512_max_ps(a, h[k]);
    }
  }
  for (; i + 16 <= n; i += 16) {
    const __m512 a = _mm512_loadu_ps(x + i);
    l[0] = _mm512_min_ps(a, l[0]);
    h[0] = _mm512_max_ps(a, h[0]);
  }
  // The accumulators folded in the vector first: a serial fold of 128 values would cost more
  // than a short row's whole search.
  // Only the accumulators a row this long used (the others still hold *lo and *hi, which change
  // nothing: minps never takes a NaN from x over its accumulator).
  const bool unrolled = n >= 64;
  const __m512 lm = unrolled ? _mm512_min_ps(_mm512_min_ps(l[0], l[1]), _mm512_min_ps(l[2], l[3])) : l[0];
  const __m512 hm = unrolled ? _mm512_max_ps(_mm512_max_ps(h[0], h[1]), _mm512_max_ps(h[2], h[3])) : h[0];
  const __m256 l8 = _mm256_min_ps(_mm512_extractf32x8_ps(lm, 0), _mm512_extractf32x8_ps(lm, 1));
  const __m256 h8 = _mm256_max_ps(_mm512_extractf32x8_ps(hm, 0), _mm512_extractf32x8_ps(hm, 1));
  const __m128 l4 = _mm_min_ps(_mm256_castps256_ps128(l8), _mm256_extractf128_ps(l8, 1));
  const __m128 h4 = _mm_max_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
  alignas(16) float lv[4], hv[4];
  _mm_store_ps(lv, l4);
  _mm_store_ps(hv, h4);
  for (; i < n; ++i) *lo = std::min(*lo, x[i]), *hi = std::max(*hi, x[i]);
  for (int j = 0; j < 4; ++j) *lo = std::min(*lo, lv[j]), *hi = std::max(*hi, hv[j]);
}

}  // namespace tickinfer::tfl::kernels
