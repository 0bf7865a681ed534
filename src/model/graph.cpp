// Shape inference and validation for the Graph: the walk over the nodes; each kind's own rule is
// its row in op_kinds.cpp. Every check names the layer, so a model that loads but cannot run is
// rejected here, at load time, with a message a user can act on.
#include "model/graph.hpp"

#include <algorithm>
#include <sstream>

#include "model/op_kinds.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer {
namespace {

[[noreturn]] void fail(const Node& node, const std::string& msg) { fail_layer(node, msg); }

}  // namespace

void infer_shapes(Graph& graph) {
  if (graph.inputs.empty()) throw Error("model has no inputs");
  if (graph.outputs.empty()) throw Error("model has no outputs");
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& node = graph.nodes[i];
    for (int in : node.inputs) {
      if (in < 0 || static_cast<size_t>(in) >= i) {
        fail(node, "refers to an input that is not an earlier layer");
      }
    }
    if (node.kind == OpKind::Input) {
      if (node.shape.empty()) fail(node, "input has no shape");
      for (int d : node.shape) {
        if (d < 1) fail(node, "input shape " + shape_str(node.shape) + " has an unknown or zero dimension");
      }
    }
    node.shape = op_kind_info(node.kind).infer_shape(graph, node);
    int64_t elements = 1;
    for (int d : node.shape) {
      if (d < 1) fail(node, "output shape " + shape_str(node.shape) + " is empty");
      elements *= d;
      if (elements > (int64_t{1} << 28)) fail(node, "output tensor is unreasonably large");
    }
  }
  for (int idx : graph.inputs) {
    if (idx < 0 || static_cast<size_t>(idx) >= graph.nodes.size() ||
        graph.nodes[idx].kind != OpKind::Input) {
      throw Error("model input index does not name an input layer");
    }
  }
  for (int idx : graph.outputs) {
    if (idx < 0 || static_cast<size_t>(idx) >= graph.nodes.size()) {
      throw Error("model output index is out of range");
    }
  }
}

const char* op_name(OpKind kind) { return op_kind_info(kind).name; }

const char* activation_name(ActKind kind) {
  switch (kind) {
    case ActKind::Linear: return "linear";
    case ActKind::Relu: return "relu";
    case ActKind::LeakyRelu: return "leaky_relu";
    case ActKind::Elu: return "elu";
    case ActKind::Selu: return "selu";
    case ActKind::Sigmoid: return "sigmoid";
    case ActKind::HardSigmoid: return "hard_sigmoid";
    case ActKind::Tanh: return "tanh";
    case ActKind::Softmax: return "softmax";
    case ActKind::Gelu: return "gelu";
    case ActKind::GeluTanh: return "gelu_tanh";
    case ActKind::Swish: return "swish";
    case ActKind::Softplus: return "softplus";
    case ActKind::Softsign: return "softsign";
    case ActKind::Exponential: return "exponential";
  }
  return "?";
}

int64_t shape_size(const Shape& shape) {
  int64_t n = 1;
  for (int d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) os << ", ";
    if (shape[i] < 0) os << "None"; else os << shape[i];
  }
  os << ']';
  return os.str();
}

}  // namespace tickinfer
