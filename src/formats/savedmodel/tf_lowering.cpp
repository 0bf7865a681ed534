#include "formats/savedmodel/tf_lowering.hpp"

#include <algorithm>

#include "formats/savedmodel/tf_attr.hpp"
#include "formats/savedmodel/tf_eval.hpp"
#include "formats/savedmodel/tf_frame.hpp"
#include "tensorflow/core/framework/graph.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

constexpr int kMaxDepth = 100000;  // nested references / calls (the lowering runs on a 1 GiB stack)

// Flat output index offsets of the output args after the first, for ops with several output args.
int output_arg_offset(const std::string& op, const std::string& arg) {
  if (op == "FusedBatchNormV3" || op == "FusedBatchNorm") {
    static const char* const names[] = {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2", "reserve_space_3"};
    for (int i = 0; i < 6; ++i) if (arg == names[i]) return i;
  }
  return 0;
}

}  // namespace

TfRef parse_tf_ref(const std::string& ref, const std::string& op_of_node) {
  TfRef r;
  std::string s = ref;
  if (!s.empty() && s[0] == '^') {
    r.control = true;
    s = s.substr(1);
  }
  const size_t a = s.find(':');
  if (a == std::string::npos) {
    r.node = s;
    return r;
  }
  r.node = s.substr(0, a);
  const size_t b = s.find(':', a + 1);
  auto to_int = [&](const std::string& t) {
    if (t.empty() || t.size() > 6 || !std::all_of(t.begin(), t.end(), ::isdigit)) throw Error("bad tensor reference '" + ref + "'");
    return std::stoi(t);
  };
  if (b == std::string::npos) {
    r.index = to_int(s.substr(a + 1));
  } else {
    r.index = to_int(s.substr(b + 1)) + output_arg_offset(op_of_node, s.substr(a + 1, b - a - 1));
  }
  return r;
}

TfLowering::TfLowering(const tensorflow::GraphDef& graph, std::string label) : graph_def_(graph), label_(std::move(label)) {
  for (const auto& f : graph.library().function()) functions_[f.signature().name()] = &f;
  graph_.source_format = "savedmodel";
}

TfLowering::~TfLowering() = default;

int TfLowering::add_node(Node node) {
  std::string name = node.name;
  for (int k = 1; node_names_.count(name); ++k) name = node.name + "#" + std::to_string(k);
  node.name = name;
  node_names_.insert(name);
  graph_.nodes.push_back(std::move(node));
  return static_cast<int>(graph_.nodes.size()) - 1;
}

TfValue TfLowering::node_value(int node, std::vector<int64_t> shape, const std::string& origin) {
  TfValue v;
  v.kind = TfValue::Kind::Node;
  v.node = node;
  v.shape = std::move(shape);
  v.fresh = true;
  v.origin = origin;
  return v;
}

TfValue TfLowering::add_input(const std::string& name, const std::vector<int64_t>& tf_shape) {
  Node n;
  n.name = name;
  n.keras_class = "InputLayer";
  n.kind = OpKind::Input;
  n.origin = "Placeholder '" + name + "'";
  std::vector<int64_t> shape = tf_shape;
  if (shape.empty()) throw Error(label_ + ": signature input '" + name + "' is a scalar (a batch dimension is required)");
  shape[0] = 1;
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i] == 0 || shape[i] < -1 || shape[i] > (int64_t{1} << 24) || shape[i] == kUnknownDim) {
      throw Error(label_ + ": signature input '" + name + "' has dimension " + std::to_string(shape[i]));
    }
    if (shape[i] == -1) shape[i] = kUnknownDim;
    n.shape.push_back(graph_dim(shape[i]));
  }
  const int idx = add_node(std::move(n));
  graph_.inputs.push_back(idx);
  TfValue v = node_value(idx, shape, "");
  v.fresh = false;
  return v;
}

