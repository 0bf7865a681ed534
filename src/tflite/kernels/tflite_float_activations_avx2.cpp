// AVX2 versions of TFLite's LSTM float logistic / tanh: the scalar reference's operations,
// eight lanes at a time, with no FMA (the file is built with -ffp-contract=off and uses only
// separate multiplies and adds), so both agree bit for bit. Tails go to the scalar functions.
#include <immintrin.h>

#include "tflite/kernels/tflite_float_activations.hpp"

namespace tickinfer::tfl::kernels {

using namespace tflite_act;

namespace {
inline __m256 madd(__m256 a, __m256 b, __m256 c) { return _mm256_add_ps(_mm256_mul_ps(a, b), c); }
}  // namespace

void tflite_sigmoid_avx2(const float* x, float* y, int n) noexcept {
  const __m256 hi = _mm256_set1_ps(kExpHi), lo = _mm256_set1_ps(kExpLo);
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xin = _mm256_loadu_ps(x + i);
    // min_ps returns its second operand for a NaN lane, as the scalar fmin picks the number.
    const __m256 v = _mm256_max_ps(_mm256_min_ps(xin, hi), lo);
    const __m256 h = _mm256_mul_ps(v, half);
    const __m256 m = _mm256_floor_ps(madd(h, _mm256_set1_ps(kLog2e), half));
    __m256 r = madd(m, _mm256_set1_ps(kLn2Hi), h);
    r = madd(m, _mm256_set1_ps(kLn2Lo), r);
    const __m256 r2 = _mm256_mul_ps(r, r);
    const __m256 p_even = madd(r2, _mm256_set1_ps(kP4), _mm256_set1_ps(kP2));
    const __m256 p_odd = madd(r2, _mm256_set1_ps(kP5), _mm256_set1_ps(kP3));
    const __m256 p_low = _mm256_add_ps(r, one);
    __m256 p = madd(r, p_odd, p_even);
    p = madd(r2, p, p_low);
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(m), _mm256_set1_epi32(127)), 23);
    __m256 e = _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
    e = _mm256_mul_ps(e, e);
    const __m256 s = _mm256_div_ps(e, _mm256_add_ps(one, e));
    const __m256 zero_mask = _mm256_cmp_ps(xin, lo, _CMP_LT_OQ);
    _mm256_storeu_ps(y + i, _mm256_andnot_ps(zero_mask, s));
  }
  for (; i < n; ++i) y[i] = tflite_sigmoid(x[i]);
}

void tflite_tanh_avx2(const float* x, float* y, int n) noexcept {
  const __m256 hi = _mm256_set1_ps(kTanhClamp), lo = _mm256_set1_ps(-kTanhClamp);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xin = _mm256_loadu_ps(x + i);
    const __m256 v = _mm256_max_ps(_mm256_min_ps(xin, hi), lo);
    const __m256 x2 = _mm256_mul_ps(v, v);
    const __m256 x3 = _mm256_mul_ps(x2, v);
    __m256 p = _mm256_set1_ps(kTanhNum[0]);
    for (int k = 1; k < 4; ++k) p = madd(p, x2, _mm256_set1_ps(kTanhNum[k]));
    __m256 q = _mm256_set1_ps(kTanhDen[0]);
    for (int k = 1; k < 5; ++k) q = madd(q, x2, _mm256_set1_ps(kTanhDen[k]));
    p = madd(x3, p, v);
    _mm256_storeu_ps(y + i, _mm256_div_ps(p, q));
  }
  for (; i < n; ++i) y[i] = tflite_tanh(x[i]);
}

}  // namespace tickinfer::tfl::kernels
