// Lowering of the elementwise, Dense, shape and merge ops (see tf_lowering.hpp).
#include <algorithm>
#include <cmath>
#include <map>

#include "formats/savedmodel/tf_attr.hpp"
#include "formats/savedmodel/tf_eval.hpp"
#include "formats/savedmodel/tf_frame.hpp"
#include "formats/savedmodel/tf_lowering.hpp"
#include "tensorflow/core/framework/node_def.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

bool is_const(const TfValue& v) { return v.kind == TfValue::Kind::Const; }
bool is_node(const TfValue& v) { return v.kind == TfValue::Kind::Node; }

// A constant that varies at most along the last axis of `x`, as one value per channel.
std::vector<float> per_channel(const TfTensor& c, const TfValue& x, const std::string& where) {
  const int64_t channels = x.shape.empty() ? 1 : x.shape.back();
  if (c.shape.size() > x.shape.size()) throw Error(where + ": constant of rank " + std::to_string(c.shape.size()) + " exceeds the tensor's");
  for (size_t i = 0; i + 1 < c.shape.size(); ++i) {
    if (c.shape[i] != 1) throw Error(where + ": constant " + tf_shape_str(c.shape) + " varies along an axis other than the last (not supported)");
  }
  const int64_t n = c.shape.empty() ? 1 : c.shape.back();
  if (n != 1 && n != channels) throw Error(where + ": constant " + tf_shape_str(c.shape) + " does not match tensor " + tf_shape_str(x.shape));
  std::vector<float> out(static_cast<size_t>(channels));
  for (int64_t i = 0; i < channels; ++i) out[static_cast<size_t>(i)] = static_cast<float>(c.values[static_cast<size_t>(n == 1 ? 0 : i)]);
  return out;
}

TfTensor filled(size_t n, double v) {
  TfTensor t;
  t.shape = {static_cast<int64_t>(n)};
  t.values.assign(n, v);
  return t;
}

bool varies_along_last_axis_only(const TfTensor& c) {
  return c.shape.size() < 2 || std::all_of(c.shape.begin(), c.shape.end() - 1, [](int64_t d) { return d == 1; });
}

bool all_equal(const TfTensor& t, double v) {
  return std::all_of(t.values.begin(), t.values.end(), [v](double x) { return x == v; });
}

const std::map<std::string, ActivationSpec>& activation_ops() {
  static const std::map<std::string, ActivationSpec> ops = [] {
    std::map<std::string, ActivationSpec> m;
    auto add = [&](const char* name, ActKind k) { m[name].kind = k; };
    add("Relu", ActKind::Relu);
    add("Sigmoid", ActKind::Sigmoid);
    add("Tanh", ActKind::Tanh);
    add("Softmax", ActKind::Softmax);
    add("Selu", ActKind::Selu);
    add("Softplus", ActKind::Softplus);
    add("Softsign", ActKind::Softsign);
    add("Exp", ActKind::Exponential);
    add("Relu6", ActKind::Relu);
    m["Relu6"].max_value = 6.0f;
    add("Elu", ActKind::Elu);
    m["Elu"].alpha = 1.0f;
    return m;
  }();
  return ops;
}

// Node kinds whose weights[1] is a bias and that apply their own activation.
bool has_bias_and_activation(OpKind k) {
  return k == OpKind::Dense || k == OpKind::Conv1D || k == OpKind::Conv2D || k == OpKind::DepthwiseConv2D;
}

}  // namespace

bool TfLowering::sole_user(const Op& op, const TfValue& x) const {
  if (!x.fresh) return false;
  for (size_t i = 0; i < op.in.size(); ++i) {
    if (op.in[i].kind == TfValue::Kind::Node && op.in[i].node == x.node) return single_use(op, i);
  }
  return false;
}

TfValue TfLowering::apply_activation(const Op& op, const TfValue& x, ActivationSpec act) {
  if (!is_node(x)) throw Error(op.where + ": activation of a non-tensor value");
  Node& src = graph_.nodes[static_cast<size_t>(x.node)];
  const bool foldable = has_bias_and_activation(src.kind) && src.activation.kind == ActKind::Linear;
  if (sole_user(op, x) && foldable && !(act.kind == ActKind::Softmax && x.shape.back() != src.shape.back())) {
    src.activation = act;
    src.origin += "+" + op.def.op();
    TfValue v = x;
    return v;
  }
  const int in = materialize(x, op.where);
  Node n;
  n.name = op.def.name();
  n.keras_class = "Activation";
  n.kind = OpKind::Activation;
  n.activation = act;
  n.origin = op.def.op() + " '" + op.def.name() + "'";
  n.inputs = {in};
  n.shape = graph_.nodes[static_cast<size_t>(in)].shape;
  return node_value(add_node(std::move(n)), x.shape, "");
}

