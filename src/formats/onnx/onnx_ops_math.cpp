// Gemm, MatMul, the elementwise arithmetic, activations, Softmax and the normalisations.
#include <algorithm>
#include <cmath>
#include <limits>

#include "formats/onnx/onnx_lower.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

int last_engine_axis(Lowerer& L, const Value& x) { return static_cast<int>(L.eshape(x.node).size()) - 1; }

// ONNX axis `axis` of `x` must be the engine tensor's last (channel) axis, where Dense,
// BatchNorm, LayerNorm and Softmax work.
void require_channel_axis(Lowerer& L, const onnx::NodeProto& n, const Value& x, int64_t axis, const char* what) {
  const int e = L.engine_axis(n, x, axis);
  if (e != last_engine_axis(L, x)) {
    L.fail(n, std::string(what) + " runs along ONNX axis " + std::to_string(axis) +
                  ", which is not the innermost (channels-last) axis of the tensor here");
  }
}

// A constant broadcast against runtime `x`, as one value per channel of x's last engine axis:
// a scalar (any all-ones shape) or a vector along the ONNX axis that is that engine axis.
std::vector<float> per_channel(Lowerer& L, const onnx::NodeProto& n, const Value& x, const Tensor& c) {
  if (!c.is_float) L.fail(n, "the constant operand is not a float tensor");
  const std::vector<int> xd = L.dims(x);
  if (c.dims.size() > xd.size()) L.fail(n, "the constant operand has a higher rank than the computed operand");
  const int C = L.eshape(x.node).back();
  if (C < 1) L.fail(n, "the channel axis has an unknown size");
  const size_t off = xd.size() - c.dims.size();
  int along = -1;
  for (size_t k = 0; k < c.dims.size(); ++k) {
    if (c.dims[k] == 1) continue;
    if (along >= 0) L.fail(n, "the constant operand varies along more than one axis (the engine broadcasts per channel only)");
    along = static_cast<int>(off + k);
    if (c.dims[k] != xd[along]) L.fail(n, "the constant operand's shape does not broadcast against the computed operand");
  }
  if (along < 0) return std::vector<float>(static_cast<size_t>(C), c.f.empty() ? 0.0f : c.f[0]);
  if (x.axes[along] != last_engine_axis(L, x)) {
    L.fail(n, "the constant operand varies along an axis that is not the channels-last axis of the computed operand");
  }
  return c.f;
}

// y = x * scale + shift per channel, as an engine BatchNorm with mean 0, variance 1, epsilon 0
// (so the compiler's scale = gamma / sqrt(1 + 0) is exactly gamma).
Value affine(Lowerer& L, const onnx::NodeProto& n, const Value& x, std::vector<float> scale, std::vector<float> shift) {
  const int C = static_cast<int>(scale.size());
  Node bn;
  bn.kind = OpKind::BatchNorm;
  bn.epsilon = 0.0f;
  bn.weights = {{{C}, std::move(scale)}, {{C}, std::move(shift)}, {{C}, std::vector<float>(C, 0.0f)},
                {{C}, std::vector<float>(C, 1.0f)}};
  Value out = x;
  out.node = L.add(std::move(bn), n, {x.node});
  return out;
}

Value activation(Lowerer& L, const onnx::NodeProto& n, const Value& x, ActivationSpec spec) {
  Node a;
  a.kind = OpKind::Activation;
  a.activation = spec;
  Value out = x;
  out.node = L.add(std::move(a), n, {x.node});
  return out;
}

Value lower_dense(Lowerer& L, const onnx::NodeProto& n, const Value& x, int64_t k_axis, const Tensor& kernel_kn,
                  std::vector<float> bias) {
  require_channel_axis(L, n, x, k_axis, "the contraction");
  const int K = static_cast<int>(kernel_kn.dims[0]), N = static_cast<int>(kernel_kn.dims[1]);
  if (L.eshape(x.node).back() != K) L.fail(n, "the weight's first dimension does not match the input's features");
  Node d;
  d.kind = OpKind::Dense;
  d.units = N;
  d.weights = {{{K, N}, kernel_kn.f}, {{N}, bias.empty() ? std::vector<float>(N, 0.0f) : std::move(bias)}};
  Value out = x;
  out.node = L.add(std::move(d), n, {x.node});
  return out;
}

