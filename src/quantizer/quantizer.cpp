// The quantization transform (see quantizer.hpp).
#include "quantizer/quantizer.hpp"

#include <algorithm>
#include <cstring>

#include "quantizer/calibration_lstm.hpp"
#include "tflite/program_builder.hpp"
#include "quantizer/quant_params.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::quantizer {

namespace {

std::vector<float> float_data(const Tensor& t) {
  std::vector<float> v(t.data.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

QuantParams per_tensor(const AffineParams& a) { return {{a.scale}, {a.zero_point}, 0}; }

class Transform {
 public:
  Transform(const Program& f, const std::vector<Layer>& layers, const std::vector<Precision>& precisions,
            const std::vector<TensorRange>& ranges, const QuantizeOptions& options)
      : f_(f), ranges_(ranges), options_(options), b_(out_.program),
        float_version_(f.tensors.size(), -1), int8_version_(f.tensors.size(), -1),
        producer_(f.tensors.size(), -1) {
    out_.program.name = f.name;
    out_.program.source_format = "tickinfer";
    out_.program.stream_only = f.stream_only;
    op_layer_.assign(f.ops.size(), 0);
    for (size_t l = 0; l < layers.size(); ++l) {
      if (!layer_allows(layers[l], precisions.at(l))) {
        throw Error("layer '" + layers[l].label + "': precision " + precision_name(precisions[l]) + " is not possible" +
                    (precisions[l] == Precision::Int8 ? " (" + layers[l].why_not_int8 + ")" : ""));
      }
      for (size_t i : layers[l].ops) op_layer_[i] = l;
    }
    layers_ = &layers;
    precisions_ = &precisions;
  }

  QuantizedProgram run() {
    for (int t : f_.inputs) {
      const Tensor& src = f_.tensors[static_cast<size_t>(t)];
      if (options_.integer_io) {
        int8_version_[static_cast<size_t>(t)] =
            b_.activation(src.name, DType::I8, src.shape, per_tensor(observed_params(t, src.name)));
        produced_int8_[static_cast<size_t>(t)] = true;
      } else {
        float_version_[static_cast<size_t>(t)] = b_.activation(src.name, DType::F32, src.shape);
      }
      out_.program.inputs.push_back(primary(t));
    }
    for (size_t i = 0; i < f_.ops.size(); ++i) lower_op(i);
    for (int t : f_.outputs) {
      const std::string& label = producer_label(t);
      const Precision p = producer_precision(t);
      out_.program.outputs.push_back(options_.integer_io ? as_int8(t, label) : as_float(t, label, p));
    }
    out_.tensor_map.resize(f_.tensors.size());
    for (size_t t = 0; t < f_.tensors.size(); ++t) out_.tensor_map[t] = primary(static_cast<int>(t));
    validate(out_.program);
    return std::move(out_);
  }

 private:
  int primary(int t) const {
    const auto i = static_cast<size_t>(t);
    return produced_int8_[i] ? int8_version_[i] : float_version_[i];
  }
  const std::string& producer_label(int t) const {
    static const std::string none;
    const int op = producer_[static_cast<size_t>(t)];
    return op < 0 ? none : f_.ops[static_cast<size_t>(op)].label;
  }
  Precision producer_precision(int t) const {
    const int op = producer_[static_cast<size_t>(t)];
    return op < 0 ? Precision::F32 : (*precisions_)[op_layer_[static_cast<size_t>(op)]];
  }

  AffineParams observed_params(int t, const std::string& who) const {
    const TensorRange& r = ranges_.at(static_cast<size_t>(t));
    if (!r.observed) {
      throw Error("layer '" + who + "': tensor '" + f_.tensors[static_cast<size_t>(t)].name +
                  "' has no calibrated range, so it cannot be int8");
    }
    return activation_params(r.min, r.max);
  }

  // The float value of original tensor t, adding a DEQUANTIZE the first time it is needed.
  int as_float(int t, const std::string& label, Precision precision) {
    const auto i = static_cast<size_t>(t);
    if (float_version_[i] >= 0) return float_version_[i];
    const Tensor& src = f_.tensors[i];
    if (src.is_constant()) return float_version_[i] = copy_constant(t);
    if (int8_version_[i] < 0) throw Error("tensor '" + src.name + "' is used before it is produced");
    const int y = b_.activation(src.name + "/dequantized", DType::F32, src.shape);
    b_.op(OpCode::Dequantize, {int8_version_[i]}, {y}, label, precision);
    return float_version_[i] = y;
  }

  // The int8 value of original tensor t, adding a QUANTIZE the first time it is needed.
  int as_int8(int t, const std::string& label) {
    const auto i = static_cast<size_t>(t);
    if (int8_version_[i] >= 0) return int8_version_[i];
    const Tensor& src = f_.tensors[i];
    if (src.is_constant()) return int8_version_[i] = quantize_constant(t);
    const int x = as_float(t, label, Precision::Int8);
    const int y = b_.activation(src.name + "/quantized", DType::I8, src.shape, per_tensor(observed_params(t, label)));
    b_.op(OpCode::Quantize, {x}, {y}, label, Precision::Int8);
    return int8_version_[i] = y;
  }

  int copy_constant(int t) {
    Tensor c = f_.tensors[static_cast<size_t>(t)];
    out_.program.tensors.push_back(std::move(c));
    return static_cast<int>(out_.program.tensors.size() - 1);
  }

  // A float constant operand of an int8 elementwise op: per-tensor asymmetric over its values.
  int quantize_constant(int t) {
    const Tensor& src = f_.tensors[static_cast<size_t>(t)];
    if (src.type != DType::F32) return copy_constant(t);  // shapes, axes, paddings
    const auto v = float_data(src);
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    const AffineParams a = activation_params(*lo, *hi);
    std::vector<int8_t> q(v.size());
    for (size_t k = 0; k < v.size(); ++k) q[k] = quantize_value(v[k], a);
    return b_.constant(src.name + "/int8", DType::I8, src.shape, q, per_tensor(a));
  }

  // Non-float constants (int32 shapes, axes) are shared as they are.
  int operand(int t) {
    if (t < 0) return -1;
    const auto i = static_cast<size_t>(t);
    if (float_version_[i] < 0) float_version_[i] = copy_constant(t);
    return float_version_[i];
  }

  int weights_int8(int t, int axis_channels_dim, bool per_channel, const std::string& suffix) {
    const Tensor& w = f_.tensors[static_cast<size_t>(t)];
    const int channels = w.shape.at(static_cast<size_t>(axis_channels_dim));
    // The channel axis first (FC, conv: [out, ...]) or last (depthwise: [1, kh, kw, out]).
    const bool last = per_channel && axis_channels_dim + 1 == static_cast<int>(w.shape.size()) && axis_channels_dim > 0;
    const QuantizedWeights q = last ? quantize_weights_innermost(float_data(w), channels)
                                    : quantize_weights(float_data(w), channels, per_channel);
    QuantParams qp;
    qp.scale = q.scales;
    qp.zero_point.assign(q.scales.size(), 0);
    qp.axis = per_channel ? axis_channels_dim : 0;
    return b_.constant(w.name + suffix, DType::I8, w.shape, q.values, qp);
  }

  int weights_bf16(int t) {
    const Tensor& w = f_.tensors[static_cast<size_t>(t)];
    const auto v = float_data(w);
    std::vector<uint16_t> h(v.size());
    for (size_t k = 0; k < v.size(); ++k) h[k] = to_bf16(v[k]);
    return b_.constant(w.name + "/bf16", DType::BF16, w.shape, h);
  }

  void lower_op(size_t i) {
    const Op& op = f_.ops[i];
    const Precision p = (*precisions_)[op_layer_[i]];
    for (int t : op.outputs) producer_[static_cast<size_t>(t)] = static_cast<int>(i);
    if (p == Precision::Int8) return int8_op(i);
    Op q = op;
    q.precision = p;
    if (op.code == OpCode::SequenceGru) q.options.own_arithmetic = options_.gru_own_arithmetic;
    const bool depthwise = op.code == OpCode::DepthwiseConv2D;
    const bool gru = op.code == OpCode::SequenceGru;
    const bool weights = op.code == OpCode::FullyConnected || op.code == OpCode::Conv2D || depthwise ||
                         op.code == OpCode::SequenceLstm || gru;
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const int t = op.inputs[k];
      if (t < 0) continue;
      const Tensor& src = f_.tensors[static_cast<size_t>(t)];
      const bool is_weight = weights && src.is_constant() && src.type == DType::F32 &&
                             (op.code == OpCode::SequenceLstm ? (k >= 1 && k <= 8) : gru ? (k == 1 || k == 2) : k == 1);
      if (is_weight && p == Precision::Int8Dynamic) {
        // LSTM hybrid kernels take one scale per weight matrix; FC, conv and GRU (FC rows) per output channel.
        q.inputs[k] = weights_int8(t, depthwise ? 3 : 0, op.code != OpCode::SequenceLstm, "/int8");
        q.options.asymmetric_quantize_inputs = true;
      } else if (is_weight && p == Precision::BF16 && op.code != OpCode::Conv2D && !depthwise) {
        q.inputs[k] = weights_bf16(t);
      } else if (src.is_constant() || src.is_variable) {
        q.inputs[k] = operand(t);
      } else {
        q.inputs[k] = as_float(t, op.label, p);
      }
    }
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      const Tensor& src = f_.tensors[static_cast<size_t>(op.outputs[k])];
      q.outputs[k] = float_version_[static_cast<size_t>(op.outputs[k])] = b_.activation(src.name, DType::F32, src.shape);
    }
    for (int& t : q.intermediates) t = operand(t);
    out_.program.ops.push_back(std::move(q));
  }

  void int8_op(size_t i) {
    const Op& op = f_.ops[i];
    Op q = op;
    q.precision = Precision::Int8;
    const int out_t = op.outputs.at(0);
    const Tensor& out_src = f_.tensors[static_cast<size_t>(out_t)];
    const auto in0 = [&]() { return as_int8(op.inputs.at(0), op.label); };
    QuantParams out_q;
    switch (op.code) {
      case OpCode::FullyConnected:
      case OpCode::Conv2D:
      case OpCode::DepthwiseConv2D: {
        q.inputs[0] = in0();
        const float in_scale = out_.program.tensors[static_cast<size_t>(q.inputs[0])].quant.scale.at(0);
        q.inputs[1] = weights_int8(op.inputs.at(1), op.code == OpCode::DepthwiseConv2D ? 3 : 0, true, "/int8");
        const std::vector<float> w_scales = out_.program.tensors[static_cast<size_t>(q.inputs[1])].quant.scale;
        if (op.inputs.size() > 2 && op.inputs[2] >= 0) {
          const Tensor& bias = f_.tensors[static_cast<size_t>(op.inputs[2])];
          QuantParams bq;
          for (float s : w_scales) bq.scale.push_back(in_scale * s);
          bq.zero_point.assign(bq.scale.size(), 0);
          q.inputs[2] = b_.constant(bias.name + "/int32", DType::I32, bias.shape,
                                    quantize_bias(float_data(bias), in_scale, w_scales), bq);
        }
        out_q = per_tensor(observed_params(out_t, op.label));
        break;
      }
      case OpCode::SequenceLstm:
        int8_lstm(op, q);
        out_q = out_.program.tensors[static_cast<size_t>(q.outputs[0])].quant;
        break;
      case OpCode::Logistic:
      case OpCode::Softmax:
        q.inputs[0] = in0();
        out_q = {{1.0f / 256.0f}, {-128}, 0};
        break;
      case OpCode::Tanh:
        q.inputs[0] = in0();
        out_q = {{1.0f / 128.0f}, {0}, 0};
        break;
      case OpCode::Reshape: case OpCode::Squeeze: case OpCode::ExpandDims: case OpCode::StridedSlice:
      case OpCode::Pad: case OpCode::MaxPool2D: case OpCode::AveragePool2D: case OpCode::Transpose:
      case OpCode::ReverseV2:
        // The int8 kernels move values without requantizing: output params = input params.
        q.inputs[0] = in0();
        for (size_t k = 1; k < op.inputs.size(); ++k) q.inputs[k] = operand(op.inputs[k]);
        out_q = out_.program.tensors[static_cast<size_t>(q.inputs[0])].quant;
        break;
      case OpCode::Mean:
        q.inputs[0] = in0();
        q.inputs[1] = operand(op.inputs.at(1));
        out_q = per_tensor(observed_params(out_t, op.label));
        break;
      default:
        // Elementwise ops and standalone activations: every operand int8, output from its range.
        for (size_t k = 0; k < op.inputs.size(); ++k) q.inputs[k] = as_int8(op.inputs[k], op.label);
        out_q = per_tensor(observed_params(out_t, op.label));
        break;
    }
    q.outputs[0] = int8_version_[static_cast<size_t>(out_t)] =
        op.code == OpCode::SequenceLstm ? q.outputs[0] : b_.activation(out_src.name, DType::I8, out_src.shape, out_q);
    produced_int8_[static_cast<size_t>(out_t)] = true;
    out_.program.ops.push_back(std::move(q));
  }

  // The converter's full-integer LSTM (TFLite's 8x8_16 kernel): int8 input, output and output
  // state (sharing the output's parameters), int16 cell state with a power-of-two scale from the
  // calibrated cell range, int8 per-tensor weights, int32 gate biases with scale
  // input_scale * input_weight_scale, and the five intermediates the converter writes for an
  // LSTM without layer norm (four empty float ones, then the hidden state's int8 parameters).
  void int8_lstm(const Op& op, Op& q) {
    const std::string& name = f_.tensors[static_cast<size_t>(op.outputs[0])].name;
    q.inputs[0] = as_int8(op.inputs[0], op.label);
    const float in_scale = out_.program.tensors[static_cast<size_t>(q.inputs[0])].quant.scale.at(0);
    for (size_t k = 1; k <= 8; ++k) q.inputs[k] = weights_int8(op.inputs[k], 0, false, "/int8");
    for (size_t g = 0; g < 4; ++g) {
      const Tensor& bias = f_.tensors[static_cast<size_t>(op.inputs[12 + g])];
      const float w_scale = out_.program.tensors[static_cast<size_t>(q.inputs[1 + g])].quant.scale.at(0);
      q.inputs[12 + g] = b_.constant(bias.name + "/int32", DType::I32, bias.shape,
                                     quantize_bias(float_data(bias), in_scale, {w_scale}),
                                     QuantParams{{in_scale * w_scale}, {0}, 0});
    }
    const QuantParams out_q = per_tensor(observed_params(op.outputs[0], op.label));
    const Tensor& h = f_.tensors[static_cast<size_t>(op.inputs[18])];
    const Tensor& c = f_.tensors[static_cast<size_t>(op.inputs[19])];
    const TensorRange& cell = ranges_.at(static_cast<size_t>(op.inputs[19]));
    if (!cell.observed) throw Error("layer '" + op.label + "': the LSTM cell state has no calibrated range, so it cannot be int8");
    q.inputs[18] = b_.activation(h.name + "/int8", DType::I8, h.shape, out_q);
    q.inputs[19] = b_.activation(c.name + "/int16", DType::I16, c.shape, QuantParams{{lstm_cell_scale(cell.max)}, {0}, 0});
    b_.tensor(q.inputs[18]).is_variable = b_.tensor(q.inputs[19]).is_variable = true;
    q.intermediates.clear();
    for (const char* gate : {"input", "forget", "cell", "output"}) {
      q.intermediates.push_back(b_.activation(name + "/" + gate + "_intermediate", DType::F32, {0}));
    }
    q.intermediates.push_back(b_.activation(name + "/effective_hidden_scale_intermediate", DType::I8, {0}, out_q));
    q.outputs[0] = b_.activation(name, DType::I8, f_.tensors[static_cast<size_t>(op.outputs[0])].shape, out_q);
  }

  const Program& f_;
  const std::vector<TensorRange>& ranges_;
  QuantizeOptions options_;
  QuantizedProgram out_;
  ProgramBuilder b_;
  std::vector<int> float_version_, int8_version_, producer_;
  std::vector<bool> produced_int8_ = std::vector<bool>(f_.tensors.size(), false);
  std::vector<size_t> op_layer_;
  const std::vector<Layer>* layers_ = nullptr;
  const std::vector<Precision>* precisions_ = nullptr;
};

}  // namespace

QuantizedProgram quantize_program(const Program& float_program, const std::vector<Layer>& layers,
                                  const std::vector<Precision>& precisions,
                                  const std::vector<TensorRange>& ranges, const QuantizeOptions& options) {
  if (precisions.size() != layers.size()) {
    throw Error("quantize: " + std::to_string(precisions.size()) + " precisions for " + std::to_string(layers.size()) + " layers");
  }
  if (ranges.size() != float_program.tensors.size()) throw Error("quantize: the ranges do not belong to this program");
  return Transform(float_program, layers, precisions, ranges, options).run();
}

}  // namespace tickinfer::quantizer
