// Portable (vector-extension) instantiation of the LSTM/GRU cell updates (cells_simd.hpp).
#include "kernels/cells_simd.hpp"
#include "kernels/kernels_by_isa.hpp"
#include "kernels/simd_portable.hpp"

namespace tickinfer::kernels::portable {

void lstm_cell(float* z, float* c, float* h, int u, const ActivationSpec& rec,
               const ActivationSpec& act) noexcept {
  simd::lstm_cell<Simd>(z, c, h, u, rec, act);
}

void gru_cell(float* zx, const float* zh, float* h, int u, const ActivationSpec& rec,
              const ActivationSpec& act) noexcept {
  simd::gru_cell<Simd>(zx, zh, h, u, rec, act);
}

}  // namespace tickinfer::kernels::portable