Value lower_gemm(Lowerer& L, const onnx::NodeProto& n) {
  const Value& a = L.runtime(n, 0);
  const Tensor& b = L.constant(n, 1);
  if (a.axes.size() != 2 || b.dims.size() != 2 || !b.is_float) L.fail(n, "A and B must be rank 2 and B a float constant");
  const bool ta = L.attr_i(n, "transA", 0) != 0, tb = L.attr_i(n, "transB", 0) != 0;
  const float alpha = L.attr_f(n, "alpha", 1.0f), beta = L.attr_f(n, "beta", 1.0f);
  const int m_axis = ta ? 1 : 0;
  // M is the batch (a unit axis), or rows that at a batch of 1 are an engine axis (torch's
  // attention applies its output projection to [T * batch, E]); the Dense keeps them.
  const int K = static_cast<int>(tb ? b.dims[1] : b.dims[0]), N = static_cast<int>(tb ? b.dims[0] : b.dims[1]);
  Tensor kn;
  kn.is_float = true;
  kn.dims = {K, N};
  kn.f.resize(static_cast<size_t>(K) * N);
  for (int k = 0; k < K; ++k) {
    for (int j = 0; j < N; ++j) kn.f[k * N + j] = alpha * (tb ? b.f[j * K + k] : b.f[k * N + j]);
  }
  std::vector<float> bias(static_cast<size_t>(N), 0.0f);
  if (L.has_input(n, 2)) {
    const Tensor& c = L.constant(n, 2);
    if (!c.is_float || !(c.size() == 1 || c.size() == N) || (c.dims.size() == 2 && c.dims[0] != 1)) {
      L.fail(n, "C must be a float scalar or have N values");
    }
    for (int j = 0; j < N; ++j) bias[j] = beta * c.f[c.size() == 1 ? 0 : j];
  }
  const int m_engine = a.axes[m_axis];
  Value out = lower_dense(L, n, a, ta ? 0 : 1, kn, std::move(bias));
  out.axes = {m_engine, last_engine_axis(L, out)};
  return out;
}

Value lower_matmul(Lowerer& L, const onnx::NodeProto& n) {
  if (L.has_input(n, 1) && !L.value(n.input(1)).is_const) return lower_matmul_computed(L, n);
  const Value& x = L.runtime(n, 0);
  const Tensor& w = L.constant(n, 1);
  if (w.dims.size() != 2 || !w.is_float) L.fail(n, "only a computed input times a rank-2 float constant is supported");
  return lower_dense(L, n, x, -1, w, {});
}

Value lower_binary(Lowerer& L, const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (n.input_size() != 2) L.fail(n, "needs two inputs");
  const Value& a = L.value(n.input(0));
  const Value& b = L.value(n.input(1));
  if (a.is_const && b.is_const) L.fail(n, "both operands are constants of a kind the importer does not fold");
  L.require_unpadded(n, a);
  L.require_unpadded(n, b);
  if (!a.is_const && !b.is_const) {
    if (op == "Div") L.fail(n, "division of two computed tensors is not supported");
    if (L.dims(a) != L.dims(b) || L.eshape(a.node) != L.eshape(b.node) ||
        (a.axes != b.axes && !(L.in_order(a) && L.in_order(b)))) {
      L.fail(n, "the operands' shapes or layouts differ; the engine adds, subtracts and multiplies equal shapes only");
    }
    Node m;
    m.kind = op == "Add" ? OpKind::Add : op == "Sub" ? OpKind::Subtract : OpKind::Multiply;
    Value out = a;
    out.node = L.add(std::move(m), n, {a.node, b.node});
    return out;
  }
  const bool const_first = a.is_const;
  const Value& x = const_first ? b : a;
  const Tensor& c = const_first ? a.c : b.c;
  if (!varies_per_channel_only(L, x, c)) return lower_binary_table(L, n, x, c, const_first);
  std::vector<float> v = per_channel(L, n, x, c);
  Value out;
  const size_t C = v.size();
  std::vector<float> ones(C, 1.0f), zeros(C, 0.0f);
  if (op == "Add") {
    out = affine(L, n, x, ones, v);
  } else if (op == "Mul") {
    out = affine(L, n, x, v, zeros);
  } else if (op == "Sub") {
    if (const_first) {
      out = affine(L, n, x, std::vector<float>(C, -1.0f), v);  // c - x
    } else {
      for (float& e : v) e = -e;
      out = affine(L, n, x, ones, v);
    }
  } else {  // Div
    if (const_first) L.fail(n, "a constant divided by a computed tensor is not supported");
    for (float& e : v) e = 1.0f / e;  // within 1 ulp of the division
    out = affine(L, n, x, v, zeros);
  }
  // Broadcasting against a higher-rank constant adds leading unit axes.
  const size_t rank = std::max(x.axes.size(), c.dims.size());
  out.axes.insert(out.axes.begin(), rank - x.axes.size(), kUnit);
  return out;
}

