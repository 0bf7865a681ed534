// AVX2 + FMA block-sparse gemv (sparse_panels.hpp). One panel (16 outputs, two ymm) at a time;
// its blocks are dealt round-robin to 4 accumulator sets, so 8 FMA chains are in flight (4
// cycles of latency x 2 pipes). Each block is one index load, one broadcast of x[k] and two
// 8-float weight loads: the dense kernel's per-row work, for kept rows only. No software
// prefetch: a pruned layer's blocks mostly sit in L1/L2, and the prefetch measured 20% slower there.
#include "kernels/x86_intrinsics.hpp"

#include "kernels/store_clamped_avx2.hpp"
#include "kernels/simd_avx2.hpp"
#include "kernels/sparse_panels.hpp"

namespace tickinfer::kernels::avx2 {

void sparse_gemv(const float* x, const SparsePanelsView& w, const float* init, float* y, float lo,
                 float hi) noexcept {
  for (int p = 0; p < w.panels; ++p) {
    const uint32_t b0 = w.start[p], n = w.start[p + 1] - b0;
    const uint16_t* r = w.rows + b0;
    const float* v = w.values + static_cast<size_t>(b0) * kSparseBlock;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;  // columns 0..7, sets 0..3
    __m256 c0 = a0, c1 = a0, c2 = a0, c3 = a0;                    // columns 8..15
    uint32_t j = 0;
    for (; j + 4 <= n; j += 4, v += 4 * kSparseBlock) {
      const __m256 x0 = _mm256_broadcast_ss(x + r[j]), x1 = _mm256_broadcast_ss(x + r[j + 1]);
      const __m256 x2 = _mm256_broadcast_ss(x + r[j + 2]), x3 = _mm256_broadcast_ss(x + r[j + 3]);
      a0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(v), a0);
      c0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(v + 8), c0);
      a1 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(v + 16), a1);
      c1 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(v + 24), c1);
      a2 = _mm256_fmadd_ps(x2, _mm256_loadu_ps(v + 32), a2);
      c2 = _mm256_fmadd_ps(x2, _mm256_loadu_ps(v + 40), c2);
      a3 = _mm256_fmadd_ps(x3, _mm256_loadu_ps(v + 48), a3);
      c3 = _mm256_fmadd_ps(x3, _mm256_loadu_ps(v + 56), c3);
    }
    for (; j < n; ++j, v += kSparseBlock) {
      const __m256 x0 = _mm256_broadcast_ss(x + r[j]);
      a0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(v), a0);
      c0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(v + 8), c0);
    }
    const __m256 lo8 = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    const __m256 hi8 = _mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3));
    const int n0 = p * kSparseBlock;
    store8_clamped(lo8, init, y, n0, w.N, lo, hi);
    if (n0 + 8 < w.N) store8_clamped(hi8, init, y, n0 + 8, w.N, lo, hi);
  }
}

}  // namespace tickinfer::kernels::avx2
