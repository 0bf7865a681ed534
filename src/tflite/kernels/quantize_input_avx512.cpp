// AVX-512 model-input quantization, 16 floats per step: the AVX2 variant's operations
// (quantize_input_avx2.cpp) on twice the lanes, the tail through masks. Every step is an exact
// IEEE operation or integer arithmetic, so the bits are the scalar loop's.
#include <immintrin.h>

#include "tflite/kernels/quantize_input.hpp"

namespace tickinfer::tfl::kernels {

namespace {

constexpr __mmask16 kAll = 0xFFFF;

// 16 floats -> 16 int8.
inline __m128i quantize16(__m512 x, __m512 sv, __m512i zpv) {
  const __m512 v0 = _mm512_div_ps(x, sv);
  // NaN -> the lower bound, as fmax(NaN, lo): max_ps returns its second operand for NaN.
  const __m512 v = _mm512_min_ps(_mm512_max_ps(v0, _mm512_set1_ps(-1e9f)), _mm512_set1_ps(1e9f));
  __m512i r = _mm512_cvttps_epi32(v);
  const __m512 frac = _mm512_sub_ps(v, _mm512_cvtepi32_ps(r));
  const __m512i one = _mm512_set1_epi32(1);
  r = _mm512_mask_add_epi32(r, _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ), r, one);
  r = _mm512_mask_sub_epi32(r, _mm512_cmp_ps_mask(frac, _mm512_set1_ps(-0.5f), _CMP_LE_OQ), r, one);
  r = _mm512_maskz_mov_epi32(_mm512_cmp_ps_mask(v0, v0, _CMP_ORD_Q), r);  // NaN -> 0
  r = _mm512_add_epi32(r, zpv);
  r = _mm512_maskz_min_epi32(kAll, _mm512_maskz_max_epi32(kAll, r, _mm512_set1_epi32(-128)), _mm512_set1_epi32(127));
  return _mm512_maskz_cvtepi32_epi8(kAll, r);
}

}  // namespace

void quantize_f32_to_s8_avx512(const float* x, int8_t* q, size_t n, float scale, int32_t zp) noexcept {
  const __m512 sv = _mm512_set1_ps(scale);
  const __m512i zpv = _mm512_set1_epi32(zp);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), quantize16(_mm512_loadu_ps(x + i), sv, zpv));
  if (i < n) {  // the last 1..15: masked load and store; the lanes past n are computed from zeros
    const __mmask16 k = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm_mask_storeu_epi8(q + i, k, quantize16(_mm512_maskz_loadu_ps(k, x + i), sv, zpv));
  }
}

}  // namespace tickinfer::tfl::kernels
