// AVX2 + FMA gemv over the packed layout (kernel_set.hpp): two ymm per 16-wide panel.
//
// As in gemv_avx512.cpp: blocks of P panels (2P accumulators) with K split into S interleaved
// accumulator sets so that 2 * P * S >= 8 independent FMA chains are in flight; the 16 ymm
// registers bound P * S (P = 3 uses 12 accumulators). A partial last panel goes through a stack
// buffer and a scalar loop, so nothing past y[N-1] is written or init[N-1] read.
#include "kernels/x86_intrinsics.hpp"

#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::avx2 {

namespace {

template <int P, int S>
inline void panel_block(const float* x, int K, const float* w, __m256 (&out)[P][2]) {
  const size_t panel_stride = static_cast<size_t>(K) * kPanel;
  __m256 acc[S][P][2];
  for (int s = 0; s < S; ++s)
    for (int p = 0; p < P; ++p) acc[s][p][0] = acc[s][p][1] = _mm256_setzero_ps();
  auto step = [&](int s, int k) {
    const __m256 xb = _mm256_broadcast_ss(x + k);
    const float* row = w + static_cast<size_t>(k) * kPanel;
    for (int p = 0; p < P; ++p) {
      acc[s][p][0] = _mm256_fmadd_ps(xb, _mm256_loadu_ps(row + p * panel_stride), acc[s][p][0]);
      acc[s][p][1] = _mm256_fmadd_ps(xb, _mm256_loadu_ps(row + p * panel_stride + 8), acc[s][p][1]);
    }
  };
  int k = 0;
  for (; k + S <= K; k += S)
    for (int s = 0; s < S; ++s) step(s, k + s);
  for (; k < K; ++k) step(0, k);
  for (int p = 0; p < P; ++p) {
    for (int h = 0; h < 2; ++h) {
      for (int st = 1; st < S; st *= 2)
        for (int s = 0; s + st < S; s += 2 * st) acc[s][p][h] = _mm256_add_ps(acc[s][p][h], acc[s + st][p][h]);
      out[p][h] = acc[0][p][h];
    }
  }
}

inline __m256 finish(__m256 acc, const float* init, __m256 lo, __m256 hi) {
  if (init) acc = _mm256_add_ps(_mm256_loadu_ps(init), acc);
  return _mm256_min_ps(hi, _mm256_max_ps(lo, acc));  // data second: NaN propagates
}

inline void store_panel(const __m256 (&acc)[2], const float* init, float* y, int n0, int N,
                        float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  if (N - n0 >= kPanel) {
    _mm256_storeu_ps(y + n0, finish(acc[0], init ? init + n0 : nullptr, vlo, vhi));
    _mm256_storeu_ps(y + n0 + 8, finish(acc[1], init ? init + n0 + 8 : nullptr, vlo, vhi));
    return;
  }
  alignas(32) float tmp[kPanel];
  _mm256_store_ps(tmp, acc[0]);
  _mm256_store_ps(tmp + 8, acc[1]);
  for (int j = 0; j < N - n0; ++j) {
    float v = (init ? init[n0 + j] : 0.0f) + tmp[j];
    v = v < lo ? lo : v;  // false for NaN: NaN propagates
    v = v > hi ? hi : v;
    y[n0 + j] = v;
  }
}

template <int P, int S>
inline void block(const float* x, int K, const float* packed_w, int p0, int N, const float* init,
                  float* y, float lo, float hi) {
  __m256 out[P][2];
  panel_block<P, S>(x, K, packed_w + static_cast<size_t>(p0) * K * kPanel, out);
  for (int p = 0; p < P; ++p) store_panel(out[p], init, y, (p0 + p) * kPanel, N, lo, hi);
}

}  // namespace

void gemv(const float* x, int K, const float* packed_w, int N, const float* init, float* y,
          float lo, float hi) noexcept {
  const int panels = (N + kPanel - 1) / kPanel;
  int p = 0;
  for (; p + 4 <= panels; p += 4) block<4, 1>(x, K, packed_w, p, N, init, y, lo, hi);
  switch (panels - p) {
    case 3: block<3, 2>(x, K, packed_w, p, N, init, y, lo, hi); break;
    case 2: block<2, 2>(x, K, packed_w, p, N, init, y, lo, hi); break;
    case 1: block<1, 4>(x, K, packed_w, p, N, init, y, lo, hi); break;
    default: break;
  }
}

}  // namespace tickinfer::kernels::avx2
