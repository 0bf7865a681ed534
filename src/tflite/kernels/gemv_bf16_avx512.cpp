// AVX-512 bf16 gemv (gemv_bf16.hpp), panel form; the dot form (N <= 4) is the AVX2 kernel's.
// A bf16 weight widens to its exact fp32 value by moving its 16 bits to the top of a 32-bit lane.
//
// One 64-byte load is two consecutive rows k, k + 1 of a panel (16 bf16 each). vpunpcklwd /
// vpunpckhwd with a zero register widen it per 128-bit lane: "lo" holds row k's columns 0-3 and
// 8-11, then row k + 1's; "hi" columns 4-7 and 12-15 likewise. Each is multiplied by x[k] in
// the low 256 bits and x[k + 1] in the high, so a panel takes two FMAs per 32 weights and the two
// rows land in different halves of the same accumulators; at the end the halves are added (rows
// k and k + 1 together) and two vperm2f128 restore the column order, as in the AVX2 kernel. Up to
// 4 panels per pass (8 zmm accumulators); fewer panels split K's row pairs into interleaved sets
// so at least 8 FMA chains stay in flight. The weight stream is half the fp32 gemv's bytes, which
// is what bounds a recurrent step whose matrix has left L1.
#include <immintrin.h>

#include "kernels/kernel_set.hpp"
#include "kernels/store_clamped_avx2.hpp"
#include "tflite/kernels/gemv_bf16.hpp"

namespace tickinfer::tfl::kernels {

namespace {

using ::tickinfer::kernels::kPanel;

using ::tickinfer::kernels::avx2::store8_clamped;  // the fp32 panel kernels' clamped store

// x[k] in the low 8 lanes, x[k + 1] (or 0) in the high 8.
inline __m512 pair_of(const float* x, int k, bool second) {
  const __m512 a = _mm512_set1_ps(x[k]);
  return second ? _mm512_mask_mov_ps(a, 0xFF00, _mm512_set1_ps(x[k + 1])) : _mm512_maskz_mov_ps(0x00FF, a);
}

// P panels starting at panel p0, K's row pairs split into S interleaved sets.
template <int P, int S>
void panels(const float* x, int K, const uint16_t* packed, int p0, int N, const float* init, float* y, float lo,
            float hi) {
  constexpr int V = 2 * P;
  const size_t pstride = static_cast<size_t>(K) * kPanel;
  const uint16_t* w = packed + static_cast<size_t>(p0) * pstride;
  const __m512i zero = _mm512_setzero_si512();
  // Every loop over the accumulators unrolled, so they stay in registers (a loop left rolled
  // indexes the array, which then lives on the stack).
  __m512 acc[S][V];
#pragma GCC unroll 8
  for (int s = 0; s < S; ++s)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) acc[s][v] = _mm512_setzero_ps();
  // rows k and k + 1 of every panel (a: the set's accumulators); `last`: row k alone, its
  // neighbour's half of the load zeroed (the panel's rows end at K).
  auto fma_pair = [&](__m512 (&a)[V], __m512 xv, const uint16_t* row, bool last) {
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p) {
      const uint16_t* r = row + p * pstride;
      const __m512i wv = last ? _mm512_maskz_loadu_epi64(0x0F, r) : _mm512_loadu_si512(r);
      a[2 * p] = _mm512_fmadd_ps(xv, _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, wv)), a[2 * p]);
      a[2 * p + 1] = _mm512_fmadd_ps(xv, _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, wv)), a[2 * p + 1]);
    }
  };
  int k = 0;
  for (; k + 2 * S <= K; k += 2 * S) {
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s) {
      fma_pair(acc[s], pair_of(x, k + 2 * s, true), w + static_cast<size_t>(k + 2 * s) * kPanel, false);
    }
  }
  for (; k + 2 <= K; k += 2) fma_pair(acc[0], pair_of(x, k, true), w + static_cast<size_t>(k) * kPanel, false);
  if (k < K) fma_pair(acc[0], pair_of(x, k, false), w + static_cast<size_t>(k) * kPanel, true);
  const int n0 = p0 * kPanel;
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) {
    __m512 a = acc[0][2 * p], b = acc[0][2 * p + 1];
#pragma GCC unroll 8
    for (int s = 1; s < S; ++s) {
      a = _mm512_add_ps(a, acc[s][2 * p]);
      b = _mm512_add_ps(b, acc[s][2 * p + 1]);
    }
    // Rows k and k + 1 together: columns {0-3, 8-11} and {4-7, 12-15}, then in order.
    const __m256 a2 = _mm256_add_ps(_mm512_maskz_extractf32x8_ps(0xFF, a, 0), _mm512_maskz_extractf32x8_ps(0xFF, a, 1));
    const __m256 b2 = _mm256_add_ps(_mm512_maskz_extractf32x8_ps(0xFF, b, 0), _mm512_maskz_extractf32x8_ps(0xFF, b, 1));
    const __m256 c0_7 = _mm256_permute2f128_ps(a2, b2, 0x20);
    const __m256 c8_15 = _mm256_permute2f128_ps(a2, b2, 0x31);
    const int c = n0 + p * kPanel;
    if (c < N) store8_clamped(c0_7, init, y, c, N, lo, hi);
    if (c + 8 < N) store8_clamped(c8_15, init, y, c + 8, N, lo, hi);
  }
}

}  // namespace

void gemv_bf16_avx512(const float* x, int K, const uint16_t* packed, int N, const float* init, float* y, float lo,
                      float hi) noexcept {
  if (::tickinfer::kernels::is_dot_form(N)) return gemv_bf16_avx2(x, K, packed, N, init, y, lo, hi);
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
