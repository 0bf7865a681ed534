// lower_for_plan(): a validated Keras graph -> the device-neutral LoweredGraph (see lowered_graph.hpp
// for the rewrites). Nothing here knows a kernel layout or an ISA.
#include <algorithm>
#include <cmath>
#include <utility>

#include "engine/lowering/lowered_graph.hpp"
#include "engine/lowering/weight_forms.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::engine {
namespace {

class Lowering {
 public:
  Lowering(Graph g, const CompileOptions& opt) : g_(std::move(g)), opt_(opt) { L_.mode = opt.mode; }

  LoweredGraph run() {
    count_consumers();
    tensor_of_.assign(g_.nodes.size(), -1);
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      const Node& in = g_.nodes[g_.inputs[i]];
      tensor_of_[g_.inputs[i]] = new_tensor(in.shape, static_cast<int>(i));
      L_.input_shapes.push_back(stream_shape(in.shape));
    }
    for (size_t i = 0; i < g_.nodes.size(); ++i) lower(static_cast<int>(i));
    for (int o : g_.outputs) {
      if (tensor_of_[o] < 0) throw Error("output '" + g_.nodes[o].name + "' is a constant, not computed from the inputs");
      L_.outputs.push_back(tensor_of_[o]);
      L_.output_shapes.push_back(g_.nodes[o].shape);
    }
    set_lifetimes();
    return std::move(L_);
  }

 private:
  // In stream mode a sequence input [1, F] is fed one step at a time as [F].
  Shape stream_shape(const Shape& s) const {
    if (opt_.mode == RecurrentMode::Stream && s.size() == 2 && s[0] == 1) return {s[1]};
    return s;
  }

  void count_consumers() {
    consumers_.assign(g_.nodes.size(), 0);
    for (const Node& n : g_.nodes) {
      for (int in : n.inputs) ++consumers_[in];
    }
    for (int o : g_.outputs) ++consumers_[o];  // an output can never be folded away
  }

  int new_tensor(const Shape& shape, int input = -1) {
    LoweredTensor t;
    t.shape = shape;
    t.floats = shape_size(shape);
    t.input = input;
    L_.tensors.push_back(std::move(t));
    return static_cast<int>(L_.tensors.size()) - 1;
  }
  int new_output(int idx) { return tensor_of_[idx] = new_tensor(g_.nodes[idx].shape); }

  const Node& in_node(const Node& n, size_t i = 0) const { return g_.nodes[n.inputs[i]]; }
  int in_tensor(const Node& n, size_t i = 0) const { return tensor_of_[n.inputs[i]]; }

  LoweredOp op_for(const Node& n, StepKind kind) const {
    LoweredOp op;
    op.kind = kind;
    op.label = n.name;
    op.in = n.inputs.empty() ? -1 : in_tensor(n);
    return op;
  }

  // An activation of node n's shape from tensor in to out (the same tensor: in place): softmax
  // over the last axis, anything else elementwise.
  void add_activation(const Node& n, int in, int out) {
    LoweredOp op = op_for(n, n.activation.kind == ActKind::Softmax ? StepKind::Softmax : StepKind::Activation);
    op.in = in;
    op.out = out;
    op.act = n.activation;
    if (op.kind == StepKind::Softmax) {
      op.out_width = n.shape.back();
      op.rows = static_cast<int>(shape_size(n.shape) / op.out_width);
    } else {
      op.out_width = static_cast<int>(shape_size(n.shape));
    }
    L_.ops.push_back(std::move(op));
  }

  // Appends a Dense/Conv1D op and its activation: a relu a clamp expresses exactly is fused into
  // it, any other non-linear activation follows in place.
  void add_with_activation(const Node& n, LoweredOp op) {
    const int out = op.out;
    const bool fused = clamp_for(n.activation, op.clamp_lo, op.clamp_hi);
    L_.ops.push_back(std::move(op));
    if (!fused) add_activation(n, out, out);
  }

