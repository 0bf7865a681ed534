// AVX2 + FMA bf16 gemv (gemv_bf16.hpp). A bf16 weight widens to its exact fp32 value by moving
// its 16 bits to the top of a 32-bit lane. The weight stream (the bound once W leaves L1) is half
// the bytes of the fp32 gemv's.
//
//  * Panel form: one 32-byte load is a whole panel row (16 bf16). vpunpcklwd / vpunpckhwd with a
//    zero register widen it in one uop per 8 weights, but per 128-bit lane: the "lo" vector holds
//    columns 0-3 and 8-11, the "hi" vector 4-7 and 12-15. The accumulators keep that order and
//    two vperm2f128 per panel restore columns 0-7 / 8-15 once, at the end. Up to 4 panels
//    (8 ymm accumulators, 64 columns) per pass over K, one x[k] broadcast per 64 weights; fewer
//    panels split K into interleaved sets so that at least 8 independent FMA chains stay in
//    flight (4-cycle latency, two FMA pipes).
//  * vpmovzxwd + vpslld 16 (two uops per 8 weights, natural order) for the dot form below.
//  * Dot form (N <= 4): each output row is a contiguous zero-padded bf16 row; several K-split
//    accumulators per row and a horizontal sum. x is loaded with a mask past K (never read).
#include <immintrin.h>

#include "kernels/kernel_set.hpp"
#include "kernels/store_clamped_avx2.hpp"
#include "tflite/kernels/gemv_bf16.hpp"

namespace tickinfer::tfl::kernels {

namespace {

using ::tickinfer::kernels::kPanel;

inline __m256 widen8(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

using ::tickinfer::kernels::avx2::store8_clamped;  // the fp32 panel kernels' clamped store
using ::tickinfer::kernels::simd::clamp_one;

// P panels starting at panel p0, K split into S interleaved sets.
template <int P, int S>
void panels(const float* x, int K, const uint16_t* packed, int p0, int N, const float* init, float* y, float lo,
            float hi) {
  constexpr int V = 2 * P;
  const size_t pstride = static_cast<size_t>(K) * kPanel;
  const uint16_t* w = packed + static_cast<size_t>(p0) * pstride;
  const __m256i zero = _mm256_setzero_si256();
  // acc[s][2p]: panel p's columns {0-3, 8-11}; acc[s][2p + 1]: {4-7, 12-15} (see the top).
  __m256 acc[S][V];
  for (int s = 0; s < S; ++s)
    for (int v = 0; v < V; ++v) acc[s][v] = _mm256_setzero_ps();
  auto fma_row = [&](__m256 (&a)[V], __m256 xb, const uint16_t* row) {
    for (int p = 0; p < P; ++p) {
      const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + p * pstride));
      a[2 * p] = _mm256_fmadd_ps(xb, _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, wv)), a[2 * p]);
      a[2 * p + 1] = _mm256_fmadd_ps(xb, _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, wv)), a[2 * p + 1]);
    }
  };
  int k = 0;
  for (; k + S <= K; k += S) {
    for (int s = 0; s < S; ++s) fma_row(acc[s], _mm256_broadcast_ss(x + k + s), w + static_cast<size_t>(k + s) * kPanel);
  }
  for (; k < K; ++k) fma_row(acc[0], _mm256_broadcast_ss(x + k), w + static_cast<size_t>(k) * kPanel);
  const int n0 = p0 * kPanel;
  for (int p = 0; p < P; ++p) {
    __m256 a = acc[0][2 * p], b = acc[0][2 * p + 1];
    for (int s = 1; s < S; ++s) {
      a = _mm256_add_ps(a, acc[s][2 * p]);
      b = _mm256_add_ps(b, acc[s][2 * p + 1]);
    }
    const __m256 c0_7 = _mm256_permute2f128_ps(a, b, 0x20);   // a.lane0 (0-3), b.lane0 (4-7)
    const __m256 c8_15 = _mm256_permute2f128_ps(a, b, 0x31);  // a.lane1 (8-11), b.lane1 (12-15)
    const int c = n0 + p * kPanel;
    if (c < N) store8_clamped(c0_7, init, y, c, N, lo, hi);
    if (c + 8 < N) store8_clamped(c8_15, init, y, c + 8, N, lo, hi);
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

}  // namespace tickinfer::tfl::kernels
