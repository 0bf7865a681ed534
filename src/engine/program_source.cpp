// The model source of a TFLite or tickinfer-quantized (.tkq) model: a validated tfl::Program.
// Its plans are ProgramPlans (engine/program_plan.hpp).
#include <cstring>
#include <memory>

#include "engine/model_source.hpp"
#include "engine/program_plan.hpp"
#include "model/graph.hpp"
#include "tflite/program.hpp"

namespace tickinfer::engine {
namespace {

// A tensor program's cost per op: its constant operands are the op's parameters (bytes as
// stored: int8 weights count one byte each); FLOPs (2 per multiply-accumulate) for the matmul
// ops from their weight shapes.
// Exactly-zero float32 weights, or int8 weights whose stored value is 0 (weights are quantized
// symmetrically, zero point 0); other types are not counted.
int64_t zero_elements(const tfl::Tensor& t) {
  int64_t zeros = 0;
  if (t.type == tfl::DType::F32) {
    for (size_t i = 0; i + 4 <= t.data.size(); i += 4) {
      float v;
      std::memcpy(&v, t.data.data() + i, 4);
      zeros += v == 0.0f;
    }
  } else if (t.type == tfl::DType::I8) {
    for (uint8_t b : t.data) zeros += b == 0;
  }
  return zeros;
}

ModelStats program_stats(const tfl::Program& p) {
  ModelStats total;
  for (const tfl::Op& op : p.ops) {
    LayerStats ls;
    ls.name = op.label;
    ls.keras_class = std::string(tfl::op_name(op.code)) + " [" + tfl::precision_name(op.precision) + "]";
    if (!op.outputs.empty()) ls.output_shape = plan_shape(p.tensors[op.outputs[0]].shape, false);
    int64_t weight_elems = 0;
    for (int t : op.inputs) {
      if (t < 0) continue;
      const tfl::Tensor& tensor = p.tensors[t];
      if (!tensor.is_constant() || tensor.is_variable) continue;
      const int64_t n = tfl::element_count(tensor.shape);
      ls.params += n;
      ls.weight_bytes += static_cast<int64_t>(tensor.data.size());
      ls.zero_weights += zero_elements(tensor);
      if (tensor.shape.size() >= 2) weight_elems += n;
    }
    int64_t rows = 1;  // positions the weights are applied at
    if (!op.inputs.empty() && op.inputs[0] >= 0) {
      const tfl::Shape& in = p.tensors[op.inputs[0]].shape;
      const bool recurrent = op.code == tfl::OpCode::SequenceLstm || op.code == tfl::OpCode::SequenceGru;
      if (recurrent && in.size() == 3) rows = op.options.time_major ? in[0] : in[1];
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
        op.code == tfl::OpCode::SequenceGru || op.code == tfl::OpCode::Conv2D || op.code == tfl::OpCode::DepthwiseConv2D) {
      ls.flops = 2 * weight_elems * rows;
    }
    total.params += ls.params;
    total.zero_weights += ls.zero_weights;
    total.flops += ls.flops;
    total.weight_bytes += ls.weight_bytes;
    total.layers.push_back(std::move(ls));
  }
  return total;
}

std::vector<TensorInfo> tensor_infos(const tfl::Program& p, const std::vector<int>& tensors) {
  std::vector<TensorInfo> out;
  for (int t : tensors) out.push_back({p.tensors[t].name, plan_shape(p.tensors[t].shape, false)});
  return out;
}

class ProgramSource final : public ModelSource {
 public:
  explicit ProgramSource(std::shared_ptr<const tfl::Program> program) : program_(std::move(program)) {
    auto g = std::make_shared<Graph>();  // what Model::graph() shows: the name and format only
    g->name = program_->name;
    g->source_format = program_->source_format;
    graph_ = std::move(g);
  }

  std::shared_ptr<const Graph> graph() const override { return graph_; }
  std::shared_ptr<const tfl::Program> program() const override { return program_; }
  std::vector<TensorInfo> inputs() const override { return tensor_infos(*program_, program_->inputs); }
  std::vector<TensorInfo> outputs() const override { return tensor_infos(*program_, program_->outputs); }
  ModelStats stats() const override { return program_stats(*program_); }
  std::unique_ptr<PlanBackend> compile(const CompileOptions& options) const override {
    if (options.incremental) {
      throw Error("incremental window updates run on graph plans; this model runs as a TFLite tensor program "
                  "(int8, or ops the graph lift does not take)");
    }
    return std::make_unique<ProgramPlan>(program_, options);
  }

 private:
  std::shared_ptr<const tfl::Program> program_;
  std::shared_ptr<const Graph> graph_;
};

}  // namespace

std::shared_ptr<const ModelSource> program_source(std::shared_ptr<const tfl::Program> program) {
  if (!program) throw Error("no program");
  tfl::validate(*program);
  return std::make_shared<const ProgramSource>(std::move(program));
}

}  // namespace tickinfer::engine
