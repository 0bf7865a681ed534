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

}  // namespace

void gemv(const float* x, int K, const float* packed_w, int N, const float* init, float* y,
          float lo, float hi) noexcept {
  simd::gemv<Simd>(x, K, packed_w, N, init, y, lo, hi, gemv_panels);
}

}  // namespace tickinfer::kernels::avx2
