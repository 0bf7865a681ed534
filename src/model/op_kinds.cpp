// The op kinds of the graph IR, one row each (op_kinds.hpp): name, shape rule, multiply-accumulates.
#include "model/op_kinds.hpp"

#include <algorithm>

#include "tickinfer/error.hpp"

namespace tickinfer {

void fail_layer(const Node& node, const std::string& msg) {
  throw Error("layer '" + node.name + "' (" + node.keras_class + "): " + msg);
}

namespace {

void expect_weights(const Node& node, const std::vector<Shape>& shapes) {
  if (node.weights.size() != shapes.size()) {
    fail_layer(node, "expected " + std::to_string(shapes.size()) + " weight tensors, found " +
                   std::to_string(node.weights.size()));
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Weight& w = node.weights[i];
    if (w.shape != shapes[i]) {
      fail_layer(node, "weight " + std::to_string(i) + " has shape " + shape_str(w.shape) +
                     ", expected " + shape_str(shapes[i]));
    }
    if (static_cast<int64_t>(w.data.size()) != shape_size(w.shape)) {
      fail_layer(node, "weight " + std::to_string(i) + " holds " + std::to_string(w.data.size()) +
                     " values for shape " + shape_str(w.shape));
    }
  }
}

const Shape& single_input(const Graph& g, const Node& node) {
  if (node.inputs.size() != 1) {
    fail_layer(node, "expects exactly one input, got " + std::to_string(node.inputs.size()));
  }
  return g.nodes[node.inputs[0]].shape;
}

void require_rank(const Node& node, const Shape& in, size_t rank, const char* what) {
  if (in.size() != rank) {
    fail_layer(node, std::string("expects a ") + what + " input, got shape " + shape_str(in));
  }
}

// Output length of a 1-D window op (conv or pool), as TensorFlow computes it.
int window_output_length(const Node& node, int length, int window, int stride, Padding padding) {
  if (stride < 1) fail_layer(node, "strides must be >= 1");
  switch (padding) {
    case Padding::Same:
      return (length + stride - 1) / stride;
    case Padding::Causal:
      return (length - 1) / stride + 1;  // left-padded by window - 1
    case Padding::Valid:
      if (length < window) {
        fail_layer(node, "input length " + std::to_string(length) + " is shorter than the window " +
                       std::to_string(window) + " with padding='valid'");
      }
      return (length - window) / stride + 1;
  }
  return 0;
}

Shape input_shape(const Graph&, Node& node) { return node.shape; }

Shape identity_like_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  if (node.kind == OpKind::Identity) expect_weights(node, {});
  return in;
}

Shape dense_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  if (in.empty()) fail_layer(node, "input has rank 0");
  if (node.units < 1) fail_layer(node, "units must be >= 1");
  expect_weights(node, {{in.back(), node.units}, {node.units}});
  Shape out = in;
  out.back() = node.units;
  return out;
}

Shape normalization_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  if (in.empty()) fail_layer(node, "input has rank 0");
  const int c = in.back();
  if (node.kind == OpKind::BatchNorm) {
    expect_weights(node, {{c}, {c}, {c}, {c}});
    for (float v : node.weights[3].data) {
      if (!(v + node.epsilon > 0.0f)) fail_layer(node, "moving_variance + epsilon must be positive");
    }
  } else {
    expect_weights(node, {{c}, {c}});
  }
  return in;
}

// [T, in] -> [T, u] (return_sequences) or [u]; an LSTM's return_state adds the final cell state
// as a last row ([T + 1, u] or [2, u]). An LSTM's optional second and third inputs are its
// initial h and c, each [u].
Shape recurrent_shape(const Graph& g, Node& node) {
  const bool lstm = node.kind == OpKind::LSTM;
  if (lstm && node.inputs.size() == 3) {
    for (size_t i = 1; i < 3; ++i) {
      const Shape& s = g.nodes[node.inputs[i]].shape;
      if (s != Shape{node.units}) {
        fail_layer(node, std::string("initial_state ") + (i == 1 ? "h" : "c") + " has shape " + shape_str(s) +
                             ", not [" + std::to_string(node.units) + "] (the units)");
      }
    }
  } else if (node.inputs.size() != 1) {
    fail_layer(node, lstm ? "takes its input and, optionally, an initial_state of two tensors (h, c)"
                          : "an initial_state is supported for LSTM only");
  }
  if (node.return_state && !lstm) fail_layer(node, "return_state is supported for LSTM only");
  const Shape& in = g.nodes[node.inputs[0]].shape;
  require_rank(node, in, 2, "[timesteps, features]");
  const int u = node.units;
  if (u < 1) fail_layer(node, "units must be >= 1");
  if (node.return_state) {
    expect_weights(node, {{in[1], 4 * u}, {u, 4 * u}, {4 * u}});
    return {(node.return_sequences ? in[0] : 1) + 1, u};
  }
  if (lstm) {
    expect_weights(node, {{in[1], 4 * u}, {u, 4 * u}, {4 * u}});
  } else if (node.reset_after) {
    expect_weights(node, {{in[1], 3 * u}, {u, 3 * u}, {2, 3 * u}});
  } else {
    expect_weights(node, {{in[1], 3 * u}, {u, 3 * u}, {3 * u}});
  }
  return node.return_sequences ? Shape{in[0], u} : Shape{u};
}

