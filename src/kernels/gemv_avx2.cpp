// AVX2 + FMA gemv over the packed layout (kernel_set.hpp).
//
// Throughput model (Zen 3 / Intel alike): an FMA has 4 cycles of latency and two pipes issue one
// each per cycle, so at least 8 independent accumulator chains must be in flight; 16 ymm
// registers bound how many. Each weight is used exactly once, so one 8-float weight load feeds
// one FMA: once W no longer fits in L1 (32 KiB) the loop runs at the L2 -> L1 bandwidth
// (~32 bytes per cycle on Zen 3, i.e. one FMA per cycle, about half the FMA peak).
//
//  * Panel form: blocks of 4 panels are 8 ymm accumulators fed by one x[k] broadcast per 64
//    weights. A last block of P < 4 panels (2P accumulators) also splits K into S interleaved
//    sets so that 2 P S >= 8. A partial panel is stored through a stack buffer and a scalar
//    loop, so nothing past y[N-1] is written and init is not read past init[N-1].
//  * Dot form (N <= kDotMaxN): shared with the other ISAs, gemv_dot_simd.hpp.
#include "kernels/x86_intrinsics.hpp"

#include "kernels/gemv_dot_simd.hpp"
#include "kernels/kernels_by_isa.hpp"
#include "kernels/simd_avx2.hpp"

namespace tickinfer::kernels::avx2 {

namespace {

// y = clamp(init + acc, lo, hi) for 8 columns, rounding as the scalar reference does.
inline __m256 finish(__m256 acc, const float* init, __m256 lo, __m256 hi) {
  if (init) acc = _mm256_add_ps(_mm256_loadu_ps(init), acc);
  return _mm256_min_ps(hi, _mm256_max_ps(lo, acc));  // data second: NaN propagates
}

// Stores columns [n0, n0 + 8) of the result, clipped at N.
inline void store_columns(__m256 acc, const float* init, float* y, int n0, int N, float lo,
                          float hi) {
  if (N - n0 >= 8) {
    _mm256_storeu_ps(y + n0, finish(acc, init ? init + n0 : nullptr, _mm256_set1_ps(lo),
                                    _mm256_set1_ps(hi)));
    return;
  }
  alignas(32) float tmp[8];
  _mm256_store_ps(tmp, acc);
  for (int j = 0; j < N - n0; ++j) y[n0 + j] = simd::clamp_one(tmp[j], init ? init + n0 + j : nullptr, lo, hi);
}

// P consecutive panels, the first at w: out[v] = columns [8 v, 8 v + 8) of the block.
template <int P, int S>
inline void panel_block(const float* x, int K, const float* w, __m256 (&out)[2 * P]) {
  constexpr int V = 2 * P;
  const size_t panel_stride = static_cast<size_t>(K) * kPanel;
  __m256 acc[V][S];  // acc[v][s]: columns 8 v .. 8 v + 7, rows k = s mod S
  TICKINFER_UNROLL
  for (int v = 0; v < V; ++v)
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) acc[v][s] = _mm256_setzero_ps();
  int k = 0;
  for (; k + S <= K; k += S) {
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) {
      const __m256 xb = _mm256_broadcast_ss(x + k + s);
      const float* row = w + static_cast<size_t>(k + s) * kPanel;
      TICKINFER_UNROLL
      for (int v = 0; v < V; ++v)
        acc[v][s] = _mm256_fmadd_ps(xb, _mm256_loadu_ps(row + (v / 2) * panel_stride + 8 * (v % 2)), acc[v][s]);
    }
  }
  for (; k < K; ++k) {
    const __m256 xb = _mm256_broadcast_ss(x + k);
    const float* row = w + static_cast<size_t>(k) * kPanel;
    TICKINFER_UNROLL
    for (int v = 0; v < V; ++v)
      acc[v][0] = _mm256_fmadd_ps(xb, _mm256_loadu_ps(row + (v / 2) * panel_stride + 8 * (v % 2)), acc[v][0]);
  }
  TICKINFER_UNROLL
  for (int v = 0; v < V; ++v) out[v] = simd::sum_sets<Simd, 0, S>(acc[v]);
}

template <int P, int S>
inline void panel_block_store(const float* x, int K, const float* packed_w, int p0, int N,
                              const float* init, float* y, float lo, float hi) {
  __m256 out[2 * P];
  panel_block<P, S>(x, K, packed_w + static_cast<size_t>(p0) * K * kPanel, out);
  const int n0 = p0 * kPanel;
  if (N - n0 >= 2 * P * 8) {  // whole block: full-width stores only
    const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    TICKINFER_UNROLL
    for (int v = 0; v < 2 * P; ++v)
      _mm256_storeu_ps(y + n0 + 8 * v, finish(out[v], init ? init + n0 + 8 * v : nullptr, vlo, vhi));
    return;
  }
  TICKINFER_UNROLL
  for (int v = 0; v < 2 * P; ++v) {
    if (n0 + 8 * v < N) store_columns(out[v], init, y, n0 + 8 * v, N, lo, hi);
  }
}

