// AVX2 4-row fp32 product in the sequential order (KernelSet::gemm4_sequential, kernel_set.hpp:
// why it exists beside gemm_rows). Per panel (16 columns) the
// 4 rows x 2 ymm halves are 8 independent accumulator chains; per k, 2 weight loads and 4
// broadcasts feed 8 multiplies and 8 adds. Multiply and add stay separate (no FMA) so each sum
// rounds exactly like the sequential reference loop (total += x * w, k ascending): the mul and
// add pipes run side by side, so this costs no throughput against FMA, and the 8 chains cover
// the add latency (3 cycles, two pipes).
#include "kernels/x86_intrinsics.hpp"

#include "kernels/kernels_by_isa.hpp"
#include "kernels/gemv_dot_simd.hpp"

namespace tickinfer::kernels::avx2 {

namespace {

// Columns [c, c + 8) of one row (fewer where N ends inside them).
inline void store8(__m256 acc, const float* init, float* y, int c, int N, float lo, float hi) {
  if (N - c >= 8) {
    __m256 v = acc;
    if (init) v = _mm256_add_ps(_mm256_loadu_ps(init + c), v);
    v = _mm256_min_ps(_mm256_set1_ps(hi), _mm256_max_ps(_mm256_set1_ps(lo), v));
    _mm256_storeu_ps(y + c, v);
    return;
  }
  alignas(32) float tmp[8];
  _mm256_store_ps(tmp, acc);
  for (int j = 0; j < N - c; ++j) y[c + j] = simd::clamp_one(tmp[j], init ? init + c + j : nullptr, lo, hi);
}

// One panel's 4 x 16 sums into acc (row-major). Kept apart from the stores so that nothing else
// competes for the 16 ymm registers inside the k loop (8 accumulators, 2 weights, 1 broadcast).
__attribute__((noinline)) void panel4(const float* x0, size_t ldx, int K, const float* w, float (&acc)[4][16]) {
  const float* x1 = x0 + ldx;
  const float* x2 = x0 + 2 * ldx;
  const float* x3 = x0 + 3 * ldx;
  __m256 a0 = _mm256_setzero_ps(), b0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), b1 = _mm256_setzero_ps();
  __m256 a2 = _mm256_setzero_ps(), b2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps(), b3 = _mm256_setzero_ps();
  for (int k = 0; k < K; ++k, w += kPanel) {
    const __m256 wl = _mm256_loadu_ps(w);
    const __m256 wh = _mm256_loadu_ps(w + 8);
    __m256 xb = _mm256_broadcast_ss(x0 + k);
    a0 = _mm256_add_ps(a0, _mm256_mul_ps(xb, wl));
    b0 = _mm256_add_ps(b0, _mm256_mul_ps(xb, wh));
    xb = _mm256_broadcast_ss(x1 + k);
    a1 = _mm256_add_ps(a1, _mm256_mul_ps(xb, wl));
    b1 = _mm256_add_ps(b1, _mm256_mul_ps(xb, wh));
    xb = _mm256_broadcast_ss(x2 + k);
    a2 = _mm256_add_ps(a2, _mm256_mul_ps(xb, wl));
    b2 = _mm256_add_ps(b2, _mm256_mul_ps(xb, wh));
    xb = _mm256_broadcast_ss(x3 + k);
    a3 = _mm256_add_ps(a3, _mm256_mul_ps(xb, wl));
    b3 = _mm256_add_ps(b3, _mm256_mul_ps(xb, wh));
  }
  _mm256_storeu_ps(acc[0], a0);
  _mm256_storeu_ps(acc[0] + 8, b0);
  _mm256_storeu_ps(acc[1], a1);
  _mm256_storeu_ps(acc[1] + 8, b1);
  _mm256_storeu_ps(acc[2], a2);
  _mm256_storeu_ps(acc[2] + 8, b2);
  _mm256_storeu_ps(acc[3], a3);
  _mm256_storeu_ps(acc[3] + 8, b3);
}

}  // namespace

void gemm4_sequential(const float* x, size_t ldx, int K, const float* packed, int N, const float* init, float* y,
                      size_t ldy, float lo, float hi) noexcept {
  const int panels = (N + kPanel - 1) / kPanel;
  alignas(32) float acc[kGemm4Rows][16];
  for (int p = 0; p < panels; ++p) {
    panel4(x, ldx, K, packed + static_cast<size_t>(p) * static_cast<size_t>(K) * kPanel, acc);
    const int c = p * kPanel;
    for (int r = 0; r < kGemm4Rows; ++r) {
      float* yr = y + static_cast<size_t>(r) * ldy;
      store8(_mm256_load_ps(acc[r]), init, yr, c, N, lo, hi);
      if (c + 8 < N) store8(_mm256_load_ps(acc[r] + 8), init, yr, c + 8, N, lo, hi);
    }
  }
}

}  // namespace tickinfer::kernels::avx2
