// Packing of a row-major (K x N) gemv weight matrix into the shared layout documented beside
// kPanel / kDotMaxN in kernel_set.hpp (16-wide panels, or dot rows for small N).
#include "kernels/kernel_set.hpp"

namespace tickinfer::kernels {

void pack_weights(const float* w, int K, int N, float* packed) noexcept {
  if (is_dot_form(N)) {
    const int row = dot_row_floats(K);
    for (int n = 0; n < N; ++n) {
      float* dst = packed + static_cast<size_t>(n) * row;
      for (int k = 0; k < row; ++k) dst[k] = k < K ? w[static_cast<size_t>(k) * N + n] : 0.0f;
    }
    return;
  }
  const int panels = (N + kPanel - 1) / kPanel;
  for (int p = 0; p < panels; ++p) {
    for (int k = 0; k < K; ++k) {
      float* dst = packed + (static_cast<size_t>(p) * K + k) * kPanel;
      for (int j = 0; j < kPanel; ++j) {
        const int n = p * kPanel + j;
        dst[j] = n < N ? w[static_cast<size_t>(k) * N + n] : 0.0f;  // zero padding past N
      }
    }
  }
}

}  // namespace tickinfer::kernels
