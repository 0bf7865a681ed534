// Elementwise functions of one tensor that TensorFlow spells as several ops: Keras 3 gelu
// (Mul, Neg, Erfc), the ReLU layer's threshold / max_value / negative_slope (Greater, Select,
// Minimum, ...), tf_keras hard_sigmoid (clip_by_value), ... Such an expression is tracked by its
// values on a fixed sample grid (TfValue::Kind::Expr) and, where it is used, fitted to one of the
// activations the engine implements; it must then agree with that activation on every sample
// point, or the lowering stops with an error naming the ops.
#include <cmath>
#include <set>

#include "formats/savedmodel/tf_attr.hpp"
#include "formats/savedmodel/tf_eval.hpp"
#include "formats/savedmodel/tf_frame.hpp"
#include "formats/savedmodel/tf_lowering.hpp"
#include "tensorflow/core/framework/node_def.pb.h"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

constexpr double kStep = 1.0 / 64;  // grid resolution: Keras thresholds in the fixtures are multiples
constexpr int kHalf = 20 * 64;      // [-20, 20]

const std::vector<double>& grid() {
  static const std::vector<double> g = [] {
    std::vector<double> v;
    for (int i = -kHalf; i <= kHalf; ++i) v.push_back(i * kStep);
    for (double x : {-1000.0, -999.0, -100.5, 100.5, 999.0, 1000.0, 1e4, 1e4 + 1}) v.push_back(x);
    return v;
  }();
  return g;
}

double at(const std::vector<double>& f, double x) {
  const auto& g = grid();
  for (size_t i = 0; i < g.size(); ++i) if (g[i] == x) return f[i];
  return NAN;
}

double act_eval(const ActivationSpec& s, double x) {
  switch (s.kind) {
    case ActKind::Linear: return x;
    case ActKind::Relu: return x >= s.threshold ? std::min(x, static_cast<double>(s.max_value)) : s.alpha * (x - s.threshold);
    case ActKind::LeakyRelu: return x >= 0 ? x : s.alpha * x;
    case ActKind::Elu: return x > 0 ? x : s.alpha * (std::exp(x) - 1);
    case ActKind::Selu: return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * (std::exp(x) - 1));
    case ActKind::Sigmoid: return 1 / (1 + std::exp(-x));
    case ActKind::HardSigmoid: return std::min(1.0, std::max(0.0, s.alpha * x + s.beta));
    case ActKind::Tanh: return std::tanh(x);
    case ActKind::Gelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case ActKind::GeluTanh: return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case ActKind::Swish: return x / (1 + std::exp(-x));
    case ActKind::Softplus: return x > 30 ? x : std::log1p(std::exp(x));
    case ActKind::Softsign: return x / (1 + std::fabs(x));
    case ActKind::Exponential: return std::exp(x);
    default: return NAN;
  }
}

bool matches(const std::vector<double>& f, const ActivationSpec& s) {
  const auto& g = grid();
  for (size_t i = 0; i < g.size(); ++i) {
    // TF writes the ReLU layer's threshold test as x > t, Keras documents x >= t: the two differ
    // only at x == t itself, which is not compared.
    if (s.kind == ActKind::Relu && s.threshold != 0 && g[i] == s.threshold) continue;
    const double want = act_eval(s, g[i]);
    if (std::isinf(want) || std::isinf(f[i])) {
      if (want != f[i] && std::fabs(g[i]) < 50) return false;
      continue;
    }
    if (!(std::fabs(f[i] - want) <= 1e-6 * (1 + std::fabs(want)))) return false;
  }
  return true;
}

ActivationSpec spec(ActKind k, float alpha = 0, float beta = 0) {
  ActivationSpec s;
  s.kind = k;
  s.alpha = alpha;
  s.beta = beta;
  return s;
}

