// An LSTM stack with a Dense head, as plain host arrays in Keras's layout (kernel[I][4H],
// recurrent[H][4H], bias[4H], gate order i, f, c, o). This is what the resident kernel is built
// from; it knows nothing of files, so the same kernel serves every importer's graph.
#pragma once

#include <string>
#include <vector>

namespace tickinfer::cuda {

enum class HeadActivation : int { Linear = 0, Sigmoid = 1, Relu = 2, Tanh = 3 };

struct LstmLayerWeights {
  int input = 0;
  int units = 0;
  std::vector<float> kernel;     // [input][4 * units]
  std::vector<float> recurrent;  // [units][4 * units]
  std::vector<float> bias;       // [4 * units]
};

struct DenseLayerWeights {
  int input = 0;
  int output = 0;
  HeadActivation activation = HeadActivation::Linear;
  std::vector<float> kernel;  // [input][output]
  std::vector<float> bias;    // [output]
};

struct LstmStack {
  std::vector<LstmLayerWeights> lstm;
  std::vector<DenseLayerWeights> head;

  int input_width() const { return lstm.empty() ? 0 : lstm.front().input; }
  int output_width() const { return head.empty() ? (lstm.empty() ? 0 : lstm.back().units) : head.back().output; }
  // Empty when the shapes chain (each layer's input is the previous one's width); else why not.
  std::string shape_error() const;
};

// The same computation on the host in double precision: the reference the GPU results are held
// to besides the framework's own outputs. state_h/state_c hold one vector per LSTM layer.
struct LstmStackState {
  std::vector<std::vector<double>> h, c;
};
void reset_state(const LstmStack& stack, LstmStackState& state);
void reference_steps(const LstmStack& stack, LstmStackState& state, const float* x, int steps, float* y);

}  // namespace tickinfer::cuda
