// Reference LSTM and GRU cell updates (the pointwise part of one step, after the matmuls).
#include "kernels/activation_scalar.hpp"
#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::scalar {

void lstm_cell(float* z, float* c, float* h, int u, const ActivationSpec& rec,
               const ActivationSpec& act) noexcept {
  for (int j = 0; j < u; ++j) {
    const float i = activate(rec, z[j]);
    const float f = activate(rec, z[u + j]);
    const float g = activate(act, z[2 * u + j]);
    const float o = activate(rec, z[3 * u + j]);
    c[j] = f * c[j] + i * g;
    h[j] = o * activate(act, c[j]);
  }
}

void gru_cell(float* zx, const float* zh, float* h, int u, const ActivationSpec& rec,
              const ActivationSpec& act) noexcept {
  for (int j = 0; j < u; ++j) {
    const float z = activate(rec, zx[j] + zh[j]);
    const float r = activate(rec, zx[u + j] + zh[u + j]);
    const float hh = activate(act, zx[2 * u + j] + r * zh[2 * u + j]);
    h[j] = z * h[j] + (1.0f - z) * hh;
  }
}

}  // namespace tickinfer::kernels::scalar