// The Keras ReLU layer family: x >= t ? min(x, m) : alpha * (x - t), parameters read off f
// (with alpha 0, the threshold is the last grid point where f differs from min(x, m), or the next).
ActivationSpec relu_family(const std::vector<double>& f, bool next_point) {
  ActivationSpec s;
  s.kind = ActKind::Relu;
  const double hi = at(f, 1e4), hi1 = at(f, 1e4 + 1);
  s.max_value = hi == hi1 ? static_cast<float>(hi) : std::numeric_limits<float>::infinity();
  const double alpha = at(f, -999) - at(f, -1000);
  s.alpha = static_cast<float>(alpha);
  if (alpha != 0) {
    s.threshold = static_cast<float>(-1000 - at(f, -1000) / alpha);
  } else {
    const auto& g = grid();
    double t = 0;
    for (int i = 2 * kHalf; i >= 0; --i) {
      if (f[static_cast<size_t>(i)] != std::min(g[static_cast<size_t>(i)], static_cast<double>(s.max_value))) {
        t = g[static_cast<size_t>(i)] + (next_point ? kStep : 0.0);
        break;
      }
      t = g[static_cast<size_t>(i)];
    }
    s.threshold = static_cast<float>(t);
  }
  return s;
}

bool uniform(const std::vector<float>& v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [&](float a) { return a == v[0]; });
}

bool is_scalar_const(const TfValue& v) { return v.kind == TfValue::Kind::Const && v.tensor.values.size() == 1; }

const std::set<std::string>& expr_ops() {
  static const std::set<std::string> ops = {"Erf", "Erfc", "Greater", "GreaterEqual", "Less", "LessEqual", "Select", "SelectV2",
                                            "Minimum", "Maximum", "ClipByValue", "Abs", "Sign", "Square"};
  return ops;
}

const std::set<std::string>& follow_ops() {  // elementwise ops that continue an expression
  static const std::set<std::string> ops = {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Neg", "Relu", "Relu6", "Sigmoid", "Tanh",
                                            "Exp", "Softplus", "Softsign", "Cast", "Sqrt", "Rsqrt", "Reciprocal", "LogicalAnd"};
  return ops;
}

}  // namespace

// Follows a node down through elementwise Activation nodes and scalar affine nodes, applying
// them to `vals`, to the first node that is neither; returns it.
int TfLowering::look_through(int node, std::vector<double>& vals) const {
  std::vector<int> chain;
  for (int n = node;;) {
    const Node& g = graph_.nodes[static_cast<size_t>(n)];
    const bool affine = g.kind == OpKind::BatchNorm && g.keras_class == "affine" && uniform(g.weights[0].data) && uniform(g.weights[1].data);
    const bool act = g.kind == OpKind::Activation && g.activation.kind != ActKind::Softmax && !std::isnan(act_eval(g.activation, 0.5));
    if (!(affine || act) || chain.size() > 64) break;
    chain.push_back(n);
    n = g.inputs[0];
  }
  for (size_t k = chain.size(); k-- > 0;) {
    const Node& g = graph_.nodes[static_cast<size_t>(chain[k])];
    for (double& x : vals) {
      x = g.kind == OpKind::Activation ? act_eval(g.activation, x) : x * g.weights[0].data[0] + g.weights[1].data[0];
    }
  }
  return chain.empty() ? node : graph_.nodes[static_cast<size_t>(chain.back())].inputs[0];
}

