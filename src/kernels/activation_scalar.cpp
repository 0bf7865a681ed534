// Reference activations and softmax over arrays.
#include <cmath>

#include "kernels/activation_scalar.hpp"
#include "kernels/kernels_by_isa.hpp"

namespace tickinfer::kernels::scalar {

void activation(const ActivationSpec& act, const float* x, float* y, int n) noexcept {
  if (act.kind == ActKind::Softmax) {  // not elementwise: apply it over the whole array
    softmax(x, y, n);
    return;
  }
  for (int i = 0; i < n; ++i) y[i] = activate(act, x[i]);
}

void softmax(const float* x, float* y, int n) noexcept {
  float mx = x[0];
  for (int i = 1; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - mx);
    sum += y[i];
  }
  for (int i = 0; i < n; ++i) y[i] = y[i] / sum;
}

}  // namespace tickinfer::kernels::scalar
