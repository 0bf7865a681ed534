// AVX2 model-input quantization, 8 floats per step, the same operations as the scalar loop
// (tflite/kernels/quantize_input.hpp): vdivps is the IEEE division, maxps/minps return the bound
// for NaN like fmax/fmin, truncation and the fraction are exact, the rest is integer arithmetic.
#include <immintrin.h>

#include "tflite/kernels/quantize_input.hpp"

namespace tickinfer::tfl::kernels {

namespace {

// 8 floats -> 8 int8 (the low 8 bytes of the result).
inline __m128i quantize8(__m256 x, __m256 sv, __m256i zpv) {
  const __m256 lo = _mm256_set1_ps(-1e9f), hi = _mm256_set1_ps(1e9f);
  const __m256 half = _mm256_set1_ps(0.5f), mhalf = _mm256_set1_ps(-0.5f);
  const __m256 v0 = _mm256_div_ps(x, sv);
  const __m256 v = _mm256_min_ps(_mm256_max_ps(v0, lo), hi);  // NaN -> lo, as fmax(NaN, lo)
  __m256i r = _mm256_cvttps_epi32(v);
  const __m256 frac = _mm256_sub_ps(v, _mm256_cvtepi32_ps(r));
  // The compare masks are -1 where true: r + (frac >= 0.5) - (frac <= -0.5).
  r = _mm256_sub_epi32(r, _mm256_castps_si256(_mm256_cmp_ps(frac, half, _CMP_GE_OQ)));
  r = _mm256_add_epi32(r, _mm256_castps_si256(_mm256_cmp_ps(frac, mhalf, _CMP_LE_OQ)));
  r = _mm256_and_si256(r, _mm256_castps_si256(_mm256_cmp_ps(v0, v0, _CMP_ORD_Q)));  // NaN -> 0
  r = _mm256_add_epi32(r, zpv);
  // Clamped in int32 like the scalar loop; the packs below then never saturate.
  r = _mm256_min_epi32(_mm256_max_epi32(r, _mm256_set1_epi32(-128)), _mm256_set1_epi32(127));
  const __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
  return _mm_packs_epi16(p16, p16);
}

}  // namespace

void quantize_f32_to_s8_avx2(const float* x, int8_t* q, size_t n, float scale, int32_t zp) noexcept {
  const __m256 sv = _mm256_set1_ps(scale);
  const __m256i zpv = _mm256_set1_epi32(zp);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + i), quantize8(_mm256_loadu_ps(x + i), sv, zpv));
  }
  if (i < n) {
    // The last 1..7: a masked load reads only them (a model's 10 features end here); the lanes
    // past n are computed from zeros and not stored.
    const int left = static_cast<int>(n - i);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(left), lane);
    alignas(16) int8_t tmp[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(tmp), quantize8(_mm256_maskload_ps(x + i, mask), sv, zpv));
    for (int k = 0; k < left; ++k) q[i + static_cast<size_t>(k)] = tmp[k];
  }
}

}  // namespace tickinfer::tfl::kernels
