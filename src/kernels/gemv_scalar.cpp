// Reference gemv over the packed layout (kernel_set.hpp): one output at a time, k in order.
// Deliberately plain; it is the oracle for the SIMD variants (and is itself checked against an
// unpacked loop), so it only locates W[k][n] in either packed form and accumulates.
#include <cmath>

#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::scalar {

void gemv(const float* x, int K, const float* packed_w, int N, const float* init, float* y,
          float lo, float hi) noexcept {
  for (int n = 0; n < N; ++n) {
    // W[k][n] = column[k * stride]
    const float* column;
    size_t stride;
    if (is_dot_form(N)) {
      column = packed_w + static_cast<size_t>(n) * dot_row_floats(K);
      stride = 1;
    } else {
      column = packed_w + static_cast<size_t>(n / kPanel) * K * kPanel + n % kPanel;
      stride = kPanel;
    }
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += x[k] * column[k * stride];
    float v = (init ? init[n] : 0.0f) + acc;
    v = v < lo ? lo : v;  // comparisons are false for NaN, so NaN propagates
    v = v > hi ? hi : v;
    y[n] = v;
  }
}

// The reference for several rows: one gemv per row.
void gemm_rows(const float* x, int rows, size_t ldx, int K, const float* packed_w, int N, const float* init,
               float* y, size_t ldy, float lo, float hi) noexcept {
  for (int r = 0; r < rows; ++r) gemv(x + r * ldx, K, packed_w, N, init, y + r * ldy, lo, hi);
}

// The chained order of KernelSet::gemm_chain: one fused multiply-add chain per output.
void gemm_chain(const float* x, int rows, size_t ldx, int taps, size_t tap_stride, int ch, const float* packed_w,
                int N, const float* init, float* y, size_t ldy, float lo, float hi) noexcept {
  const int K = taps * ch;
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<size_t>(r) * ldx;
    for (int n = 0; n < N; ++n) {
      const float* column = packed_w + static_cast<size_t>(n / kPanel) * K * kPanel + n % kPanel;
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) {
        const float xk = xr[static_cast<size_t>(k / ch) * tap_stride + k % ch];
        acc = std::fma(xk, column[static_cast<size_t>(k) * kPanel], acc);
      }
      float v = (init ? init[n] : 0.0f) + acc;
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
      y[static_cast<size_t>(r) * ldy + n] = v;
    }
  }
}

}  // namespace tickinfer::kernels::scalar
