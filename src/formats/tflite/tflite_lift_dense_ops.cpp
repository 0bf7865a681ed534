// Lift of the row-wise TFLite ops: FULLY_CONNECTED, the activations, ADD/SUB/MUL,
// CONCATENATION and the layout-only ops (RESHAPE, EXPAND_DIMS, SQUEEZE).
#include <algorithm>

#include "formats/tflite/tflite_lift_context.hpp"

namespace tickinfer::formats::lift {

namespace {

Shape squeezed(const tfl::Shape& s) {
  Shape out;
  for (int d : s) {
    if (d != 1) out.push_back(d);
  }
  return out;
}

// Whether the op's activation input `t` is the fresh output of a Dense or Conv1D node that no
// one else reads, so that a following activation or constant bias/scale can fold into it.
bool foldable_producer(Lifter& l, int t) {
  const Value& v = l.value(t);
  if (!v.own_output || v.padded() || l.consumers(t) != 1 || l.is_output(t)) return false;
  const Node& n = l.node(v.node);
  return (n.kind == OpKind::Dense || n.kind == OpKind::Conv1D) && n.activation.kind == ActKind::Linear;
}

// Records the op's output as the (modified) producer of input `t`.
void fold_into_producer(Lifter& l, int t, int out) {
  Value v = l.value(t);
  Node& n = l.node(v.node);
  n.origin += " + " + l.op_origin();
  l.set_value(out, v);
}

}  // namespace

void lift_fully_connected(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.size() < 2 || o.outputs.size() != 1) l.refuse("expects input, weights, optional bias and one output");
  const int in = o.inputs[0], wt = o.inputs[1], bt = o.inputs.size() > 2 ? o.inputs[2] : -1;
  const tfl::Tensor& w = l.tensor(wt);
  if (w.shape.size() != 2) l.refuse("weights are not [units, inputs]");
  const int N = w.shape[0], K = w.shape[1];
  const std::vector<float> wd = l.constant_f32(wt, "weights");
  std::vector<float> bias = bt >= 0 ? l.constant_f32(bt, "bias") : std::vector<float>(static_cast<size_t>(N), 0.0f);
  if (static_cast<int>(bias.size()) != N) l.refuse("bias does not have one value per unit");
  const int64_t elements = tfl::element_count(l.tensor(in).shape);
  if (K < 1 || N < 1 || elements % K != 0) l.refuse("input size is not a multiple of the weights' input width");

  Shape in_shape = l.node(l.value(in).node).shape;
  if (in_shape.empty() || in_shape.back() != K) {
    in_shape = elements == K ? Shape{K} : Shape{static_cast<int>(elements / K), K};
  }
  Node n;
  n.kind = OpKind::Dense;
  n.units = N;
  n.inputs = {l.as_shape(in, in_shape)};
  n.activation = l.fused(o.options.activation);
  Weight kernel{{K, N}, std::vector<float>(static_cast<size_t>(K) * N)};
  for (int u = 0; u < N; ++u) {
    for (int k = 0; k < K; ++k) kernel.data[static_cast<size_t>(k) * N + u] = wd[static_cast<size_t>(u) * K + k];
  }
  n.weights = {std::move(kernel), Weight{{N}, std::move(bias)}};
  n.shape = in_shape;
  n.shape.back() = N;
  n.name = l.node_name(o.outputs[0]);
  const int idx = l.add_node(std::move(n), {in});
  l.set_value(o.outputs[0], own_value(idx));
}

namespace {

// HARD_SWISH(x) = x * relu6(x + 3) / 6, which the graph has as x * hard_sigmoid(x) with Keras 3's
// slope 1/6 and offset 0.5 (clamp(x / 6 + 0.5, 0, 1)): an Activation and a Multiply node.
void lift_hard_swish(Lifter& l, int in, int out) {
  const Shape shape = l.node(l.value(in).node).shape;
  const int x = l.as_shape(in, shape);
  Node gate;
  gate.kind = OpKind::Activation;
  gate.keras_class = "Activation";
  gate.activation.kind = ActKind::HardSigmoid;
  gate.activation.alpha = 1.0f / 6.0f;
  gate.activation.beta = 0.5f;
  gate.inputs = {x};
  gate.shape = shape;
  const std::string name = l.node_name(out);
  gate.name = l.unique_name(name + "/hard_sigmoid");
  const int g = l.add_node(std::move(gate), {in});
  Node n;
  n.kind = OpKind::Multiply;
  n.inputs = {x, g};
  n.shape = shape;
  n.name = name;
  l.set_value(out, node_value(l.add_node(std::move(n), {})));
}

}  // namespace