Shape conv1d_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  require_rank(node, in, 2, "[steps, channels]");
  if (node.kernel_size < 1 || node.dilation < 1) fail_layer(node, "kernel_size and dilation must be >= 1");
  if (node.units < 1) fail_layer(node, "filters must be >= 1");
  expect_weights(node, {{node.kernel_size, in[1], node.units}, {node.units}});
  const int span = (node.kernel_size - 1) * node.dilation + 1;
  return {window_output_length(node, in[0], span, node.stride, node.padding), node.units};
}

Shape pool_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  require_rank(node, in, 2, "[steps, channels]");
  if (node.pool_size < 1) fail_layer(node, "pool_size must be >= 1");
  if (node.padding == Padding::Causal) fail_layer(node, "padding='causal' is not valid for pooling");
  return {window_output_length(node, in[0], node.pool_size, node.pool_stride, node.padding),
          in[1]};
}

// [H, W, C] -> [H', W', C]; each axis as a 1-D window (TensorFlow's valid / same).
Shape pool2d_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  require_rank(node, in, 3, "[height, width, channels]");
  if (node.pool_size < 1 || node.pool_w < 1) fail_layer(node, "pool_size must be >= 1");
  if (node.padding == Padding::Causal) fail_layer(node, "padding='causal' is not valid for pooling");
  return {window_output_length(node, in[0], node.pool_size, node.pool_stride, node.padding),
          window_output_length(node, in[1], node.pool_w, node.pool_stride_w, node.padding), in[2]};
}

Shape global_pool_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  require_rank(node, in, 2, "[steps, channels]");
  return node.keepdims ? Shape{1, in[1]} : Shape{in[1]};
}

Shape flatten_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  return {static_cast<int>(shape_size(in))};
}

Shape reshape_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  Shape out = node.target_shape;
  int64_t known = 1;
  int unknown = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (unknown >= 0) fail_layer(node, "target_shape has more than one -1");
      unknown = static_cast<int>(i);
    } else if (out[i] < 1) {
      fail_layer(node, "target_shape " + shape_str(out) + " has a non-positive dimension");
    } else {
      known *= out[i];
    }
  }
  const int64_t total = shape_size(in);
  if (unknown >= 0) {
    if (total % known != 0) fail_layer(node, "cannot reshape " + shape_str(in) + " to " + shape_str(out));
    out[unknown] = static_cast<int>(total / known);
  }
  if (shape_size(out) != total) {
    fail_layer(node, "cannot reshape " + shape_str(in) + " to " + shape_str(out));
  }
  return out;
}

Shape elementwise_shape(const Graph& g, Node& node) {
  if (node.inputs.size() < 2) fail_layer(node, "needs at least two inputs");
  if (node.kind == OpKind::Subtract && node.inputs.size() != 2) {
    fail_layer(node, "needs exactly two inputs");
  }
  const Shape& first = g.nodes[node.inputs[0]].shape;
  for (int in : node.inputs) {
    if (g.nodes[in].shape != first) {
      fail_layer(node, "input shapes differ (" + shape_str(first) + " vs " +
                     shape_str(g.nodes[in].shape) + "); broadcasting is not supported");
    }
  }
  return first;
}

Shape concatenate_shape(const Graph& g, Node& node) {
  if (node.inputs.size() < 2) fail_layer(node, "needs at least two inputs");
  const Shape& first = g.nodes[node.inputs[0]].shape;
  const int rank = static_cast<int>(first.size());
  int axis = node.axis < 0 ? rank + node.axis : node.axis - 1;
  if (node.axis == 0) fail_layer(node, "concatenation along the batch axis is not supported");
  if (axis < 0 || axis >= rank) fail_layer(node, "axis " + std::to_string(node.axis) + " is out of range");
  Shape out = first;
  out[axis] = 0;
  for (int in : node.inputs) {
    const Shape& s = g.nodes[in].shape;
    if (static_cast<int>(s.size()) != rank) fail_layer(node, "inputs have different ranks");
    for (int d = 0; d < rank; ++d) {
      if (d != axis && s[d] != first[d]) {
        fail_layer(node, "input shapes " + shape_str(first) + " and " + shape_str(s) +
                       " differ outside the concatenation axis");
      }
    }
    out[axis] += s[axis];
  }
  node.axis = axis + 1;  // keep the Keras convention so infer_shapes can run again
  return out;
}