TfValue TfLowering::add_channel_affine(const Op& op, const TfValue& x, const TfTensor& scale, const TfTensor& shift) {
  const std::vector<float> a = per_channel(scale, x, op.where), b = per_channel(shift, x, op.where);
  Node& src = graph_.nodes[static_cast<size_t>(x.node)];
  const bool is_affine = src.kind == OpKind::BatchNorm && src.keras_class == "affine";
  if (sole_user(op, x) && is_affine && src.weights[0].data.size() == a.size()) {
    for (size_t i = 0; i < a.size(); ++i) {
      src.weights[0].data[i] *= a[i];
      src.weights[1].data[i] = src.weights[1].data[i] * a[i] + b[i];
    }
    src.origin += "+" + op.def.op();
    return x;
  }
  const bool dense_like = has_bias_and_activation(src.kind) && src.activation.kind == ActKind::Linear;
  const bool unit_scale = std::all_of(a.begin(), a.end(), [](float v) { return v == 1.0f; });
  if (sole_user(op, x) && dense_like && unit_scale && src.weights[1].data.size() == b.size()) {
    for (size_t i = 0; i < b.size(); ++i) src.weights[1].data[i] += b[i];
    src.origin += "+" + op.def.op();
    return x;
  }
  const int in = materialize(x, op.where);
  const Shape in_shape = graph_.nodes[static_cast<size_t>(in)].shape;
  if (in_shape.empty() || in_shape.back() != static_cast<int>(a.size())) throw Error(op.where + ": per-channel constant does not match the last axis");
  Node n;
  n.name = op.def.name();
  n.keras_class = "affine";  // y = x * gamma + beta: a BatchNorm with mean 0, variance 1, epsilon 0
  n.kind = OpKind::BatchNorm;
  n.epsilon = 0.0f;
  n.origin = op.def.op() + " '" + op.def.name() + "'";
  const int c = static_cast<int>(a.size());
  n.weights = {Weight{{c}, a}, Weight{{c}, b}, Weight{{c}, std::vector<float>(a.size(), 0.0f)}, Weight{{c}, std::vector<float>(a.size(), 1.0f)}};
  n.inputs = {in};
  n.shape = in_shape;
  return node_value(add_node(std::move(n)), x.shape, "");
}

std::vector<TfValue> TfLowering::lower_elementwise(Op& op) {
  const std::string& t = op.def.op();
  if (op.in.size() != 1) throw Error(op.where + ": op " + t + " is not supported");
  const TfValue& x = op.in[0];
  if (auto a = activation_ops().find(t); a != activation_ops().end()) return {apply_activation(op, x, a->second)};
  if (t == "LeakyRelu") {
    ActivationSpec s;
    s.kind = ActKind::LeakyRelu;
    s.alpha = attr_float(op.def, "alpha", 0.2f);
    return {apply_activation(op, x, s)};
  }
  if (t == "Neg" && is_node(x)) return {add_channel_affine(op, x, filled(1, -1.0), filled(1, 0.0))};
  throw Error(op.where + ": op " + t + " is not supported on a computed tensor");
}

