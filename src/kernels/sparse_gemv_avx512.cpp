// AVX-512 block-sparse gemv (sparse_panels.hpp): a block's 16 weights are one zmm. A panel's
// blocks are dealt to 4 accumulator sets; each block is an index load, a broadcast and one weight
// load, so the loads (not the 4 FMA chains) bound the loop.
#include "kernels/x86_intrinsics.hpp"

#include "kernels/gemv_dot_simd.hpp"
#include "kernels/sparse_panels.hpp"

namespace tickinfer::kernels::avx512 {

namespace {

inline void store16(__m512 acc, const float* init, float* y, int n0, int N, float lo, float hi) {
  const int m = N - n0 >= 16 ? 16 : N - n0;
  const __mmask16 k = static_cast<__mmask16>((1u << m) - 1u);
  if (init) acc = _mm512_add_ps(_mm512_maskz_loadu_ps(k, init + n0), acc);
  acc = _mm512_min_ps(_mm512_set1_ps(hi), _mm512_max_ps(_mm512_set1_ps(lo), acc));  // NaN propagates
  _mm512_mask_storeu_ps(y + n0, k, acc);
}

inline __m512 panel(const float* x, const SparsePanelsView& w, int p) {
  const uint32_t b0 = w.start[p], n = w.start[p + 1] - b0;
  const uint16_t* r = w.rows + b0;
  const float* v = w.values + static_cast<size_t>(b0) * kSparseBlock;
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  uint32_t j = 0;
  for (; j + 4 <= n; j += 4, v += 4 * kSparseBlock) {
    a0 = _mm512_fmadd_ps(_mm512_set1_ps(x[r[j]]), _mm512_loadu_ps(v), a0);
    a1 = _mm512_fmadd_ps(_mm512_set1_ps(x[r[j + 1]]), _mm512_loadu_ps(v + 16), a1);
    a2 = _mm512_fmadd_ps(_mm512_set1_ps(x[r[j + 2]]), _mm512_loadu_ps(v + 32), a2);
    a3 = _mm512_fmadd_ps(_mm512_set1_ps(x[r[j + 3]]), _mm512_loadu_ps(v + 48), a3);
  }
  for (; j < n; ++j, v += kSparseBlock) a0 = _mm512_fmadd_ps(_mm512_set1_ps(x[r[j]]), _mm512_loadu_ps(v), a0);
  return _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
}

}  // namespace

void sparse_gemv(const float* x, const SparsePanelsView& w, const float* init, float* y, float lo,
                 float hi) noexcept {
  for (int p = 0; p < w.panels; ++p) store16(panel(x, w, p), init, y, p * kSparseBlock, w.N, lo, hi);
}

}  // namespace tickinfer::kernels::avx512
