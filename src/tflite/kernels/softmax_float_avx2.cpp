// The AVX2 form of the float softmax rows (softmax_float.hpp): the maximum in eight lanes (a row
// holding NaN takes the scalar maximum, whose NaN handling it then keeps exactly), the
// subtraction, product and division eight at a time, the sums four rows at a time in order.
#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "tflite/kernels/softmax_float.hpp"

namespace tickinfer::tfl::kernels {
namespace {

float row_max(const float* x, int d) noexcept {
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  __m256 m = _mm256_set1_ps(kLowest), nan = _mm256_setzero_ps();
  int c = 0;
  for (; c + 8 <= d; c += 8) {
    const __m256 v = _mm256_loadu_ps(x + c);
    m = _mm256_max_ps(m, v);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  float lanes[8];
  _mm256_storeu_ps(lanes, m);
  float max = kLowest;
  if (_mm256_movemask_ps(nan)) {  // NaN: std::max's order of comparisons decides; run it as the reference does
    for (int k = 0; k < d; ++k) max = std::max(max, x[k]);
    return max;
  }
  for (float l : lanes) max = std::max(max, l);
  for (; c < d; ++c) max = std::max(max, x[c]);
  return max;
}

void exponentials(const float* x, float* y, int d, float beta, ExpfArrayFn expf) noexcept {
  const __m256 max = _mm256_set1_ps(row_max(x, d)), b = _mm256_set1_ps(beta);
  int c = 0;
  for (; c + 8 <= d; c += 8) _mm256_storeu_ps(y + c, _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + c), max), b));
  const float m = _mm256_cvtss_f32(max);
  for (; c < d; ++c) y[c] = (x[c] - m) * beta;
  expf(y, y, d);
}

void divide(float* y, int d, float sum) noexcept {
  const __m256 s = _mm256_set1_ps(sum);
  int c = 0;
  for (; c + 8 <= d; c += 8) _mm256_storeu_ps(y + c, _mm256_div_ps(_mm256_loadu_ps(y + c), s));
  for (; c < d; ++c) y[c] = y[c] / sum;
}

}  // namespace

void softmax_rows_avx2(const float* x, float* y, int64_t rows, int d, float beta, ExpfArrayFn expf) noexcept {
  softmax_rows_with(
      x, y, rows, d, [&](const float* xr, float* yr) { exponentials(xr, yr, d, beta, expf); },
      [&](float* yr, float sum) { divide(yr, d, sum); });
}

}  // namespace tickinfer::tfl::kernels
