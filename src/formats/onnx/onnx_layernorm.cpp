// The decomposed LayerNormalization tf2onnx writes for Keras (it has no LayerNormalization op
// before opset 17):
//   mean = ReduceMean(X, last axis, keepdims); var = ReduceMean((X - mean)^2)
//   (over a [batch, T, d] sequence tf2onnx writes each mean as GlobalAveragePool, which averages
//   the last axis of a rank-3 tensor and keeps it)
//   M = gamma * 1/sqrt(var + eps)            (M = 1/sqrt(var + eps) without scale)
//   Y = X * M + (beta - mean * M)            (spelled Add(Mul(Neg(mean), M), beta) or Sub(beta, Mul(mean, M)))
// recognised from its final Add and lowered to one engine LayerNorm. The engine normalises as
// (X - mean) / sqrt(var + eps) * gamma + beta: the same function, rounded differently (within
// the fixtures' tolerance).
#include <optional>

#include "formats/onnx/onnx_lower.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

struct Matcher {
  Lowerer& L;

  const onnx::NodeProto* op(const std::string& name, const char* type) const {
    const onnx::NodeProto* p = L.producer(name);
    return p && p->op_type() == type && p->input_size() >= 1 ? p : nullptr;
  }
  // Operands (a, b) of a binary node of `type`, in both orders; `first` must accept `a`.
  template <typename F>
  bool binary(const std::string& name, const char* type, F&& first, std::string& other) const {
    const onnx::NodeProto* p = op(name, type);
    if (!p || p->input_size() != 2) return false;
    if (first(p->input(0))) return other = p->input(1), true;
    if (first(p->input(1))) return other = p->input(0), true;
    return false;
  }
  std::optional<float> scalar(const std::string& name) const {
    if (!L.is_initializer(name) && !op(name, "Constant")) return std::nullopt;
    const Value& v = L.value(name);
    if (!v.is_const || !v.c.is_float || v.c.size() != 1) return std::nullopt;
    return v.c.f[0];
  }
  // A constant, or a reshape / cast of one (tf2onnx reshapes gamma and beta); not lowered here.
  bool is_const(const std::string& name, int depth = 0) const {
    if (L.is_initializer(name) || op(name, "Constant") != nullptr) return true;
    const onnx::NodeProto* p = L.producer(name);
    if (!p || depth > 8 || p->input_size() < 1) return false;
    const std::string& t = p->op_type();
    return (t == "Reshape" || t == "Cast" || t == "Identity" || t == "Unsqueeze" || t == "Squeeze") &&
           is_const(p->input(0), depth + 1);
  }
  // A mean over some axes that keeps them: ReduceMean with keepdims, or GlobalAveragePool (its
  // last axis when the input has rank 3, checked once X is lowered; nothing is lowered here, so
  // a pool the engine has no form for is never reached on its own).
  const onnx::NodeProto* mean_op(const std::string& name) const {
    if (const onnx::NodeProto* r = op(name, "ReduceMean"); r && L.attr_i(*r, "keepdims", 1) == 1) return r;
    return op(name, "GlobalAveragePool");
  }
  std::vector<int64_t> mean_axes(const onnx::NodeProto& r) const {
    if (r.op_type() == "GlobalAveragePool") return {2};
    std::vector<int64_t> axes = L.attr_ints(r, "axes");
    if (axes.empty() && L.has_input(r, 1)) axes = L.constant(r, 1).i;
    return axes;
  }
};

}  // namespace

