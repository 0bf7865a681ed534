// Shape inference and validation for the Graph. Every check names the layer, so a model that
// loads but cannot run is rejected here, at load time, with a message a user can act on.
#include "model/graph.hpp"

#include <algorithm>
#include <sstream>

#include "tickinfer/error.hpp"

namespace tickinfer {
namespace {

[[noreturn]] void fail(const Node& node, const std::string& msg) {
  throw Error("layer '" + node.name + "' (" + node.keras_class + "): " + msg);
}

void expect_weights(const Node& node, const std::vector<Shape>& shapes) {
  if (node.weights.size() != shapes.size()) {
    fail(node, "expected " + std::to_string(shapes.size()) + " weight tensors, found " +
                   std::to_string(node.weights.size()));
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Weight& w = node.weights[i];
    if (w.shape != shapes[i]) {
      fail(node, "weight " + std::to_string(i) + " has shape " + shape_str(w.shape) +
                     ", expected " + shape_str(shapes[i]));
    }
    if (static_cast<int64_t>(w.data.size()) != shape_size(w.shape)) {
      fail(node, "weight " + std::to_string(i) + " holds " + std::to_string(w.data.size()) +
                     " values for shape " + shape_str(w.shape));
    }
  }
}

const Shape& single_input(const Graph& g, const Node& node) {
  if (node.inputs.size() != 1) {
    fail(node, "expects exactly one input, got " + std::to_string(node.inputs.size()));
  }
  return g.nodes[node.inputs[0]].shape;
}

void require_rank(const Node& node, const Shape& in, size_t rank, const char* what) {
  if (in.size() != rank) {
    fail(node, std::string("expects a ") + what + " input, got shape " + shape_str(in));
  }
}

// Output length of a 1-D window op (conv or pool), as TensorFlow computes it.
int window_output_length(const Node& node, int length, int window, int stride, Padding padding) {
  if (stride < 1) fail(node, "strides must be >= 1");
  switch (padding) {
    case Padding::Same:
      return (length + stride - 1) / stride;
    case Padding::Causal:
      return (length - 1) / stride + 1;  // left-padded by window - 1
    case Padding::Valid:
      if (length < window) {
        fail(node, "input length " + std::to_string(length) + " is shorter than the window " +
                       std::to_string(window) + " with padding='valid'");
      }
      return (length - window) / stride + 1;
  }
  return 0;
}

Shape infer_node(const Graph& g, Node& node) {
  switch (node.kind) {
    case OpKind::Input:
      return node.shape;
    case OpKind::Identity:
    case OpKind::Activation: {
      const Shape& in = single_input(g, node);
      if (node.kind == OpKind::Identity) expect_weights(node, {});
      return in;
    }
    case OpKind::Dense: {
      const Shape& in = single_input(g, node);
      if (in.empty()) fail(node, "input has rank 0");
      if (node.units < 1) fail(node, "units must be >= 1");
      expect_weights(node, {{in.back(), node.units}, {node.units}});
      Shape out = in;
      out.back() = node.units;
      return out;
    }
    case OpKind::BatchNorm:
    case OpKind::LayerNorm: {
      const Shape& in = single_input(g, node);
      if (in.empty()) fail(node, "input has rank 0");
      const int c = in.back();
      if (node.kind == OpKind::BatchNorm) {
        expect_weights(node, {{c}, {c}, {c}, {c}});
        for (float v : node.weights[3].data) {
          if (!(v + node.epsilon > 0.0f)) fail(node, "moving_variance + epsilon must be positive");
        }
      } else {
        expect_weights(node, {{c}, {c}});
      }
      return in;
    }
    case OpKind::LSTM:
    case OpKind::GRU: {
      const Shape& in = single_input(g, node);
      require_rank(node, in, 2, "[timesteps, features]");
      const int u = node.units;
      if (u < 1) fail(node, "units must be >= 1");
      if (node.kind == OpKind::LSTM) {
        expect_weights(node, {{in[1], 4 * u}, {u, 4 * u}, {4 * u}});
      } else if (node.reset_after) {
        expect_weights(node, {{in[1], 3 * u}, {u, 3 * u}, {2, 3 * u}});
      } else {
        expect_weights(node, {{in[1], 3 * u}, {u, 3 * u}, {3 * u}});
      }
      return node.return_sequences ? Shape{in[0], u} : Shape{u};
    }
    case OpKind::Conv1D: {
      const Shape& in = single_input(g, node);
      require_rank(node, in, 2, "[steps, channels]");
      if (node.kernel_size < 1 || node.dilation < 1) fail(node, "kernel_size and dilation must be >= 1");
      if (node.units < 1) fail(node, "filters must be >= 1");
      expect_weights(node, {{node.kernel_size, in[1], node.units}, {node.units}});
      const int span = (node.kernel_size - 1) * node.dilation + 1;
      return {window_output_length(node, in[0], span, node.stride, node.padding), node.units};
    }
    case OpKind::MaxPool1D:
    case OpKind::AvgPool1D: {
      const Shape& in = single_input(g, node);
      require_rank(node, in, 2, "[steps, channels]");
      if (node.pool_size < 1) fail(node, "pool_size must be >= 1");
      if (node.padding == Padding::Causal) fail(node, "padding='causal' is not valid for pooling");
      return {window_output_length(node, in[0], node.pool_size, node.pool_stride, node.padding),
              in[1]};
    }
    case OpKind::GlobalAvgPool1D:
    case OpKind::GlobalMaxPool1D: {
      const Shape& in = single_input(g, node);
      require_rank(node, in, 2, "[steps, channels]");
      return node.keepdims ? Shape{1, in[1]} : Shape{in[1]};
    }
    case OpKind::Flatten: {
      const Shape& in = single_input(g, node);
      return {static_cast<int>(shape_size(in))};
    }
    case OpKind::Reshape: {
      const Shape& in = single_input(g, node);
      Shape out = node.target_shape;
      int64_t known = 1;
      int unknown = -1;
      for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] == -1) {
          if (unknown >= 0) fail(node, "target_shape has more than one -1");
          unknown = static_cast<int>(i);
        } else if (out[i] < 1) {
          fail(node, "target_shape " + shape_str(out) + " has a non-positive dimension");
        } else {
          known *= out[i];
        }
      }
      const int64_t total = shape_size(in);
      if (unknown >= 0) {
        if (total % known != 0) fail(node, "cannot reshape " + shape_str(in) + " to " + shape_str(out));
        out[unknown] = static_cast<int>(total / known);
      }
      if (shape_size(out) != total) {
        fail(node, "cannot reshape " + shape_str(in) + " to " + shape_str(out));
      }
      return out;
    }
    case OpKind::Add:
    case OpKind::Subtract:
    case OpKind::Multiply: {
      if (node.inputs.size() < 2) fail(node, "needs at least two inputs");
      if (node.kind == OpKind::Subtract && node.inputs.size() != 2) {
        fail(node, "needs exactly two inputs");
      }
      const Shape& first = g.nodes[node.inputs[0]].shape;
      for (int in : node.inputs) {
        if (g.nodes[in].shape != first) {
          fail(node, "input shapes differ (" + shape_str(first) + " vs " +
                         shape_str(g.nodes[in].shape) + "); broadcasting is not supported");
        }
      }
      return first;
    }
    case OpKind::Concatenate: {
      if (node.inputs.size() < 2) fail(node, "needs at least two inputs");
      const Shape& first = g.nodes[node.inputs[0]].shape;
      const int rank = static_cast<int>(first.size());
      int axis = node.axis < 0 ? rank + node.axis : node.axis - 1;
      if (node.axis == 0) fail(node, "concatenation along the batch axis is not supported");
      if (axis < 0 || axis >= rank) fail(node, "axis " + std::to_string(node.axis) + " is out of range");
      Shape out = first;
      out[axis] = 0;
      for (int in : node.inputs) {
        const Shape& s = g.nodes[in].shape;
        if (static_cast<int>(s.size()) != rank) fail(node, "inputs have different ranks");
        for (int d = 0; d < rank; ++d) {
          if (d != axis && s[d] != first[d]) {
            fail(node, "input shapes " + shape_str(first) + " and " + shape_str(s) +
                           " differ outside the concatenation axis");
          }
        }
        out[axis] += s[axis];
      }
      node.axis = axis + 1;  // keep the Keras convention so infer_shapes can run again
      return out;
    }
  }
  fail(node, "unknown op");
}

}  // namespace