std::vector<TfValue> TfLowering::lower_binary(Op& op) {
  const std::string& t = op.def.op();
  const bool add = t == "Add" || t == "AddV2" || t == "BiasAdd", sub = t == "Sub", mul = t == "Mul", div = t == "RealDiv";
  if (t == "AddN" || (add && op.in.size() == 2 && is_node(op.in[0]) && is_node(op.in[1])) || ((sub || mul) && is_node(op.in[0]) && is_node(op.in[1]))) {
    std::vector<int> ins;
    for (const TfValue& v : op.in) {
      if (!is_node(v) && v.kind != TfValue::Kind::Norm) throw Error(op.where + ": mixes constants and tensors");
      if (v.shape != op.in[0].shape) throw Error(op.where + ": broadcasting between " + tf_shape_str(op.in[0].shape) + " and " + tf_shape_str(v.shape) + " is not supported");
      ins.push_back(materialize(v, op.where));
    }
    for (int k = 0; mul && k < 2; ++k) {  // x * sigmoid(x): swish / silu
      const Node& s = graph_.nodes[static_cast<size_t>(ins[static_cast<size_t>(1 - k)])];
      if (s.kind != OpKind::Activation || s.activation.kind != ActKind::Sigmoid || s.inputs != std::vector<int>{ins[static_cast<size_t>(k)]}) continue;
      Node n;
      n.name = op.def.name();
      n.keras_class = "Activation";
      n.kind = OpKind::Activation;
      n.activation.kind = ActKind::Swish;
      n.origin = "Sigmoid+Mul '" + op.def.name() + "'";
      n.inputs = {ins[static_cast<size_t>(k)]};
      n.shape = graph_.nodes[static_cast<size_t>(ins[static_cast<size_t>(k)])].shape;
      return {node_value(add_node(std::move(n)), op.in[0].shape, "")};
    }
    Node n;
    n.name = op.def.name();
    n.kind = (add || t == "AddN") ? OpKind::Add : sub ? OpKind::Subtract : OpKind::Multiply;
    n.keras_class = op_name(n.kind);
    n.origin = t + " '" + op.def.name() + "'";
    n.inputs = ins;
    n.shape = graph_.nodes[static_cast<size_t>(ins[0])].shape;
    return {node_value(add_node(std::move(n)), op.in[0].shape, "")};
  }
  if (op.in.size() != 2 || !(add || sub || mul || div)) throw Error(op.where + ": op " + t + " is not supported on a computed tensor");
  const bool x_first = is_node(op.in[0]);
  const TfValue& x = op.in[x_first ? 0 : 1];
  const TfValue& c = op.in[x_first ? 1 : 0];
  if (!is_node(x) || !is_const(c)) throw Error(op.where + ": op " + t + " on these operand kinds is not supported");
  if (tf_broadcast_shape(x.shape, c.tensor.shape, op.where) != x.shape) {
    throw Error(op.where + ": constant " + tf_shape_str(c.tensor.shape) + " broadcasts the tensor " + tf_shape_str(x.shape) + " to a larger shape");
  }
  if (((add || sub) && all_equal(c.tensor, 0.0)) || ((mul || div) && all_equal(c.tensor, 1.0))) {
    TfValue same = x;
    same.fresh = sole_user(op, x);
    return {same};
  }
  if (!varies_along_last_axis_only(c.tensor)) {
    // A table (a bias split into heads, a position table): an Add or Multiply by a Constant node.
    if (div && !x_first) throw Error(op.where + ": constant / tensor is not supported");
    TfTensor table = c.tensor;
    for (double& v : table.values) v = (sub && x_first) ? -v : div ? 1.0 / v : v;
    const TfValue base = sub && !x_first ? add_channel_affine(op, x, filled(1, -1.0), filled(1, 0.0)) : x;
    return {add_constant_operand(op, base, table, (mul || div) ? OpKind::Multiply : OpKind::Add)};
  }
  TfTensor scale = filled(1, 1.0), shift = filled(1, 0.0);
  if (add) shift = c.tensor;
  if (sub && x_first) {
    shift = c.tensor;
    for (double& v : shift.values) v = -v;
  }
  if (sub && !x_first) scale = filled(1, -1.0), shift = c.tensor;
  if (mul) scale = c.tensor;
  if (div) {
    if (!x_first) throw Error(op.where + ": constant / tensor is not supported");
    scale = c.tensor;
    for (double& v : scale.values) v = 1.0 / v;
  }
  // The ops are applied in TF's order: x * scale, then + shift. A shift with scale 1 becomes a
  // Dense / Conv1D bias where it directly follows one.
  if (sub && !x_first) {
    TfValue neg = add_channel_affine(op, x, scale, filled(1, 0.0));
    op.in[1] = neg;
    op.in[1].fresh = true;
    return {add_channel_affine(op, neg, filled(1, 1.0), shift)};
  }
  return {add_channel_affine(op, x, scale, shift)};
}

