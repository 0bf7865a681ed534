// LayerNormalization as TensorFlow graphs spell it. Keras 3 writes the moments out:
//   mean = Mean(x, -1, keep_dims); var = Mean(SquaredDifference(x, StopGradient(mean)), -1)
//   inv = Rsqrt(var + eps) [* gamma];  y = x * inv + (beta - mean * inv)   (terms in any order)
// tf_keras writes FusedBatchNormV3(is_training, NCHW) over a [1, rows, C, 1] reshape, then
// * gamma + beta. Both are tracked as TfValue::Kind::Norm values until the expression is
// complete: y = cx * x * inv + cm * mean * inv + beta is a LayerNorm when cx = 1 and cm = -1.
#include <algorithm>
#include <cmath>

#include "formats/savedmodel/tf_attr.hpp"
#include "formats/savedmodel/tf_frame.hpp"
#include "formats/savedmodel/tf_lowering.hpp"
#include "tensorflow/core/framework/node_def.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

bool is_last_axis(const TfValue& axes, size_t rank) {
  if (axes.kind != TfValue::Kind::Const || axes.tensor.values.size() != 1) return false;
  const auto a = tf_to_int(axes.tensor.values[0]);
  return a == -1 || a == static_cast<int64_t>(rank) - 1;
}

TfValue norm_of(const TfValue& base, NormStat stat) {
  TfValue v;
  v.kind = TfValue::Kind::Norm;
  v.node = base.node;
  v.shape = base.shape;
  v.stat = stat;
  v.cm = 1;
  v.eps = base.eps;
  v.gamma = base.gamma;
  return v;
}

bool is_norm(const TfValue& v, NormStat s) { return v.kind == TfValue::Kind::Norm && v.stat == s; }

// Per-channel values of a constant broadcast against the last axis (scalar or [.., C]).
bool channel_vector(const TfValue& c, int64_t channels, std::vector<double>& out) {
  if (c.kind != TfValue::Kind::Const) return false;
  const auto& t = c.tensor;
  for (size_t i = 0; i + 1 < t.shape.size(); ++i) if (t.shape[i] != 1) return false;
  const int64_t n = t.shape.empty() ? 1 : t.shape.back();
  if (n != 1 && n != channels) return false;
  out.resize(static_cast<size_t>(channels));
  for (int64_t i = 0; i < channels; ++i) out[static_cast<size_t>(i)] = t.values[static_cast<size_t>(n == 1 ? 0 : i)];
  return true;
}

void scale_into(std::vector<double>& v, const std::vector<double>& s) {
  if (v.empty()) v.assign(s.size(), 1.0);
  for (size_t i = 0; i < v.size(); ++i) v[i] *= s[i];
}

bool same_inv(const TfValue& a, const TfValue& b) {
  if (a.node != b.node || a.eps != b.eps) return false;
  const auto& ga = a.gamma; const auto& gb = b.gamma;
  if (ga.empty() || gb.empty()) return ga.empty() && gb.empty();
  return ga == gb;
}

TfValue negated(TfValue v) {
  v.cx = -v.cx;
  v.cm = -v.cm;
  for (double& b : v.beta) b = -b;
  return v;
}

void add_beta(TfValue& v, const std::vector<double>& b, double sign) {
  if (v.beta.empty()) v.beta.assign(b.size(), 0.0);
  for (size_t i = 0; i < b.size(); ++i) v.beta[i] += sign * b[i];
}

}  // namespace