void infer_shapes(Graph& graph) {
  if (graph.inputs.empty()) throw Error("model has no inputs");
  if (graph.outputs.empty()) throw Error("model has no outputs");
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& node = graph.nodes[i];
    for (int in : node.inputs) {
      if (in < 0 || static_cast<size_t>(in) >= i) {
        fail(node, "refers to an input that is not an earlier layer");
      }
    }
    if (node.kind == OpKind::Input) {
      if (node.shape.empty()) fail(node, "input has no shape");
      for (int d : node.shape) {
        if (d < 1) fail(node, "input shape " + shape_str(node.shape) + " has an unknown or zero dimension");
      }
    }
    node.shape = infer_node(graph, node);
    int64_t elements = 1;
    for (int d : node.shape) {
      if (d < 1) fail(node, "output shape " + shape_str(node.shape) + " is empty");
      elements *= d;
      if (elements > (int64_t{1} << 28)) fail(node, "output tensor is unreasonably large");
    }
  }
  for (int idx : graph.inputs) {
    if (idx < 0 || static_cast<size_t>(idx) >= graph.nodes.size() ||
        graph.nodes[idx].kind != OpKind::Input) {
      throw Error("model input index does not name an input layer");
    }
  }
  for (int idx : graph.outputs) {
    if (idx < 0 || static_cast<size_t>(idx) >= graph.nodes.size()) {
      throw Error("model output index is out of range");
    }
  }
}

