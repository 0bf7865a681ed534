// AVX-512 gemv over the packed layout (kernel_set.hpp); mirrors gemv_avx2.cpp with one zmm per
// 16-wide panel.
//
// At least 8 independent FMA chains are kept in flight (4 cycles latency, two pipes):
//  * Panel form: blocks of P panels (P zmm accumulators) with K split into S interleaved sets,
//    P S >= 8, summed pairwise at the end. The N tail is stored with a lane mask, so nothing past
//    y[N-1] is written and init is never read past init[N-1].
//  * Dot form (N <= kDotMaxN): shared with the other ISAs, gemv_dot_simd.hpp.
#include "kernels/x86_intrinsics.hpp"

#include "kernels/gemv_dot_simd.hpp"
#include "kernels/kernels_by_isa.hpp"
#include "kernels/simd_avx512.hpp"

namespace tickinfer::kernels::avx512 {

namespace {

// P consecutive panels, the first at w: out[p] = columns [16 p, 16 p + 16) of the block.
template <int P, int S>
inline void panel_block(const float* x, int K, const float* w, __m512 (&out)[P]) {
  const size_t panel_stride = static_cast<size_t>(K) * kPanel;
  __m512 acc[P][S];  // acc[p][s]: panel p, rows k = s mod S
  TICKINFER_UNROLL
  for (int p = 0; p < P; ++p)
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) acc[p][s] = _mm512_setzero_ps();
  int k = 0;
  for (; k + S <= K; k += S) {
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) {
      const __m512 xb = _mm512_set1_ps(x[k + s]);
      const float* row = w + static_cast<size_t>(k + s) * kPanel;
      TICKINFER_UNROLL
      for (int p = 0; p < P; ++p) acc[p][s] = _mm512_fmadd_ps(xb, _mm512_loadu_ps(row + p * panel_stride), acc[p][s]);
    }
  }
  for (; k < K; ++k) {
    const __m512 xb = _mm512_set1_ps(x[k]);
    const float* row = w + static_cast<size_t>(k) * kPanel;
    TICKINFER_UNROLL
    for (int p = 0; p < P; ++p) acc[p][0] = _mm512_fmadd_ps(xb, _mm512_loadu_ps(row + p * panel_stride), acc[p][0]);
  }
  TICKINFER_UNROLL
  for (int p = 0; p < P; ++p) out[p] = simd::sum_sets<Simd, 0, S>(acc[p]);
}

template <int P, int S>
inline void panel_block_store(const float* x, int K, const float* packed_w, int p0, int N,
                              const float* init, float* y, __m512 lo, __m512 hi) {
  __m512 out[P];
  panel_block<P, S>(x, K, packed_w + static_cast<size_t>(p0) * K * kPanel, out);
  const int n0 = p0 * kPanel;
  TICKINFER_UNROLL
  for (int p = 0; p < P; ++p) {
    const int c0 = n0 + kPanel * p;
    const int lanes = N - c0 < kPanel ? N - c0 : kPanel;
    if (lanes <= 0) break;
    const __mmask16 m = static_cast<__mmask16>((1u << lanes) - 1u);
    __m512 v = out[p];
    if (init) v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, init + c0), v);
    v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));  // data second: NaN propagates
    _mm512_mask_storeu_ps(y + c0, m, v);
  }
}

void gemv_panels(const float* x, int K, const float* packed_w, int N, const float* init,
                 float* y, float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const int panels = (N + kPanel - 1) / kPanel;
  int p = 0;
  for (; p + 4 <= panels; p += 4) panel_block_store<4, 2>(x, K, packed_w, p, N, init, y, vlo, vhi);
  switch (panels - p) {
    case 3: panel_block_store<3, 3>(x, K, packed_w, p, N, init, y, vlo, vhi); break;
    case 2: panel_block_store<2, 4>(x, K, packed_w, p, N, init, y, vlo, vhi); break;
    case 1: panel_block_store<1, 8>(x, K, packed_w, p, N, init, y, vlo, vhi); break;
    default: break;
  }
}

}  // namespace

void gemv(const float* x, int K, const float* packed_w, int N, const float* init, float* y,
          float lo, float hi) noexcept {
  simd::gemv<Simd>(x, K, packed_w, N, init, y, lo, hi, gemv_panels);
}

}  // namespace tickinfer::kernels::avx512
