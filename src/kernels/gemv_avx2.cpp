// AVX2 + FMA gemv over the packed layout (kernel_set.hpp).
//
// Throughput model (Zen 3 / Intel alike): an FMA has 4 cycles of latency and two pipes issue one
// each per cycle, so at least 8 independent accumulator chains must be in flight; 16 ymm
// registers bound how many. Each weight is used exactly once, so one 8-float weight load feeds
// one FMA and the loop is as fast as weights stream from L1/L2; the column form is laid out so
// that this stream is sequential.
//
//  * Column form: a full 64-column group is 8 ymm accumulators fed by one x[k] broadcast per
//    row of 64 weights. A narrower last group of P panels (2P accumulators) also splits K into S
//    interleaved sets so that 2 P S >= 8. A partial panel is stored through a stack buffer and a
//    scalar loop, so nothing past y[N-1] is written and init is not read past init[N-1].
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

// One column group of P panels (width 16 P) starting at w: out[v] = columns [8 v, 8 v + 8).
template <int P, int S>
inline void column_group(const float* x, int K, const float* w, __m256 (&out)[2 * P]) {
  constexpr int V = 2 * P;
  constexpr int width = P * kPanel;
  __m256 acc[S][V];
  TICKINFER_UNROLL
  for (int s = 0; s < S; ++s)
    TICKINFER_UNROLL
    for (int v = 0; v < V; ++v) acc[s][v] = _mm256_setzero_ps();
  int k = 0;
  for (; k + S <= K; k += S) {
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) {
      const __m256 xb = _mm256_broadcast_ss(x + k + s);
      const float* row = w + static_cast<size_t>(k + s) * width;
      TICKINFER_UNROLL
      for (int v = 0; v < V; ++v) acc[s][v] = _mm256_fmadd_ps(xb, _mm256_loadu_ps(row + 8 * v), acc[s][v]);
    }
  }
  for (; k < K; ++k) {
    const __m256 xb = _mm256_broadcast_ss(x + k);
    const float* row = w + static_cast<size_t>(k) * width;
    TICKINFER_UNROLL
    for (int v = 0; v < V; ++v) acc[0][v] = _mm256_fmadd_ps(xb, _mm256_loadu_ps(row + 8 * v), acc[0][v]);
  }
  TICKINFER_UNROLL
  for (int v = 0; v < V; ++v) {
    TICKINFER_UNROLL
    for (int step = 1; step < S; step *= 2)  // pairwise tree over the S sets
      TICKINFER_UNROLL
      for (int s = 0; s + step < S; s += 2 * step) acc[s][v] = _mm256_add_ps(acc[s][v], acc[s + step][v]);
    out[v] = acc[0][v];
  }
}

template <int P, int S>
inline void column_group_store(const float* x, int K, const float* w, int n0, int N,
                               const float* init, float* y, float lo, float hi) {
  __m256 out[2 * P];
  column_group<P, S>(x, K, w, out);
  TICKINFER_UNROLL
  for (int v = 0; v < 2 * P; ++v) {
    if (n0 + 8 * v < N) store_columns(out[v], init, y, n0 + 8 * v, N, lo, hi);
  }
}

void gemv_columns(const float* x, int K, const float* packed_w, int N, const float* init,
                  float* y, float lo, float hi) {
  const int groups = (N + kGroup - 1) / kGroup;
  for (int g = 0; g < groups; ++g) {
    const float* w = packed_w + static_cast<size_t>(g) * kGroup * K;
    const int n0 = g * kGroup;
    switch (group_width(N, g) / kPanel) {
      case 4: column_group_store<4, 1>(x, K, w, n0, N, init, y, lo, hi); break;
      case 3: column_group_store<3, 2>(x, K, w, n0, N, init, y, lo, hi); break;
      case 2: column_group_store<2, 2>(x, K, w, n0, N, init, y, lo, hi); break;
      default: column_group_store<1, 4>(x, K, w, n0, N, init, y, lo, hi); break;
    }
  }
}

inline __m256i first_lanes(int n) {  // n in [0, 8]
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Dot form with R outputs (R <= 4): y[r] = clamp(init[r] + dot(x, row r), lo, hi).
template <int R>
inline void dot_rows(const float* x, int K, const float* w, const float* init, float* y, float lo,
                     float hi) {
  constexpr int S = R <= 2 ? 4 : 2;  // K-split accumulators per row: R * S >= 6 chains
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
    TICKINFER_UNROLL
    for (int step = 1; step < S; step *= 2)
      TICKINFER_UNROLL
      for (int t = 0; t + step < S; t += 2 * step) acc[r][t] = _mm256_add_ps(acc[r][t], acc[r][t + step]);
    row[r] = acc[r][0];
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
    default: return gemv_columns(x, K, packed_w, N, init, y, lo, hi);
  }
}

}  // namespace tickinfer::kernels::avx2