const char* op_name(OpKind kind) {
  switch (kind) {
    case OpKind::Input: return "Input";
    case OpKind::Dense: return "Dense";
    case OpKind::Activation: return "Activation";
    case OpKind::BatchNorm: return "BatchNorm";
    case OpKind::LayerNorm: return "LayerNorm";
    case OpKind::Identity: return "Identity";
    case OpKind::LSTM: return "LSTM";
    case OpKind::GRU: return "GRU";
    case OpKind::Conv1D: return "Conv1D";
    case OpKind::MaxPool1D: return "MaxPool1D";
    case OpKind::AvgPool1D: return "AvgPool1D";
    case OpKind::GlobalAvgPool1D: return "GlobalAvgPool1D";
    case OpKind::GlobalMaxPool1D: return "GlobalMaxPool1D";
    case OpKind::Flatten: return "Flatten";
    case OpKind::Reshape: return "Reshape";
    case OpKind::Add: return "Add";
    case OpKind::Subtract: return "Subtract";
    case OpKind::Multiply: return "Multiply";
    case OpKind::Concatenate: return "Concatenate";
  }
  return "?";
}

const char* activation_name(ActKind kind) {
  switch (kind) {
    case ActKind::Linear: return "linear";
    case ActKind::Relu: return "relu";
    case ActKind::LeakyRelu: return "leaky_relu";
    case ActKind::Elu: return "elu";
    case ActKind::Selu: return "selu";
    case ActKind::Sigmoid: return "sigmoid";
    case ActKind::HardSigmoid: return "hard_sigmoid";
    case ActKind::Tanh: return "tanh";
    case ActKind::Softmax: return "softmax";
    case ActKind::Gelu: return "gelu";
    case ActKind::GeluTanh: return "gelu_tanh";
    case ActKind::Swish: return "swish";
    case ActKind::Softplus: return "softplus";
    case ActKind::Softsign: return "softsign";
    case ActKind::Exponential: return "exponential";
  }
  return "?";
}

int64_t shape_size(const Shape& shape) {
  int64_t n = 1;
  for (int d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) os << ", ";
    if (shape[i] < 0) os << "None"; else os << shape[i];
  }
  os << ']';
  return os.str();
}

}  // namespace tickinfer
