// Model: an immutable, validated model source (engine/model_source.hpp), shareable across
// threads; every member forwards to it.
#include "engine/model_source.hpp"
#include "formats/model_file.hpp"
#include "model/graph.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer {

namespace {
formats::TfliteEngine formats_engine(TfliteEngine e) {
  switch (e) {
    case TfliteEngine::Interpreter: return formats::TfliteEngine::Interpreter;
    case TfliteEngine::Graph: return formats::TfliteEngine::Graph;
    case TfliteEngine::Auto: break;
  }
  return formats::TfliteEngine::Auto;
}
}  // namespace

TfliteEngine parse_tflite_engine(const std::string& name) {
  switch (formats::parse_tflite_engine(name)) {
    case formats::TfliteEngine::Interpreter: return TfliteEngine::Interpreter;
    case formats::TfliteEngine::Graph: return TfliteEngine::Graph;
    case formats::TfliteEngine::Auto: break;
  }
  return TfliteEngine::Auto;
}

Model Model::load(const std::string& path, const LoadOptions& options) {
  // Its errors already name the file.
  formats::AnyModel any = formats::load_any_model_file(path, formats_engine(options.tflite_engine));
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
