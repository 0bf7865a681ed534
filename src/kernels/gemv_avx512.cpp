// AVX-512 gemv over the packed layout (kernel_set.hpp): one zmm per 16-wide panel.
//
// Throughput: an FMA has 4 cycles of latency and two pipes issue one each per cycle, so at least
// 8 independent accumulator chains are needed to keep them busy. Panels are processed in blocks
// of P (up to 4); each block also splits K into S interleaved accumulator sets (P * S >= 8), which
// are summed at the end. The N tail is stored with a lane mask, so nothing past y[N-1] is written
// and init is never read past init[N-1].
#include "kernels/x86_intrinsics.hpp"

#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::avx512 {

namespace {

// Computes P panels starting at `w` (the first of them) into out[0..P).
template <int P, int S>
inline void panel_block(const float* x, int K, const float* w, __m512 (&out)[P]) {
  const size_t panel_stride = static_cast<size_t>(K) * kPanel;
  __m512 acc[S][P];
  for (int s = 0; s < S; ++s)
    for (int p = 0; p < P; ++p) acc[s][p] = _mm512_setzero_ps();
  int k = 0;
  for (; k + S <= K; k += S) {
    for (int s = 0; s < S; ++s) {
      const __m512 xb = _mm512_set1_ps(x[k + s]);
      const float* row = w + static_cast<size_t>(k + s) * kPanel;
      for (int p = 0; p < P; ++p)
        acc[s][p] = _mm512_fmadd_ps(xb, _mm512_loadu_ps(row + p * panel_stride), acc[s][p]);
    }
  }
  for (; k < K; ++k) {
    const __m512 xb = _mm512_set1_ps(x[k]);
    const float* row = w + static_cast<size_t>(k) * kPanel;
    for (int p = 0; p < P; ++p)
      acc[0][p] = _mm512_fmadd_ps(xb, _mm512_loadu_ps(row + p * panel_stride), acc[0][p]);
  }
  for (int p = 0; p < P; ++p) {
    for (int step = 1; step < S; step *= 2)  // pairwise tree over the S sets
      for (int s = 0; s + step < S; s += 2 * step) acc[s][p] = _mm512_add_ps(acc[s][p], acc[s + step][p]);
    out[p] = acc[0][p];
  }
}

// y[n0 + 0..15] (clipped at N) = clamp(init + acc, lo, hi).
inline void store_panel(__m512 acc, const float* init, float* y, int n0, int N, __m512 lo,
                        __m512 hi) {
  const int lanes = N - n0 < kPanel ? N - n0 : kPanel;
  const __mmask16 m = static_cast<__mmask16>((1u << lanes) - 1u);
  if (init) acc = _mm512_add_ps(_mm512_maskz_loadu_ps(m, init + n0), acc);
  acc = _mm512_min_ps(hi, _mm512_max_ps(lo, acc));  // data second: NaN propagates
  _mm512_mask_storeu_ps(y + n0, m, acc);
}

template <int P, int S>
inline void block(const float* x, int K, const float* packed_w, int p0, int N, const float* init,
                  float* y, __m512 lo, __m512 hi) {
  __m512 out[P];
  panel_block<P, S>(x, K, packed_w + static_cast<size_t>(p0) * K * kPanel, out);
  for (int p = 0; p < P; ++p) store_panel(out[p], init, y, (p0 + p) * kPanel, N, lo, hi);
}

}  // namespace

void gemv(const float* x, int K, const float* packed_w, int N, const float* init, float* y,
          float lo, float hi) noexcept {
  const int panels = (N + kPanel - 1) / kPanel;
  const __m512 vlo = _mm512_set1_ps(lo);
  const __m512 vhi = _mm512_set1_ps(hi);
  int p = 0;
  for (; p + 4 <= panels; p += 4) block<4, 2>(x, K, packed_w, p, N, init, y, vlo, vhi);
  switch (panels - p) {
    case 3: block<3, 3>(x, K, packed_w, p, N, init, y, vlo, vhi); break;
    case 2: block<2, 4>(x, K, packed_w, p, N, init, y, vlo, vhi); break;
    case 1: block<1, 8>(x, K, packed_w, p, N, init, y, vlo, vhi); break;
    default: break;
  }
}

}  // namespace tickinfer::kernels::avx512
