// AVX2 fp32 product of up to 4 rows in the sequential order (KernelSet::gemm4_sequential,
// kernel_set.hpp: why it exists beside gemm_rows). Four rows: per panel (16 columns) the
// 4 rows x 2 ymm halves are 8 independent accumulator chains; per k, 2 weight loads and 4
// broadcasts feed 8 multiplies and 8 adds. Multiply and add stay separate (no FMA) so each sum
// rounds exactly like the sequential reference loop (total += x * w, k ascending): the mul and
// add pipes run side by side, so this costs no throughput against FMA, and the 8 chains cover
// the add latency (3 cycles, two pipes). Fewer rows: each row alone over 4 panels at a time
// (row_panels), 8 chains again.
#include "kernels/x86_intrinsics.hpp"

#include "kernels/kernels_by_isa.hpp"
#include "kernels/store_clamped_avx2.hpp"

namespace tickinfer::kernels::avx2 {

namespace {

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

// One row's sums over P consecutive panels into acc[0, P) (each 16 columns): 2 P independent
// chains, so a single row (a batch-1 FULLY_CONNECTED, a conv's last pixels) keeps the add pipes
// as busy as panel4 does, where padding it to four rows would do four times the work.
template <int P>
__attribute__((noinline)) void row_panels(const float* x, int K, const float* w, size_t panel_stride,
                                          float (&acc)[4][16]) {
  __m256 lo_half[P], hi_half[P];
  TICKINFER_UNROLL
  for (int p = 0; p < P; ++p) lo_half[p] = hi_half[p] = _mm256_setzero_ps();
  for (int k = 0; k < K; ++k, w += kPanel) {
    const __m256 xb = _mm256_broadcast_ss(x + k);
    TICKINFER_UNROLL
    for (int p = 0; p < P; ++p) {
      lo_half[p] = _mm256_add_ps(lo_half[p], _mm256_mul_ps(xb, _mm256_loadu_ps(w + p * panel_stride)));
      hi_half[p] = _mm256_add_ps(hi_half[p], _mm256_mul_ps(xb, _mm256_loadu_ps(w + p * panel_stride + 8)));
    }
  }
  TICKINFER_UNROLL
  for (int p = 0; p < P; ++p) {
    _mm256_storeu_ps(acc[p], lo_half[p]);
    _mm256_storeu_ps(acc[p] + 8, hi_half[p]);
  }
}

void one_row(const float* x, int K, const float* packed, int N, const float* init, float* y, float lo,
             float hi) noexcept {
  const int panels = (N + kPanel - 1) / kPanel;
  const size_t stride = static_cast<size_t>(K) * kPanel;
  alignas(32) float acc[4][16];
  for (int p = 0; p < panels; p += 4) {
    const float* w = packed + static_cast<size_t>(p) * stride;
    const int n = panels - p < 4 ? panels - p : 4;
    switch (n) {
      case 4: row_panels<4>(x, K, w, stride, acc); break;
      case 3: row_panels<3>(x, K, w, stride, acc); break;
      case 2: row_panels<2>(x, K, w, stride, acc); break;
      default: row_panels<1>(x, K, w, stride, acc); break;
    }
    for (int q = 0; q < n; ++q) {
      const int c = (p + q) * kPanel;
      store8_clamped(_mm256_load_ps(acc[q]), init, y, c, N, lo, hi);
      if (c + 8 < N) store8_clamped(_mm256_load_ps(acc[q] + 8), init, y, c + 8, N, lo, hi);
    }
  }
}

}  // namespace

void gemm4_sequential(const float* x, int rows, size_t ldx, int K, const float* packed, int N, const float* init,
                      float* y, size_t ldy, float lo, float hi) noexcept {
  if (rows < kGemm4Rows) {
    for (int r = 0; r < rows; ++r) {
      one_row(x + static_cast<size_t>(r) * ldx, K, packed, N, init, y + static_cast<size_t>(r) * ldy, lo, hi);
    }
    return;
  }
  const int panels = (N + kPanel - 1) / kPanel;
  alignas(32) float acc[kGemm4Rows][16];
  for (int p = 0; p < panels; ++p) {
    panel4(x, ldx, K, packed + static_cast<size_t>(p) * static_cast<size_t>(K) * kPanel, acc);
    const int c = p * kPanel;
    for (int r = 0; r < kGemm4Rows; ++r) {
      float* yr = y + static_cast<size_t>(r) * ldy;
      store8_clamped(_mm256_load_ps(acc[r]), init, yr, c, N, lo, hi);
      if (c + 8 < N) store8_clamped(_mm256_load_ps(acc[r] + 8), init, yr, c + 8, N, lo, hi);
    }
  }
}

}  // namespace tickinfer::kernels::avx2
