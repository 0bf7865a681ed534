// Layers of a float program and the precisions each can take (see layers.hpp).
#include "quantizer/layers.hpp"

#include <algorithm>

#include "quantizer/calibration_lstm.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::quantizer {

namespace {

// Ops with a full-integer form in TFLite's int8 spec that the quantizer knows how to
// parameterize (output scale from calibration, fixed, or the input's).
bool int8_capable(OpCode code) {
  switch (code) {
    case OpCode::FullyConnected: case OpCode::Conv2D: case OpCode::DepthwiseConv2D:
    case OpCode::MaxPool2D: case OpCode::AveragePool2D:
    case OpCode::Logistic: case OpCode::Tanh: case OpCode::Softmax:
    case OpCode::Relu: case OpCode::Relu6: case OpCode::LeakyRelu:
    case OpCode::Add: case OpCode::Sub: case OpCode::Mul: case OpCode::SquaredDifference:
    case OpCode::Rsqrt: case OpCode::Mean: case OpCode::Concatenation:
    case OpCode::Reshape: case OpCode::Squeeze: case OpCode::ExpandDims:
    case OpCode::StridedSlice: case OpCode::Pad: case OpCode::ReverseV2:
      return true;
    default:
      return false;
  }
}

bool has_weights(OpCode code) {
  return code == OpCode::FullyConnected || code == OpCode::Conv2D || code == OpCode::DepthwiseConv2D ||
         code == OpCode::SequenceLstm || code == OpCode::SequenceGru;
}

int64_t op_macs(const Program& p, const Op& op) {
  const auto elems = [&](int t) { return element_count(p.tensors[static_cast<size_t>(t)].shape); };
  const int64_t out = elems(op.outputs.at(0));
  switch (op.code) {
    case OpCode::FullyConnected: {
      const Shape& w = p.tensors[static_cast<size_t>(op.inputs.at(1))].shape;
      return out * (w.size() == 2 ? w[1] : 1);
    }
    case OpCode::Conv2D: {
      const Shape& w = p.tensors[static_cast<size_t>(op.inputs.at(1))].shape;  // [oc, kh, kw, ic]
      return w.size() == 4 ? out * w[1] * w[2] * w[3] : out;
    }
    case OpCode::DepthwiseConv2D: {
      const Shape& w = p.tensors[static_cast<size_t>(op.inputs.at(1))].shape;  // [1, kh, kw, oc]
      return w.size() == 4 ? out * w[1] * w[2] : out;
    }
    case OpCode::SequenceLstm: {
      const Shape& x = p.tensors[static_cast<size_t>(op.inputs.at(0))].shape;        // [1, T, in]
      const Shape& r = p.tensors[static_cast<size_t>(op.inputs.at(8))].shape;        // [u, u]
      if (x.size() != 3 || r.size() != 2) return out;
      return int64_t{x[1]} * 4 * r[0] * (x[2] + r[1]);
    }
    case OpCode::SequenceGru: {
      const Shape& x = p.tensors[static_cast<size_t>(op.inputs.at(0))].shape;  // [1, T, in]
      const Shape& u = p.tensors[static_cast<size_t>(op.inputs.at(2))].shape;  // [3H, H]
      if (x.size() != 3 || u.size() != 2) return out;
      return int64_t{x[1]} * u[0] * (x[2] + u[1]);
    }
    default:
      return out;
  }
}

}  // namespace

std::vector<Layer> find_layers(const Program& p) {
  std::vector<Layer> layers;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const Op& op = p.ops[i];
    for (int t : op.outputs) {
      if (p.tensors[static_cast<size_t>(t)].type != DType::F32) {
        throw Error("op " + std::to_string(i) + " (" + op_name(op.code) + " '" + op.label +
                    "'): the quantizer needs a float model, but its output '" + p.tensors[static_cast<size_t>(t)].name +
                    "' is " + dtype_name(p.tensors[static_cast<size_t>(t)].type));
      }
    }
    if (layers.empty() || layers.back().label != op.label || op.label.empty()) layers.emplace_back();
    Layer& l = layers.back();
    l.label = op.label.empty() ? std::string(op_name(op.code)) + "_" + std::to_string(i) : op.label;
    l.ops.push_back(i);
    l.output = op.outputs.at(0);
    l.has_weights = l.has_weights || has_weights(op.code);
    l.macs += op_macs(p, op);
    if (l.why_not_int8.empty() && !int8_capable(op.code) && !lstm_is_plain(p, op)) {
      l.why_not_int8 = op.code == OpCode::SequenceLstm
                           ? "LSTM with peepholes, projection, CIFG, layer norm or a non-tanh activation has no int8 form here"
                       : op.code == OpCode::SequenceGru
                           ? "GRU has no full-integer form (TFLite has none to match: its converter keeps a GRU a float "
                             "loop); int8-dynamic is its closest"
                           : std::string(op_name(op.code)) + " has no int8 form here";
    }
  }
  for (Layer& l : layers) {
    bool bf16 = false;
    for (size_t i : l.ops) {
      const OpCode c = p.ops[i].code;
      bf16 = bf16 || c == OpCode::FullyConnected || c == OpCode::SequenceLstm || c == OpCode::SequenceGru;  // bf16 kernels exist for these
    }
    if (l.why_not_int8.empty()) l.allowed.push_back(Precision::Int8);
    if (l.has_weights) l.allowed.push_back(Precision::Int8Dynamic);
    if (bf16) l.allowed.push_back(Precision::BF16);
    l.allowed.push_back(Precision::F32);
  }
  return layers;
}

bool layer_allows(const Layer& layer, Precision precision) {
  return std::find(layer.allowed.begin(), layer.allowed.end(), precision) != layer.allowed.end();
}

Precision nearest_allowed(const Layer& layer, Precision wanted) {
  static const Precision kOrder[] = {Precision::Int8, Precision::Int8Dynamic, Precision::BF16, Precision::F32};
  bool reached = false;
  for (Precision p : kOrder) {
    reached = reached || p == wanted;
    if (reached && layer_allows(layer, p)) return p;
  }
  return Precision::F32;
}

double precision_cost(Precision p) {
  switch (p) {
    case Precision::Int8: return 1.0;
    case Precision::Int8Dynamic: return 1.25;
    case Precision::BF16: return 1.75;
    case Precision::F32: return 2.0;
  }
  return 2.0;
}

}  // namespace tickinfer::quantizer
