#pragma once
// What a tickinfer::Model holds: its model source, the one interface over the front ends'
// results. A Keras Graph (engine/graph_source.cpp) and a tensor program (TFLite, .tkq;
// engine/program_source.cpp) each answer the Model API and compile into a PlanBackend; Model and
// compile() only forward, so a new front end lowers into one of these sources instead of adding
// branches to Model.
//
// A source is immutable once made and shared by copies of the Model (and their threads).
#include <memory>
#include <vector>

#include "engine/plan_backend.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer::engine {

class ModelSource {
 public:
  virtual ~ModelSource() = default;

  // What Model::graph() and Model::program() return: the layer graph (for a tensor program an
  // empty graph carrying only its name and source_format) and the program (nullptr for graphs).
  virtual std::shared_ptr<const Graph> graph() const = 0;
  virtual std::shared_ptr<const tfl::Program> program() const = 0;

  // Model::inputs(), outputs(), stats(): without the batch dimension, as saved (a sequence of
  // unknown length has -1 as its length).
  virtual std::vector<TensorInfo> inputs() const = 0;
  virtual std::vector<TensorInfo> outputs() const = 0;
  virtual ModelStats stats() const = 0;

  // compile(): a new backend with its own arena. Throws tickinfer::Error for options the model
  // cannot run with (stream mode on a model that is not streamable, an ISA the CPU lacks).
  virtual std::unique_ptr<PlanBackend> compile(const CompileOptions& options) const = 0;
};

// The sources, validated (shapes and weights; a program's tensors and ops). Throw tickinfer::Error.
std::shared_ptr<const ModelSource> graph_source(Graph graph);
std::shared_ptr<const ModelSource> program_source(std::shared_ptr<const tfl::Program> program);

}  // namespace tickinfer::engine