int TfLowering::materialize(const TfValue& v, const std::string& where) {
  if (v.kind == TfValue::Kind::List) return materialize(rnn_final_state(v, where), where);
  if (v.kind == TfValue::Kind::Norm) return finish_norm(v, where);
  if (v.kind == TfValue::Kind::Expr) return materialize(fit_expr(v, where), where);
  if (v.kind != TfValue::Kind::Node) throw Error(where + ": expects a computed tensor here, not a constant or variable");
  if (v.pad_left || v.pad_right || v.block != 1 || v.conv >= 0 || v.block2[0] != 1 || v.block2[1] != 1 || v.conv2 >= 0) {
    throw Error(where + ": a padded / space-to-batch tensor is used other than by a Conv2D (not supported)");
  }
  if (v.shape.empty() || v.shape[0] != 1) throw Error(where + ": tensor of shape " + tf_shape_str(v.shape) + " is not batch-major");
  Shape want;
  for (size_t i = 1; i < v.shape.size(); ++i) want.push_back(graph_dim(v.shape[i]));
  const Node& src = graph_.nodes[static_cast<size_t>(v.node)];
  if (src.shape == want) return v.node;
  if (shape_size(src.shape) != shape_size(want) && shape_size(src.shape) >= 0 && shape_size(want) >= 0) {
    throw Error(where + ": internal shape mismatch " + shape_str(src.shape) + " vs " + tf_shape_str(v.shape));
  }
  Node r;
  r.name = src.name + "/reshape";
  r.keras_class = "Reshape";
  r.kind = want.size() == 1 ? OpKind::Flatten : OpKind::Reshape;
  r.origin = "Reshape";
  r.target_shape = want;
  r.shape = want;
  r.inputs = {v.node};
  return add_node(std::move(r));
}

bool TfLowering::single_use(const Op& op, size_t input) const {
  int data_index = 0;
  for (const std::string& ref : op.def.input()) {
    if (!ref.empty() && ref[0] == '^') continue;
    if (static_cast<size_t>(data_index++) != input) continue;
    const std::string node = ref.substr(0, ref.find(':'));
    auto it = op.frame.uses.find(node);
    return it != op.frame.uses.end() && it->second == 1;
  }
  return false;
}

TfFrame& TfLowering::call(const std::string& fn, const std::vector<TfValue>& args, int depth) {
  auto it = functions_.find(fn);
  if (it == functions_.end()) throw Error(label_ + ": function '" + fn + "' is not in the function library");
  if (depth > kMaxDepth) throw Error(label_ + ": function '" + fn + "': calls nested too deeply");
  const tensorflow::FunctionDef& f = *it->second;
  if (static_cast<int>(args.size()) != f.signature().input_arg_size()) {
    throw Error(label_ + ": function '" + fn + "' takes " + std::to_string(f.signature().input_arg_size()) + " arguments, called with " +
                std::to_string(args.size()));
  }
  frames_.push_back(std::make_unique<TfFrame>());
  TfFrame& frame = *frames_.back();
  frame.function = fn;
  frame.def = &f;
  for (int i = 0; i < f.signature().input_arg_size(); ++i) frame.args[f.signature().input_arg(i).name()] = i;
  frame.arg_values = args;
  for (const auto& n : f.node_def()) frame.nodes[n.name()] = &n;
  auto count = [&](const std::string& ref) {
    if (!ref.empty() && ref[0] != '^') ++frame.uses[ref.substr(0, ref.find(':'))];
  };
  for (const auto& n : f.node_def()) for (const auto& in : n.input()) count(in);
  for (const auto& [k, ref] : f.ret()) count(ref);
  return frame;
}

int TfLowering::result_count(const TfFrame& callee) const { return callee.def->signature().output_arg_size(); }