void lift_activation(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.size() != 1 || o.outputs.size() != 1) l.refuse("expects one input and one output");
  const int in = o.inputs[0], out = o.outputs[0];
  if (o.code == tfl::OpCode::HardSwish) return lift_hard_swish(l, in, out);
  ActivationSpec a;
  using C = tfl::OpCode;
  switch (o.code) {
    case C::Logistic: a.kind = ActKind::Sigmoid; break;
    case C::Tanh: a.kind = ActKind::Tanh; break;
    case C::Relu: a.kind = ActKind::Relu; break;
    case C::Relu6: a.kind = ActKind::Relu, a.max_value = 6.0f; break;
    case C::LeakyRelu: a.kind = ActKind::LeakyRelu, a.alpha = o.options.alpha; break;
    case C::Elu: a.kind = ActKind::Elu, a.alpha = 1.0f; break;
    case C::Gelu: a.kind = o.options.approximate ? ActKind::GeluTanh : ActKind::Gelu; break;
    case C::Softmax:
      if (o.options.beta != 1.0f) l.refuse("softmax beta " + std::to_string(o.options.beta) + " is not 1");
      a.kind = ActKind::Softmax;
      break;
    default: l.refuse("the graph engine has no such activation");
  }
  const tfl::Shape& s = l.tensor(in).shape;
  if (s.empty()) l.refuse("input has rank 0");
  const int last = s.back();
  if (foldable_producer(l, in) && (a.kind != ActKind::Softmax || l.node(l.value(in).node).shape.back() == last)) {
    l.node(l.value(in).node).activation = a;
    return fold_into_producer(l, in, out);
  }
  Shape shape = l.node(l.value(in).node).shape;
  if (a.kind == ActKind::Softmax && (shape.empty() || shape.back() != last)) {
    const int64_t e = tfl::element_count(s);
    shape = e == last ? Shape{last} : Shape{static_cast<int>(e / last), last};
  }
  Node n;
  n.kind = OpKind::Activation;
  n.keras_class = "Activation";
  n.activation = a;
  n.inputs = {l.as_shape(in, shape)};
  n.shape = shape;
  n.name = l.node_name(out);
  l.set_value(out, node_value(l.add_node(std::move(n), {in})));
}

