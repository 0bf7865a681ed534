#include "cuda/graph_lstm_stack.hpp"

#include <limits>

namespace tickinfer::cuda {
namespace {

std::string layer_label(const Node& n) { return "layer '" + n.name + "' (" + n.keras_class + ")"; }

const char* kWhat = "the resident kernel runs LSTM stacks with a Dense head (other graphs run as the CUDA graph form)";

bool plain_activation(const ActivationSpec& a, HeadActivation& out) {
  switch (a.kind) {
    case ActKind::Linear: out = HeadActivation::Linear; return true;
    case ActKind::Sigmoid: out = HeadActivation::Sigmoid; return true;
    case ActKind::Tanh: out = HeadActivation::Tanh; return true;
    case ActKind::Relu:
      out = HeadActivation::Relu;
      return a.alpha == 0.0f && a.threshold == 0.0f && a.max_value == std::numeric_limits<float>::infinity();
    default: return false;
  }
}

std::string add_lstm(const Node& n, int width, LstmStack& s) {
  if (n.activation.kind != ActKind::Tanh || n.recurrent_activation.kind != ActKind::Sigmoid)
    return layer_label(n) + ": only tanh activation with sigmoid gates runs on the CUDA backend";
  if (n.cell_clip != 0.0f) return layer_label(n) + ": a clipped cell state does not run on the CUDA backend";
  if (n.weights.size() != 3) return layer_label(n) + ": expected kernel, recurrent kernel and bias";
  LstmLayerWeights L;
  L.input = width;
  L.units = n.units;
  L.kernel = n.weights[0].data;
  L.recurrent = n.weights[1].data;
  L.bias = n.weights[2].data;
  s.lstm.push_back(std::move(L));
  return {};
}

}  // namespace

StackFromGraph lstm_stack_from_graph(const Graph& g) {
  StackFromGraph r;
  if (g.inputs.size() != 1 || g.outputs.size() != 1) {
    r.error = std::string("the model has ") + std::to_string(g.inputs.size()) + " inputs and " +
              std::to_string(g.outputs.size()) + " outputs; " + kWhat + " (one input, one output)";
    return r;
  }
  const Node& input = g.nodes[g.inputs[0]];
  if (input.shape.size() != 2) {
    r.error = "the input is not a sequence [time, features]; " + std::string(kWhat);
    return r;
  }
  r.window = input.shape[0];
  int width = input.shape[1], prev = g.inputs[0];
  bool sequences = true;  // what the previous layer hands on: a sequence until the last LSTM
  for (int i = 0; i < int(g.nodes.size()); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind == OpKind::Input) continue;
    if (n.inputs.size() != 1 || n.inputs[0] != prev) {
      r.error = layer_label(n) + ": the CUDA backend runs a plain chain of layers (this one branches or joins)";
      return r;
    }
    prev = i;
    if (n.kind == OpKind::Identity) continue;
    if (n.kind == OpKind::LSTM && n.return_state) {
      r.error = layer_label(n) + ": return_state does not run on the CUDA backend yet; " + kWhat;
      return r;
    }
    if (n.kind == OpKind::LSTM && sequences && r.stack.head.empty()) {
      if (std::string e = add_lstm(n, width, r.stack); !e.empty()) return r.error = e, r;
      width = n.units;
      sequences = n.return_sequences;
      continue;
    }
    if (n.kind == OpKind::Dense && !sequences) {
      DenseLayerWeights D;
      if (!plain_activation(n.activation, D.activation) || n.weights.size() != 2) {
        r.error = layer_label(n) + ": activation " + activation_name(n.activation.kind) +
                  " does not run on the CUDA backend (linear, sigmoid, tanh, relu do)";
        return r;
      }
      D.input = width;
      D.output = n.units;
      D.kernel = n.weights[0].data;
      D.bias = n.weights[1].data;
      r.stack.head.push_back(std::move(D));
      width = n.units;
      continue;
    }
    if (n.kind == OpKind::Activation && !r.stack.head.empty() &&
        r.stack.head.back().activation == HeadActivation::Linear &&
        plain_activation(n.activation, r.stack.head.back().activation))
      continue;
    r.error = layer_label(n) + " is not run by the resident kernel; " + kWhat +
              (sequences ? " (a sequence reaches this layer)" : "");
    r.stack = {};
    return r;
  }
  if (prev != g.outputs[0]) {  // the kernel replies with the chain's last layer
    r.error = std::string("the model's output is not the last layer of its chain; ") + kWhat;
    r.stack = {};
    return r;
  }
  if (r.stack.lstm.empty() || sequences) {
    r.error = std::string("the model ends in a sequence or has no LSTM layer; ") + kWhat;
    r.stack = {};
    return r;
  }
  if (r.stack.head.empty()) {  // the kernels reply through their head's last layer
    r.error = std::string("the model ends in its last LSTM layer (no Dense layer after it); ") + kWhat;
    r.stack = {};
    return r;
  }
  if (std::string e = r.stack.shape_error(); !e.empty()) r.error = e, r.stack = {};
  return r;
}

}  // namespace tickinfer::cuda
