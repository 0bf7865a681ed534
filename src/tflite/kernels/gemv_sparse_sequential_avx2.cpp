// AVX2 sequential block-sparse fp32 FC (gemv_sparse_sequential.hpp). Each panel's two vectors
// accumulate one chain per column in ascending k, multiply and add apart (no FMA), as the dense
// sequential kernel does; a single chain is add-latency bound, so four panels walk their block
// lists in lockstep (8 independent chains) as far as the shortest list goes, then each finishes
// its own tail.
#include "kernels/x86_intrinsics.hpp"

#include "kernels/store_clamped_avx2.hpp"
#include "tflite/kernels/gemv_sparse_sequential.hpp"

namespace tickinfer::tfl::kernels::avx2 {

namespace {

using ::tickinfer::kernels::kSparseBlock;
using ::tickinfer::kernels::SparsePanelsView;

// x * 0 is NaN exactly for an infinite or NaN x; summed, any such lane stays NaN.
bool all_finite(const float* x, int K) {
  const __m256 zero = _mm256_setzero_ps();
  __m256 acc = zero;
  int k = 0;
  for (; k + 8 <= K; k += 8) acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(x + k), zero));
  float tail = 0.0f;
  for (; k < K; ++k) tail += x[k] * 0.0f;
  return _mm256_movemask_ps(_mm256_cmp_ps(acc, acc, _CMP_UNORD_Q)) == 0 && tail == tail;
}

template <int P>
__attribute__((noinline)) void panels(const float* x, const SparsePanelsView& w, int p0, float (&acc)[4][16]) {
  __m256 lo_half[P], hi_half[P];
  uint32_t first[P], end[P];
  uint32_t common = ~0u;
  TICKINFER_UNROLL
  for (int q = 0; q < P; ++q) {
    lo_half[q] = hi_half[q] = _mm256_setzero_ps();
    first[q] = w.start[p0 + q];
    end[q] = w.start[p0 + q + 1];
    common = end[q] - first[q] < common ? end[q] - first[q] : common;
  }
  for (uint32_t j = 0; j < common; ++j) {
    TICKINFER_UNROLL
    for (int q = 0; q < P; ++q) {
      const uint32_t b = first[q] + j;
      const __m256 xb = _mm256_broadcast_ss(x + w.rows[b]);
      const float* v = w.values + static_cast<size_t>(b) * kSparseBlock;
      lo_half[q] = _mm256_add_ps(lo_half[q], _mm256_mul_ps(xb, _mm256_loadu_ps(v)));
      hi_half[q] = _mm256_add_ps(hi_half[q], _mm256_mul_ps(xb, _mm256_loadu_ps(v + 8)));
    }
  }
  TICKINFER_UNROLL
  for (int q = 0; q < P; ++q) {
    for (uint32_t b = first[q] + common; b < end[q]; ++b) {
      const __m256 xb = _mm256_broadcast_ss(x + w.rows[b]);
      const float* v = w.values + static_cast<size_t>(b) * kSparseBlock;
      lo_half[q] = _mm256_add_ps(lo_half[q], _mm256_mul_ps(xb, _mm256_loadu_ps(v)));
      hi_half[q] = _mm256_add_ps(hi_half[q], _mm256_mul_ps(xb, _mm256_loadu_ps(v + 8)));
    }
    _mm256_storeu_ps(acc[q], lo_half[q]);
    _mm256_storeu_ps(acc[q] + 8, hi_half[q]);
  }
}

}  // namespace

bool gemv_sparse_sequential(const float* x, const SparsePanelsView& w, const float* init, float* y, float lo,
                           float hi) noexcept {
  if (!all_finite(x, w.K)) return false;
  alignas(32) float acc[4][16];
  for (int p = 0; p < w.panels; p += 4) {
    const int n = w.panels - p < 4 ? w.panels - p : 4;
    switch (n) {
      case 4: panels<4>(x, w, p, acc); break;
      case 3: panels<3>(x, w, p, acc); break;
      case 2: panels<2>(x, w, p, acc); break;
      default: panels<1>(x, w, p, acc); break;
    }
    for (int q = 0; q < n; ++q) {
      const int n0 = (p + q) * kSparseBlock;
      ::tickinfer::kernels::avx2::store8_clamped(_mm256_load_ps(acc[q]), init, y, n0, w.N, lo, hi);
      if (n0 + 8 < w.N) ::tickinfer::kernels::avx2::store8_clamped(_mm256_load_ps(acc[q] + 8), init, y, n0 + 8, w.N, lo, hi);
    }
  }
  return true;
}

}  // namespace tickinfer::tfl::kernels::avx2