namespace {

// ADD/SUB/MUL with one constant operand, folded into the Dense or Conv1D producing the other:
// Elsewhere (a scale of attention scores, a position table added after a PAD): the constant as a
// Constant node at the activation's shape and an elementwise node reading both.
void constant_operand_node(Lifter& l, int x, int c_tensor) {
  const tfl::Op& o = l.op();
  const tfl::Shape& xs = l.tensor(x).shape;
  const tfl::Tensor& ct = l.tensor(c_tensor);
  if (l.tensor(o.outputs[0]).shape != xs) l.refuse("the constant operand broadcasts the activation to a larger shape");
  if (!broadcasts(ct.shape, xs)) l.refuse("constant operand " + ct.name + " does not broadcast to the activation");
  const std::vector<float> c = l.constant_f32(c_tensor, "constant operand");
  const std::vector<size_t> src = broadcast_index(ct.shape, xs);
  const auto count = static_cast<int64_t>(src.size());
  std::vector<float> full(src.size());
  for (size_t i = 0; i < src.size(); ++i) full[i] = c[src[i]];
  const Shape shape = l.node(l.value(x).node).shape;
  if (shape_size(shape) != count) l.refuse("activation and constant sizes differ");
  Node k;
  k.kind = OpKind::Constant;
  k.keras_class = "Constant";
  k.weights = {Weight{shape, std::move(full)}};
  k.shape = shape;
  k.name = l.node_name(o.outputs[0]) + "/constant";
  const int kc = l.add_node(std::move(k), {});
  Node n;
  n.kind = o.code == tfl::OpCode::Add ? OpKind::Add : o.code == tfl::OpCode::Sub ? OpKind::Subtract : OpKind::Multiply;
  n.keras_class = op_name(n.kind);
  n.inputs = {l.as_shape(x, shape), kc};
  n.shape = shape;
  n.name = l.node_name(o.outputs[0]);
  const int idx = l.add_node(std::move(n), {x, c_tensor});
  l.set_value(o.outputs[0], node_value(l.apply_activation(idx, l.fused(o.options.activation))));
}

// a bias shift (x + c, x - c) or a per-unit scale of kernel and bias (x * c). c broadcasts over
// the last (units) axis: one value per unit, or one value.
void fold_constant_operand(Lifter& l, int x, int c_tensor, bool constant_first) {
  const tfl::Op& o = l.op();
  if (o.code == tfl::OpCode::Sub && constant_first) l.refuse("constant minus activation has no graph form");
  if (!foldable_producer(l, x)) return constant_operand_node(l, x, c_tensor);
  const tfl::Tensor& ct = l.tensor(c_tensor);
  std::vector<float> c = l.constant_f32(c_tensor, "constant operand");
  Node& n = l.node(l.value(x).node);
  const int units = n.units;
  bool per_unit = !ct.shape.empty() && ct.shape.back() == units && static_cast<int>(c.size()) == units;
  if (!per_unit && c.size() != 1) l.refuse("constant operand " + ct.name + " does not broadcast over the units axis");
  if (!per_unit) c.assign(static_cast<size_t>(units), c[0]);
  std::vector<float>& bias = n.weights[1].data;
  if (o.code == tfl::OpCode::Mul) {
    std::vector<float>& kernel = n.weights[0].data;  // (..., units) row-major: unit = index % units
    for (size_t i = 0; i < kernel.size(); ++i) kernel[i] *= c[i % static_cast<size_t>(units)];
    for (int u = 0; u < units; ++u) bias[static_cast<size_t>(u)] *= c[static_cast<size_t>(u)];
  } else {
    const float sign = o.code == tfl::OpCode::Sub ? -1.0f : 1.0f;
    for (int u = 0; u < units; ++u) bias[static_cast<size_t>(u)] += sign * c[static_cast<size_t>(u)];
  }
  n.activation = l.fused(o.options.activation);
  fold_into_producer(l, x, o.outputs[0]);
}

}  // namespace

namespace {

// MUL(x, LOGISTIC(x)), how the converter writes swish / silu: the sigmoid node becomes a swish
// (one step instead of two) when the product is its only reader. Returns whether it did.
bool lift_swish(Lifter& l, int a, int b, int out) {
  for (int k = 0; k < 2; ++k) {
    const int x = k ? b : a, sig = k ? a : b;
    const Value& vs = l.value(sig);
    const Value& vx = l.value(x);
    Node& s = l.node(vs.node);
    const bool gate = s.kind == OpKind::Activation && s.activation.kind == ActKind::Sigmoid && s.inputs.size() == 1 &&
                      s.inputs[0] == vx.node && !vx.padded() && !vs.padded() && l.consumers(sig) == 1 && !l.is_output(sig);
    if (!gate || l.tensor(x).shape != l.tensor(sig).shape) continue;
    s.activation.kind = ActKind::Swish;
    s.origin += " + " + l.op_origin();
    l.set_value(out, node_value(vs.node));
    return true;
  }
  return false;
}

}  // namespace

void lift_binary(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.size() != 2 || o.outputs.size() != 1) l.refuse("expects two inputs and one output");
  const int a = o.inputs[0], b = o.inputs[1], out = o.outputs[0];
  if (a < 0 || b < 0) l.refuse("an operand is missing");
  const bool ca = l.tensor(a).is_constant(), cb = l.tensor(b).is_constant();
  if (ca && cb) l.refuse("both operands are constants");
  if (ca || cb) return fold_constant_operand(l, ca ? b : a, ca ? a : b, ca);
  // Shapes that differ only in leading unit axes ([1, 7] and [7]) broadcast to the same elements
  // in the same order; any other broadcast makes more elements than an operand has.
  const int64_t count = tfl::element_count(l.tensor(out).shape);
  if (tfl::element_count(l.tensor(a).shape) != count || tfl::element_count(l.tensor(b).shape) != count) {
    l.refuse("operand shapes differ (broadcasting has no graph form)");
  }
  const ActivationSpec act = l.fused(o.options.activation);
  if (o.code == tfl::OpCode::Mul && act.kind == ActKind::Linear && lift_swish(l, a, b, out)) return;
  Node n;
  n.kind = o.code == tfl::OpCode::Add ? OpKind::Add : o.code == tfl::OpCode::Sub ? OpKind::Subtract : OpKind::Multiply;
  const Shape shape = l.node(l.value(a).node).shape;
  n.inputs = {l.as_shape(a, shape), l.as_shape(b, shape)};
  n.shape = shape;
  n.name = l.node_name(out);
  const int idx = l.add_node(std::move(n), {a, b});
  l.set_value(out, node_value(l.apply_activation(idx, act)));
}

