// Model: an immutable, validated Graph, shareable across threads.
#include "engine/program_plan.hpp"
#include "formats/model_file.hpp"
#include "model/graph.hpp"
#include "tflite/program.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer {
namespace {
bool shapes_known(const Graph& g) {
  for (int idx : g.inputs) {
    for (int d : g.nodes[idx].shape) {
      if (d < 1) return false;
    }
  }
  return true;
}
}  // namespace

Model Model::load(const std::string& path) {
  formats::AnyModel any = formats::load_any_model_file(path);  // its errors already name the file
  try {
    if (any.program) return from_program(std::move(any.program));
    return from_graph(std::move(any.graph));
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

Model Model::from_graph(Graph graph) {
  // With an unknown sequence length the shapes are resolved per plan (compile() substitutes
  // the window length); validate what can be validated now by trying a length of 1.
  if (shapes_known(graph)) {
    infer_shapes(graph);
  } else {
    // Resolve with lengths 1 and 2: a dimension that differs between the two follows the
    // unknown length and is recorded as -1 (None); the rest are real.
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
  Model m;
  m.graph_ = std::make_shared<const Graph>(std::move(graph));
  return m;
}

Model Model::from_program(std::shared_ptr<const tfl::Program> program) {
  if (!program) throw Error("no program");
  tfl::validate(*program);
  auto g = std::make_shared<Graph>();
  g->name = program->name;
  g->source_format = program->source_format;
  Model m;
  m.graph_ = std::move(g);
  m.program_ = std::move(program);
  return m;
}

std::vector<TensorInfo> Model::inputs() const {
  std::vector<TensorInfo> out;
  if (program_) {
    for (int t : program_->inputs) {
      out.push_back({program_->tensors[t].name, engine::plan_shape(program_->tensors[t].shape, false)});
    }
    return out;
  }
  for (int idx : graph_->inputs) out.push_back({graph_->nodes[idx].name, graph_->nodes[idx].shape});
  return out;
}

std::vector<TensorInfo> Model::outputs() const {
  std::vector<TensorInfo> out;
  if (program_) {
    for (int t : program_->outputs) {
      out.push_back({program_->tensors[t].name, engine::plan_shape(program_->tensors[t].shape, false)});
    }
    return out;
  }
  for (int idx : graph_->outputs) out.push_back({graph_->nodes[idx].name, graph_->nodes[idx].shape});
  return out;
}

}  // namespace tickinfer
