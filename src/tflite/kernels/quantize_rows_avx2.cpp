// AVX2 body of the hybrid row quantization (quantize_rows.hpp), the portable loop's operations
// lane for lane: mulps and addps round like the scalar float operations (no FMA: this file is
// built with -ffp-contract=off), the ordered compares are false for NaN as the C++ comparisons
// are, cvttps2dq truncates like the cast of an in-range value, and the rest is integer.
#include <immintrin.h>

#include <algorithm>

#include "tflite/kernels/quantize_rows.hpp"
#include "tflite/kernels/quantize_rows_fold.hpp"

namespace tickinfer::tfl::kernels {

void quantize_row_body_avx2(const float* x, int n, float inv, int32_t zp, int32_t lo, int32_t hi, int8_t* q) noexcept {
  const __m256 invv = _mm256_set1_ps(inv);
  const __m256 zero = _mm256_setzero_ps();
  const __m256 half = _mm256_set1_ps(0.5f), mhalf = _mm256_set1_ps(-0.5f);
  const __m256 top = _mm256_set1_ps(1024.0f), bottom = _mm256_set1_ps(-1024.0f);
  const __m256i zpv = _mm256_set1_epi32(zp), lov = _mm256_set1_epi32(lo), hiv = _mm256_set1_epi32(hi);
  for (int i = 0; i + 8 <= n; i += 8) {
    const __m256 p = _mm256_mul_ps(_mm256_loadu_ps(x + i), invv);
    const __m256 v = _mm256_add_ps(p, _mm256_blendv_ps(half, mhalf, _mm256_cmp_ps(p, zero, _CMP_LT_OQ)));
    // v > -1024 ? (v < 1024 ? v : 1024) : -1024, NaN taking the -1024 branch.
    const __m256 below = _mm256_blendv_ps(top, v, _mm256_cmp_ps(v, top, _CMP_LT_OQ));
    const __m256 c = _mm256_blendv_ps(bottom, below, _mm256_cmp_ps(v, bottom, _CMP_GT_OQ));
    __m256i r = _mm256_add_epi32(_mm256_cvttps_epi32(c), zpv);
    r = _mm256_min_epi32(_mm256_max_epi32(r, lov), hiv);  // within int8: the packs below are exact
    const __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + i), _mm_packs_epi16(p16, p16));
  }
}

// min_max_portable's lanes, 32 at a time in four pairs of accumulators (one minps chain alone
// waits on its latency); minps(x, l) is x < l ? x : l, the loop's std::min, and maxps likewise.
void min_max_avx2(const float* x, int n, float* lo, float* hi) noexcept {
  const __m256 l0 = _mm256_set1_ps(*lo), h0 = _mm256_set1_ps(*hi);
  __m256 l[4] = {l0, l0, l0, l0}, h[4] = {h0, h0, h0, h0};
  int i = 0;
  for (; i + 32 <= n; i += 32) {
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m256 a = _mm256_loadu_ps(x + i + 8 * k);
      l[k] = _mm256_min_ps(a, l[k]);
      h[k] = _mm256_max_ps(a, h[k]);
    }
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 a = _mm256_loadu_ps(x + i);
    l[0] = _mm256_min_ps(a, l[0]);
    h[0] = _mm256_max_ps(a, h[0]);
  }
  if (i < n) {  // the last 1-7 values by a masked load, blended into lanes that keep theirs
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n - i), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 a = _mm256_maskload_ps(x + i, m);
    l[1] = _mm256_blendv_ps(l[1], _mm256_min_ps(a, l[1]), _mm256_castsi256_ps(m));
    h[1] = _mm256_blendv_ps(h[1], _mm256_max_ps(a, h[1]), _mm256_castsi256_ps(m));
  }
  // Folded in registers (quantize_rows_fold.hpp); accumulators left alone hold *lo and *hi.
  const __m256 l8 = _mm256_min_ps(_mm256_min_ps(l[0], l[1]), _mm256_min_ps(l[2], l[3]));
  const __m256 h8 = _mm256_max_ps(_mm256_max_ps(h[0], h[1]), _mm256_max_ps(h[2], h[3]));
  *lo = fold_min4(_mm_min_ps(_mm256_castps256_ps128(l8), _mm256_extractf128_ps(l8, 1)));
  *hi = fold_max4(_mm_max_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1)));
}

}  // namespace tickinfer::tfl::kernels
