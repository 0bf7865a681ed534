#include "cuda/lstm_stack.hpp"

#include <cmath>

namespace tickinfer::cuda {

std::string LstmStack::shape_error() const {
  if (lstm.empty()) return "no LSTM layer";
  int width = lstm.front().input;
  for (size_t l = 0; l < lstm.size(); ++l) {
    const LstmLayerWeights& L = lstm[l];
    if (L.input != width) return "LSTM layer " + std::to_string(l) + " takes " + std::to_string(L.input) +
                                 " inputs but receives " + std::to_string(width);
    const size_t g = 4 * size_t(L.units);
    if (L.kernel.size() != size_t(L.input) * g || L.recurrent.size() != size_t(L.units) * g || L.bias.size() != g)
      return "LSTM layer " + std::to_string(l) + ": weight sizes do not match input " + std::to_string(L.input) +
             ", units " + std::to_string(L.units);
    width = L.units;
  }
  for (size_t d = 0; d < head.size(); ++d) {
    const DenseLayerWeights& D = head[d];
    if (D.input != width) return "Dense layer " + std::to_string(d) + " takes " + std::to_string(D.input) +
                                 " inputs but receives " + std::to_string(width);
    if (D.kernel.size() != size_t(D.input) * D.output || D.bias.size() != size_t(D.output))
      return "Dense layer " + std::to_string(d) + ": weight sizes do not match";
    width = D.output;
  }
  return {};
}

void reset_state(const LstmStack& stack, LstmStackState& state) {
  state.h.assign(stack.lstm.size(), {});
  state.c.assign(stack.lstm.size(), {});
  for (size_t l = 0; l < stack.lstm.size(); ++l) {
    state.h[l].assign(stack.lstm[l].units, 0.0);
    state.c[l].assign(stack.lstm[l].units, 0.0);
  }
}

static double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

static double activate(HeadActivation a, double v) {
  switch (a) {
    case HeadActivation::Sigmoid: return sigmoid(v);
    case HeadActivation::Relu: return v > 0 ? v : 0.0;
    case HeadActivation::Tanh: return std::tanh(v);
    case HeadActivation::Linear: break;
  }
  return v;
}

void reference_steps(const LstmStack& stack, LstmStackState& state, const float* x, int steps, float* y) {
  std::vector<double> in, gates;
  for (int t = 0; t < steps; ++t) {
    in.assign(x + size_t(t) * stack.input_width(), x + size_t(t + 1) * stack.input_width());
    for (size_t l = 0; l < stack.lstm.size(); ++l) {
      const LstmLayerWeights& L = stack.lstm[l];
      const int H = L.units, G = 4 * H;
      gates.assign(L.bias.begin(), L.bias.end());
      for (int k = 0; k < L.input; ++k)
        for (int j = 0; j < G; ++j) gates[j] += double(L.kernel[size_t(k) * G + j]) * in[k];
      for (int k = 0; k < H; ++k)
        for (int j = 0; j < G; ++j) gates[j] += double(L.recurrent[size_t(k) * G + j]) * state.h[l][k];
      for (int u = 0; u < H; ++u) {
        const double i = sigmoid(gates[u]), f = sigmoid(gates[H + u]);
        const double g = std::tanh(gates[2 * H + u]), o = sigmoid(gates[3 * H + u]);
        state.c[l][u] = f * state.c[l][u] + i * g;
        state.h[l][u] = o * std::tanh(state.c[l][u]);
      }
      in = state.h[l];
    }
  }
  for (const DenseLayerWeights& D : stack.head) {
    std::vector<double> out(D.bias.begin(), D.bias.end());
    for (int k = 0; k < D.input; ++k)
      for (int o = 0; o < D.output; ++o) out[o] += double(D.kernel[size_t(k) * D.output + o]) * in[k];
    for (double& v : out) v = activate(D.activation, v);
    in = std::move(out);
  }
  for (size_t o = 0; o < in.size(); ++o) y[o] = float(in[o]);
}

}  // namespace tickinfer::cuda
