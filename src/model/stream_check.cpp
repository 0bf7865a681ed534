#include "model/stream_check.hpp"

#include <vector>

#include "tickinfer/error.hpp"

namespace tickinfer {

void check_streamable(const Graph& g) {
  // has_time[i]: node i's output still carries the time axis of a sequence input.
  std::vector<bool> has_time(g.nodes.size(), false);
  bool any_sequence = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    bool timed = false;
    for (int in : n.inputs) timed = timed || has_time[in];
    auto reject = [&](const char* why) {
      throw Error("stream mode: layer '" + n.name + "' (" + n.keras_class + ") " + why +
                  "; run this model in window mode");
    };
    switch (n.kind) {
      case OpKind::Input:
        timed = n.shape.size() == 2;
        any_sequence = any_sequence || timed;
        break;
      case OpKind::LSTM:
      case OpKind::GRU:
        // Stream mode keeps the state between runs; one given per run, or handed out as an
        // output, is an encoder-decoder's, which reads a whole window.
        if (n.inputs.size() > 1) reject("starts from an initial_state computed in the run");
        if (n.return_state) reject("returns its state (return_state)");
        timed = n.return_sequences;
        break;
      case OpKind::SliceRows:
        if (timed) reject("takes rows of the time axis");
        break;
      case OpKind::ReverseTime:  // the last tick first: the window must be whole
        if (timed) reject("goes backwards in time (go_backwards, Bidirectional)");
        break;
      case OpKind::Conv1D:
      case OpKind::Conv2D:
      case OpKind::DepthwiseConv2D:
      case OpKind::SeparableConv2D:
      case OpKind::MaxPool2D:
      case OpKind::AvgPool2D:
      case OpKind::MaxPool1D:
      case OpKind::AvgPool1D:
      case OpKind::GlobalAvgPool1D:
      case OpKind::GlobalMaxPool1D:
      case OpKind::Flatten:
      case OpKind::Reshape:
      case OpKind::MatMul:
        if (timed) reject("combines several time steps");
        break;
      case OpKind::MultiHeadAttention: {
        // Causal self-attention over a fixed span streams: its key/value rows of the last span
        // ticks are the state (the attention step's cache). Anything else needs rows to come.
        bool self = true;
        for (int in : n.inputs) self = self && in == n.inputs[0];
        if (timed && !(n.causal_mask && n.attention_span > 0 && self)) {
          reject("attends over the window (stream mode takes causal self-attention with a sliding_window: "
                 "a bounded key/value cache)");
        }
        break;
      }
      case OpKind::Concatenate:
        if (timed && n.axis == 1) reject("concatenates along the time axis");
        break;
      case OpKind::Pad:
        if (timed && (n.pads[0] || n.pads[1])) reject("pads the time axis");
        break;
      case OpKind::Permute:
        if (timed && n.permutation[0] != 0) reject("moves the time axis");
        break;
      default:
        break;
    }
    has_time[i] = timed;
  }
  if (!any_sequence) {
    throw Error("stream mode needs a sequence input [timesteps, features]; this model has none");
  }
}

}  // namespace tickinfer