  // A BatchNorm folds into its producer when that is a Dense/Conv1D with a linear activation
  // whose only consumer is this BatchNorm.
  bool foldable(const Node& bn) const {
    const Node& p = in_node(bn);
    return (p.kind == OpKind::Dense || p.kind == OpKind::Conv1D || p.kind == OpKind::Conv2D) &&
           p.activation.kind == ActKind::Linear &&
           consumers_[bn.inputs[0]] == 1;
  }

  const Node* folded_bn(int idx) const {
    for (const Node& m : g_.nodes) {
      if (m.kind == OpKind::BatchNorm && m.inputs.size() == 1 && m.inputs[0] == idx && foldable(m)) return &m;
    }
    return nullptr;
  }

  void lower(int idx) {
    const Node& n = g_.nodes[idx];
    const bool takes_constants = n.kind == OpKind::Add || n.kind == OpKind::Subtract || n.kind == OpKind::Multiply;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (in_node(n, i).kind == OpKind::Constant && !takes_constants) {
        throw Error("layer '" + n.name + "' (" + n.keras_class + "): a constant input is supported only in add, " +
                    "subtract and multiply");
      }
    }
    switch (n.kind) {
      case OpKind::Input: return;  // its tensor exists already
      case OpKind::Identity:
      case OpKind::Flatten:
      case OpKind::Reshape:
        tensor_of_[idx] = in_tensor(n);  // same floats, new shape
        return;
      case OpKind::Activation:
        if (n.activation.kind == ActKind::Linear) {
          tensor_of_[idx] = in_tensor(n);
          return;
        }
        return add_activation(n, in_tensor(n), new_output(idx));
      case OpKind::Dense: return lower_dense(idx);
      case OpKind::BatchNorm: return lower_batchnorm(idx);
      case OpKind::LayerNorm: return lower_layer_norm(idx);
      case OpKind::LSTM: return lower_lstm(idx);
      case OpKind::GRU: return lower_gru(idx);
      case OpKind::Conv1D: return lower_conv(idx);
      case OpKind::Conv2D: return lower_conv2d(idx);
      case OpKind::MaxPool1D:
      case OpKind::AvgPool1D:
      case OpKind::GlobalAvgPool1D:
      case OpKind::GlobalMaxPool1D: return lower_pool(idx);
      case OpKind::MaxPool2D:
      case OpKind::AvgPool2D: return lower_pool2d(idx);
      case OpKind::Add:
      case OpKind::Subtract:
      case OpKind::Multiply: return lower_elementwise(idx);
      case OpKind::Concatenate: return lower_concat(idx);
      case OpKind::MultiHeadAttention: return lower_attention(idx);
      case OpKind::Constant: return;  // held by the elementwise op that reads it
      case OpKind::Pad:
      case OpKind::Permute:
      case OpKind::ReverseTime: return lower_layout(idx);
      case OpKind::DepthwiseConv2D:
      case OpKind::SeparableConv2D: return lower_depthwise(idx);
      case OpKind::MatMul: return lower_matmul(idx);
      case OpKind::SliceRows: return lower_slice_rows(idx);
    }
  }

  // A product of two computed tensors outside attention (Keras' Dot, a Luong attention's scores
  // and context): one op over the leading axes' matrices.
  void lower_matmul(int idx) {
    const Node& n = g_.nodes[idx];
    const Shape& a = in_node(n, 0).shape;
    const Shape& b = in_node(n, 1).shape;
    LoweredOp op = op_for(n, StepKind::MatMul);
    op.rhs = in_tensor(n, 1);
    op.out = new_output(idx);
    op.rows = a[a.size() - 2];
    op.in_width = a.back();
    op.out_width = b.back();
    op.steps = static_cast<int>(shape_size(a) / (int64_t{op.rows} * op.in_width));
    L_.ops.push_back(std::move(op));
  }

  // Rows of a row-major tensor are one contiguous range: a copy of it.
  void lower_slice_rows(int idx) {
    const Node& n = g_.nodes[idx];
    const Shape& in = in_node(n).shape;
    const int64_t row = shape_size(in) / in[0];
    const auto [begin, end] = slice_rows_bounds(n, in[0]);
    LoweredOp op = op_for(n, StepKind::Slice);
    op.out = new_output(idx);
    op.slice_offset = static_cast<int>(begin * row);
    op.out_width = static_cast<int>((end - begin) * row);
    L_.ops.push_back(std::move(op));
  }

  void lower_dense(int idx) {
    const Node& n = g_.nodes[idx];
    const int K = in_node(n).shape.back(), N = n.units;
    std::vector<float> w = n.weights[0].data, b = n.weights[1].data;
    fold_batch_norm(folded_bn(idx), w, b, N);
    LoweredOp op = op_for(n, StepKind::Dense);
    op.out = new_output(idx);
    op.in_width = K;
    op.out_width = N;
    op.rows = static_cast<int>(shape_size(n.shape) / N);
    op.kernel = matrix(std::move(w), K, N);
    op.kernel_name = "kernel";
    op.bias = std::move(b);
    add_with_activation(n, std::move(op));
  }

  void lower_batchnorm(int idx) {
    const Node& n = g_.nodes[idx];
    if (foldable(n)) {
      tensor_of_[idx] = in_tensor(n);  // the producer already applied it
      return;
    }
    LoweredOp op = op_for(n, StepKind::Affine);
    bn_affine(n, op.scale, op.shift);
    op.out = new_output(idx);
    op.out_width = n.shape.back();
    op.rows = static_cast<int>(shape_size(n.shape) / op.out_width);
    L_.ops.push_back(std::move(op));
  }

  void lower_layer_norm(int idx) {
    const Node& n = g_.nodes[idx];
    LoweredOp op = op_for(n, StepKind::LayerNorm);
    op.out = new_output(idx);
    op.out_width = n.shape.back();
    op.rows = static_cast<int>(shape_size(n.shape) / op.out_width);
    op.scale = n.weights[0].data;  // gamma
    op.shift = n.weights[1].data;  // beta
    op.epsilon = n.epsilon;
    L_.ops.push_back(std::move(op));
  }

  // Add / Subtract / Multiply of equal shapes: in op rhs, then op each further input.
  void lower_elementwise(int idx) {
    const Node& n = g_.nodes[idx];
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (in_node(n, i).kind == OpKind::Constant) return lower_with_constant(idx);
    }
    LoweredOp op = op_for(n, n.kind == OpKind::Add        ? StepKind::Add
                             : n.kind == OpKind::Subtract ? StepKind::Sub
                                                          : StepKind::Mul);
    op.rhs = in_tensor(n, 1);
    for (size_t i = 2; i < n.inputs.size(); ++i) op.extra_inputs.push_back(in_tensor(n, i));
    op.out = new_output(idx);
    op.out_width = static_cast<int>(shape_size(n.shape));
    L_.ops.push_back(std::move(op));
  }

  // A binary op with one constant operand (a Keras 3 operation's array argument) as an Affine op
  // over the whole tensor (weight_forms.hpp, constant_operand_affine).
  void lower_with_constant(int idx) {
    const Node& n = g_.nodes[idx];
    if (n.inputs.size() != 2 || (in_node(n, 0).kind == OpKind::Constant) == (in_node(n, 1).kind == OpKind::Constant)) {
      throw Error("layer '" + n.name + "' (" + n.keras_class + "): a constant operand is supported in a two-operand " +
                  "op with one tensor");
    }
    const size_t tensor_side = in_node(n, 0).kind == OpKind::Constant ? 1 : 0;
    LoweredOp op = op_for(n, StepKind::Affine);
    op.in = in_tensor(n, tensor_side);
    op.out = new_output(idx);
    op.out_width = static_cast<int>(shape_size(n.shape));
    op.rows = 1;
    constant_operand_affine(n.kind, tensor_side, in_node(n, 1 - tensor_side).weights[0].data, op.scale, op.shift);
    L_.ops.push_back(std::move(op));
  }

  // DepthwiseConv2D: one op over its taps; SeparableConv2D: the same op without a bias into a
  // tensor of C * m channels, then its 1 x 1 pointwise convolution as a Dense over the pixels.
  // The activation follows the last op (fused where a clamp expresses it).
  void lower_depthwise(int idx) {
    const Node& n = g_.nodes[idx];
    const Shape& in = in_node(n).shape;  // [H, W, C]
    const int cm = in[2] * n.depth_multiplier;
    const bool separable = n.kind == OpKind::SeparableConv2D;
    LoweredOp op = op_for(n, StepKind::DepthwiseConv2D);
    if (separable) op.label = n.name + "/depthwise";
    set_window2d(n, in, kernel_window(n), op);
    op.out_width = cm;
    op.depthwise = n.weights[0].data;  // (kh, kw, C, m) == (kh*kw) x (C*m)
    if (!separable) {
      op.bias = n.weights[1].data;
      op.out = new_output(idx);
      return add_with_activation(n, std::move(op));
    }
    op.bias.assign(static_cast<size_t>(cm), 0.0f);
    op.out = new_tensor({n.shape[0], n.shape[1], cm});
    const int depthwise = op.out;
    L_.ops.push_back(std::move(op));
    LoweredOp pointwise = projection(n, "pointwise", depthwise, n.shape[0] * n.shape[1],
                                     matrix(n.weights[1].data, cm, n.units), n.weights[2].data, "pointwise_kernel");
    pointwise.out = new_output(idx);
    add_with_activation(n, std::move(pointwise));
  }

  // Pad, Permute and ReverseTime (the first axis's rows last to first): moves with the input's shape.
  void lower_layout(int idx) {
    const Node& n = g_.nodes[idx];
    const bool reverse = n.kind == OpKind::ReverseTime;
    LoweredOp op = op_for(n, reverse ? StepKind::ReverseRows : n.kind == OpKind::Pad ? StepKind::Pad : StepKind::Transpose);
    op.out = new_output(idx);
    op.in_shape = in_node(n).shape;
    if (reverse) op.rows = op.in_shape[0], op.in_width = static_cast<int>(shape_size(op.in_shape) / op.rows);
    op.pads = n.pads;
    op.permutation = n.permutation;
    op.out_width = static_cast<int>(shape_size(n.shape));
    L_.ops.push_back(std::move(op));
  }

  void lower_concat(int idx) {
    const Node& n = g_.nodes[idx];
    const int axis = n.axis - 1;  // infer_shapes left the Keras (batched) convention
    LoweredOp op = op_for(n, StepKind::Concat);
    op.in = -1;
    op.out = new_output(idx);
    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= n.shape[d];
    op.rows = static_cast<int>(outer);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      op.extra_inputs.push_back(in_tensor(n, i));
      op.concat_widths.push_back(static_cast<int>(shape_size(in_node(n, i).shape) / outer));
    }
    L_.ops.push_back(std::move(op));
  }

  void recurrent_common(const Node& n, LoweredOp& op) {
    const Shape& in = in_node(n).shape;
    op.in_width = in[1];
    op.out_width = n.units;
    op.steps = in[0];
    op.return_sequences = n.return_sequences;
    op.act = n.activation;
    op.rec = n.recurrent_activation;
    op.zero_state = opt_.mode == RecurrentMode::Window;
  }

  void lower_lstm(int idx) {
    const Node& n = g_.nodes[idx];
    const int in = in_node(n).shape[1], u = n.units, T = in_node(n).shape[0];
    const bool window = opt_.mode == RecurrentMode::Window;
    LoweredOp op = op_for(n, window ? StepKind::LstmWindow : StepKind::Lstm);
    op.out = new_output(idx);
    recurrent_common(n, op);
    if ((n.inputs.size() > 1 || n.return_state) && !window) {
      throw Error("layer '" + n.name + "' (" + n.keras_class + "): an initial_state or return_state runs in window mode only");
    }
    op.initial_state = n.inputs.size() == 3;
    if (op.initial_state) op.extra_inputs = {in_tensor(n, 1), in_tensor(n, 2)};
    op.return_state = n.return_state;
    op.bias = n.weights[2].data;
    // A clip that cannot act is dropped (the fused cell is faster): from a zero state with gates
    // in [0, 1] and tanh in [-1, 1], |c| grows by at most 1 per step (exactly so in float too),
    // so a window of T <= cell_clip steps never reaches it.
    const bool bounded = n.recurrent_activation.kind == ActKind::Sigmoid && n.activation.kind == ActKind::Tanh;
    op.cell_clip = window && bounded && !op.initial_state && T <= n.cell_clip ? 0.0f : n.cell_clip;
    if (window && opt_.incremental) {
      // Incremental windows: x W + b as its own Dense over the rows, which a slide updates in
      // the rows that changed (incremental_rows.hpp); the LSTM reads those projections.
      op.in = add_projection(n, "input_projection", op.in, T, matrix(n.weights[0].data, in, 4 * u), std::move(op.bias));
      op.bias.clear();
      op.projected = true;
      op.recurrent_kernel = matrix(n.weights[1].data, u, 4 * u);
    } else if (window) {
      // x W + b for all T steps first (W is small and stays in cache), then only h U per step,
      // which is the serial part.
      op.kernel = matrix(n.weights[0].data, in, 4 * u);
      op.kernel_name = "kernel";
      op.recurrent_kernel = matrix(n.weights[1].data, u, 4 * u);
    } else {
      // [W; U] stacked so one matrix product over [x | h] computes x W + h U.
      std::vector<float> wu = n.weights[0].data;
      wu.insert(wu.end(), n.weights[1].data.begin(), n.weights[1].data.end());
      op.kernel = matrix(std::move(wu), in + u, 4 * u);
      op.kernel_name = "[kernel; recurrent_kernel]";
    }
    L_.ops.push_back(std::move(op));
  }

  void lower_gru(int idx) {
    const Node& n = g_.nodes[idx];
    const int in = in_node(n).shape[1], u = n.units;
    LoweredOp op = op_for(n, n.reset_after ? StepKind::Gru : StepKind::GruClassic);
    op.out = new_output(idx);
    recurrent_common(n, op);
    op.kernel = matrix(n.weights[0].data, in, 3 * u);
    op.kernel_name = "kernel";
    const auto& bias = n.weights[2].data;
    if (n.reset_after) {  // bias (2, 3u): the input bias, then the recurrent bias
      op.bias.assign(bias.begin(), bias.begin() + 3 * u);
      op.recurrent_bias.assign(bias.begin() + 3 * u, bias.end());
      op.recurrent_kernel = matrix(n.weights[1].data, u, 3 * u);
    } else {  // r multiplies h U_h after the product, so U's h columns run on their own
      op.bias = bias;
      op.recurrent_kernel = columns(n.weights[1], 0, 2 * u);
      op.recurrent_kernel_h = columns(n.weights[1], 2 * u, u);
    }
    L_.ops.push_back(std::move(op));
  }

  void lower_conv(int idx) {
    const Node& n = g_.nodes[idx];
    const Shape& in = in_node(n).shape;
    const int k = n.kernel_size, C = in[1], F = n.units;
    std::vector<float> w = n.weights[0].data, b = n.weights[1].data;  // (k, C, F) == (k*C, F)
    fold_batch_norm(folded_bn(idx), w, b, F);
    LoweredOp op = op_for(n, StepKind::Conv1D);
    op.out = new_output(idx);
    op.in_len = in[0];
    op.in_ch = C;
    op.window = k;
    op.stride = n.stride;
    op.dilation = n.dilation;
    op.out_width = F;
    op.steps = n.shape[0];
    op.pad_left = pad_left(n.padding, op.in_len, op.steps, (k - 1) * n.dilation + 1, n.stride);
    op.kernel = matrix(std::move(w), k * C, F);
    op.kernel_name = "kernel";
    op.bias = std::move(b);
    add_with_activation(n, std::move(op));
  }

  // A 2-D window (height then width: size, stride, dilation) over [H, W, C] into the op: input
  // sizes, window, strides, dilation, output sizes and TensorFlow's top and left padding.
  struct Window2D {
    int h, w, stride_h, stride_w, dilation_h = 1, dilation_w = 1;
  };
  static void set_window2d(const Node& n, const Shape& in, const Window2D& win, LoweredOp& op) {
    op.in_len = in[0];
    op.in_w = in[1];
    op.in_ch = in[2];
    op.window = win.h;
    op.window_w = win.w;
    op.stride = win.stride_h;
    op.stride_w = win.stride_w;
    op.dilation = win.dilation_h;
    op.dilation_w = win.dilation_w;
    op.steps = n.shape[0];
    op.out_w = n.shape[1];
    op.pad_left = pad_left(n.padding, op.in_len, op.steps, (win.h - 1) * win.dilation_h + 1, win.stride_h);
    op.pad_w = pad_left(n.padding, op.in_w, op.out_w, (win.w - 1) * win.dilation_w + 1, win.stride_w);
  }
  // A Conv2D-like node's kernel window.
  static Window2D kernel_window(const Node& n) {
    return {n.kernel_size, n.kernel_w, n.stride, n.stride_w, n.dilation, n.dilation_w};
  }

  void lower_conv2d(int idx) {
    const Node& n = g_.nodes[idx];
    const Shape& in = in_node(n).shape;  // [H, W, C]
    const int C = in[2], F = n.units;
    std::vector<float> w = n.weights[0].data, b = n.weights[1].data;  // (kh, kw, C, F) == (kh*kw*C, F)
    fold_batch_norm(folded_bn(idx), w, b, F);
    LoweredOp op = op_for(n, StepKind::Conv2D);
    op.out = new_output(idx);
    set_window2d(n, in, kernel_window(n), op);
    op.out_width = F;
    op.kernel = matrix(std::move(w), n.kernel_size * n.kernel_w * C, F);
    op.kernel_name = "kernel";
    op.bias = std::move(b);
    add_with_activation(n, std::move(op));
  }

  void lower_pool(int idx) {
    const Node& n = g_.nodes[idx];
    const Shape& in = in_node(n).shape;
    const StepKind kind = n.kind == OpKind::MaxPool1D         ? StepKind::MaxPool
                          : n.kind == OpKind::AvgPool1D       ? StepKind::AvgPool
                          : n.kind == OpKind::GlobalAvgPool1D ? StepKind::GlobalAvgPool
                                                              : StepKind::GlobalMaxPool;
    LoweredOp op = op_for(n, kind);
    op.out = new_output(idx);
    op.in_len = in[0];
    op.in_ch = in[1];
    if (kind == StepKind::MaxPool || kind == StepKind::AvgPool) {
      op.window = n.pool_size;
      op.stride = n.pool_stride;
      op.steps = n.shape[0];
      op.pad_left = pad_left(n.padding, op.in_len, op.steps, n.pool_size, n.pool_stride);
    }
    L_.ops.push_back(std::move(op));
  }

  void lower_pool2d(int idx) {
    const Node& n = g_.nodes[idx];
    const Shape& in = in_node(n).shape;  // [H, W, C]
    LoweredOp op = op_for(n, n.kind == OpKind::MaxPool2D ? StepKind::MaxPool2D : StepKind::AvgPool2D);
    op.out = new_output(idx);
    set_window2d(n, in, {n.pool_size, n.pool_w, n.pool_stride, n.pool_stride_w}, op);
    L_.ops.push_back(std::move(op));
  }

  // A Dense op named "<layer>/<what>" from tensor `in` (rows x K) to rows x N; its output is the
  // caller's to set.
  LoweredOp projection(const Node& n, const char* what, int in, int rows, Matrix kernel, std::vector<float> bias,
                       const char* kernel_name = "kernel") const {
    LoweredOp op = op_for(n, StepKind::Dense);
    op.label = n.name + "/" + what;
    op.in = in;
    op.in_width = kernel.rows;
    op.out_width = kernel.cols;
    op.rows = rows;
    op.kernel = std::move(kernel);
    op.kernel_name = kernel_name;
    op.bias = std::move(bias);
    return op;
  }

  // A projection into a new tensor (rows x N), appended; returns the tensor.
  int add_projection(const Node& n, const char* what, int in, int rows, Matrix kernel, std::vector<float> bias) {
    LoweredOp op = projection(n, what, in, rows, std::move(kernel), std::move(bias));
    op.out = new_tensor({rows, op.out_width});
    L_.ops.push_back(std::move(op));
    return L_.ops.back().out;
  }

  // MultiHeadAttention: the projections as Dense ops (one over [q | k | v] when query, key and
  // value are one tensor; one over [k | v] when key and value are), the Attention core, then the
  // output projection (its (h, v, o) kernel is the concatenated heads' (h*v, o) Dense).
  void lower_attention(int idx) {
    const Node& n = g_.nodes[idx];
    const Shape& qs = in_node(n, 0).shape;
    const Shape& vs = in_node(n, 1).shape;
    const int T = qs[0], S = vs[0], h = n.num_heads, kd = n.key_dim, vd = n.value_dim;
    const int hk = h * kd, hv = h * vd;
    const int q_node = n.inputs[0], v_node = n.inputs[1], k_node = n.inputs.back();
    const auto& w = n.weights;
    AttentionParams a;
    a.heads = h, a.key_dim = kd, a.value_dim = vd, a.keys = S, a.causal = n.causal_mask;
    a.span = n.attention_span;
    a.stream = opt_.mode == RecurrentMode::Stream && T == 1 && S == 1;
    int q = -1, k = -1, v = -1;
    if (q_node == v_node && k_node == v_node) {
      q = k = v = add_projection(n, "qkv", in_tensor(n, 0), T, side_by_side({&w[0], &w[2], &w[4]}),
                                 joined({&w[1], &w[3], &w[5]}));
      a.q = {0, 2 * hk + hv}, a.k = {hk, 2 * hk + hv}, a.v = {2 * hk, 2 * hk + hv};
    } else {
      q = add_projection(n, "query", in_tensor(n, 0), T, side_by_side({&w[0]}), joined({&w[1]}));
      a.q = {0, hk};
      if (k_node == v_node) {
        k = v = add_projection(n, "kv", in_tensor(n, 1), S, side_by_side({&w[2], &w[4]}), joined({&w[3], &w[5]}));
        a.k = {0, hk + hv}, a.v = {hk, hk + hv};
      } else {
        k = add_projection(n, "key", in_tensor(n, 2), S, side_by_side({&w[2]}), joined({&w[3]}));
        v = add_projection(n, "value", in_tensor(n, 1), S, side_by_side({&w[4]}), joined({&w[5]}));
        a.k = {0, hk}, a.v = {0, hv};
      }
    }
    LoweredOp core = op_for(n, StepKind::Attention);
    core.label = n.name + "/attention";
    core.in = q;
    core.rhs = k;
    core.extra_inputs = {v};
    core.steps = T;
    core.out_width = hv;
    core.attention = a;
    core.out = new_tensor({T, hv});
    const int context = core.out;
    L_.ops.push_back(std::move(core));
    LoweredOp out = projection(n, "output", context, T, matrix(w[6].data, hv, n.units), w[7].data);
    out.out = new_output(idx);
    L_.ops.push_back(std::move(out));
  }

  // [first, last] per tensor: its producer, and the last op that reads it (outputs: the end).
  void set_lifetimes() {
    const int end = static_cast<int>(L_.ops.size());
    auto use = [&](int t, int i) {
      if (t >= 0) L_.tensors[t].last = std::max(L_.tensors[t].last, i);
    };
    for (int i = 0; i < end; ++i) {
      const LoweredOp& op = L_.ops[i];
      LoweredTensor& out = L_.tensors[op.out];
      if (out.first < 0) out.first = i;  // an in-place activation keeps its producer's start
      out.last = std::max(out.last, i);
      use(op.in, i);
      use(op.rhs, i);
      for (int t : op.extra_inputs) use(t, i);
    }
    for (int t : L_.outputs) L_.tensors[t].last = end;
    for (LoweredTensor& t : L_.tensors) {
      if (t.first < 0) t.first = t.input >= 0 ? -1 : 0;
      if (t.last < 0) t.last = t.first;
    }
  }

  Graph g_;
  CompileOptions opt_;
  LoweredGraph L_;
  std::vector<int> tensor_of_;  // node -> the tensor holding its output
  std::vector<int> consumers_;
};

}  // namespace

LoweredGraph lower_for_plan(const Graph& graph, const CompileOptions& options) {
  return Lowering(resolve_for_mode(graph, options), options).run();
}

}  // namespace tickinfer::engine