// [H, W, C] -> [H', W', filters]; each axis as a 1-D window (TensorFlow's valid / same).
Shape conv2d_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  require_rank(node, in, 3, "[height, width, channels]");
  if (node.kernel_size < 1 || node.kernel_w < 1 || node.dilation < 1 || node.dilation_w < 1) {
    fail_layer(node, "kernel_size and dilation_rate must be >= 1");
  }
  if (node.units < 1) fail_layer(node, "filters must be >= 1");
  if (node.padding == Padding::Causal) fail_layer(node, "padding='causal' is not valid for Conv2D");
  expect_weights(node, {{node.kernel_size, node.kernel_w, in[2], node.units}, {node.units}});
  const int span_h = (node.kernel_size - 1) * node.dilation + 1;
  const int span_w = (node.kernel_w - 1) * node.dilation_w + 1;
  return {window_output_length(node, in[0], span_h, node.stride, node.padding),
          window_output_length(node, in[1], span_w, node.stride_w, node.padding), node.units};
}

// query [T, d], value [S, d_value], key [S, d_key] (the value when absent) -> [T, units].
Shape attention_shape(const Graph& g, Node& node) {
  if (node.inputs.size() != 2 && node.inputs.size() != 3) {
    fail_layer(node, "expects query and value (and key) inputs, got " + std::to_string(node.inputs.size()));
  }
  const Shape& q = g.nodes[node.inputs[0]].shape;
  const Shape& v = g.nodes[node.inputs[1]].shape;
  const Shape& k = g.nodes[node.inputs.back()].shape;
  require_rank(node, q, 2, "[timesteps, features] query");
  require_rank(node, v, 2, "[timesteps, features] value");
  require_rank(node, k, 2, "[timesteps, features] key");
  if (k[0] != v[0]) {
    fail_layer(node, "key and value lengths differ (" + shape_str(k) + " vs " + shape_str(v) + ")");
  }
  const int h = node.num_heads, kd = node.key_dim, vd = node.value_dim, o = node.units;
  if (h < 1 || kd < 1 || vd < 1 || o < 1) fail_layer(node, "num_heads, key_dim, value_dim and the output width must be >= 1");
  expect_weights(node, {{q[1], h, kd}, {h, kd}, {k[1], h, kd}, {h, kd}, {v[1], h, vd}, {h, vd}, {h, vd, o}, {o}});
  return {q[0], o};
}

Shape constant_shape(const Graph&, Node& node) {
  if (!node.inputs.empty()) fail_layer(node, "a constant takes no inputs");
  if (node.weights.size() != 1) fail_layer(node, "a constant holds exactly one value");
  const Weight& w = node.weights[0];
  if (static_cast<int64_t>(w.data.size()) != shape_size(w.shape)) fail_layer(node, "value size does not match its shape");
  return w.shape;
}

Shape pad_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  if (in.empty()) fail_layer(node, "input has rank 0");
  if (node.pads.size() != 2 * in.size()) {
    fail_layer(node, "expects a before and after padding per axis of " + shape_str(in) + ", got " +
                   std::to_string(node.pads.size()) + " values");
  }
  Shape out = in;
  for (size_t a = 0; a < in.size(); ++a) {
    if (node.pads[2 * a] < 0 || node.pads[2 * a + 1] < 0) fail_layer(node, "negative padding is not supported");
    const int64_t d = int64_t{in[a]} + node.pads[2 * a] + node.pads[2 * a + 1];
    if (d > (int64_t{1} << 24)) fail_layer(node, "padded dimension is too large");
    out[a] = static_cast<int>(d);
  }
  return out;
}

Shape permute_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  if (in.empty()) fail_layer(node, "input has rank 0");
  if (node.permutation.size() != in.size()) {
    fail_layer(node, "permutation of " + std::to_string(node.permutation.size()) + " axes for an input of shape " +
                   shape_str(in));
  }
  Shape out(in.size());
  std::vector<bool> used(in.size(), false);
  for (size_t i = 0; i < in.size(); ++i) {
    const int a = node.permutation[i];
    if (a < 0 || a >= static_cast<int>(in.size()) || used[static_cast<size_t>(a)]) {
      fail_layer(node, "dims is not a permutation of the input's axes");
    }
    used[static_cast<size_t>(a)] = true;
    out[i] = in[static_cast<size_t>(a)];
  }
  return out;
}

