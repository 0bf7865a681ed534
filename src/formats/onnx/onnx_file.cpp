#include "formats/onnx/onnx_file.hpp"

#include <climits>

#include "formats/onnx/onnx_lower.hpp"
#include "onnx/onnx.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

bool parse_model(const void* data, size_t size, onnx::ModelProto& m) {
  return size <= static_cast<size_t>(INT_MAX) && m.ParseFromArray(data, static_cast<int>(size));
}

// The default domain's opset, or -1 when the model imports none.
int64_t default_opset(const onnx::ModelProto& m) {
  int64_t v = -1;
  for (const auto& o : m.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") v = o.version();
  }
  return v;
}

}  // namespace

bool looks_like_onnx(const void* data, size_t size) {
  // ModelProto's first field is ir_version (field 1, varint: tag byte 0x08) in every exporter's
  // output; checking it first keeps the parse attempt off other formats' bytes.
  if (size < 2 || static_cast<const unsigned char*>(data)[0] != 0x08) return false;
  onnx::ModelProto m;
  return parse_model(data, size, m) && m.has_graph() && default_opset(m) > 0;
}

Graph load_onnx(const void* data, size_t size, const std::string& label, const std::string& model_dir) {
  onnx::ModelProto m;
  if (data == nullptr || size == 0) throw Error(label + ": empty file (not an ONNX model)");
  if (!parse_model(data, size, m)) {
    throw Error(label + ": not a valid ONNX model (the protobuf does not parse: truncated or corrupt)");
  }
  if (!m.has_graph()) throw Error(label + ": the ONNX model has no graph (truncated, or not an ONNX model)");
  const int64_t opset = default_opset(m);
  if (opset < 0) throw Error(label + ": the model imports no opset of the default ONNX domain");
  if (opset < kOnnxMinOpset || opset > kOnnxMaxOpset) {
    throw Error(label + ": opset " + std::to_string(opset) + " is not supported (the importer reads opsets " +
                std::to_string(kOnnxMinOpset) + " to " + std::to_string(kOnnxMaxOpset) + ")");
  }
  const onnx::GraphProto& g = m.graph();
  onnx_import::TensorSource src{label, model_dir};
  std::map<std::string, onnx_import::Tensor> inits;
  for (const auto& t : g.initializer()) {
    if (t.name().empty()) throw Error(label + ": an initializer has no name");
    if (inits.count(t.name())) throw Error(label + ": initializer '" + t.name() + "' appears twice");
    inits.emplace(t.name(), onnx_import::decode_tensor(t, src, "initializer '" + t.name() + "'"));
  }
  onnx_import::Lowerer lowerer(g, std::move(inits), opset, src);
  Graph graph = lowerer.run();
  if (graph.name.empty()) graph.name = m.producer_name();
  return graph;
}

}  // namespace tickinfer::formats
