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

// R rows through one panel, each column accumulated exactly as panel_block<P, S> accumulates it
// for one row (S interleaved k-sets, the remainder into set 0, the same sum_sets): the result is
// gemv's, bit for bit. Each weight load feeds R FMAs instead of one, so a matrix streaming from
// L2 (an LSTM's input projection over a window) is read once per R rows.
template <int R, int S>
inline void panel_rows(const float* x, size_t ldx, int K, const float* w, __m512 (&out)[R]) {
  __m512 acc[R][S];
  TICKINFER_UNROLL
  for (int r = 0; r < R; ++r)
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) acc[r][s] = _mm512_setzero_ps();
  int k = 0;
  for (; k + S <= K; k += S) {
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) {
      const __m512 wv = _mm512_loadu_ps(w + static_cast<size_t>(k + s) * kPanel);
      TICKINFER_UNROLL
      for (int r = 0; r < R; ++r) acc[r][s] = _mm512_fmadd_ps(_mm512_set1_ps(x[r * ldx + k + s]), wv, acc[r][s]);
    }
  }
  for (; k < K; ++k) {
    const __m512 wv = _mm512_loadu_ps(w + static_cast<size_t>(k) * kPanel);
    TICKINFER_UNROLL
    for (int r = 0; r < R; ++r) acc[r][0] = _mm512_fmadd_ps(_mm512_set1_ps(x[r * ldx + k]), wv, acc[r][0]);
  }
  TICKINFER_UNROLL
  for (int r = 0; r < R; ++r) out[r] = simd::sum_sets<Simd, 0, S>(acc[r]);
}

// Panel p for rows [0, R): its 16 columns (clipped at N) of each row, stored as gemv stores them.
template <int R, int S>
inline void panel_rows_store(const float* x, size_t ldx, int K, const float* packed_w, int p, int N,
                             const float* init, float* y, size_t ldy, __m512 lo, __m512 hi) {
  __m512 out[R];
  panel_rows<R, S>(x, ldx, K, packed_w + static_cast<size_t>(p) * K * kPanel, out);
  const int c0 = p * kPanel;
  const int lanes = N - c0 < kPanel ? N - c0 : kPanel;
  const __mmask16 m = static_cast<__mmask16>((1u << lanes) - 1u);
  TICKINFER_UNROLL
  for (int r = 0; r < R; ++r) {
    __m512 v = out[r];
    if (init) v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, init + c0), v);
    v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
    _mm512_mask_storeu_ps(y + r * ldy + c0, m, v);
  }
}

}  // namespace

void gemv(const float* x, int K, const float* packed_w, int N, const float* init, float* y,
          float lo, float hi) noexcept {
  simd::gemv<Simd>(x, K, packed_w, N, init, y, lo, hi, gemv_panels);
}

void gemm_rows(const float* x, int rows, size_t ldx, int K, const float* packed_w, int N, const float* init,
               float* y, size_t ldy, float lo, float hi) noexcept {
  // Rows in groups of 4, panel by panel (a panel's weights then serve every group from L1),
  // each panel with the S gemv_panels gives its block: S = 2 in whole blocks of 4 panels (4 rows,
  // 8 accumulators), then a last block of 3 panels at S = 3, of 2 at S = 4, of 1 at S = 8 (two
  // rows at a time: 16 accumulators). The rows after the last whole group (and the dot form) go
  // through gemv itself.
  const int grouped = is_dot_form(N) ? 0 : rows / 4 * 4;
  if (grouped > 0) {
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    const int panels = (N + kPanel - 1) / kPanel;
    const int whole = panels / 4 * 4;
    for (int p = 0; p < panels; ++p) {
      for (int r = 0; r < grouped; r += 4) {
        const float* xr = x + r * ldx;
        float* yr = y + r * ldy;
        if (p < whole) {
          panel_rows_store<4, 2>(xr, ldx, K, packed_w, p, N, init, yr, ldy, vlo, vhi);
        } else if (panels - whole == 3) {
          panel_rows_store<4, 3>(xr, ldx, K, packed_w, p, N, init, yr, ldy, vlo, vhi);
        } else if (panels - whole == 2) {
          panel_rows_store<4, 4>(xr, ldx, K, packed_w, p, N, init, yr, ldy, vlo, vhi);
        } else {
          panel_rows_store<2, 8>(xr, ldx, K, packed_w, p, N, init, yr, ldy, vlo, vhi);
          panel_rows_store<2, 8>(xr + 2 * ldx, ldx, K, packed_w, p, N, init, yr + 2 * ldy, ldy, vlo, vhi);
        }
      }
    }
  }
  for (int r = grouped; r < rows; ++r) gemv(x + r * ldx, K, packed_w, N, init, y + r * ldy, lo, hi);
}

}  // namespace tickinfer::kernels::avx512