std::vector<TfValue> TfLowering::lower_matmul(Op& op) {
  if (op.in.size() != 2 || !is_node(op.in[0]) || !is_const(op.in[1])) throw Error(op.where + ": only tensor x constant-matrix products are supported");
  if (attr_bool(op.def, "transpose_a", false)) throw Error(op.where + ": transpose_a is not supported");
  const TfValue& x = op.in[0];
  TfTensor w = op.in[1].tensor;
  if (w.shape.size() != 2 || x.shape.size() != 2) throw Error(op.where + ": MatMul operands must be matrices");
  if (attr_bool(op.def, "transpose_b", false)) w = tf_transpose_matrix(w, op.where);
  return {add_dense(op, x, w, "MatMul '" + op.def.name() + "'")};
}

TfValue TfLowering::add_dense(const Op& op, const TfValue& x, const TfTensor& w, const std::string& origin) {
  if (w.shape.size() != 2) throw Error(op.where + ": the kernel " + tf_shape_str(w.shape) + " is not a matrix");
  const int64_t in = w.shape[0], units = w.shape[1];
  if (x.shape.size() < 2 || x.shape.back() != in) {
    throw Error(op.where + ": input has " + std::to_string(x.shape.empty() ? 0 : x.shape.back()) + " features, kernel " + tf_shape_str(w.shape));
  }
  // The node applies the kernel to rows of its input's last axis; a node whose last axis is not
  // the contracted one is reshaped first (its rows are then the TF tensor's rows).
  int src = x.node;
  if (graph_.nodes[static_cast<size_t>(src)].shape.empty() || graph_.nodes[static_cast<size_t>(src)].shape.back() != in) {
    if (x.shape[0] != 1) throw Error(op.where + ": rows of the product do not follow the input's last axis");
    src = materialize(x, op.where);
  }
  Node n;
  n.name = op.def.name();
  n.keras_class = "Dense";
  n.kind = OpKind::Dense;
  n.units = static_cast<int>(units);
  n.origin = origin;
  std::vector<float> k(w.values.begin(), w.values.end());
  n.weights = {Weight{{static_cast<int>(in), static_cast<int>(units)}, std::move(k)}, Weight{{static_cast<int>(units)}, std::vector<float>(static_cast<size_t>(units), 0.0f)}};
  n.inputs = {src};
  n.shape = graph_.nodes[static_cast<size_t>(src)].shape;
  n.shape.back() = static_cast<int>(units);
  std::vector<int64_t> shape = x.shape;
  shape.back() = units;
  return node_value(add_node(std::move(n)), shape, "");
}

std::vector<TfValue> TfLowering::lower_shape_op(Op& op) {
  const std::string& t = op.def.op();
  TfValue x = op.in.at(0);
  if (x.kind == TfValue::Kind::List) return lower_list_op(op);
  if (!is_node(x)) throw Error(op.where + ": op " + t + " on a non-tensor value is not supported");
  if (t == "Cast") {
    if (attr_int(op.def, "DstT", kTfFloat) != kTfFloat) throw Error(op.where + ": cast of a tensor to " + std::string(tf_dtype_name(static_cast<int>(attr_int(op.def, "DstT", 0)))));
    x.fresh = sole_user(op, x);
    return {x};
  }
  if (t == "Shape") {
    for (int64_t d : x.shape) if (d < 0) throw Error(op.where + ": shape " + tf_shape_str(x.shape) + " is not fully known");
    TfValue v;
    v.tensor.dtype = static_cast<int>(attr_int(op.def, "out_type", kTfInt32));
    v.tensor.shape = {static_cast<int64_t>(x.shape.size())};
    for (int64_t d : x.shape) v.tensor.values.push_back(static_cast<double>(d));
    return {v};
  }
  if (t == "StridedSlice") throw Error(op.where + ": slicing a computed tensor is not supported");
  // The rest only relabel the shape of row-major data: evaluate them on a shape-only stand-in.
  TfTensor stand_in;
  stand_in.shape = x.shape;
  const int64_t n = tf_element_count(x.shape);
  if (n < 0) throw Error(op.where + ": shape " + tf_shape_str(x.shape) + " is not fully known");
  if (t == "Transpose") return {permuted(op, x, const_ints(op.in.at(1), op.where, "perm"), op.def.name())};
  stand_in.values.resize(static_cast<size_t>(n));
  std::vector<TfTensor> in{stand_in};
  for (size_t i = 1; i < op.in.size(); ++i) {
    if (!is_const(op.in[i])) throw Error(op.where + ": shape operand is not a constant");
    in.push_back(op.in[i].tensor);
  }
  TfValue v = x;
  v.shape = eval_tf_op(op.def, in, op.where)[0].shape;
  v.fresh = x.fresh && single_use(op, 0);
  return {v};
}