void lift_concatenation(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.size() < 2 || o.outputs.size() != 1) l.refuse("expects at least two inputs and one output");
  const tfl::Shape& first = l.tensor(o.inputs[0]).shape;
  const int rank = static_cast<int>(first.size());
  const int axis = o.options.axis < 0 ? o.options.axis + rank : o.options.axis;
  if (rank < 2 || axis < 1 || axis >= rank) l.refuse("concatenation along the batch axis has no graph form");
  if (axis != rank - 1) {
    // Along an inner axis (the multi-horizon models stack their [1, 1, 3] predictions along
    // time): the tensors' own shapes without the batch, joined on that axis.
    Node n;
    n.kind = OpKind::Concatenate;
    n.axis = axis;  // Keras' convention counts the batch axis, as TFLite's does
    for (int t : o.inputs) {
      const tfl::Shape& s = l.tensor(t).shape;
      if (static_cast<int>(s.size()) != rank) l.refuse("inputs of different ranks");
      for (int d = 0; d < rank; ++d) {
        if (d != axis && s[static_cast<size_t>(d)] != first[static_cast<size_t>(d)]) {
          l.refuse("input shapes differ outside the concatenation axis");
        }
      }
      const Shape want(s.begin() + 1, s.end());
      n.inputs.push_back(l.as_shape(t, want));
    }
    n.shape = Shape(l.tensor(o.outputs[0]).shape.begin() + 1, l.tensor(o.outputs[0]).shape.end());
    n.name = l.node_name(o.outputs[0]);
    const ActivationSpec act = l.fused(o.options.activation);
    const int idx = l.add_node(std::move(n), o.inputs);
    return l.set_value(o.outputs[0], node_value(l.apply_activation(idx, act)));
  }
  // The graph shapes to concatenate: the nodes' own when they already agree outside the last
  // axis, else each tensor's shape without the batch axis.
  bool nodes_agree = true;
  const Shape& ref = l.node(l.value(o.inputs[0]).node).shape;
  for (int t : o.inputs) {
    const tfl::Shape& s = l.tensor(t).shape;
    if (static_cast<int>(s.size()) != rank || !std::equal(s.begin(), s.end() - 1, first.begin())) {
      l.refuse("input shapes differ outside the concatenation axis");
    }
    const Shape& ns = l.node(l.value(t).node).shape;
    nodes_agree = nodes_agree && ns.size() == ref.size() && !ns.empty() && ns.back() == s.back() &&
                  std::equal(ns.begin(), ns.end() - 1, ref.begin());
  }
  Node n;
  n.kind = OpKind::Concatenate;
  n.axis = -1;
  int total = 0;
  for (int t : o.inputs) {
    const Shape want = nodes_agree ? l.node(l.value(t).node).shape : Shape(l.tensor(t).shape.begin() + 1, l.tensor(t).shape.end());
    n.inputs.push_back(l.as_shape(t, want));
    n.shape = want;
    total += want.back();
  }
  n.shape.back() = total;
  n.name = l.node_name(o.outputs[0]);
  const ActivationSpec act = l.fused(o.options.activation);
  const int idx = l.add_node(std::move(n), o.inputs);
  l.set_value(o.outputs[0], node_value(l.apply_activation(idx, act)));
}

void lift_layout(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.empty() || o.outputs.size() != 1) l.refuse("expects an input and one output");
  const int in = o.inputs[0], out = o.outputs[0];
  Value v = l.value(in);
  if (v.padded() && squeezed(l.tensor(in).shape) != squeezed(l.tensor(out).shape)) {
    l.refuse("reshapes a PAD result beyond moving unit axes");
  }
  v.pending_origin += (v.pending_origin.empty() ? "" : " + ") + l.op_origin();
  v.own_output = false;
  l.set_value(out, std::move(v));
}

}  // namespace tickinfer::formats::lift
