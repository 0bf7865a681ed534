// AVX-512 versions of TFLite's LSTM float logistic / tanh: the AVX2 kernels' operations on 16
// lanes, with no FMA (built with -ffp-contract=off, separate multiplies and adds), so every
// variant agrees with the scalar reference bit for bit. The last 1-15 values go to the AVX2
// kernels (8 lanes, then scalar).
#include "kernels/x86_intrinsics.hpp"

#include "tflite/kernels/tflite_float_activations.hpp"

namespace tickinfer::tfl::kernels {

using namespace tflite_act;

namespace {
inline __m512 madd(__m512 a, __m512 b, __m512 c) { return _mm512_add_ps(_mm512_mul_ps(a, b), c); }
// a < b ? a : b and a > b ? a : b per lane: the second operand for a NaN lane, as vminps does.
inline __m512 min_of(__m512 a, __m512 b) { return _mm512_min_ps(a, b); }
inline __m512 max_of(__m512 a, __m512 b) { return _mm512_max_ps(a, b); }
}  // namespace

void tflite_sigmoid_avx512(const float* x, float* y, int n) noexcept {
  const __m512 hi = _mm512_set1_ps(kExpHi), lo = _mm512_set1_ps(kExpLo);
  const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 xin = _mm512_loadu_ps(x + i);
    // min_ps returns its second operand for a NaN lane, as the scalar fmin picks the number.
    const __m512 v = max_of(min_of(xin, hi), lo);
    const __m512 h = _mm512_mul_ps(v, half);
    const __m512 m = _mm512_roundscale_ps(madd(h, _mm512_set1_ps(kLog2e), half), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m512 r = madd(m, _mm512_set1_ps(kLn2Hi), h);
    r = madd(m, _mm512_set1_ps(kLn2Lo), r);
    const __m512 r2 = _mm512_mul_ps(r, r);
    const __m512 p_even = madd(r2, _mm512_set1_ps(kP4), _mm512_set1_ps(kP2));
    const __m512 p_odd = madd(r2, _mm512_set1_ps(kP5), _mm512_set1_ps(kP3));
    const __m512 p_low = _mm512_add_ps(r, one);
    __m512 p = madd(r, p_odd, p_even);
    p = madd(r2, p, p_low);
    const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(m), _mm512_set1_epi32(127)), 23);
    __m512 e = _mm512_mul_ps(p, _mm512_castsi512_ps(bits));
    e = _mm512_mul_ps(e, e);
    const __m512 s = _mm512_div_ps(e, _mm512_add_ps(one, e));
    const __mmask16 below = _mm512_cmp_ps_mask(xin, lo, _CMP_LT_OQ);
    _mm512_storeu_ps(y + i, _mm512_maskz_mov_ps(static_cast<__mmask16>(~below), s));
  }
  if (i < n) tflite_sigmoid_avx2(x + i, y + i, n - i);
}

void tflite_tanh_avx512(const float* x, float* y, int n) noexcept {
  const __m512 hi = _mm512_set1_ps(kTanhClamp), lo = _mm512_set1_ps(-kTanhClamp);
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 xin = _mm512_loadu_ps(x + i);
    const __m512 v = max_of(min_of(xin, hi), lo);
    const __m512 x2 = _mm512_mul_ps(v, v);
    const __m512 x3 = _mm512_mul_ps(x2, v);
    __m512 p = _mm512_set1_ps(kTanhNum[0]);
    for (int k = 1; k < 4; ++k) p = madd(p, x2, _mm512_set1_ps(kTanhNum[k]));
    __m512 q = _mm512_set1_ps(kTanhDen[0]);
    for (int k = 1; k < 5; ++k) q = madd(q, x2, _mm512_set1_ps(kTanhDen[k]));
    p = madd(x3, p, v);
    _mm512_storeu_ps(y + i, _mm512_div_ps(p, q));
  }
  if (i < n) tflite_tanh_avx2(x + i, y + i, n - i);
}

}  // namespace tickinfer::tfl::kernels