std::vector<TfValue> TfLowering::lower_concat(Op& op) {
  if (op.in.size() < 3) throw Error(op.where + ": concatenation of fewer than two tensors");
  const TfValue& axis_v = op.in.back();
  if (!is_const(axis_v)) throw Error(op.where + ": axis is not a constant");
  const auto rank = static_cast<int64_t>(op.in[0].shape.size());
  int64_t axis = tf_to_int(axis_v.tensor.values.at(0));
  if (axis < 0) axis += rank;
  if (axis < 1 || axis >= rank) throw Error(op.where + ": concatenation along axis " + std::to_string(axis) + " (the batch axis or outside) is not supported");
  Node n;
  n.name = op.def.name();
  n.keras_class = "Concatenate";
  n.kind = OpKind::Concatenate;
  n.axis = static_cast<int>(axis);
  n.origin = "ConcatV2 '" + op.def.name() + "'";
  std::vector<int64_t> shape = op.in[0].shape;
  shape[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i + 1 < op.in.size(); ++i) {
    if (op.in[i].shape.size() != op.in[0].shape.size()) throw Error(op.where + ": operands differ in rank");
    n.inputs.push_back(materialize(op.in[i], op.where));
    shape[static_cast<size_t>(axis)] += op.in[i].shape[static_cast<size_t>(axis)];
  }
  for (size_t i = 1; i < shape.size(); ++i) n.shape.push_back(static_cast<int>(shape[i]));
  return {node_value(add_node(std::move(n)), shape, "")};
}

std::vector<TfValue> TfLowering::lower_reduce(Op& op) {
  const TfValue& x = op.in.at(0);
  if (!is_node(x) || op.in.size() != 2 || !is_const(op.in[1])) throw Error(op.where + ": reduction of this operand is not supported");
  const bool keep = attr_bool(op.def, "keep_dims", false);
  if (x.shape.size() != 3 || op.in[1].tensor.values.size() != 1 ||
      (op.in[1].tensor.values[0] != 1 && op.in[1].tensor.values[0] != -2)) {
    throw Error(op.where + ": only reductions over the time axis of a [batch, time, channels] tensor are supported (global pooling)");
  }
  Node n;
  n.name = op.def.name();
  n.kind = op.def.op() == "Mean" ? OpKind::GlobalAvgPool1D : OpKind::GlobalMaxPool1D;
  n.keras_class = n.kind == OpKind::GlobalAvgPool1D ? "GlobalAveragePooling1D" : "GlobalMaxPooling1D";
  n.keepdims = keep;
  n.origin = op.def.op() + " '" + op.def.name() + "'";
  n.inputs = {materialize(x, op.where)};
  n.shape = keep ? Shape{1, static_cast<int>(x.shape[2])} : Shape{static_cast<int>(x.shape[2])};
  std::vector<int64_t> shape = keep ? std::vector<int64_t>{1, 1, x.shape[2]} : std::vector<int64_t>{1, x.shape[2]};
  return {node_value(add_node(std::move(n)), shape, "")};
}

std::vector<TfValue> TfLowering::lower_fused_batch_norm(Op& op) {
  if (op.in.size() != 5 || !is_node(op.in[0])) throw Error(op.where + ": unexpected operands");
  for (size_t i = 1; i < 5; ++i) if (!is_const(op.in[i])) throw Error(op.where + ": scale, offset, mean and variance must be constants");
  if (attr_bool(op.def, "is_training", true)) throw Error(op.where + ": is_training=true (training-mode batch statistics) is not supported");
  if (attr_string(op.def, "data_format", "NHWC") != "NHWC") throw Error(op.where + ": data_format other than NHWC is not supported");
  const double eps = attr_float(op.def, "epsilon", 1e-4f);
  const TfTensor &g = op.in[1].tensor, &b = op.in[2].tensor, &m = op.in[3].tensor, &var = op.in[4].tensor;
  TfTensor scale = g, shift = b;
  for (size_t i = 0; i < scale.values.size(); ++i) {
    scale.values[i] = g.values[i] / std::sqrt(var.values.at(i) + eps);
    shift.values[i] = b.values.at(i) - m.values.at(i) * scale.values[i];
  }
  TfValue y = add_channel_affine(op, op.in[0], scale, shift);
  TfValue none;
  return {y, none, none, none, none, none};
}

}  // namespace tickinfer::formats