// [..., M, K] x [..., K, N] -> [..., M, N], the leading axes equal (no broadcasting).
Shape matmul_shape(const Graph& g, Node& node) {
  if (node.inputs.size() != 2) fail_layer(node, "needs exactly two inputs");
  const Shape& a = g.nodes[node.inputs[0]].shape;
  const Shape& b = g.nodes[node.inputs[1]].shape;
  if (a.size() < 2 || a.size() != b.size()) {
    fail_layer(node, "operands " + shape_str(a) + " and " + shape_str(b) + " are not matrices of the same rank");
  }
  const size_t r = a.size();
  if (!std::equal(a.begin(), a.end() - 2, b.begin()) || a[r - 1] != b[r - 2]) {
    fail_layer(node, "operands " + shape_str(a) + " and " + shape_str(b) + " do not multiply");
  }
  Shape out = a;
  out[r - 1] = b[r - 1];
  return out;
}

// Rows of the first axis, Python-style bounds (graph.hpp); one row without keepdims drops the axis.
Shape slice_rows_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  if (in.empty()) fail_layer(node, "cannot take rows of a scalar");
  const auto [begin, end] = slice_rows_bounds(node, in[0]);
  if (begin < 0 || end > in[0] || begin >= end) {
    fail_layer(node, "rows [" + std::to_string(node.slice_begin) + ", " + std::to_string(node.slice_end) +
                         ") are not a non-empty range of " + shape_str(in));
  }
  Shape out = in;
  out[0] = static_cast<int>(end - begin);
  if (!node.keepdims && out[0] == 1) {
    if (in.size() == 1) fail_layer(node, "taking one element of a vector without keepdims would leave a scalar");
    out.erase(out.begin());
  }
  return out;
}

Shape reverse_time_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  if (in.size() < 2) fail_layer(node, "reverses the time axis of a [timesteps, ...] input, got shape " + shape_str(in));
  expect_weights(node, {});
  return in;
}

// [H, W, C] -> [H', W', C * m] (depthwise) or [H', W', units] (separable); windows as Conv2D's.
Shape depthwise_shape(const Graph& g, Node& node) {
  const Shape& in = single_input(g, node);
  require_rank(node, in, 3, "[height, width, channels]");
  if (node.kernel_size < 1 || node.kernel_w < 1 || node.dilation < 1 || node.dilation_w < 1) {
    fail_layer(node, "kernel_size and dilation_rate must be >= 1");
  }
  const int m = node.depth_multiplier;
  if (m < 1) fail_layer(node, "depth_multiplier must be >= 1");
  if (node.padding == Padding::Causal) fail_layer(node, "padding='causal' is not valid here");
  const int cm = in[2] * m;
  int out_c = cm;
  if (node.kind == OpKind::DepthwiseConv2D) {
    expect_weights(node, {{node.kernel_size, node.kernel_w, in[2], m}, {cm}});
  } else {
    if (node.units < 1) fail_layer(node, "filters must be >= 1");
    expect_weights(node, {{node.kernel_size, node.kernel_w, in[2], m}, {1, 1, cm, node.units}, {node.units}});
    out_c = node.units;
  }
  const int span_h = (node.kernel_size - 1) * node.dilation + 1;
  const int span_w = (node.kernel_w - 1) * node.dilation_w + 1;
  return {window_output_length(node, in[0], span_h, node.stride, node.padding),
          window_output_length(node, in[1], span_w, node.stride_w, node.padding), out_c};
}

