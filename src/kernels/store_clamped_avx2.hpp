#pragma once
// Internal, for AVX2 translation units only: the clamped store that ends every fp32 panel kernel
// (dense sequential, block-sparse, and the interpreter's sparse sequential FULLY_CONNECTED).
#include "kernels/gemv_dot_simd.hpp"
#include "kernels/x86_intrinsics.hpp"

namespace tickinfer::kernels::avx2 {

// y[n0, n0 + 8) = clamp(init + acc, lo, hi), only the lanes below N where N ends inside them;
// init may be nullptr. The data is max/min's second operand, so NaN propagates.
inline void store8_clamped(__m256 acc, const float* init, float* y, int n0, int N, float lo, float hi) {
  if (N - n0 >= 8) {
    __m256 v = acc;
    if (init) v = _mm256_add_ps(_mm256_loadu_ps(init + n0), v);
    _mm256_storeu_ps(y + n0, _mm256_min_ps(_mm256_set1_ps(hi), _mm256_max_ps(_mm256_set1_ps(lo), v)));
    return;
  }
  alignas(32) float tmp[8];
  _mm256_store_ps(tmp, acc);
  for (int j = 0; j < N - n0; ++j) y[n0 + j] = simd::clamp_one(tmp[j], init ? init + n0 + j : nullptr, lo, hi);
}

}  // namespace tickinfer::kernels::avx2