bool TfLowering::lower_expr(Op& op, std::vector<TfValue>& out) {
  const std::string& t = op.def.op();
  if (t == "Identity" || t == "StopGradient" || t == "Snapshot") return false;
  const bool has_expr = std::any_of(op.in.begin(), op.in.end(), [](const TfValue& v) { return v.kind == TfValue::Kind::Expr; });
  bool usable = expr_ops().count(t) || (has_expr && (follow_ops().count(t) || tf_op_is_foldable(t)));
  int base = -1;
  std::vector<int64_t> shape;
  std::vector<TfTensor> in;
  const size_t n = grid().size();
  for (const TfValue& v : op.in) {
    if (!usable) break;
    TfTensor s;
    if (is_scalar_const(v)) {
      s = v.tensor;
      s.shape = {};
    } else if (v.kind == TfValue::Kind::Expr || v.kind == TfValue::Kind::Node) {
      int b = v.node;
      std::vector<double> vals;
      if (v.kind == TfValue::Kind::Expr) {
        vals = *v.samples;
      } else {
        vals = grid();
        b = look_through(b, vals);
      }
      if (base >= 0 && b != base) usable = false;
      base = b;
      shape = v.shape;
      s.shape = {static_cast<int64_t>(n)};
      s.values = std::move(vals);
    } else {
      usable = false;
    }
    in.push_back(std::move(s));
  }
  if (!usable || base < 0) {
    for (TfValue& v : op.in) {
      if (v.kind == TfValue::Kind::Expr) v = fit_expr(v, op.where);
    }
    return false;
  }
  for (TfTensor& s : in) {
    if (s.shape.empty()) continue;
    s.dtype = kTfFloat;
  }
  TfTensor r = eval_tf_op(op.def, in, op.where).at(0);
  if (r.values.size() != n) throw Error(op.where + ": elementwise expression lost its shape");
  TfValue e;
  e.kind = TfValue::Kind::Expr;
  e.node = base;
  e.shape = shape;
  e.samples = std::make_shared<const std::vector<double>>(std::move(r.values));
  std::string prev;
  for (const TfValue& v : op.in) if (v.kind == TfValue::Kind::Expr && prev.empty()) prev = v.origin;
  e.origin = (prev.empty() ? "" : prev + "+") + t;
  out = {e};
  return true;
}

TfValue TfLowering::fit_expr(const TfValue& e, const std::string& where) {
  const std::vector<double>& f = *e.samples;
  const Node& src = graph_.nodes[static_cast<size_t>(e.node)];
  TfValue base = node_value(e.node, e.shape, "");
  base.fresh = false;
  if (matches(f, spec(ActKind::Linear))) return base;
  std::vector<ActivationSpec> cands = {spec(ActKind::Sigmoid), spec(ActKind::Tanh), spec(ActKind::Softplus), spec(ActKind::Softsign),
                                       spec(ActKind::Exponential), spec(ActKind::Gelu), spec(ActKind::GeluTanh), spec(ActKind::Swish),
                                       spec(ActKind::Selu), relu_family(f, false), relu_family(f, true)};
  const double f0 = at(f, 0), slope = (at(f, kStep) - f0) / kStep;
  cands.push_back(spec(ActKind::HardSigmoid, static_cast<float>(slope), static_cast<float>(f0)));
  cands.push_back(spec(ActKind::Elu, static_cast<float>(-at(f, -1000))));
  for (const ActivationSpec& s : cands) {
    if (!matches(f, s)) continue;
    Node n;
    n.name = src.name + "/activation";
    n.keras_class = "Activation";
    n.kind = OpKind::Activation;
    n.activation = s;
    n.origin = e.origin + " (elementwise expression fitted to " + activation_name(s.kind) + ")";
    n.inputs = {e.node};
    n.shape = src.shape;
    TfValue v = node_value(add_node(std::move(n)), e.shape, "");
    return v;
  }
  const double a = at(f, 1) - f0;
  bool affine = true;
  for (size_t i = 0; i < f.size() && affine; ++i) {
    const double x = grid()[i], want = a * x + f0;
    affine = std::fabs(f[i] - want) <= 1e-9 * (1 + std::fabs(want));
  }
  if (affine && !src.shape.empty()) {
    const int c = src.shape.back();
    Node n;
    n.name = src.name + "/affine";
    n.keras_class = "affine";
    n.kind = OpKind::BatchNorm;
    n.epsilon = 0.0f;
    n.origin = e.origin;
    n.weights = {Weight{{c}, std::vector<float>(static_cast<size_t>(c), static_cast<float>(a))},
                 Weight{{c}, std::vector<float>(static_cast<size_t>(c), static_cast<float>(f0))},
                 Weight{{c}, std::vector<float>(static_cast<size_t>(c), 0.0f)}, Weight{{c}, std::vector<float>(static_cast<size_t>(c), 1.0f)}};
    n.inputs = {e.node};
    n.shape = src.shape;
    return node_value(add_node(std::move(n)), e.shape, "");
  }
  throw Error(where + ": the elementwise expression " + e.origin + " of '" + src.name + "' is no activation the engine implements");
}

}  // namespace tickinfer::formats
