// AVX-512 gemv over the packed layout (kernel_set.hpp); mirrors gemv_avx2.cpp with one zmm per
// 16-wide panel.
//
// At least 8 independent FMA chains are kept in flight (4 cycles latency, two pipes):
//  * Column form: a group of P panels (P zmm accumulators) with K split into S interleaved sets,
//    P S >= 8, summed pairwise at the end. The N tail is stored with a lane mask, so nothing past
//    y[N-1] is written and init is never read past init[N-1].
//  * Dot form (N <= kDotMaxN): S K-split accumulators per output row; the last K % 16 elements
//    of x are read with a masked load (weight rows are zero-padded to 16, x is not).
#include "kernels/x86_intrinsics.hpp"

#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::avx512 {

namespace {

inline float finish_one(float acc, const float* init, float lo, float hi) {
  float v = (init ? *init : 0.0f) + acc;
  v = v < lo ? lo : v;  // false for NaN: NaN propagates
  return v > hi ? hi : v;
}

// One column group of P panels (width 16 P) starting at w: out[p] = columns [16 p, 16 p + 16).
template <int P, int S>
inline void column_group(const float* x, int K, const float* w, __m512 (&out)[P]) {
  constexpr int width = P * kPanel;
  __m512 acc[S][P];
  for (int s = 0; s < S; ++s)
    for (int p = 0; p < P; ++p) acc[s][p] = _mm512_setzero_ps();
  int k = 0;
  for (; k + S <= K; k += S) {
    for (int s = 0; s < S; ++s) {
      const __m512 xb = _mm512_set1_ps(x[k + s]);
      const float* row = w + static_cast<size_t>(k + s) * width;
      for (int p = 0; p < P; ++p) acc[s][p] = _mm512_fmadd_ps(xb, _mm512_loadu_ps(row + 16 * p), acc[s][p]);
    }
  }
  for (; k < K; ++k) {
    const __m512 xb = _mm512_set1_ps(x[k]);
    const float* row = w + static_cast<size_t>(k) * width;
    for (int p = 0; p < P; ++p) acc[0][p] = _mm512_fmadd_ps(xb, _mm512_loadu_ps(row + 16 * p), acc[0][p]);
  }
  for (int p = 0; p < P; ++p) {
    for (int step = 1; step < S; step *= 2)  // pairwise tree over the S sets
      for (int s = 0; s + step < S; s += 2 * step) acc[s][p] = _mm512_add_ps(acc[s][p], acc[s + step][p]);
    out[p] = acc[0][p];
  }
}

template <int P, int S>
inline void column_group_store(const float* x, int K, const float* w, int n0, int N,
                               const float* init, float* y, __m512 lo, __m512 hi) {
  __m512 out[P];
  column_group<P, S>(x, K, w, out);
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

void gemv_columns(const float* x, int K, const float* packed_w, int N, const float* init,
                  float* y, float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const int groups = (N + kGroup - 1) / kGroup;
  for (int g = 0; g < groups; ++g) {
    const float* w = packed_w + static_cast<size_t>(g) * kGroup * K;
    const int n0 = g * kGroup;
    switch (group_width(N, g) / kPanel) {
      case 4: column_group_store<4, 2>(x, K, w, n0, N, init, y, vlo, vhi); break;
      case 3: column_group_store<3, 3>(x, K, w, n0, N, init, y, vlo, vhi); break;
      case 2: column_group_store<2, 4>(x, K, w, n0, N, init, y, vlo, vhi); break;
      default: column_group_store<1, 8>(x, K, w, n0, N, init, y, vlo, vhi); break;
    }
  }
}

// Dot form with R outputs (R <= 4): y[r] = clamp(init[r] + dot(x, row r), lo, hi).
template <int R>
inline void dot_rows(const float* x, int K, const float* w, const float* init, float* y, float lo,
                     float hi) {
  constexpr int S = R <= 2 ? 4 : 2;  // K-split accumulators per row
  const size_t stride = static_cast<size_t>(dot_row_floats(K));
  __m512 acc[R][S];
  for (int r = 0; r < R; ++r)
    for (int s = 0; s < S; ++s) acc[r][s] = _mm512_setzero_ps();
  int k = 0;
  for (; k + 16 * S <= K; k += 16 * S) {
    for (int s = 0; s < S; ++s) {
      const __m512 xv = _mm512_loadu_ps(x + k + 16 * s);
      for (int r = 0; r < R; ++r)
        acc[r][s] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(w + r * stride + k + 16 * s), acc[r][s]);
    }
  }
  for (int t = 0; t + 1 < S; ++t) {  // at most S - 1 whole vectors remain
    if (k + 16 > K) break;
    const __m512 xv = _mm512_loadu_ps(x + k);
    for (int r = 0; r < R; ++r) acc[r][t] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(w + r * stride + k), acc[r][t]);
    k += 16;
  }
  if (k < K) {  // rows are zero-padded to a multiple of 16, so w + k .. k + 15 is readable
    const __m512 xv = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << (K - k)) - 1u), x + k);
    for (int r = 0; r < R; ++r)
      acc[r][S - 1] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(w + r * stride + k), acc[r][S - 1]);
  }
  for (int r = 0; r < R; ++r) {
    for (int step = 1; step < S; step *= 2)
      for (int t = 0; t + step < S; t += 2 * step) acc[r][t] = _mm512_add_ps(acc[r][t], acc[r][t + step]);
    y[r] = finish_one(_mm512_reduce_add_ps(acc[r][0]), init ? init + r : nullptr, lo, hi);
  }
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

}  // namespace tickinfer::kernels::avx512
