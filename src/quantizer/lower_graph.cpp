// Keras Graph -> float Program (the op mapping is listed in lower_graph.hpp).
#include "quantizer/lower_graph.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "model/stream_check.hpp"
#include "quantizer/one_step_lowering.hpp"
#include "tflite/program_builder.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::quantizer {

namespace {

[[noreturn]] void refuse(const Node& node, const std::string& why) {
  throw Error("layer '" + node.name + "' (" + node.keras_class + "): " + why);
}

Shape batched(const tickinfer::Shape& s) {
  Shape out{1};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

std::vector<int32_t> dims32(const Shape& s) { return {s.begin(), s.end()}; }

// How an activation lowers: fused into the producing op, or a separate op.
struct ActivationPlan {
  FusedActivation fused = FusedActivation::None;
  bool separate = false;
  OpCode code{};
  float alpha = 0.0f;
  bool approximate = false;
  bool swish = false;  // x * sigmoid(x): LOGISTIC then MUL
};

bool is_plain_relu(const ActivationSpec& a) {
  return a.kind == ActKind::Relu && a.alpha == 0.0f && a.threshold == 0.0f;
}

ActivationPlan plan_activation(const Node& node, const ActivationSpec& a) {
  ActivationPlan p;
  switch (a.kind) {
    case ActKind::Linear:
      return p;
    case ActKind::Relu:
      if (is_plain_relu(a) && std::isinf(a.max_value)) {
        p.fused = FusedActivation::Relu;
        p.code = OpCode::Relu;
        return p;
      }
      if (is_plain_relu(a) && a.max_value == 6.0f) {
        p.fused = FusedActivation::Relu6;
        p.code = OpCode::Relu6;
        return p;
      }
      if (a.threshold == 0.0f && std::isinf(a.max_value) && a.alpha > 0.0f) {
        p.separate = true;
        p.code = OpCode::LeakyRelu;
        p.alpha = a.alpha;
        return p;
      }
      refuse(node, "ReLU with max_value/threshold other than relu or relu6 has no TFLite op");
    case ActKind::LeakyRelu:
      p.separate = true;
      p.code = OpCode::LeakyRelu;
      p.alpha = a.alpha;
      return p;
    case ActKind::Elu:
      if (a.alpha != 1.0f) refuse(node, "elu with alpha != 1 has no TFLite op");
      p.separate = true;
      p.code = OpCode::Elu;
      return p;
    case ActKind::Sigmoid: p.separate = true; p.code = OpCode::Logistic; return p;
    case ActKind::Tanh: p.separate = true; p.code = OpCode::Tanh; return p;
    case ActKind::Softmax: p.separate = true; p.code = OpCode::Softmax; return p;
    case ActKind::Exponential: p.separate = true; p.code = OpCode::Exp; return p;
    case ActKind::Gelu: p.separate = true; p.code = OpCode::Gelu; return p;
    case ActKind::GeluTanh: p.separate = true; p.code = OpCode::Gelu; p.approximate = true; return p;
    case ActKind::Swish: p.separate = true; p.code = OpCode::Logistic; p.swish = true; return p;
    case ActKind::Selu: case ActKind::HardSigmoid: case ActKind::Softplus: case ActKind::Softsign:
      break;
  }
  refuse(node, std::string("activation '") + activation_name(a.kind) + "' has no TFLite op");
}

class Lowerer {
 public:
  Lowerer(const Graph& g, Program& p) : g_(g), b_(p), node_tensor_(g.nodes.size(), -1) {}

  void run() {
    for (size_t i = 0; i < g_.nodes.size(); ++i) node_tensor_[i] = lower(g_.nodes[i]);
    for (int i : g_.inputs) b_.program().inputs.push_back(node_tensor_[static_cast<size_t>(i)]);
    for (int i : g_.outputs) b_.program().outputs.push_back(node_tensor_[static_cast<size_t>(i)]);
  }

 private:
  int in(const Node& n, size_t k = 0) const { return node_tensor_[static_cast<size_t>(n.inputs.at(k))]; }
  const Shape& shape(int t) { return b_.tensor(t).shape; }
  int out(const Node& n, const std::string& suffix, Shape s) {
    return b_.activation(n.name + suffix, DType::F32, std::move(s));
  }
  int f32(const Node& n, const std::string& suffix, Shape s, const std::vector<float>& v) {
    return b_.constant(n.name + suffix, DType::F32, std::move(s), v);
  }

  int reshape(const Node& n, int x, Shape to, const std::string& suffix) {
    const int shape_t = b_.int32_constant(n.name + suffix + "_shape", dims32(to));
    const int y = out(n, suffix, to);
    b_.op(OpCode::Reshape, {x, shape_t}, {y}, n.name).options.new_shape = to;
    return y;
  }

  // Applies `a` after the op that produced x (fused already handled by the caller).
  int apply_separate(const Node& n, const ActivationPlan& a, int x, const std::string& suffix) {
    if (!a.separate) return x;
    const int y = out(n, suffix, shape(x));
    Op& op = b_.op(a.code, {x}, {y}, n.name);
    op.options.alpha = a.alpha;
    op.options.approximate = a.approximate;
    if (!a.swish) return y;
    const int z = out(n, suffix + "_swish", shape(x));
    b_.op(OpCode::Mul, {x, y}, {z}, n.name);
    return z;
  }

  // A standalone activation op (Activation layer, or an op with no fused slot).
  int standalone(const Node& n, const ActivationSpec& spec, int x, const std::string& suffix) {
    ActivationPlan a = plan_activation(n, spec);
    if (a.fused != FusedActivation::None) a.separate = true;  // RELU / RELU6 ops
    return apply_separate(n, a, x, suffix);
  }

  int lower(const Node& n) {
    switch (n.kind) {
      case OpKind::Input: {
        const int t = out(n, "", batched(n.shape));
        b_.tensor(t).name = n.name;
        return t;
      }
      case OpKind::Identity: return in(n);
      case OpKind::Activation: return standalone(n, n.activation, in(n), "");
      case OpKind::Dense: return dense(n);
      case OpKind::BatchNorm: return batch_norm(n);
      case OpKind::LayerNorm: return layer_norm(n);
      case OpKind::LSTM:
        if (n.inputs.size() > 1 || n.return_state) {
          refuse(n, "an LSTM with an initial_state or return_state is not supported by the quantizer yet (TFLite's "
                    "fused LSTM starts from zeros and returns its output only); the float plan runs it");
        }
        return lstm(n);
      case OpKind::GRU: return gru(n);
      case OpKind::Conv1D: return conv1d(n);
      case OpKind::Conv2D: return conv2d(n);
      case OpKind::MaxPool2D:
      case OpKind::AvgPool2D: return pool2d(n);
      case OpKind::Pad: return pad(n);
      case OpKind::Permute: return permute(n);
      case OpKind::DepthwiseConv2D: return depthwise_conv2d(n);
      case OpKind::SeparableConv2D: return separable_conv2d(n);
      case OpKind::Constant: return f32(n, "", n.shape, n.weights.at(0).data);  // operands broadcast it
      case OpKind::MultiHeadAttention:
      case OpKind::MatMul:
        refuse(n, std::string(op_name(n.kind)) + " is not supported by the quantizer yet; the float plan runs it");
      case OpKind::SliceRows: return slice_rows(n);
      case OpKind::ReverseTime: {
        const int axes = b_.int32_constant(n.name + "/axes", {1});
        const int y = out(n, "", batched(n.shape));
        b_.op(OpCode::ReverseV2, {in(n), axes}, {y}, n.name);
        return y;
      }
      case OpKind::MaxPool1D:
      case OpKind::AvgPool1D: return pool1d(n);
      case OpKind::GlobalAvgPool1D: {
        const int axes = b_.int32_constant(n.name + "/axes", {1});
        const int y = out(n, "", batched(n.shape));
        b_.op(OpCode::Mean, {in(n), axes}, {y}, n.name).options.keep_dims = n.keepdims;
        return y;
      }
      case OpKind::GlobalMaxPool1D: return global_max_pool(n);
      case OpKind::Flatten:
      case OpKind::Reshape: return reshape(n, in(n), batched(n.shape), "");
      case OpKind::Add:
      case OpKind::Multiply: {
        const OpCode code = n.kind == OpKind::Add ? OpCode::Add : OpCode::Mul;
        int acc = in(n, 0);
        for (size_t k = 1; k < n.inputs.size(); ++k) {
          const int y = out(n, k + 1 == n.inputs.size() ? "" : "/partial" + std::to_string(k), batched(n.shape));
          b_.op(code, {acc, in(n, k)}, {y}, n.name);
          acc = y;
        }
        return acc;
      }
      case OpKind::Subtract: {
        const int y = out(n, "", batched(n.shape));
        b_.op(OpCode::Sub, {in(n, 0), in(n, 1)}, {y}, n.name);
        return y;
      }
      case OpKind::Concatenate: {
        std::vector<int> ins;
        for (size_t k = 0; k < n.inputs.size(); ++k) ins.push_back(in(n, k));
        const int y = out(n, "", batched(n.shape));
        b_.op(OpCode::Concatenation, ins, {y}, n.name).options.axis = n.axis;  // Keras' axis counts the batch
        return y;
      }
    }
    refuse(n, "has no lowering");
  }

  int dense(const Node& n) {
    const int x = in(n);
    const Shape& xs = shape(x);
    const int units = n.units, depth = xs.back();
    std::vector<float> filter(static_cast<size_t>(units) * depth);
    const auto& k = n.weights[0].data;  // (in, units)
    for (int o = 0; o < units; ++o) {
      for (int d = 0; d < depth; ++d) filter[static_cast<size_t>(o) * depth + d] = k[static_cast<size_t>(d) * units + o];
    }
    const int w = f32(n, "/kernel", {units, depth}, filter);
    const int bias = f32(n, "/bias", {units}, n.weights[1].data);
    const ActivationPlan a = plan_activation(n, n.activation);
    const int y = out(n, a.separate ? "/linear" : "", batched(n.shape));
    Op& op = b_.op(OpCode::FullyConnected, {x, w, bias}, {y}, n.name);
    op.options.activation = a.fused;
    op.options.keep_num_dims = xs.size() > 2;
    return apply_separate(n, a, y, "");
  }

  int batch_norm(const Node& n) {
    const auto &gamma = n.weights[0].data, &beta = n.weights[1].data, &mean = n.weights[2].data,
               &var = n.weights[3].data;
    std::vector<float> scale(gamma.size()), offset(gamma.size());
    for (size_t c = 0; c < gamma.size(); ++c) {
      scale[c] = gamma[c] / std::sqrt(var[c] + n.epsilon);
      offset[c] = beta[c] - mean[c] * scale[c];
    }
    const int c = static_cast<int>(gamma.size());
    const int s = f32(n, "/scale", {c}, scale), o = f32(n, "/offset", {c}, offset);
    const int m = out(n, "/scaled", batched(n.shape)), y = out(n, "", batched(n.shape));
    b_.op(OpCode::Mul, {in(n), s}, {m}, n.name);
    b_.op(OpCode::Add, {m, o}, {y}, n.name);
    return y;
  }

  int layer_norm(const Node& n) {
    const int x = in(n);
    Shape reduced = shape(x);
    reduced.back() = 1;
    const int axes = b_.int32_constant(n.name + "/axes", {static_cast<int32_t>(shape(x).size() - 1)});
    const Shape full = shape(x);
    const int mean = out(n, "/mean", reduced), centered = out(n, "/centered", full),
              sq = out(n, "/squared_difference", full), var = out(n, "/variance", reduced),
              var_eps = out(n, "/variance_eps", reduced), rstd = out(n, "/rsqrt", reduced),
              normed = out(n, "/normalized", full), scaled = out(n, "/scaled", full), y = out(n, "", full);
    const int c = full.back();
    const int eps = f32(n, "/epsilon", {1}, {n.epsilon});
    const int gamma = f32(n, "/gamma", {c}, n.weights[0].data), beta = f32(n, "/beta", {c}, n.weights[1].data);
    b_.op(OpCode::Mean, {x, axes}, {mean}, n.name).options.keep_dims = true;
    b_.op(OpCode::Sub, {x, mean}, {centered}, n.name);
    b_.op(OpCode::SquaredDifference, {x, mean}, {sq}, n.name);
    b_.op(OpCode::Mean, {sq, axes}, {var}, n.name).options.keep_dims = true;
    b_.op(OpCode::Add, {var, eps}, {var_eps}, n.name);
    b_.op(OpCode::Rsqrt, {var_eps}, {rstd}, n.name);
    b_.op(OpCode::Mul, {centered, rstd}, {normed}, n.name);
    b_.op(OpCode::Mul, {normed, gamma}, {scaled}, n.name);
    b_.op(OpCode::Add, {scaled, beta}, {y}, n.name);
    return y;
  }

  int lstm(const Node& n) {
    if (n.recurrent_activation.kind != ActKind::Sigmoid) {
      refuse(n, std::string("recurrent_activation '") + activation_name(n.recurrent_activation.kind) +
                    "': TFLite's LSTM uses sigmoid gates only");
    }
    if (n.activation.kind != ActKind::Tanh) {
      refuse(n, std::string("activation '") + activation_name(n.activation.kind) +
                    "': only tanh is lowered to TFLite's LSTM");
    }
    const int x = in(n);
    const int steps = shape(x)[1], depth = shape(x)[2], u = n.units;
    const auto &kernel = n.weights[0].data, &recurrent = n.weights[1].data, &bias = n.weights[2].data;
    // Gate g's block of a Keras (rows, 4u) matrix, transposed to TFLite's [u, rows].
    const auto gate_block = [&](const std::vector<float>& m, int rows, int g) {
      std::vector<float> w(static_cast<size_t>(u) * rows);
      for (int o = 0; o < u; ++o) {
        for (int r = 0; r < rows; ++r) w[static_cast<size_t>(o) * rows + r] = m[static_cast<size_t>(r) * 4 * u + g * u + o];
      }
      return w;
    };
    static const char* kGate[4] = {"input", "forget", "cell", "output"};
    std::vector<int> ins(24, -1);
    ins[0] = x;
    for (int g = 0; g < 4; ++g) {
      ins[static_cast<size_t>(1 + g)] = f32(n, std::string("/") + kGate[g] + "_kernel", {u, depth}, gate_block(kernel, depth, g));
      ins[static_cast<size_t>(5 + g)] = f32(n, std::string("/") + kGate[g] + "_recurrent", {u, u}, gate_block(recurrent, u, g));
      ins[static_cast<size_t>(12 + g)] = f32(n, std::string("/") + kGate[g] + "_bias", {u},
                                             std::vector<float>(bias.begin() + g * u, bias.begin() + (g + 1) * u));
    }
    ins[18] = out(n, "/output_state", {1, u});
    ins[19] = out(n, "/cell_state", {1, u});
    b_.tensor(ins[18]).is_variable = b_.tensor(ins[19]).is_variable = true;
    const int seq = out(n, n.return_sequences ? "" : "/sequence", {1, steps, u});
    Op& op = b_.op(OpCode::SequenceLstm, ins, {seq}, n.name);
    op.options.activation = FusedActivation::Tanh;
    op.options.time_major = false;
    op.options.cell_clip = n.cell_clip;  // a lifted TFLite LSTM's clip (0 for Keras models)
    return n.return_sequences ? seq : last_step(n, seq, steps, u);
  }

  // The last row of a recurrent layer's [1, steps, u] sequence, as [1, u].
  int last_step(const Node& n, int seq, int steps, int u) {
    if (steps == 1) return reshape(n, seq, {1, u}, "");
    const int begin = b_.int32_constant(n.name + "/last_begin", {0, steps - 1, 0});
    const int end = b_.int32_constant(n.name + "/last_end", {1, steps, u});
    const int strides = b_.int32_constant(n.name + "/last_strides", {1, 1, 1});
    const int y = out(n, "", {1, u});
    b_.op(OpCode::StridedSlice, {seq, begin, end, strides}, {y}, n.name).options.shrink_axis_mask = 2;
    return y;
  }

  // Rows [begin, end) of the time axis: STRIDED_SLICE, that axis shrunk where the node drops it.
  int slice_rows(const Node& n) {
    const int x = in(n);
    const Shape xs = shape(x);  // [1, rows, ...]
    const auto [first, last] = slice_rows_bounds(n, xs[1]);
    std::vector<int32_t> begin(xs.size(), 0), end(xs.begin(), xs.end()), strides(xs.size(), 1);
    begin[1] = static_cast<int32_t>(first);
    end[1] = static_cast<int32_t>(last);
    const int b = b_.int32_constant(n.name + "/begin", begin);
    const int e = b_.int32_constant(n.name + "/end", end);
    const int st = b_.int32_constant(n.name + "/strides", strides);
    const int y = out(n, "", batched(n.shape));
    const bool drop = static_cast<int>(batched(n.shape).size()) < static_cast<int>(xs.size());
    b_.op(OpCode::StridedSlice, {x, b, e, st}, {y}, n.name).options.shrink_axis_mask = drop ? 2 : 0;
    return y;
  }

  // SEQUENCE_GRU (tflite/ops/sequence_gru.cpp): Keras' kernel [F, 3H] and recurrent kernel
  // [H, 3H] transposed to FULLY_CONNECTED filters [3H, F] and [3H, H] (gate rows z, r, h as Keras
  // orders them); bias [2, 3H] (reset_after: input row, recurrent row) or [3H].
  int gru(const Node& n) {
    if (n.recurrent_activation.kind != ActKind::Sigmoid) {
      refuse(n, std::string("recurrent_activation '") + activation_name(n.recurrent_activation.kind) +
                    "': the quantized GRU's gates are sigmoid");
    }
    // The candidate's activation: tanh, or one a FULLY_CONNECTED could fuse (linear, relu, relu6).
    const ActivationPlan act = n.activation.kind == ActKind::Tanh ? ActivationPlan{} : plan_activation(n, n.activation);
    if (act.separate) {
      refuse(n, std::string("activation '") + activation_name(n.activation.kind) +
                    "': the quantized GRU's candidate is tanh, relu, relu6 or linear");
    }
    if (n.inputs.size() > 1) refuse(n, "a GRU with an initial_state is not supported by the quantizer yet; the float plan runs it");
    const int x = in(n);
    const int steps = shape(x)[1], depth = shape(x)[2], u = n.units;
    const auto transposed = [&](const std::vector<float>& m, int rows) {  // Keras [rows, 3u] -> [3u, rows]
      std::vector<float> w(static_cast<size_t>(3) * u * rows);
      for (int o = 0; o < 3 * u; ++o) {
        for (int r = 0; r < rows; ++r) w[static_cast<size_t>(o) * rows + r] = m[static_cast<size_t>(r) * 3 * u + o];
      }
      return w;
    };
    const auto& bias = n.weights[2].data;
    const auto row = [&](int k) { return std::vector<float>(bias.begin() + k * 3 * u, bias.begin() + (k + 1) * 3 * u); };
    std::vector<int> ins(6, -1);
    ins[0] = x;
    ins[1] = f32(n, "/kernel", {3 * u, depth}, transposed(n.weights[0].data, depth));
    ins[2] = f32(n, "/recurrent_kernel", {3 * u, u}, transposed(n.weights[1].data, u));
    ins[3] = f32(n, "/input_bias", {3 * u}, row(0));
    if (n.reset_after) ins[4] = f32(n, "/recurrent_bias", {3 * u}, row(1));
    ins[5] = out(n, "/state", {1, u});
    b_.tensor(ins[5]).is_variable = true;
    const int seq = out(n, n.return_sequences ? "" : "/sequence", {1, steps, u});
    Op& op = b_.op(OpCode::SequenceGru, ins, {seq}, n.name);
    op.options.time_major = false;
    op.options.reset_after = n.reset_after;
    op.options.activation = n.activation.kind == ActKind::Tanh ? FusedActivation::Tanh : act.fused;
    return n.return_sequences ? seq : last_step(n, seq, steps, u);
  }

  int conv1d(const Node& n) {
    const int x = in(n);
    const int steps = shape(x)[1], ic = shape(x)[2], k = n.kernel_size, oc = n.units;
    int nhwc = reshape(n, x, {1, 1, steps, ic}, "/nhwc");
    if (n.padding == Padding::Causal) {
      const int left = (k - 1) * n.dilation;
      const int pads = b_.constant(n.name + "/causal_paddings", DType::I32, {4, 2},
                                   std::vector<int32_t>{0, 0, 0, 0, left, 0, 0, 0});
      const int padded = out(n, "/causal_padded", {1, 1, steps + left, ic});
      b_.op(OpCode::Pad, {nhwc, pads}, {padded}, n.name);
      nhwc = padded;
    }
    std::vector<float> filter(static_cast<size_t>(oc) * k * ic);
    const auto& kw = n.weights[0].data;  // (k, ic, oc)
    for (int o = 0; o < oc; ++o) {
      for (int j = 0; j < k; ++j) {
        for (int c = 0; c < ic; ++c) {
          filter[(static_cast<size_t>(o) * k + j) * ic + c] = kw[(static_cast<size_t>(j) * ic + c) * oc + o];
        }
      }
    }
    const int w = f32(n, "/kernel", {oc, 1, k, ic}, filter);
    const int bias = f32(n, "/bias", {oc}, n.weights[1].data);
    const ActivationPlan a = plan_activation(n, n.activation);
    const int out_steps = n.shape[0];
    const int conv = out(n, "/conv", {1, 1, out_steps, oc});
    Op& op = b_.op(OpCode::Conv2D, {nhwc, w, bias}, {conv}, n.name);
    op.options.padding = n.padding == Padding::Same ? PaddingMode::Same : PaddingMode::Valid;
    op.options.stride_w = n.stride;
    op.options.dilation_w = n.dilation;
    op.options.activation = a.fused;
    const int y = reshape(n, conv, batched(n.shape), a.separate ? "/linear" : "");
    return apply_separate(n, a, y, "");
  }

  // A 2-D window's padding, strides and dilations (Keras' height axis in the 1-D fields).
  static void set_window(tfl::OpOptions& o, const Node& n) {
    o.padding = n.padding == Padding::Same ? PaddingMode::Same : PaddingMode::Valid;
    o.stride_h = n.stride;
    o.stride_w = n.stride_w;
    o.dilation_h = n.dilation;
    o.dilation_w = n.dilation_w;
  }

  // Keras Conv2D over [H, W, C] (channels last) as the converter writes it: one CONV_2D on
  // [1, H, W, C], the kernel (kh, kw, C, F) as TFLite's [F, kh, kw, C].
  int conv2d(const Node& n) {
    const int x = in(n);
    const Shape& xs = shape(x);
    if (xs.size() != 4 || n.weights.empty()) refuse(n, "Conv2D expects a [H, W, C] input and a kernel");
    const int kh = n.kernel_size, kw = n.kernel_w, ic = xs[3], oc = n.units;
    const auto& kd = n.weights[0].data;  // (kh, kw, ic, oc)
    std::vector<float> filter(kd.size());
    const size_t taps = static_cast<size_t>(kh) * kw * ic;
    for (int o = 0; o < oc; ++o)
      for (size_t t = 0; t < taps; ++t) filter[static_cast<size_t>(o) * taps + t] = kd[t * oc + static_cast<size_t>(o)];
    const int w = f32(n, "/kernel", {oc, kh, kw, ic}, filter);
    const std::vector<float> zeros(static_cast<size_t>(oc), 0.0f);
    const int bias = f32(n, "/bias", {oc}, n.weights.size() > 1 ? n.weights[1].data : zeros);
    const ActivationPlan a = plan_activation(n, n.activation);
    const int y = out(n, a.separate ? "/linear" : "", batched(n.shape));
    Op& op = b_.op(OpCode::Conv2D, {x, w, bias}, {y}, n.name);
    set_window(op.options, n);
    op.options.activation = a.fused;
    return apply_separate(n, a, y, "");
  }

  // Keras DepthwiseConv2D as the converter writes it: one DEPTHWISE_CONV_2D, the kernel
  // (kh, kw, C, m) as TFLite's [1, kh, kw, C * m] (the same values in the same order: output
  // channel c * m + j), bias (C * m), the activation fused or after it.
  int depthwise_conv2d(const Node& n) {
    const ActivationPlan a = plan_activation(n, n.activation);
    const int y = depthwise(n, in(n), n.weights.size() > 1 ? &n.weights[1].data : nullptr, a.fused,
                            a.separate ? "/linear" : "", batched(n.shape));
    return apply_separate(n, a, y, "");
  }

  // Keras SeparableConv2D as the converter writes it: the depthwise step (no bias) into a
  // DEPTHWISE_CONV_2D, then the 1 x 1 pointwise kernel (1, 1, C * m, units) as a CONV_2D
  // ([units, 1, 1, C * m]) with the bias and the activation.
  int separable_conv2d(const Node& n) {
    if (n.weights.size() < 3) refuse(n, "SeparableConv2D expects a depthwise kernel, a pointwise kernel and a bias");
    const int x = in(n);
    const Shape& xs = shape(x);
    if (xs.size() != 4) refuse(n, "SeparableConv2D expects a [H, W, C] input");
    const int cm = xs[3] * n.depth_multiplier, units = n.units;
    const Shape mid = {1, n.shape[0], n.shape[1], cm};
    const int d = depthwise(n, x, nullptr, FusedActivation::None, "/depthwise", mid);
    const auto& pk = n.weights[1].data;  // (1, 1, C * m, units)
    std::vector<float> filter(pk.size());
    for (int o = 0; o < units; ++o)
      for (int c = 0; c < cm; ++c) filter[static_cast<size_t>(o) * cm + c] = pk[static_cast<size_t>(c) * units + o];
    const int w = f32(n, "/pointwise_kernel", {units, 1, 1, cm}, filter);
    const int bias = f32(n, "/bias", {units}, n.weights[2].data);
    const ActivationPlan a = plan_activation(n, n.activation);
    const int y = out(n, a.separate ? "/linear" : "", batched(n.shape));
    b_.op(OpCode::Conv2D, {d, w, bias}, {y}, n.name).options.activation = a.fused;
    return apply_separate(n, a, y, "");
  }

  // One DEPTHWISE_CONV_2D of node n's window, strides and dilations (a missing bias: zeros).
  int depthwise(const Node& n, int x, const std::vector<float>* bias_values, FusedActivation fused,
                const std::string& suffix, const Shape& y_shape) {
    const Shape& xs = shape(x);
    if (xs.size() != 4 || n.weights.empty()) refuse(n, "a depthwise convolution expects a [H, W, C] input and a kernel");
    const int cm = xs[3] * n.depth_multiplier;
    const int w = f32(n, "/depthwise_kernel", {1, n.kernel_size, n.kernel_w, cm}, n.weights[0].data);
    const std::vector<float> zeros(static_cast<size_t>(cm), 0.0f);
    const int bias = f32(n, "/depthwise_bias", {cm}, bias_values ? *bias_values : zeros);
    const int y = out(n, suffix, y_shape);
    Op& op = b_.op(OpCode::DepthwiseConv2D, {x, w, bias}, {y}, n.name);
    set_window(op.options, n);
    op.options.depth_multiplier = n.depth_multiplier;
    op.options.activation = fused;
    return y;
  }

  // ZeroPadding1D/2D and Keras' Pad: one PAD, nothing before or after the batch axis.
  int pad(const Node& n) {
    std::vector<int32_t> pads = {0, 0};
    for (int p : n.pads) pads.push_back(p);
    const int rank = static_cast<int>(pads.size() / 2);
    const int paddings = b_.constant(n.name + "/paddings", DType::I32, {rank, 2}, pads);
    const int y = out(n, "", batched(n.shape));
    b_.op(OpCode::Pad, {in(n), paddings}, {y}, n.name);
    return y;
  }

  // Permute: one TRANSPOSE, the batch axis kept first.
  int permute(const Node& n) {
    std::vector<int32_t> perm = {0};
    for (int a : n.permutation) perm.push_back(a + 1);
    const int perm_t = b_.int32_constant(n.name + "/perm", perm);
    const int y = out(n, "", batched(n.shape));
    b_.op(OpCode::Transpose, {in(n), perm_t}, {y}, n.name);
    return y;
  }

  int pool2d(const Node& n) {
    const int y = out(n, "", batched(n.shape));
    Op& op = b_.op(n.kind == OpKind::MaxPool2D ? OpCode::MaxPool2D : OpCode::AveragePool2D, {in(n)}, {y}, n.name);
    op.options.filter_h = n.pool_size;
    op.options.filter_w = n.pool_w;
    op.options.stride_h = n.pool_stride;
    op.options.stride_w = n.pool_stride_w;
    op.options.padding = n.padding == Padding::Same ? PaddingMode::Same : PaddingMode::Valid;
    return y;
  }

  int pool1d(const Node& n) {
    const int x = in(n);
    const int steps = shape(x)[1], c = shape(x)[2];
    const int nhwc = reshape(n, x, {1, 1, steps, c}, "/nhwc");
    const int pooled = out(n, "/pool", {1, 1, n.shape[0], c});
    Op& op = b_.op(n.kind == OpKind::MaxPool1D ? OpCode::MaxPool2D : OpCode::AveragePool2D, {nhwc}, {pooled}, n.name);
    op.options.filter_w = n.pool_size;
    op.options.stride_w = n.pool_stride;
    op.options.padding = n.padding == Padding::Same ? PaddingMode::Same : PaddingMode::Valid;
    return reshape(n, pooled, batched(n.shape), "");
  }

  int global_max_pool(const Node& n) {
    const int x = in(n);
    const int steps = shape(x)[1], c = shape(x)[2];
    const int nhwc = reshape(n, x, {1, 1, steps, c}, "/nhwc");
    const int pooled = out(n, "/pool", {1, 1, 1, c});
    Op& op = b_.op(OpCode::MaxPool2D, {nhwc}, {pooled}, n.name);
    op.options.filter_w = op.options.stride_w = steps;
    return reshape(n, pooled, batched(n.shape), "");
  }

  const Graph& g_;
  ProgramBuilder b_;
  std::vector<int> node_tensor_;
};

}  // namespace

Program lower_graph(const Graph& graph, const LowerOptions& options) {
  Graph g = graph;
  if (options.one_step_per_call) one_step_inputs(g);
  for (int i : g.inputs) {
    Node& input = g.nodes.at(static_cast<size_t>(i));
    for (int& d : input.shape) {
      if (d >= 1) continue;
      if (options.window_length < 1) {
        throw Error("input '" + input.name + "' has shape " + shape_str(input.shape) +
                    " with an unknown dimension; give a window length (--window)");
      }
      d = options.window_length;
    }
  }
  infer_shapes(g);  // graphs straight from a file carry no inferred shapes yet
  if (options.one_step_per_call) check_streamable(g);  // again, inferred: a concatenation's axis -2 is now 1, time
  Program p;
  p.name = g.name;
  p.source_format = g.source_format;
  p.stream_only = options.one_step_per_call;
  Lowerer(g, p).run();
  return p;
}

}  // namespace tickinfer::quantizer
