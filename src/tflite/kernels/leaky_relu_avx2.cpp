// AVX2 float LEAKY_RELU (tflite/kernels/leaky_relu.hpp): 16 floats a turn in two independent
// selects, the tail by the scalar loop. _CMP_GT_OQ is false for NaN, as x > 0 is.
#include <immintrin.h>

#include "tflite/kernels/leaky_relu.hpp"

namespace tickinfer::tfl::kernels {

namespace {
inline __m256 select8(__m256 v, __m256 a) {
  return _mm256_blendv_ps(_mm256_mul_ps(v, a), v, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GT_OQ));
}
}  // namespace

void leaky_relu_avx2(const float* x, float* y, int64_t n, float alpha) noexcept {
  const __m256 a = _mm256_set1_ps(alpha);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    _mm256_storeu_ps(y + i, select8(v0, a));
    _mm256_storeu_ps(y + i + 8, select8(v1, a));
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, select8(_mm256_loadu_ps(x + i), a));
  if (i < n) leaky_relu_scalar(x + i, y + i, n - i, alpha);
}

}  // namespace tickinfer::tfl::kernels