TfValue TfLowering::result(TfFrame& callee, int index, int depth) {
  if (auto r = callee.results.find(index); r != callee.results.end()) return r->second;
  const auto& sig = callee.def->signature();
  if (index < 0 || index >= sig.output_arg_size()) {
    throw Error(label_ + ": function '" + callee.function + "' has no output " + std::to_string(index));
  }
  auto r = callee.def->ret().find(sig.output_arg(index).name());
  if (r == callee.def->ret().end()) {
    throw Error(label_ + ": function '" + callee.function + "': output '" + sig.output_arg(index).name() + "' has no return value");
  }
  TfValue v = value_of(callee, r->second, depth + 1);
  callee.results[index] = v;
  return v;
}

TfValue TfLowering::value_of(TfFrame& frame, const std::string& ref, int depth) {
  const size_t start = !ref.empty() && ref[0] == '^' ? 1 : 0;
  const size_t colon = ref.find(':');
  const std::string node_name = ref.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
  if (frame.args.count(node_name) && colon == std::string::npos) {
    return frame.arg_values[static_cast<size_t>(frame.args[node_name])];
  }
  auto it = frame.nodes.find(node_name);
  if (it == frame.nodes.end()) {
    throw Error(label_ + ": function '" + frame.function + "': input '" + ref + "' names no node or argument");
  }
  TfRef r;
  try {
    r = parse_tf_ref(ref, it->second->op());
  } catch (const Error& e) {
    throw Error(label_ + ": function '" + frame.function + "': " + e.what());
  }
  const std::string& op_type = it->second->op();
  if (op_type == "StatefulPartitionedCall" || op_type == "PartitionedCall") {
    auto c = frame.callees.find(node_name);
    if (c == frame.callees.end()) {
      eval_node(frame, node_name, depth + 1);
      c = frame.callees.find(node_name);
    }
    return result(*c->second, r.index, depth + 1);
  }
  const std::vector<TfValue>& outs = eval_node(frame, node_name, depth + 1);
  if (r.index < 0 || static_cast<size_t>(r.index) >= outs.size()) {
    throw Error(label_ + ": function '" + frame.function + "': node '" + node_name + "' (" + it->second->op() + ") has no output " +
                std::to_string(r.index));
  }
  return outs[static_cast<size_t>(r.index)];
}

std::vector<TfValue> TfLowering::eval_node(TfFrame& frame, const std::string& name, int depth) {
  if (auto d = frame.done.find(name); d != frame.done.end()) return d->second;
  const tensorflow::NodeDef& def = *frame.nodes.at(name);
  const std::string where = label_ + ": function '" + frame.function + "': node '" + name + "' (" + def.op() + ")";
  if (depth > kMaxDepth) throw Error(where + ": the graph is nested too deeply");
  if (frame.busy[name]) throw Error(where + ": the graph has a cycle");
  frame.busy[name] = true;
  Op op{frame, def, {}, where, depth};
  for (const std::string& ref : def.input()) {
    if (ref.empty() || ref[0] == '^') continue;
    op.in.push_back(value_of(frame, ref, depth + 1));
    TfValue& v = op.in.back();
    if (v.kind == TfValue::Kind::List && v.rnn_output != 0) v = rnn_final_state(v, where);
  }
  std::vector<TfValue> out = lower(op);
  frame.busy[name] = false;
  return frame.done[name] = std::move(out);
}

