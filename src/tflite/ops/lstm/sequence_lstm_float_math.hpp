#pragma once
// Float helpers shared by the float and hybrid LSTM steps (TFLite's tensor_utils equivalents).
// All noexcept and allocation-free; n is the vector length.
#include <algorithm>
#include <cmath>
#include <string>

#include "tflite/kernels/tflite_float_activations.hpp"
#include "tflite/prepared_op.hpp"

namespace tickinfer::tfl::ops::lstm {

// The cell-gate / output activation TFLite's ApplyActivationToVector supports for LSTMs.
inline FusedActivation fused_activation(const PrepareContext& ctx, FusedActivation act) {
  switch (act) {
    case FusedActivation::None:
    case FusedActivation::Relu:
    case FusedActivation::Relu6:
    case FusedActivation::Tanh:
      return act;
    default:
      ctx.fail("fused_activation_function " + std::to_string(static_cast<int>(act)) +
               " is not supported for LSTM (NONE, RELU, RELU6 or TANH)");
  }
}

// Gate and cell activations use TFLite's own float logistic / tanh (kernels/tflite_float_activations.hpp):
// the x86 TFLite builds compute them with Eigen approximations, not std::exp / std::tanh.
inline void apply_fused_activation(const kernels::FloatActivationKernels& k, FusedActivation act, const float* x,
                                   float* y, int n) noexcept {
  switch (act) {
    case FusedActivation::Tanh: k.tanh(x, y, n); break;
    case FusedActivation::Relu:
      for (int i = 0; i < n; ++i) y[i] = std::max(0.0f, x[i]);
      break;
    case FusedActivation::Relu6:
      for (int i = 0; i < n; ++i) y[i] = std::min(6.0f, std::max(0.0f, x[i]));
      break;
    default:
      if (y != x) std::copy(x, x + n, y);
      break;
  }
}

inline bool all_zero(const float* x, int n) noexcept {
  for (int i = 0; i < n; ++i) {
    if (x[i] != 0.0f) return false;
  }
  return true;
}

// acc[i] += w[i] * v[i]  (peephole connections)
inline void multiply_accumulate(const float* w, const float* v, float* acc, int n) noexcept {
  for (int i = 0; i < n; ++i) acc[i] += w[i] * v[i];
}

inline void clip(float* x, int n, float limit) noexcept {
  for (int i = 0; i < n; ++i) x[i] = std::max(-limit, std::min(limit, x[i]));
}

// TFLite's MeanStddevNormalization (population variance, epsilon 1e-8 inside the root), then
// the layer-norm coefficients and the gate bias.
inline void layer_norm(float* x, const float* coeff, const float* bias, int n) noexcept {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(n);
  float sum_sq = 0.0f;
  for (int i = 0; i < n; ++i) sum_sq += (x[i] - mean) * (x[i] - mean);
  const float inv = 1.0f / std::sqrt(sum_sq / static_cast<float>(n) + 1e-8f);
  for (int i = 0; i < n; ++i) x[i] = (x[i] - mean) * inv * coeff[i] + bias[i];
}

}  // namespace tickinfer::tfl::ops::lstm
