// AVX-512 forms of the hybrid row quantization's loops (quantize_rows.hpp), 16 lanes, the
// portable loops' operations lane for lane (-ffp-contract=off: no FMA):
//  - the body: p = x * inv; p + (p < 0 ? -0.5 : 0.5) by a mask blend; the clamp to [-1024, 1024]
//    with NaN to -1024 as max(v, -1024) then min(., 1024) (maxps returns its second operand when
//    the first is NaN); truncating conversion, + zp, the int32 clamp, a truncating narrowing (exact
//    after the clamp) and a plain store;
//  - min/max: four pairs of accumulators, minps(x, l) = x < l ? x : l, the loop's std::min; every
//    lane starts from the starting value, so folding the lanes in any order gives the loop's
//    result (quantize_rows.hpp; the fold is quantize_rows_fold.hpp).

#include <algorithm>

#include "kernels/x86_intrinsics.hpp"
#include "tflite/kernels/quantize_rows.hpp"
#include "tflite/kernels/quantize_rows_fold.hpp"

namespace tickinfer::tfl::kernels {


void quantize_row_body_avx512(const float* x, int n, float inv, int32_t zp, int32_t lo, int32_t hi, int8_t* q) noexcept {
  if (n < 16) return quantize_row_body_avx2(x, n, inv, zp, lo, hi, q);  // 8 values: one 8-lane step
  const __m512 invv = _mm512_set1_ps(inv);
  const __m512 zero = _mm512_setzero_ps();
  const __m512 half = _mm512_set1_ps(0.5f), mhalf = _mm512_set1_ps(-0.5f);
  const __m512 top = _mm512_set1_ps(1024.0f), bottom = _mm512_set1_ps(-1024.0f);
  const __m512i zpv = _mm512_set1_epi32(zp), lov = _mm512_set1_epi32(lo), hiv = _mm512_set1_epi32(hi);
  // The 16 (or, masked, 8) values' bytes in the low lanes of a register. Narrowed by vpmovdb
  // (register form; the clamp keeps it exact) and stored plainly: a masked narrowing store is
  // slow on Zen 4 and would not forward to the gemv's 4-byte loads of the row right after.
  const auto sixteen = [&](const float* xs, __mmask16 m) {
    const __m512 p = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, xs), invv);
    const __m512 v = _mm512_add_ps(p, _mm512_mask_blend_ps(_mm512_cmp_ps_mask(p, zero, _CMP_LT_OQ), half, mhalf));
    const __m512 c = _mm512_min_ps(_mm512_max_ps(v, bottom), top);
    __m512i r = _mm512_add_epi32(_mm512_cvttps_epi32(c), zpv);
    r = _mm512_min_epi32(_mm512_max_epi32(r, lov), hiv);
    return _mm512_cvtepi32_epi8(r);
  };
  int i = 0;
  for (; i + 16 <= n; i += 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), sixteen(x + i, 0xffff));
  if (i < n) _mm_storel_epi64(reinterpret_cast<__m128i*>(q + i), sixteen(x + i, 0x00ff));  // n - i == 8
}

void min_max_avx512(const float* x, int n, float* lo, float* hi) noexcept {
  // Below one 16-lane vector the 8-lane form: one fold step less (a 10-value row 29.5 -> 26 ns
  // quantized, bench/quant_hybrid_bench on Zen 4).
  if (n < 16) return min_max_avx2(x, n, lo, hi);
  const __m512 l0 = _mm512_set1_ps(*lo), h0 = _mm512_set1_ps(*hi);
  __m512 l[4] = {l0, l0, l0, l0}, h[4] = {h0, h0, h0, h0};
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
  if (i < n) {  // the last 1-15 values in the lanes of a masked load (the others keep theirs)
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 a = _mm512_maskz_loadu_ps(m, x + i);
    l[1] = _mm512_mask_min_ps(l[1], m, a, l[1]);
    h[1] = _mm512_mask_max_ps(h[1], m, a, h[1]);
  }
  // Folded in registers: the lanes in a tree (no store and serial fold). Accumulators a row
  // this short left alone still hold *lo and *hi.
  const __m512 lm = _mm512_min_ps(_mm512_min_ps(l[0], l[1]), _mm512_min_ps(l[2], l[3]));
  const __m512 hm = _mm512_max_ps(_mm512_max_ps(h[0], h[1]), _mm512_max_ps(h[2], h[3]));
  const __m256 l8 = _mm256_min_ps(_mm512_extractf32x8_ps(lm, 0), _mm512_extractf32x8_ps(lm, 1));
  const __m256 h8 = _mm256_max_ps(_mm512_extractf32x8_ps(hm, 0), _mm512_extractf32x8_ps(hm, 1));
  *lo = fold_min4(_mm_min_ps(_mm256_castps256_ps128(l8), _mm256_extractf128_ps(l8, 1)));
  *hi = fold_max4(_mm_max_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1)));
}

}  // namespace tickinfer::tfl::kernels
