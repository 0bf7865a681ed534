#pragma once
// The activation functions the kernels implement, with their parameters. It lives with the
// kernels (the lowest layer) because every kernel family applies activations; the model IR
// (model/graph.hpp) and the importers name them through this same type.
#include <cstdint>
#include <limits>

namespace tickinfer {

enum class ActKind : uint8_t {
  Linear,
  Relu,           // generalised Keras ReLU: see ActivationSpec
  LeakyRelu,      // x >= 0 ? x : alpha * x
  Elu,            // x > 0 ? x : alpha * (exp(x) - 1)
  Selu,           // scale * elu(x, alpha) with the fixed SELU constants
  Sigmoid,
  HardSigmoid,    // clamp(slope * x + offset, 0, 1): Keras 2 uses 0.2/0.5, Keras 3 uses 1/6 and 0.5
  Tanh,
  Softmax,        // over the last axis
  Gelu,           // exact: 0.5 * x * (1 + erf(x / sqrt(2)))
  GeluTanh,       // approximate: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
  Swish,          // x * sigmoid(x) (silu)
  Softplus,       // log(1 + exp(x))
  Softsign,       // x / (1 + |x|)
  Exponential,    // exp(x)
};

struct ActivationSpec {
  ActKind kind = ActKind::Linear;
  // Relu: y = x >= threshold ? min(x, max_value) : alpha * (x - threshold)   (Keras ReLU layer)
  //       relu6 is Relu with max_value = 6.
  // LeakyRelu: alpha is the negative slope. Elu: alpha. HardSigmoid: alpha = slope, beta = offset.
  float alpha = 0.0f;
  float beta = 0.0f;
  float max_value = std::numeric_limits<float>::infinity();
  float threshold = 0.0f;

  bool operator==(const ActivationSpec&) const = default;
};

}  // namespace tickinfer
