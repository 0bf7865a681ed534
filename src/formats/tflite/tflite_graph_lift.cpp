// The TFLite -> Graph lift: the walk over the program's ops, the tensor -> node map and the
// model's inputs and outputs. The op families live in tflite_lift_*.cpp.
#include "formats/tflite/tflite_graph_lift.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "formats/attention_fusion.hpp"
#include "formats/tflite/tflite_lift_context.hpp"
#include "tflite/fused_activation_spec.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {
namespace lift {

Shape unbatched(const tfl::Shape& s) {
  Shape out(s.begin(), s.end());
  if (!out.empty() && out[0] == 1) out.erase(out.begin());
  return out;
}

Lifter::Lifter(const tfl::Program& p)
    : p_(p), values_(p.tensors.size()), consumers_(p.tensors.size(), 0), lifted_(p.ops.size(), false) {
  for (const tfl::Op& op : p.ops) {
    for (int t : op.inputs) {
      if (t >= 0) ++consumers_[static_cast<size_t>(t)];
    }
  }
  for (int t : p.outputs) ++consumers_[static_cast<size_t>(t)];
  g_.name = p.name;
  g_.source_format = "tflite";
}

void Lifter::refuse(const std::string& why) const {
  if (op_index_ < 0) throw NotLiftable{why};
  const tfl::Op& o = op();
  throw NotLiftable{"op " + std::to_string(op_index_) + " (" + tfl::op_name(o.code) + " '" + o.label + "'): " + why};
}

std::string Lifter::op_origin() const {
  if (op_index_ < 0) return "model output";  // a Reshape to an output's shape, after the ops
  return std::string(tfl::op_name(op().code)) + " #" + std::to_string(op_index_);
}

bool Lifter::is_output(int tensor) const {
  return std::find(p_.outputs.begin(), p_.outputs.end(), tensor) != p_.outputs.end();
}

const Value& Lifter::value(int t) const {
  if (t < 0) refuse("a required input is missing");
  const Value& v = values_[static_cast<size_t>(t)];
  if (v.node < 0) {
    refuse(tensor(t).is_constant() ? "input '" + tensor(t).name + "' is a constant where the graph needs an activation"
                                   : "input '" + tensor(t).name + "' is not produced by a lifted op");
  }
  return v;
}
Value& Lifter::value(int t) { return const_cast<Value&>(static_cast<const Lifter&>(*this).value(t)); }

std::string Lifter::node_name(int t) {
  std::string base = t >= 0 ? tensor(t).name : std::string();
  base = base.substr(0, base.find(';'));
  if (base.empty()) base = "op" + std::to_string(op_index_);
  return unique_name(base);
}

std::string Lifter::unique_name(const std::string& base) {
  std::string name = base;
  for (int k = 1; std::find(used_names_.begin(), used_names_.end(), name) != used_names_.end(); ++k) {
    name = base + "#" + std::to_string(k);
  }
  used_names_.push_back(name);
  return name;
}

int Lifter::node_as_shape(int index, const Shape& shape, const std::string& origin) {
  const Node& src = node(index);
  if (src.shape == shape) return index;
  if (shape_size(src.shape) != shape_size(shape)) {
    refuse("cannot view " + shape_str(src.shape) + " as " + shape_str(shape));
  }
  Node r;
  r.kind = OpKind::Reshape;
  r.keras_class = "Reshape";
  r.name = unique_name(src.name + "/reshape");
  r.origin = origin.empty() ? op_origin() : origin;
  r.inputs = {index};
  r.target_shape = shape;
  r.shape = shape;
  g_.nodes.push_back(std::move(r));
  return static_cast<int>(g_.nodes.size() - 1);
}

int Lifter::as_shape(int t, const Shape& shape) {
  Value& v = value(t);
  if (v.padded()) refuse("PAD feeds an op other than CONV_2D");
  const int before = static_cast<int>(g_.nodes.size());
  const int idx = node_as_shape(v.node, shape, v.pending_origin.empty() ? op_origin() : v.pending_origin);
  if (idx >= before) v.pending_origin.clear();  // the Reshape node recorded the layout ops
  return idx;
}

int Lifter::add_node(Node n, const std::vector<int>& input_tensors) {
  std::string origin;
  for (int t : input_tensors) {
    Value& v = values_[static_cast<size_t>(t)];
    if (!v.pending_origin.empty()) origin += v.pending_origin + " + ";
  }
  n.origin = origin + op_origin();
  if (n.keras_class.empty()) n.keras_class = op_name(n.kind);
  g_.nodes.push_back(std::move(n));
  return static_cast<int>(g_.nodes.size() - 1);
}

void Lifter::set_value(int t, Value v) {
  if (t < 0) refuse("an output is missing");
  if (tensor(t).type != tfl::DType::F32) refuse("output '" + tensor(t).name + "' is not float32");
  if (!v.padded() && shape_size(node(v.node).shape) != tfl::element_count(tensor(t).shape)) {
    refuse("output '" + tensor(t).name + "' has " + std::to_string(tfl::element_count(tensor(t).shape)) +
           " elements but the lifted node has shape " + shape_str(node(v.node).shape));
  }
  values_[static_cast<size_t>(t)] = std::move(v);
}

std::vector<float> Lifter::constant_f32(int t, const char* what) const {
  if (t < 0) refuse(std::string(what) + " is missing");
  const tfl::Tensor& x = tensor(t);
  if (!x.is_constant() || x.is_variable) refuse(std::string(what) + " '" + x.name + "' is not a constant");
  if (x.type != tfl::DType::F32) {
    refuse(std::string(what) + " '" + x.name + "' is " + tfl::dtype_name(x.type) + ", not float32");
  }
  std::vector<float> out(x.data.size() / sizeof(float));
  std::memcpy(out.data(), x.data.data(), out.size() * sizeof(float));
  return out;
}

ActivationSpec Lifter::fused(tfl::FusedActivation a) const {
  ActivationSpec s;
  if (!tfl::graph_activation(a, &s)) {
    refuse(std::string("fused activation ") +
           (a == tfl::FusedActivation::ReluN1To1 ? "RELU_N1_TO_1" : "SIGN_BIT") + " has no graph activation");
  }
  return s;
}

int Lifter::apply_activation(int index, const ActivationSpec& a) {
  if (a.kind == ActKind::Linear) return index;
  Node n;
  n.kind = OpKind::Activation;
  n.keras_class = "Activation";
  n.name = unique_name(node(index).name + "/activation");
  n.activation = a;
  n.inputs = {index};
  n.shape = node(index).shape;
  n.origin = op_origin();
  g_.nodes.push_back(std::move(n));
  return static_cast<int>(g_.nodes.size() - 1);
}

void Lifter::add_inputs() {
  for (int t : p_.inputs) {
    const tfl::Tensor& x = tensor(t);
    if (x.type != tfl::DType::F32) refuse("input '" + x.name + "' is " + tfl::dtype_name(x.type) + ", not float32");
    if (x.shape.size() < 2 || x.shape[0] != 1) {
      refuse("input '" + x.name + "' has shape " + shape_str(Shape(x.shape.begin(), x.shape.end())) +
             "; the graph engine needs [1, ...] (batch 1) with at least one feature axis");
    }
    Node n;
    n.kind = OpKind::Input;
    n.keras_class = "InputLayer";
    n.name = x.name;
    used_names_.push_back(n.name);
    n.shape = unbatched(x.shape);
    g_.inputs.push_back(static_cast<int>(g_.nodes.size()));
    values_[static_cast<size_t>(t)].node = static_cast<int>(g_.nodes.size());
    g_.nodes.push_back(std::move(n));
  }
}

void Lifter::add_outputs() {
  for (int t : p_.outputs) {
    const tfl::Tensor& x = tensor(t);
    if (x.shape.empty() || x.shape[0] != 1) refuse("output '" + x.name + "' is not batch 1");
    const Value& v = value(t);
    if (v.padded()) refuse("output '" + x.name + "' is a PAD result");
    g_.outputs.push_back(node_as_shape(v.node, unbatched(x.shape), v.pending_origin));
    g_.output_names.push_back(x.name);
  }
}

// The lift's own shape bookkeeping against the graph's shape inference: a node whose inferred
// shape differs from the one recorded would mean a mapping error, so it refuses rather than risk it.
void Lifter::check_shapes() const {
  Graph copy = g_;
  try {
    infer_shapes(copy);
  } catch (const Error& e) {
    throw NotLiftable{std::string("the lifted graph does not validate: ") + e.what()};
  }
  for (size_t i = 0; i < copy.nodes.size(); ++i) {
    if (copy.nodes[i].shape != g_.nodes[i].shape) {
      throw NotLiftable{"node '" + g_.nodes[i].name + "' (" + g_.nodes[i].origin + ") infers shape " +
                        shape_str(copy.nodes[i].shape) + ", not the expected " + shape_str(g_.nodes[i].shape)};
    }
  }
}

void Lifter::lift_op() {
  const tfl::Op& o = op();
  if (lifted_[static_cast<size_t>(op_index_)]) return;
  // Folded at load (tflite/rewrite/program_rewrite.hpp): its outputs are constants read as operands.
  bool folded = !o.outputs.empty();
  for (int t : o.outputs) folded = folded && t >= 0 && tensor(t).is_constant();
  if (folded) return;
  if (o.precision != tfl::Precision::F32) {
    refuse(std::string(tfl::precision_name(o.precision)) + " ops stay on the interpreter (bit-exact with TFLite)");
  }
  if (!o.intermediates.empty()) refuse("has intermediates (an integer LSTM form)");
  for (int t : o.inputs) {
    if (t >= 0 && !tensor(t).is_constant() && tensor(t).type != tfl::DType::F32) {
      refuse("input '" + tensor(t).name + "' is " + tfl::dtype_name(tensor(t).type) + ", not float32");
    }
  }
  using C = tfl::OpCode;
  switch (o.code) {
    case C::FullyConnected: return lift_fully_connected(*this);
    case C::Logistic: case C::Tanh: case C::Relu: case C::Relu6: case C::LeakyRelu: case C::Elu:
    case C::Gelu: case C::HardSwish: case C::Softmax: return lift_activation(*this);
    case C::Add: case C::Sub: case C::Mul: return lift_binary(*this);
    case C::Concatenation: return lift_concatenation(*this);
    case C::Reshape: case C::ExpandDims: case C::Squeeze: return lift_layout(*this);
    case C::Pad: return lift_pad(*this);
    case C::Conv2D: return lift_conv2d(*this);
    case C::MaxPool2D: case C::AveragePool2D: return lift_pool2d(*this);
    case C::Mean: return lift_mean(*this);
    case C::SequenceLstm: return lift_sequence_lstm(*this);
    case C::StridedSlice: return lift_strided_slice(*this);
    case C::While: return lift_loop(*this);
    case C::Transpose: return lift_transpose(*this);
    case C::ReverseV2: return lift_reverse(*this);
    case C::BatchMatMul: return lift_batch_matmul(*this);
    case C::SelectV2: return lift_select(*this);
    default: refuse("has no graph equivalent");
  }
}

Graph Lifter::run() {
  add_inputs();
  for (op_index_ = 0; op_index_ < static_cast<int>(p_.ops.size()); ++op_index_) lift_op();
  op_index_ = -1;
  add_outputs();
  check_shapes();
  fuse_attention(g_);  // a product left outside attention (a Luong attention's) runs as its own MatMul step
  return std::move(g_);
}

}  // namespace lift

TfliteLift lift_tflite_program(const tfl::Program& program) {
  TfliteLift out;
  try {
    out.graph = lift::Lifter(program).run();
  } catch (const lift::NotLiftable& e) {
    out.refusal = e.why;
  }
  return out;
}

TfliteEngine parse_tflite_engine(const std::string& name) {
  if (name == "auto") return TfliteEngine::Auto;
  if (name == "interpreter") return TfliteEngine::Interpreter;
  if (name == "graph") return TfliteEngine::Graph;
  throw Error("TFLite engine '" + name + "' is not one of auto, interpreter, graph");
}

const char* tflite_engine_name(TfliteEngine engine) {
  switch (engine) {
    case TfliteEngine::Auto: return "auto";
    case TfliteEngine::Interpreter: return "interpreter";
    case TfliteEngine::Graph: return "graph";
  }
  return "?";
}

}  // namespace tickinfer::formats