bool near(float a, float b) { return std::fabs(a - b) <= 1e-6f * std::fabs(b); }

bool activation_spec(Lowerer& L, const onnx::NodeProto& n, ActivationSpec& s) {
  const std::string& op = n.op_type();
  if (op == "Relu") s.kind = ActKind::Relu;
  else if (op == "Sigmoid") s.kind = ActKind::Sigmoid;
  else if (op == "Tanh") s.kind = ActKind::Tanh;
  else if (op == "Softplus") s.kind = ActKind::Softplus;
  else if (op == "Softsign") s.kind = ActKind::Softsign;
  else if (op == "Exp") s.kind = ActKind::Exponential;
  else if (op == "LeakyRelu") s.kind = ActKind::LeakyRelu, s.alpha = L.attr_f(n, "alpha", 0.01f);
  else if (op == "Elu") s.kind = ActKind::Elu, s.alpha = L.attr_f(n, "alpha", 1.0f);
  else if (op == "HardSigmoid") {
    s.kind = ActKind::HardSigmoid, s.alpha = L.attr_f(n, "alpha", 0.2f), s.beta = L.attr_f(n, "beta", 0.5f);
  } else if (op == "Selu") {
    if (!near(L.attr_f(n, "alpha", 1.67326319217681884765625f), 1.67326319217681884765625f) ||
        !near(L.attr_f(n, "gamma", 1.05070102214813232421875f), 1.05070102214813232421875f)) {
      L.fail(n, "only the standard SELU alpha and gamma are supported");
    }
    s.kind = ActKind::Selu;
  } else if (op == "Gelu") {
    const std::string approx = L.attr_s(n, "approximate", "none");
    if (approx != "none" && approx != "tanh") L.fail(n, "approximate='" + approx + "' is not supported");
    s.kind = approx == "tanh" ? ActKind::GeluTanh : ActKind::Gelu;
  } else if (op == "Clip") {
    const float inf = std::numeric_limits<float>::infinity();
    float lo = -inf, hi = inf;
    if (L.has_input(n, 1)) lo = static_cast<float>(std::clamp(L.scalar(n, 1), -1e30, 1e30));
    if (L.has_input(n, 2)) hi = static_cast<float>(std::clamp(L.scalar(n, 2), -1e30, 1e30));
    if (lo != 0.0f || !(hi > 0.0f)) L.fail(n, "only Clip(min=0, max>0) (ReLU, ReLU6) is supported");
    s.kind = ActKind::Relu;
    s.max_value = hi;
  } else {
    return false;
  }
  return true;
}

Value lower_batch_norm(Lowerer& L, const onnx::NodeProto& n, int out) {
  if (out != 0 || L.attr_i(n, "training_mode", 0) != 0) L.fail(n, "only inference mode (one output) is supported");
  Value stats_norm;
  if (L.has_input(n, 3) && !L.is_initializer(n.input(3)) && match_batch_stats_norm(L, n, stats_norm)) return stats_norm;
  const Value& x = L.runtime(n, 0);
  if (x.axes.size() < 2) L.fail(n, "needs an input of rank >= 2");
  require_channel_axis(L, n, x, 1, "BatchNormalization");
  const int C = L.eshape(x.node).back();
  Node bn;
  bn.kind = OpKind::BatchNorm;
  bn.epsilon = L.attr_f(n, "epsilon", 1e-5f);
  for (int k = 1; k <= 4; ++k) {
    const Tensor& t = L.constant(n, k);
    if (!t.is_float || t.size() != C) L.fail(n, "input " + std::to_string(k) + " must hold " + std::to_string(C) + " floats");
    bn.weights.push_back({{C}, t.f});
  }
  // ONNX's input order scale, B, mean, var is the engine's gamma, beta, moving_mean, moving_variance.
  Value o = x;
  o.node = L.add(std::move(bn), n, {x.node});
  return o;
}