bool match_layer_norm(Lowerer& L, const onnx::NodeProto& root, Value& result) {
  Matcher m{L};
  if (root.input_size() != 2) return false;
  // mean = ReduceMean(X); the root's operands are P = Mul(X, M) and Q.
  std::string x, mean, mm, q, beta, gamma;
  auto is_mean = [&](const std::string& s) {
    const onnx::NodeProto* r = m.mean_op(s);
    return r && (x.empty() || r->input(0) == x);
  };
  bool found = false;
  for (int k = 0; k < 2 && !found; ++k) {
    const std::string p = root.input(k);
    q = root.input(1 - k);
    const onnx::NodeProto* mul = m.op(p, "Mul");
    if (!mul || mul->input_size() != 2) continue;
    for (int j = 0; j < 2 && !found; ++j) {
      x = mul->input(j);
      mm = mul->input(1 - j);
      // Q = Sub(beta, Mul(mean, M))  |  Add(Mul(Neg(mean), M), beta)  |  Mul(Neg(mean), M)
      std::string q_mul = q;
      beta.clear();
      if (const onnx::NodeProto* sub = m.op(q, "Sub"); sub && sub->input_size() == 2 && m.is_const(sub->input(0))) {
        beta = sub->input(0);
        std::string mean_side;
        if (m.binary(sub->input(1), "Mul", [&](const std::string& s) { return s == mm; }, mean_side) && is_mean(mean_side)) {
          mean = mean_side, found = true;
        }
        continue;
      }
      if (const onnx::NodeProto* add = m.op(q, "Add"); add && add->input_size() == 2) {
        if (m.is_const(add->input(1))) beta = add->input(1), q_mul = add->input(0);
        else if (m.is_const(add->input(0))) beta = add->input(0), q_mul = add->input(1);
      }
      std::string neg;
      if (m.binary(q_mul, "Mul", [&](const std::string& s) { return s == mm; }, neg)) {
        const onnx::NodeProto* ng = m.op(neg, "Neg");
        if (ng && is_mean(ng->input(0))) mean = ng->input(0), found = true;
      }
    }
  }
  if (!found || !is_mean(mean)) return false;
  // M = R * gamma or R;  R = Reciprocal(Sqrt(var + eps)) or Div(1, Sqrt(var + eps))
  std::string r = mm;
  if (m.binary(mm, "Mul", [&](const std::string& s) { return !m.is_const(s); }, gamma) && !m.is_const(gamma)) return false;
  if (!gamma.empty()) {
    const onnx::NodeProto* g = m.op(mm, "Mul");
    r = g->input(0) == gamma ? g->input(1) : g->input(0);
  }
  std::string sq;
  if (const onnx::NodeProto* rc = m.op(r, "Reciprocal")) sq = rc->input(0);
  else if (const onnx::NodeProto* dv = m.op(r, "Div"); dv && dv->input_size() == 2 && m.scalar(dv->input(0)) == 1.0f) sq = dv->input(1);
  else return false;
  const onnx::NodeProto* sqrt = m.op(sq, "Sqrt");
  std::string var, eps_name;
  if (!sqrt || !m.binary(sqrt->input(0), "Add", [&](const std::string& s) { return m.scalar(s).has_value(); }, var)) return false;
  const onnx::NodeProto* add_eps = m.op(sqrt->input(0), "Add");
  eps_name = add_eps->input(0) == var ? add_eps->input(1) : add_eps->input(0);
  // var = ReduceMean(D * D), D = X - mean
  const onnx::NodeProto* rv = m.mean_op(var);
  if (!rv || m.mean_axes(*rv) != m.mean_axes(*m.mean_op(mean))) return false;
  const onnx::NodeProto* sqd = m.op(rv->input(0), "Mul");
  if (!sqd || sqd->input_size() != 2 || sqd->input(0) != sqd->input(1)) return false;
  const onnx::NodeProto* d = m.op(sqd->input(0), "Sub");
  if (!d || d->input_size() != 2 || d->input(0) != x || d->input(1) != mean) return false;

  const Value& xv = L.value(x);
  if (xv.is_const || xv.padded()) return false;
  const onnx::NodeProto& mean_node = *m.mean_op(mean);
  const std::vector<int64_t> axes = m.mean_axes(mean_node);
  if (axes.size() != 1 || (mean_node.op_type() == "GlobalAveragePool" && xv.axes.size() != 3)) return false;
  const int e = L.engine_axis(mean_node, xv, axes[0]);
  const int C = L.eshape(xv.node).back();
  if (e != static_cast<int>(L.eshape(xv.node).size()) - 1) {
    L.fail(root, "a layer normalization over an axis that is not the channels-last axis is not supported");
  }
  auto vec = [&](const std::string& name, float def) {
    if (name.empty()) return std::vector<float>(static_cast<size_t>(C), def);
    const Value& v = L.value(name);
    if (!v.c.is_float || (v.c.size() != C && v.c.size() != 1)) L.fail(root, "the layer normalization's gamma/beta do not have one value per channel");
    return v.c.size() == 1 ? std::vector<float>(static_cast<size_t>(C), v.c.f[0]) : v.c.f;
  };
  Node ln;
  ln.kind = OpKind::LayerNorm;
  ln.keras_class = "LayerNormalization";
  ln.epsilon = *m.scalar(eps_name);
  if (!(ln.epsilon >= 0.0f)) L.fail(root, "the layer normalization's epsilon is negative");
  ln.weights = {{{C}, vec(gamma, 1.0f)}, {{C}, vec(beta, 0.0f)}};
  ln.origin = "decomposed LayerNormalization from " + mean_node.op_type() + " '" + mean_node.name() + "' to";
  result = xv;
  result.node = L.add(std::move(ln), root, {xv.node});
  return true;
}

