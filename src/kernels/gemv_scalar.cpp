// Reference gemv over the packed layout: one output at a time, k in order. Deliberately plain;
// it is the oracle for the SIMD variants (and is itself checked against an unpacked loop).
#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::scalar {

void gemv(const float* x, int K, const float* packed_w, int N, const float* init, float* y,
          float lo, float hi) noexcept {
  for (int n = 0; n < N; ++n) {
    const float* panel = packed_w + static_cast<size_t>(n / kPanel) * K * kPanel;
    const int j = n % kPanel;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += x[k] * panel[static_cast<size_t>(k) * kPanel + j];
    float v = (init ? init[n] : 0.0f) + acc;
    v = v < lo ? lo : v;  // comparisons are false for NaN, so NaN propagates
    v = v > hi ? hi : v;
    y[n] = v;
  }
}

}  // namespace tickinfer::kernels::scalar
