// Model::stats(): parameter count, FLOPs and weight bytes per inference, per layer.
// FLOPs count 2 per multiply-accumulate in Dense, Conv1D and the recurrent matmuls, the usual
// convention (mlp_small = 23.1 kFLOP); elementwise work (bias, activations, gates) is not
// counted, so FLOPs over peak gives a true lower bound on compute time.
#include "model/graph.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer {

ModelStats Model::stats() const {
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
