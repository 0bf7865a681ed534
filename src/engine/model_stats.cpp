// Model::stats(): parameter count, FLOPs and weight bytes per inference, per layer.
// FLOPs count 2 per multiply-accumulate in Dense, Conv1D and the recurrent matmuls, the usual
// convention (mlp_small = 23.1 kFLOP); elementwise work (bias, activations, gates) is not
// counted, so FLOPs over peak gives a true lower bound on compute time.
#include "engine/program_plan.hpp"
#include "model/graph.hpp"
#include "tflite/program.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer {

namespace {

// A tensor program's cost per op: its constant operands are the op's parameters (bytes as
// stored: int8 weights count one byte each); FLOPs for the matmul ops from their weight shapes.
ModelStats program_stats(const tfl::Program& p) {
  ModelStats total;
  for (const tfl::Op& op : p.ops) {
    LayerStats ls;
    ls.name = op.label;
    ls.keras_class = std::string(tfl::op_name(op.code)) + " [" + tfl::precision_name(op.precision) + "]";
    if (!op.outputs.empty()) ls.output_shape = engine::plan_shape(p.tensors[op.outputs[0]].shape, false);
    int64_t weight_elems = 0;
    for (int t : op.inputs) {
      if (t < 0) continue;
      const tfl::Tensor& tensor = p.tensors[t];
      if (!tensor.is_constant() || tensor.is_variable) continue;
      const int64_t n = tfl::element_count(tensor.shape);
      ls.params += n;
      ls.weight_bytes += static_cast<int64_t>(tensor.data.size());
      if (tensor.shape.size() >= 2) weight_elems += n;
    }
    int64_t rows = 1;  // positions the weights are applied at
    if (!op.inputs.empty() && op.inputs[0] >= 0) {
      const tfl::Shape& in = p.tensors[op.inputs[0]].shape;
      if (op.code == tfl::OpCode::SequenceLstm && in.size() == 3) rows = op.options.time_major ? in[0] : in[1];
      if (op.code == tfl::OpCode::FullyConnected && !in.empty() && !p.tensors[op.inputs[1]].shape.empty()) {
        const int64_t k = p.tensors[op.inputs[1]].shape.back();
        rows = k > 0 ? tfl::element_count(in) / k : 1;
      }
    }
    if (op.code == tfl::OpCode::Conv2D || op.code == tfl::OpCode::DepthwiseConv2D) {
      const tfl::Shape& out = p.tensors[op.outputs[0]].shape;
      if (out.size() == 4) rows = int64_t{out[1]} * out[2];
    }
    if (op.code == tfl::OpCode::FullyConnected || op.code == tfl::OpCode::SequenceLstm ||
        op.code == tfl::OpCode::Conv2D || op.code == tfl::OpCode::DepthwiseConv2D) {
      ls.flops = 2 * weight_elems * rows;
    }
    total.params += ls.params;
    total.flops += ls.flops;
    total.weight_bytes += ls.weight_bytes;
    total.layers.push_back(std::move(ls));
  }
  return total;
}

}  // namespace

ModelStats Model::stats() const {
  if (program_) return program_stats(*program_);
  Graph g = *graph_;
  for (int idx : g.inputs) {
    for (int& d : g.nodes[idx].shape) d = d < 1 ? 1 : d;  // unknown window: count one step
  }
  infer_shapes(g);
  ModelStats total;
  for (const Node& n : g.nodes) {
    LayerStats ls;
    ls.name = n.name;
    ls.keras_class = n.keras_class;
    ls.output_shape = n.shape;
    for (const Weight& w : n.weights) ls.params += static_cast<int64_t>(w.data.size());
    const Shape in = n.inputs.empty() ? Shape{} : g.nodes[n.inputs[0]].shape;
    switch (n.kind) {
      case OpKind::Dense:
        ls.flops = 2 * shape_size(in) * n.units;
        break;
      case OpKind::LSTM:
        ls.flops = 2 * int64_t{in[0]} * (in[1] + n.units) * 4 * n.units;
        break;
      case OpKind::GRU:
        ls.flops = 2 * int64_t{in[0]} * (in[1] + n.units) * 3 * n.units;
        break;
      case OpKind::Conv1D:
        ls.flops = 2 * int64_t{n.shape[0]} * n.kernel_size * in[1] * n.units;
        break;
      default:
        break;
    }
    ls.weight_bytes = ls.params * static_cast<int64_t>(sizeof(float));
    total.params += ls.params;
    total.flops += ls.flops;
    total.weight_bytes += ls.weight_bytes;
    total.layers.push_back(std::move(ls));
  }
  return total;
}

}  // namespace tickinfer
