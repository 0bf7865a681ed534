// Model: an immutable, validated model source (engine/model_source.hpp), shareable across
// threads; every member forwards to it.
#include "engine/model_source.hpp"
#include "formats/model_file.hpp"
#include "model/graph.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer {

Model Model::load(const std::string& path) {
  formats::AnyModel any = formats::load_any_model_file(path);  // its errors already name the file
  try {
    // The importer's result picks the source: a tensor program (TFLite, .tkq) or a Keras graph.
    if (any.program) return from_program(std::move(any.program));
    return from_graph(std::move(any.graph));
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

Model Model::from_graph(Graph graph) {
  Model m;
  m.source_ = engine::graph_source(std::move(graph));
  m.graph_ = m.source_->graph();
  m.program_ = m.source_->program();
  return m;
}

Model Model::from_program(std::shared_ptr<const tfl::Program> program) {
  Model m;
  m.source_ = engine::program_source(std::move(program));
  m.graph_ = m.source_->graph();
  m.program_ = m.source_->program();
  return m;
}

std::vector<TensorInfo> Model::inputs() const { return source_->inputs(); }
std::vector<TensorInfo> Model::outputs() const { return source_->outputs(); }
ModelStats Model::stats() const { return source_->stats(); }

}  // namespace tickinfer
