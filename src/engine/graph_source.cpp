// The model source of a Keras model: a validated Graph. Its plans are GraphPlans
// (engine/graph_plan_compile.cpp).
#include <memory>

#include "engine/graph_plan.hpp"
#include "engine/model_source.hpp"
#include "model/graph.hpp"
#include "model/op_kinds.hpp"

namespace tickinfer::engine {
namespace {

bool shapes_known(const Graph& g) {
  for (int idx : g.inputs) {
    for (int d : g.nodes[idx].shape) {
      if (d < 1) return false;
    }
  }
  return true;
}

// Validates the graph and fills every node's shape. With an unknown sequence length the shapes
// are resolved per plan (compile() substitutes the window length); what can be validated now is,
// by resolving with lengths 1 and 2: a dimension that differs between the two follows the
// unknown length and is recorded as -1 (None); the rest are real.
void validate(Graph& graph) {
  if (shapes_known(graph)) {
    infer_shapes(graph);
    return;
  }
  Graph probes[2] = {graph, graph};
  for (int len = 1; len <= 2; ++len) {
    for (int idx : probes[len - 1].inputs) {
      for (int& d : probes[len - 1].nodes[idx].shape) d = d < 1 ? len : d;
    }
    infer_shapes(probes[len - 1]);
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Shape s = probes[0].nodes[i].shape;
    for (size_t d = 0; d < s.size(); ++d) {
      if (s[d] != probes[1].nodes[i].shape[d]) s[d] = -1;
    }
    graph.nodes[i].shape = std::move(s);
  }
}

// Parameter count, FLOPs and weight bytes per inference, per layer. FLOPs count 2 per
// multiply-accumulate of each kind's matrix products (model/op_kinds.cpp), the usual convention
// (mlp_small = 23.1 kFLOP); elementwise work (bias, activations, gates) is not counted, so
// FLOPs over peak gives a true lower bound on compute time. A plan's own count (Plan::flops) is
// its steps' (engine/steps/): the same products, less those a plan skips (a window LSTM's first
// h U, against a zero state).
ModelStats graph_stats(const Graph& graph) {
  Graph g = graph;
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
    for (const Weight& w : n.weights) {
      ls.params += static_cast<int64_t>(w.data.size());
      for (float v : w.data) ls.zero_weights += v == 0.0f;
    }
    const Shape in = n.inputs.empty() ? Shape{} : g.nodes[n.inputs[0]].shape;
    ls.flops = 2 * op_kind_info(n.kind).macs(n, in);
    ls.weight_bytes = ls.params * static_cast<int64_t>(sizeof(float));
    total.params += ls.params;
    total.zero_weights += ls.zero_weights;
    total.flops += ls.flops;
    total.weight_bytes += ls.weight_bytes;
    total.layers.push_back(std::move(ls));
  }
  return total;
}

std::vector<TensorInfo> tensor_infos(const Graph& g, const std::vector<int>& nodes) {
  std::vector<TensorInfo> out;
  for (int idx : nodes) out.push_back({g.nodes[idx].name, g.nodes[idx].shape});
  return out;
}

class GraphSource final : public ModelSource {
 public:
  explicit GraphSource(std::shared_ptr<const Graph> graph) : graph_(std::move(graph)) {}

  std::shared_ptr<const Graph> graph() const override { return graph_; }
  std::shared_ptr<const tfl::Program> program() const override { return nullptr; }
  std::vector<TensorInfo> inputs() const override { return tensor_infos(*graph_, graph_->inputs); }
  std::vector<TensorInfo> outputs() const override {
    std::vector<TensorInfo> out = tensor_infos(*graph_, graph_->outputs);
    if (graph_->output_names.size() == out.size()) {
      for (size_t i = 0; i < out.size(); ++i) out[i].name = graph_->output_names[i];
    }
    return out;
  }
  ModelStats stats() const override { return graph_stats(*graph_); }
  std::unique_ptr<PlanBackend> compile(const CompileOptions& options) const override {
    return compile_graph(*graph_, options);
  }

 private:
  std::shared_ptr<const Graph> graph_;
};

}  // namespace

std::shared_ptr<const ModelSource> graph_source(Graph graph) {
  validate(graph);
  return std::make_shared<const GraphSource>(std::make_shared<const Graph>(std::move(graph)));
}

}  // namespace tickinfer::engine
