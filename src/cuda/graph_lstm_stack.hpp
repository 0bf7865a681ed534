// The CUDA backend's view of a model graph: an LSTM stack with a Dense head (what the resident
// kernel runs), taken from any importer's Graph, or the reason the graph is not one.
#pragma once

#include <string>

#include "cuda/lstm_stack.hpp"
#include "model/graph.hpp"

namespace tickinfer::cuda {

struct StackFromGraph {
  LstmStack stack;
  int window = 0;     // the input's time steps as the graph fixes them (-1: not fixed)
  std::string error;  // empty when `stack` holds the model; else one sentence naming the layer
};

// Accepts one input, then LSTM layers (every one but the last returning sequences, tanh/sigmoid,
// no cell clipping), then Dense layers (linear, sigmoid, tanh or plain ReLU, an Activation layer
// folded into the Dense before it), inference no-ops (Dropout...) anywhere, one output.
StackFromGraph lstm_stack_from_graph(const Graph& graph);

}  // namespace tickinfer::cuda