Value lower_layer_norm(Lowerer& L, const onnx::NodeProto& n, int out) {
  if (out != 0) L.fail(n, "only output 0 (Y) is supported");
  const Value& x = L.runtime(n, 0);
  const int axis = L.norm_axis(n, L.attr_i(n, "axis", -1), x.axes.size());
  int channel = -1;
  for (size_t a = axis; a < x.axes.size(); ++a) {
    if (x.axes[a] == kUnit) continue;
    if (channel >= 0) L.fail(n, "normalising over more than one axis is not supported");
    channel = static_cast<int>(a);
  }
  if (channel < 0) L.fail(n, "normalises over unit axes only");
  require_channel_axis(L, n, x, channel, "LayerNormalization");
  const int C = L.eshape(x.node).back();
  Node ln;
  ln.kind = OpKind::LayerNorm;
  ln.epsilon = L.attr_f(n, "epsilon", 1e-5f);
  const Tensor& scale = L.constant(n, 1);
  if (!scale.is_float || scale.size() != C) L.fail(n, "Scale must hold " + std::to_string(C) + " floats");
  std::vector<float> bias(static_cast<size_t>(C), 0.0f);
  if (L.has_input(n, 2)) {
    const Tensor& b = L.constant(n, 2);
    if (!b.is_float || b.size() != C) L.fail(n, "B must hold " + std::to_string(C) + " floats");
    bias = b.f;
  }
  ln.weights = {{{C}, scale.f}, {{C}, std::move(bias)}};
  Value o = x;
  o.node = L.add(std::move(ln), n, {x.node});
  return o;
}

Value lower_softmax(Lowerer& L, const onnx::NodeProto& n) {
  Value x = L.runtime(n, 0);
  if (L.opset() >= 13) {
    // Over a transposed view (Keras' attention with dropout computes the scores transposed),
    // the data is permuted first so that the softmax axis is the innermost.
    if (L.engine_axis(n, x, L.attr_i(n, "axis", -1)) != last_engine_axis(L, x)) x = in_engine_order(L, n, x);
    require_channel_axis(L, n, x, L.attr_i(n, "axis", -1), "Softmax");
  } else {
    // Before opset 13 the input is coerced to 2-D at `axis` (default 1): the softmax runs over
    // all axes from `axis` on, which must then hold the channel axis only.
    const int axis = L.norm_axis(n, L.attr_i(n, "axis", 1), x.axes.size());
    for (size_t a = axis; a < x.axes.size(); ++a) {
      if (x.axes[a] != kUnit && x.axes[a] != last_engine_axis(L, x)) L.fail(n, "softmax over several axes is not supported");
    }
    if (L.eshape(x.node).size() != 1 && !L.in_order(x)) L.fail(n, "softmax over a transposed tensor is not supported");
  }
  ActivationSpec s;
  s.kind = ActKind::Softmax;
  return activation(L, n, x, s);
}

}  // namespace

bool lower_math_op(Lowerer& L, const onnx::NodeProto& n, int out, Value& result) {
  const std::string& op = n.op_type();
  if (op == "BatchNormalization") {
    result = lower_batch_norm(L, n, out);
    return true;
  }
  if (op == "LayerNormalization") {
    result = lower_layer_norm(L, n, out);
    return true;
  }
  static const char* const kOps[] = {"Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Neg", "Softmax", "Relu", "Sigmoid",
                                     "Tanh", "Softplus", "Softsign", "Exp", "LeakyRelu", "Elu", "HardSigmoid",
                                     "Selu", "Gelu", "Clip"};
  if (std::none_of(std::begin(kOps), std::end(kOps), [&](const char* s) { return op == s; })) return false;
  if (out != 0) L.fail(n, "only output 0 is supported");
  ActivationSpec spec;
  if (op == "Gemm") result = lower_gemm(L, n);
  else if (op == "MatMul") result = lower_matmul(L, n);
  else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") result = lower_binary(L, n);
  else if (op == "Softmax") result = lower_softmax(L, n);
  else if (op == "Neg") {
    const Value& x = L.runtime(n, 0);
    const size_t C = static_cast<size_t>(std::max(L.eshape(x.node).back(), 1));
    if (L.eshape(x.node).back() < 1) L.fail(n, "the channel axis has an unknown size");
    result = affine(L, n, x, std::vector<float>(C, -1.0f), std::vector<float>(C, 0.0f));
  }
  else if (activation_spec(L, n, spec)) result = activation(L, n, L.runtime(n, 0), spec);
  return true;
}

}  // namespace tickinfer::formats::onnx_import