std::vector<TfValue> TfLowering::lower(Op& op) {
  const std::string& t = op.def.op();
  if (t == "Const") {
    const auto* a = find_attr(op.def, "value");
    if (a == nullptr || !a->has_tensor()) throw Error(op.where + ": Const without a value");
    TfValue v;
    v.tensor = tf_tensor_from_proto(a->tensor(), op.where);
    return {v};
  }
  if (t == "NoOp") return {};
  if (t == "ReadVariableOp") {
    if (op.in.size() != 1 || op.in[0].kind != TfValue::Kind::Resource) throw Error(op.where + ": reads something other than a variable");
    TfValue v;
    v.tensor = op.in[0].tensor;
    assigned_before_read(op, v.tensor);
    return {v};
  }
  if (t == "StatefulPartitionedCall" || t == "PartitionedCall") {
    const std::string f = attr_func(op.def, "f");
    if (f.empty()) throw Error(op.where + ": call without a function attr 'f'");
    TfFrame& callee = call(f, op.in, op.depth + 1);
    callee.caller = &op.frame;
    callee.call_node = op.def.name();
    op.frame.callees[op.def.name()] = &callee;
    return {};
  }
  if (t == "While" || t == "StatelessWhile") return lower_while(op);
  if (t.rfind("TensorList", 0) == 0) return lower_list_op(op);
  if (t == "IdentityN") {
    for (TfValue& v : op.in) v.fresh = false;
    return op.in;
  }
  if (t == "ParseExampleV2" || t == "ParseExample") return lower_parse_example(op);
  if (std::any_of(op.in.begin(), op.in.end(), [](const TfValue& v) {
        return v.kind == TfValue::Kind::Examples || (v.kind == TfValue::Kind::Const && v.tensor.dtype == kTfString);
      })) {
    return lower_string_op(op);
  }
  const bool all_const = std::all_of(op.in.begin(), op.in.end(), [](const TfValue& v) { return v.kind == TfValue::Kind::Const; });
  if (all_const && tf_op_is_foldable(t)) {
    std::vector<TfTensor> in;
    for (const TfValue& v : op.in) in.push_back(v.tensor);
    std::vector<TfValue> out;
    for (TfTensor& r : eval_tf_op(op.def, in, op.where)) {
      TfValue v;
      v.tensor = std::move(r);
      out.push_back(std::move(v));
    }
    return out;
  }
  std::vector<TfValue> norm;
  if (lower_norm(op, norm)) return norm;
  if (lower_expr(op, norm)) return norm;
  if (t == "Identity" || t == "StopGradient" || t == "Snapshot" || t == "PreventGradient") {
    if (op.in.size() != 1) throw Error(op.where + ": expects one input");
    TfValue v = op.in[0];
    v.fresh = sole_user(op, v);
    return {v};
  }
  if (t == "MatMul") return lower_matmul(op);
  if (t == "BatchMatMulV2" || t == "BatchMatMulV3" || t == "BatchMatMul") return lower_batch_matmul(op);
  if (t == "Einsum") return lower_einsum(op);
  if (t == "SelectV2" || t == "Select") return lower_select(op);
  if (t == "Reshape" || t == "ExpandDims" || t == "Squeeze" || t == "Transpose" || t == "Shape" || t == "StridedSlice" || t == "Cast") {
    return lower_shape_op(op);
  }
  if (t == "ConcatV2") return lower_concat(op);
  if (t == "ReverseV2") return lower_reverse(op);
  if (t == "Mean" || t == "Max") return lower_reduce(op);
  if (t == "SpaceToBatchND" && !op.in.empty() && op.in[0].shape.size() == 4) return lower_space_to_batch2d(op);
  if (t == "BatchToSpaceND" && !op.in.empty() && op.in[0].conv2 >= 0) return lower_batch_to_space2d(op);
  if (t == "Pad" || t == "SpaceToBatchND") return lower_conv_input(op);
  if ((t == "Conv2D" || t == "DepthwiseConv2dNative" || t == "MaxPool" || t == "AvgPool") && is_conv2d_form(op)) {
    return t == "Conv2D" || t == "DepthwiseConv2dNative" ? lower_conv2d_nhwc(op) : lower_pool2d_nhwc(op);
  }
  if (t == "Conv2D") return lower_conv2d(op);
  if (t == "BatchToSpaceND") return lower_batch_to_space(op);
  if (t == "MaxPool" || t == "AvgPool") return lower_pool(op);
  if (t == "FusedBatchNormV3" || t == "FusedBatchNorm") return lower_fused_batch_norm(op);
  if (op.in.size() >= 2) return lower_binary(op);
  return lower_elementwise(op);
}

}  // namespace tickinfer::formats
