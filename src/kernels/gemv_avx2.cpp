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
//  * Dot form (N <= kDotMaxN): each output is a dot product of x with a zero-padded row, using S
//    K-split accumulators per row; the last K % 8 elements of x are read with a masked load
//    (the weight rows are padded, x is not). The N row sums come out of one horizontal-add tree.
#include "kernels/x86_intrinsics.hpp"

#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::avx2 {

namespace {

// y = clamp(init + acc, lo, hi) for one value, exactly as the scalar reference rounds it.
inline float finish_one(float acc, const float* init, float lo, float hi) {
  float v = (init ? *init : 0.0f) + acc;
  v = v < lo ? lo : v;  // false for NaN: NaN propagates
  return v > hi ? hi : v;
}

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
  for (int j = 0; j < N - n0; ++j) y[n0 + j] = finish_one(tmp[j], init ? init + n0 + j : nullptr, lo, hi);
}

// Pairwise sum of sets[B..E) (compile-time indices only, so the sets stay in registers).
template <int B, int E, int S>
inline __m256 sum_sets(const __m256 (&sets)[S]) {
  if constexpr (E - B == 1) {
    return sets[B];
  } else {
    constexpr int M = B + (E - B) / 2;
    return _mm256_add_ps(sum_sets<B, M>(sets), sum_sets<M, E>(sets));
  }
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
  for (int v = 0; v < V; ++v) out[v] = sum_sets<0, S>(acc[v]);
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

inline __m256i first_lanes(int n) {  // n in [0, 8]
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Dot form with R outputs (R <= 4): y[r] = clamp(init[r] + dot(x, row r), lo, hi).
template <int R>
inline void dot_rows(const float* x, int K, const float* w, const float* init, float* y, float lo,
                     float hi) {
  // K-split accumulators per row: R * S >= 8 chains, except a single row keeps 4 (its K is
  // usually short, a final Dense(1) after 16-64 units, where the reduction depth costs more).
  constexpr int S = R == 1 ? 4 : (8 + R - 1) / R;
  const size_t stride = static_cast<size_t>(dot_row_floats(K));
  __m256 acc[R][S];
  TICKINFER_UNROLL
  for (int r = 0; r < R; ++r)
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) acc[r][s] = _mm256_setzero_ps();
  int k = 0;
  for (; k + 8 * S <= K; k += 8 * S) {
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) {
      const __m256 xv = _mm256_loadu_ps(x + k + 8 * s);
      TICKINFER_UNROLL
      for (int r = 0; r < R; ++r)
        acc[r][s] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w + r * stride + k + 8 * s), acc[r][s]);
    }
  }
  TICKINFER_UNROLL
  for (int t = 0; t + 1 < S; ++t) {  // at most S - 1 whole vectors remain
    if (k + 8 > K) break;
    const __m256 xv = _mm256_loadu_ps(x + k);
    TICKINFER_UNROLL
    for (int r = 0; r < R; ++r) acc[r][t] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w + r * stride + k), acc[r][t]);
    k += 8;
  }
  if (k < K) {  // rows are zero-padded to a multiple of 16, so w + k .. k + 7 is readable
    const __m256 xv = _mm256_maskload_ps(x + k, first_lanes(K - k));
    TICKINFER_UNROLL
    for (int r = 0; r < R; ++r)
      acc[r][S - 1] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w + r * stride + k), acc[r][S - 1]);
  }
  __m256 row[4];
  TICKINFER_UNROLL
  for (int r = 0; r < 4; ++r) {
    if (r >= R) {
      row[r] = _mm256_setzero_ps();
      continue;
    }
    row[r] = sum_sets<0, S>(acc[r]);
  }
  // hadd tree: lane r of `sums` is the full sum of row r.
  const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(row[0], row[1]), _mm256_hadd_ps(row[2], row[3]));
  const __m128 sums = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  alignas(16) float tmp[4];
  _mm_store_ps(tmp, sums);
  TICKINFER_UNROLL
  for (int r = 0; r < R; ++r) y[r] = finish_one(tmp[r], init ? init + r : nullptr, lo, hi);
}

}  // namespace

void gemv(const float* x, int K, const float* packed_w, int N, const float* init, float* y,
          float lo, float hi) noexcept {
  static_assert(kDotMaxN == 4, "one dot_rows instance per dot-form N");
  switch (is_dot_form(N) ? N : 0) {
    case 1: return dot_rows<1>(x, K, packed_w, init, y, lo, hi);
    case 2: return dot_rows<2>(x, K, packed_w, init, y, lo, hi);
    case 3: return dot_rows<3>(x, K, packed_w, init, y, lo, hi);
    case 4: return dot_rows<4>(x, K, packed_w, init, y, lo, hi);
    default: return gemv_panels(x, K, packed_w, N, init, y, lo, hi);
  }
}

}  // namespace tickinfer::kernels::avx2