void gemv_panels(const float* x, int K, const float* packed_w, int N, const float* init,
                 float* y, float lo, float hi) {
  const int panels = (N + kPanel - 1) / kPanel;
  int p = 0;
  for (; p + 4 <= panels; p += 4) panel_block_store<4, 1>(x, K, packed_w, p, N, init, y, lo, hi);
  switch (panels - p) {
    case 3: panel_block_store<3, 2>(x, K, packed_w, p, N, init, y, lo, hi); break;
    case 2: panel_block_store<2, 2>(x, K, packed_w, p, N, init, y, lo, hi); break;
    case 1: panel_block_store<1, 4>(x, K, packed_w, p, N, init, y, lo, hi); break;
    default: break;
  }
}

// R rows through one panel (two ymm of columns), each column accumulated exactly as
// panel_block<P, S> accumulates it for one row (S interleaved k-sets, the remainder into set 0,
// the same sum_sets): the result is the gemv's, bit for bit. Each weight load feeds R FMAs
// instead of one, so a layer whose weights stream from L2 is read once for R rows.
template <int R, int S>
inline void panel_rows(const float* x, size_t ldx, int K, const float* w, __m256 (&out)[R][2]) {
  __m256 acc[R][2][S];
  TICKINFER_UNROLL
  for (int r = 0; r < R; ++r)
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) acc[r][0][s] = acc[r][1][s] = _mm256_setzero_ps();
  int k = 0;
  for (; k + S <= K; k += S) {
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) {
      const float* row = w + static_cast<size_t>(k + s) * kPanel;
      const __m256 w0 = _mm256_loadu_ps(row), w1 = _mm256_loadu_ps(row + 8);
      TICKINFER_UNROLL
      for (int r = 0; r < R; ++r) {
        const __m256 xb = _mm256_broadcast_ss(x + r * ldx + k + s);
        acc[r][0][s] = _mm256_fmadd_ps(xb, w0, acc[r][0][s]);
        acc[r][1][s] = _mm256_fmadd_ps(xb, w1, acc[r][1][s]);
      }
    }
  }
  for (; k < K; ++k) {
    const float* row = w + static_cast<size_t>(k) * kPanel;
    const __m256 w0 = _mm256_loadu_ps(row), w1 = _mm256_loadu_ps(row + 8);
    TICKINFER_UNROLL
    for (int r = 0; r < R; ++r) {
      const __m256 xb = _mm256_broadcast_ss(x + r * ldx + k);
      acc[r][0][0] = _mm256_fmadd_ps(xb, w0, acc[r][0][0]);
      acc[r][1][0] = _mm256_fmadd_ps(xb, w1, acc[r][1][0]);
    }
  }
  TICKINFER_UNROLL
  for (int r = 0; r < R; ++r) {
    out[r][0] = simd::sum_sets<Simd, 0, S>(acc[r][0]);
    out[r][1] = simd::sum_sets<Simd, 0, S>(acc[r][1]);
  }
}

// Panel p for rows [0, R): stores its 16 columns (clipped at N) of each row, as gemv stores them.
template <int R, int S>
inline void panel_rows_store(const float* x, size_t ldx, int K, const float* packed_w, int p, int N,
                             const float* init, float* y, size_t ldy, float lo, float hi) {
  __m256 out[R][2];
  panel_rows<R, S>(x, ldx, K, packed_w + static_cast<size_t>(p) * K * kPanel, out);
  const int n0 = p * kPanel;
  TICKINFER_UNROLL
  for (int r = 0; r < R; ++r) {
    store_columns(out[r][0], init, y + r * ldy, n0, N, lo, hi);
    if (n0 + 8 < N) store_columns(out[r][1], init, y + r * ldy, n0 + 8, N, lo, hi);
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
  // with gemv_panels' block shapes: whole blocks of 4 panels at S = 1 (4 rows, 8 accumulators),
  // then a last block of 3 or 2 panels at S = 2 (2 rows at a time) or of 1 panel at S = 4 (one
  // row at a time). The rows after the last whole group (and the dot form) go through gemv
  // itself: a narrower group has too few accumulator chains to beat it.
  const int grouped = is_dot_form(N) ? 0 : rows / 4 * 4;
  if (grouped > 0) {
    const int panels = (N + kPanel - 1) / kPanel;
    const int whole = panels / 4 * 4;
    for (int p = 0; p < panels; ++p) {
      for (int r = 0; r < grouped; r += 4) {
        const float* xr = x + r * ldx;
        float* yr = y + r * ldy;
        if (p < whole) {
          panel_rows_store<4, 1>(xr, ldx, K, packed_w, p, N, init, yr, ldy, lo, hi);
        } else if (panels - whole >= 2) {
          panel_rows_store<2, 2>(xr, ldx, K, packed_w, p, N, init, yr, ldy, lo, hi);
          panel_rows_store<2, 2>(xr + 2 * ldx, ldx, K, packed_w, p, N, init, yr + 2 * ldy, ldy, lo, hi);
        } else {
          for (int j = 0; j < 4; ++j)
            panel_rows_store<1, 4>(xr + j * ldx, ldx, K, packed_w, p, N, init, yr + j * ldy, ldy, lo, hi);
        }
      }
    }
  }
  for (int r = grouped; r < rows; ++r) gemv(x + r * ldx, K, packed_w, N, init, y + r * ldy, lo, hi);
}

}  // namespace tickinfer::kernels::avx2