bool TfLowering::lower_norm(Op& op, std::vector<TfValue>& out) {
  const std::string& t = op.def.op();
  auto& in = op.in;
  const bool any_norm = std::any_of(in.begin(), in.end(), [](const TfValue& v) { return v.kind == TfValue::Kind::Norm; });
  if (t == "Mean" && in.size() == 2 && attr_bool(op.def, "keep_dims", false) && is_last_axis(in[1], in[0].shape.size())) {
    if (in[0].kind == TfValue::Kind::Node) {
      TfValue x = in[0];
      x.node = materialize(x, op.where);
      out = {norm_of(x, NormStat::Mean)};
      return true;
    }
    if (is_norm(in[0], NormStat::SquaredDev)) {
      out = {norm_of(in[0], NormStat::Var)};
      return true;
    }
  }
  if (t == "FusedBatchNormV3" && attr_bool(op.def, "is_training", true) && attr_string(op.def, "data_format", "NHWC") == "NCHW" &&
      in.size() == 5 && in[0].kind == TfValue::Kind::Node && in[0].shape.size() == 4 && in[0].shape[0] == 1 && in[0].shape[3] == 1) {
    const int idx = in[0].node;
    const Node& src = graph_.nodes[static_cast<size_t>(idx)];
    std::vector<double> ones, zeros;
    const int64_t c = in[0].shape[2];
    if (src.shape.empty() || src.shape.back() != c || !channel_vector(in[1], in[0].shape[1], ones) || !channel_vector(in[2], in[0].shape[1], zeros) ||
        std::any_of(ones.begin(), ones.end(), [](double v) { return v != 1.0; }) ||
        std::any_of(zeros.begin(), zeros.end(), [](double v) { return v != 0.0; })) {
      throw Error(op.where + ": training-mode FusedBatchNormV3 is supported only as a LayerNormalization over the last axis");
    }
    TfValue v = norm_of(in[0], NormStat::Sum);
    v.cx = 1, v.cm = -1, v.eps = attr_float(op.def, "epsilon", 1e-4f);
    v.origin = "FusedBatchNormV3 (training-mode, NCHW) '" + op.def.name() + "'";
    TfValue none;
    out = {v, none, none, none, none, none};
    return true;
  }
  if (!any_norm) return false;
  const TfValue* n0 = &in[0];
  const int64_t channels = in[0].shape.empty() ? 1 : in[0].shape.back();
  std::vector<double> vec;
  if ((t == "Identity" || t == "StopGradient") && in.size() == 1) {
    out = {in[0]};
    return true;
  }
  if ((t == "Reshape" || t == "Squeeze" || t == "ExpandDims") && is_norm(in[0], NormStat::Sum)) {
    std::vector<TfValue> tmp = {in[0]};
    TfValue v = in[0];
    v.kind = TfValue::Kind::Node;  // reuse the shape arithmetic of a node value
    in[0] = v;
    TfValue r = lower_shape_op(op)[0];
    TfValue back = tmp[0];
    back.shape = r.shape;
    out = {back};
    return true;
  }
  if (t == "SquaredDifference" && in.size() == 2) {
    const int a = is_norm(in[1], NormStat::Mean) ? 0 : 1;
    const TfValue& x = in[static_cast<size_t>(a)];
    const TfValue& m = in[static_cast<size_t>(1 - a)];
    if (is_norm(m, NormStat::Mean) && m.cm == 1 && x.kind == TfValue::Kind::Node && materialize(x, op.where) == m.node) {
      out = {norm_of(m, NormStat::SquaredDev)};
      return true;
    }
  }
  if ((t == "Add" || t == "AddV2") && in.size() == 2 && is_norm(in[0], NormStat::Var) && in[1].kind == TfValue::Kind::Const && in[1].tensor.values.size() == 1) {
    TfValue v = norm_of(in[0], NormStat::VarEps);
    v.eps = in[1].tensor.values[0];
    out = {v};
    return true;
  }
  if (t == "Rsqrt" && is_norm(in[0], NormStat::VarEps)) {
    out = {norm_of(in[0], NormStat::InvStd)};
    return true;
  }
  if (t == "Neg" && is_norm(in[0], NormStat::Mean)) {
    TfValue v = in[0];
    v.cm = -v.cm;
    out = {v};
    return true;
  }
  if (t == "Neg" && is_norm(in[0], NormStat::Sum)) {
    out = {negated(in[0])};
    return true;
  }
  if (t == "Mul" && in.size() == 2) {
    const size_t s = in[0].kind == TfValue::Kind::Norm ? 0 : 1;
    const TfValue& a = in[s];
    const TfValue& b = in[1 - s];
    if (is_norm(a, NormStat::InvStd) && channel_vector(b, channels, vec)) {
      TfValue v = a;
      scale_into(v.gamma, vec);
      out = {v};
      return true;
    }
    if (is_norm(a, NormStat::Sum) && channel_vector(b, channels, vec)) {
      TfValue v = a;
      scale_into(v.gamma, vec);
      if (!v.beta.empty()) for (size_t i = 0; i < vec.size(); ++i) v.beta[i] *= vec[i];
      out = {v};
      return true;
    }
    const TfValue* inv = is_norm(in[0], NormStat::InvStd) ? &in[0] : is_norm(in[1], NormStat::InvStd) ? &in[1] : nullptr;
    const TfValue* other = inv == &in[0] ? &in[1] : &in[0];
    if (inv != nullptr && is_norm(*other, NormStat::Mean) && other->node == inv->node) {
      TfValue v = norm_of(*inv, NormStat::Sum);
      v.cx = 0, v.cm = other->cm;
      out = {v};
      return true;
    }
    if (inv != nullptr && other->kind == TfValue::Kind::Node && materialize(*other, op.where) == inv->node) {
      TfValue v = norm_of(*inv, NormStat::Sum);
      v.cx = 1, v.cm = 0;
      out = {v};
      return true;
    }
  }
  const bool add = t == "Add" || t == "AddV2" || t == "BiasAdd", sub = t == "Sub";
  if ((add || sub) && in.size() == 2) {
    if (is_norm(in[0], NormStat::Sum) && is_norm(in[1], NormStat::Sum) && same_inv(in[0], in[1])) {
      TfValue b = sub ? negated(in[1]) : in[1];
      TfValue v = in[0];
      v.cx += b.cx, v.cm += b.cm;
      if (!b.beta.empty()) add_beta(v, b.beta, 1.0);
      out = {v};
      return true;
    }
    if (is_norm(in[0], NormStat::Sum) && channel_vector(in[1], channels, vec)) {
      TfValue v = in[0];
      add_beta(v, vec, sub ? -1.0 : 1.0);
      out = {v};
      return true;
    }
    if (is_norm(in[1], NormStat::Sum) && channel_vector(in[0], in[1].shape.empty() ? 1 : in[1].shape.back(), vec)) {
      TfValue v = sub ? negated(in[1]) : in[1];
      add_beta(v, vec, 1.0);
      out = {v};
      return true;
    }
  }
  (void)n0;
  // A complete LayerNorm feeds an ordinary op: the normalisation becomes its node here.
  for (TfValue& v : in) {
    if (v.kind != TfValue::Kind::Norm) continue;
    if (!(v.stat == NormStat::Sum && v.cx == 1 && v.cm == -1)) {
      throw Error(op.where + ": op " + t + " on LayerNormalization statistics is not a recognised normalisation pattern");
    }
    const std::vector<int64_t> shape = v.shape;
    v = node_value(finish_norm(v, op.where), shape, "");
    v.fresh = false;
  }
  return false;
}

