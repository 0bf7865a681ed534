// AVX2 + FMA bf16 gemv (bf16_gemv.hpp). A bf16 weight widens to its exact fp32 value by moving
// its 16 bits to the top of a 32-bit lane: vpmovzxwd (8 x u16 -> 8 x u32) then vpslld 16. That
// is two cheap uops per 8 weights next to the FMA, and the weight stream (the bound once W leaves
// L1) is half the bytes of the fp32 gemv's.
//
//  * Panel form: up to 4 panels (8 ymm accumulators, 64 columns) per pass over K, one x[k]
//    broadcast per 64 weights; fewer panels split K into interleaved sets so that at least 8
//    independent FMA chains stay in flight (4-cycle latency, two FMA pipes).
//  * Dot form (N <= 4): each output row is a contiguous zero-padded bf16 row; several K-split
//    accumulators per row and a horizontal sum. x is loaded with a mask past K (never read).
#include <immintrin.h>

#include "kernels/kernel_set.hpp"
#include "quant/kernels/bf16_gemv.hpp"

namespace tickinfer::quant::kernels {

namespace {

using ::tickinfer::kernels::kPanel;

inline __m256 widen8(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

inline float clamp_one(float acc, const float* init, float lo, float hi) {
  float v = (init ? *init : 0.0f) + acc;
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

// Stores 8 columns starting at n0 (fewer when N ends inside them) as clamp(init + acc).
inline void store8(__m256 acc, const float* init, float* y, int n0, int N, float lo, float hi) {
  if (N - n0 >= 8) {
    __m256 v = acc;
    if (init) v = _mm256_add_ps(_mm256_loadu_ps(init + n0), v);
    v = _mm256_min_ps(_mm256_set1_ps(hi), _mm256_max_ps(_mm256_set1_ps(lo), v));  // NaN propagates
    _mm256_storeu_ps(y + n0, v);
    return;
  }
  alignas(32) float tmp[8];
  _mm256_store_ps(tmp, acc);
  for (int j = 0; j < N - n0; ++j) y[n0 + j] = clamp_one(tmp[j], init ? init + n0 + j : nullptr, lo, hi);
}

// P panels starting at panel p0, K split into S interleaved sets.
template <int P, int S>
void panels(const float* x, int K, const uint16_t* packed, int p0, int N, const float* init, float* y, float lo,
            float hi) {
  constexpr int V = 2 * P;
  const size_t pstride = static_cast<size_t>(K) * kPanel;
  const uint16_t* w = packed + static_cast<size_t>(p0) * pstride;
  __m256 acc[S][V];
  for (int s = 0; s < S; ++s)
    for (int v = 0; v < V; ++v) acc[s][v] = _mm256_setzero_ps();
  int k = 0;
  for (; k + S <= K; k += S) {
    for (int s = 0; s < S; ++s) {
      const __m256 xb = _mm256_broadcast_ss(x + k + s);
      const uint16_t* row = w + static_cast<size_t>(k + s) * kPanel;
      for (int v = 0; v < V; ++v)
        acc[s][v] = _mm256_fmadd_ps(xb, widen8(row + (v / 2) * pstride + 8 * (v % 2)), acc[s][v]);
    }
  }
  for (; k < K; ++k) {
    const __m256 xb = _mm256_broadcast_ss(x + k);
    const uint16_t* row = w + static_cast<size_t>(k) * kPanel;
    for (int v = 0; v < V; ++v) acc[0][v] = _mm256_fmadd_ps(xb, widen8(row + (v / 2) * pstride + 8 * (v % 2)), acc[0][v]);
  }
  const int n0 = p0 * kPanel;
  for (int v = 0; v < V; ++v) {
    __m256 sum = acc[0][v];
    for (int s = 1; s < S; ++s) sum = _mm256_add_ps(sum, acc[s][v]);
    if (n0 + 8 * v < N) store8(sum, init, y, n0 + 8 * v, N, lo, hi);
  }
}

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// R output rows in the dot form; S accumulators per row.
template <int R>
void dot_rows(const float* x, int K, const uint16_t* packed, const float* init, float* y, float lo, float hi) {
  constexpr int S = R == 1 ? 4 : (R == 2 ? 4 : 2);
  const size_t stride = static_cast<size_t>(::tickinfer::kernels::dot_row_floats(K));
  __m256 acc[R][S];
  for (int r = 0; r < R; ++r)
    for (int s = 0; s < S; ++s) acc[r][s] = _mm256_setzero_ps();
  int k = 0;
  for (; k + 8 * S <= K; k += 8 * S) {
    for (int s = 0; s < S; ++s) {
      const __m256 xv = _mm256_loadu_ps(x + k + 8 * s);
      for (int r = 0; r < R; ++r) acc[r][s] = _mm256_fmadd_ps(xv, widen8(packed + r * stride + k + 8 * s), acc[r][s]);
    }
  }
  for (; k + 8 <= K; k += 8) {
    const __m256 xv = _mm256_loadu_ps(x + k);
    for (int r = 0; r < R; ++r) acc[r][0] = _mm256_fmadd_ps(xv, widen8(packed + r * stride + k), acc[r][0]);
  }
  if (k < K) {  // rows are zero padded to 16: a whole weight vector is readable; x only to K
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(K - k), idx);
    const __m256 xv = _mm256_maskload_ps(x + k, mask);
    for (int r = 0; r < R; ++r) acc[r][S - 1] = _mm256_fmadd_ps(xv, widen8(packed + r * stride + k), acc[r][S - 1]);
  }
  float out[R];
  for (int r = 0; r < R; ++r) {
    __m256 sum = acc[r][0];
    for (int s = 1; s < S; ++s) sum = _mm256_add_ps(sum, acc[r][s]);
    out[r] = hsum(sum);
  }
  for (int r = 0; r < R; ++r) y[r] = clamp_one(out[r], init ? init + r : nullptr, lo, hi);
}

}  // namespace

void gemv_bf16_avx2(const float* x, int K, const uint16_t* packed, int N, const float* init, float* y, float lo,
                    float hi) noexcept {
  if (::tickinfer::kernels::is_dot_form(N)) {
    switch (N) {
      case 1: return dot_rows<1>(x, K, packed, init, y, lo, hi);
      case 2: return dot_rows<2>(x, K, packed, init, y, lo, hi);
      case 3: return dot_rows<3>(x, K, packed, init, y, lo, hi);
      default: return dot_rows<4>(x, K, packed, init, y, lo, hi);
    }
  }
  const int np = (N + kPanel - 1) / kPanel;
  int p = 0;
  for (; p + 4 <= np; p += 4) panels<4, 1>(x, K, packed, p, N, init, y, lo, hi);
  switch (np - p) {
    case 3: panels<3, 2>(x, K, packed, p, N, init, y, lo, hi); break;
    case 2: panels<2, 2>(x, K, packed, p, N, init, y, lo, hi); break;
    case 1: panels<1, 4>(x, K, packed, p, N, init, y, lo, hi); break;
    default: break;
  }
}

}  // namespace tickinfer::quant::kernels