bool match_batch_stats_norm(Lowerer& L, const onnx::NodeProto& n, Value& result) {
  Matcher m{L};
  if (n.input_size() != 5 || !known_fill(L, n.input(1), 1.0) || !known_fill(L, n.input(2), 0.0)) return false;
  const std::string& x = n.input(0);
  const onnx::NodeProto* sq = m.op(n.input(3), "Squeeze");
  const onnx::NodeProto* mean = sq ? m.op(sq->input(0), "ReduceMean") : nullptr;
  const onnx::NodeProto* div = m.op(n.input(4), "Div");
  if (!mean || mean->input(0) != x || !div || div->input_size() != 2) return false;
  const onnx::NodeProto* ss = m.op(div->input(0), "ReduceSumSquare");
  const onnx::NodeProto* d = ss ? m.op(ss->input(0), "Sub") : nullptr;
  if (!d || d->input_size() != 2 || d->input(0) != x || d->input(1) != mean->output(0)) return false;
  const std::vector<int64_t> axes = L.attr_ints(*mean, "axes");
  if (axes.empty() || L.attr_ints(*ss, "axes") != axes) return false;
  const Value& xv = L.value(x);
  if (xv.is_const || xv.padded() || xv.axes.size() < 2) return false;
  const std::vector<int> dims = L.dims(xv);
  // Channel axis 1 must be the batch (one sample); the statistics span every other axis, of
  // which only the engine's last (feature) axis may be larger than 1.
  std::vector<bool> reduced(xv.axes.size(), false);
  for (int64_t a : axes) reduced[L.norm_axis(n, a, xv.axes.size())] = true;
  int64_t count = 1;
  int feature = -1;
  for (size_t a = 0; a < xv.axes.size(); ++a) {
    if (a == 1 ? reduced[a] || dims[a] != 1 : !reduced[a]) return false;
    if (a == 1 || dims[a] == 1) continue;
    if (feature >= 0 || dims[a] < 0) return false;
    feature = static_cast<int>(a), count *= dims[a];
  }
  if (feature < 0 || xv.axes[feature] != static_cast<int>(L.eshape(xv.node).size()) - 1) return false;
  const Value& divisor = L.value(div->input(1));
  if (!divisor.is_const || divisor.c.size() != 1 || divisor.c.at(0) != static_cast<double>(count)) return false;
  const int C = static_cast<int>(count);
  Node ln;
  ln.kind = OpKind::LayerNorm;
  ln.keras_class = "LayerNormalization";
  ln.epsilon = L.attr_f(n, "epsilon", 1e-5f);
  if (!(ln.epsilon >= 0.0f)) L.fail(n, "epsilon is negative");
  ln.weights = {{{C}, std::vector<float>(static_cast<size_t>(C), 1.0f)}, {{C}, std::vector<float>(static_cast<size_t>(C), 0.0f)}};
  ln.origin = "per-sample statistics from " + mean->op_type() + " '" + mean->name() + "' to";
  result = xv;
  result.node = L.add(std::move(ln), n, {xv.node});
  return true;
}

}  // namespace tickinfer::formats::onnx_import