int TfLowering::finish_norm(const TfValue& v, const std::string& where) {
  if (v.stat != NormStat::Sum || v.cx != 1 || v.cm != -1) {
    throw Error(where + ": uses mean/variance statistics other than as a LayerNormalization (x - mean) / sqrt(var + eps)");
  }
  const auto key = std::make_tuple(v.node, v.eps, v.gamma, v.beta);
  if (auto done = finished_norms_.find(key); done != finished_norms_.end()) {
    return materialize(node_value(done->second, v.shape, ""), where);
  }
  const Node& src = graph_.nodes[static_cast<size_t>(v.node)];
  const int c = src.shape.empty() ? 0 : src.shape.back();
  Node n;
  n.name = src.name + "/layer_norm";
  n.keras_class = "LayerNormalization";
  n.kind = OpKind::LayerNorm;
  n.epsilon = static_cast<float>(v.eps);
  n.origin = v.origin.empty() ? "Mean+SquaredDifference+Rsqrt+Mul+Add (moments) of '" + src.name + "'" : v.origin + "+Mul+Add";
  std::vector<float> g(static_cast<size_t>(c), 1.0f), b(static_cast<size_t>(c), 0.0f);
  if (!v.gamma.empty()) {
    if (v.gamma.size() != g.size()) throw Error(where + ": LayerNormalization gamma size differs from the channels");
    for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>(v.gamma[i]);
  }
  if (!v.beta.empty()) {
    if (v.beta.size() != b.size()) throw Error(where + ": LayerNormalization beta size differs from the channels");
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(v.beta[i]);
  }
  n.weights = {Weight{{c}, g}, Weight{{c}, b}};
  n.inputs = {v.node};
  n.shape = src.shape;
  const int idx = add_node(std::move(n));
  finished_norms_[key] = idx;
  TfValue as_node = node_value(idx, v.shape, "");
  return materialize(as_node, where);
}

}  // namespace tickinfer::formats