int64_t no_macs(const Node&, const Shape&) { return 0; }
int64_t dense_macs(const Node& n, const Shape& in) { return shape_size(in) * n.units; }
int64_t lstm_macs(const Node& n, const Shape& in) { return int64_t{in[0]} * (in[1] + n.units) * 4 * n.units; }
int64_t gru_macs(const Node& n, const Shape& in) { return int64_t{in[0]} * (in[1] + n.units) * 3 * n.units; }
int64_t conv1d_macs(const Node& n, const Shape& in) { return int64_t{n.shape[0]} * n.kernel_size * in[1] * n.units; }
// The projections, the scores and the weighted sum. The rule sees the query's shape only, so the
// key and value length S is taken as the query's T (exact for self-attention).
int64_t attention_macs(const Node& n, const Shape& in) {
  const int64_t T = in[0], S = in[0], d = in[1], h = n.num_heads, k = n.key_dim, v = n.value_dim;
  const int64_t dk = n.weights[2].shape[0], dv = n.weights[4].shape[0];
  return T * d * h * k + S * (dk * h * k + dv * h * v) + T * S * h * (k + v) + T * h * v * n.units;
}
int64_t depthwise_macs(const Node& n, const Shape& in) {
  const int64_t pixels = int64_t{n.shape[0]} * n.shape[1], cm = int64_t{in[2]} * n.depth_multiplier;
  const int64_t depthwise = pixels * n.kernel_size * n.kernel_w * cm;
  return n.kind == OpKind::SeparableConv2D ? depthwise + pixels * cm * n.units : depthwise;
}
int64_t matmul_macs(const Node& n, const Shape& in) {
  return shape_size(n.shape) * (in.empty() ? 0 : in.back());
}
int64_t conv2d_macs(const Node& n, const Shape& in) {
  return int64_t{n.shape[0]} * n.shape[1] * n.kernel_size * n.kernel_w * in[2] * n.units;
}

// In OpKind's order (checked below).
constexpr OpKindInfo kOpKinds[] = {
    {OpKind::Input, "Input", input_shape, no_macs},
    {OpKind::Dense, "Dense", dense_shape, dense_macs},
    {OpKind::Activation, "Activation", identity_like_shape, no_macs},
    {OpKind::BatchNorm, "BatchNorm", normalization_shape, no_macs},
    {OpKind::LayerNorm, "LayerNorm", normalization_shape, no_macs},
    {OpKind::Identity, "Identity", identity_like_shape, no_macs},
    {OpKind::LSTM, "LSTM", recurrent_shape, lstm_macs},
    {OpKind::GRU, "GRU", recurrent_shape, gru_macs},
    {OpKind::Conv1D, "Conv1D", conv1d_shape, conv1d_macs},
    {OpKind::MaxPool1D, "MaxPool1D", pool_shape, no_macs},
    {OpKind::AvgPool1D, "AvgPool1D", pool_shape, no_macs},
    {OpKind::GlobalAvgPool1D, "GlobalAvgPool1D", global_pool_shape, no_macs},
    {OpKind::GlobalMaxPool1D, "GlobalMaxPool1D", global_pool_shape, no_macs},
    {OpKind::Flatten, "Flatten", flatten_shape, no_macs},
    {OpKind::Reshape, "Reshape", reshape_shape, no_macs},
    {OpKind::Add, "Add", elementwise_shape, no_macs},
    {OpKind::Subtract, "Subtract", elementwise_shape, no_macs},
    {OpKind::Multiply, "Multiply", elementwise_shape, no_macs},
    {OpKind::Concatenate, "Concatenate", concatenate_shape, no_macs},
    {OpKind::Conv2D, "Conv2D", conv2d_shape, conv2d_macs},
    {OpKind::MaxPool2D, "MaxPool2D", pool2d_shape, no_macs},
    {OpKind::AvgPool2D, "AvgPool2D", pool2d_shape, no_macs},
    {OpKind::MultiHeadAttention, "MultiHeadAttention", attention_shape, attention_macs},
    {OpKind::Constant, "Constant", constant_shape, no_macs},
    {OpKind::Pad, "Pad", pad_shape, no_macs},
    {OpKind::Permute, "Permute", permute_shape, no_macs},
    {OpKind::DepthwiseConv2D, "DepthwiseConv2D", depthwise_shape, depthwise_macs},
    {OpKind::SeparableConv2D, "SeparableConv2D", depthwise_shape, depthwise_macs},
    {OpKind::MatMul, "MatMul", matmul_shape, matmul_macs},
    {OpKind::SliceRows, "SliceRows", slice_rows_shape, no_macs},
    {OpKind::ReverseTime, "ReverseTime", reverse_time_shape, no_macs},
};

constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < std::size(kOpKinds); ++i) {
    if (static_cast<size_t>(kOpKinds[i].kind) != i) return false;
  }
  return static_cast<size_t>(OpKind::ReverseTime) + 1 == std::size(kOpKinds);
}
static_assert(rows_in_enum_order(), "kOpKinds: one row per OpKind, in the enum's order");

}  // namespace

const OpKindInfo& op_kind_info(OpKind kind) {
  const auto i = static_cast<size_t>(kind);
  if (i >= std::size(kOpKinds)) throw Error("unknown op kind " + std::to_string(i));
  return kOpKinds[i];
}

}  // namespace tickinfer
