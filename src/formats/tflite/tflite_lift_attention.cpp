// The ops of a Transformer block as the TFLite converter writes them (lob-models facts 5.1):
// TRANSPOSE into and out of heads, BATCH_MATMUL of two activations (scores, context) or by a
// constant (a projection), SELECT_V2 filling masked scores, and LayerNormalization spelled out
// from its MEANs. Attention's pieces become generic nodes; formats/attention_fusion.hpp turns
// the whole chain into one MultiHeadAttention node after the lift.
#include <cstring>

#include "formats/tflite/tflite_lift_context.hpp"

namespace tickinfer::formats::lift {

std::vector<size_t> broadcast_index(const tfl::Shape& from, const tfl::Shape& to) {
  const size_t rank = to.size();
  std::vector<int64_t> stride(rank, 0);
  int64_t r = 1;
  for (size_t d = 0; d < from.size(); ++d) {
    const size_t fd = from.size() - 1 - d, td = rank - 1 - d;
    stride[td] = from[fd] == 1 ? 0 : r;
    r *= from[fd];
  }
  std::vector<size_t> out(static_cast<size_t>(tfl::element_count(to)));
  std::vector<int> pos(rank, 0);
  int64_t at = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<size_t>(at);
    for (size_t d = rank; d-- > 0;) {
      ++pos[d];
      at += stride[d];
      if (pos[d] < to[d]) break;
      at -= stride[d] * to[d];
      pos[d] = 0;
    }
  }
  return out;
}

bool broadcasts(const tfl::Shape& from, const tfl::Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t d = 0; d < from.size(); ++d) {
    const int f = from[from.size() - 1 - d], t = to[to.size() - 1 - d];
    if (f != 1 && f != t) return false;
  }
  return true;
}

namespace {

int permute_last_two(Lifter& l, int node, const std::string& name, const std::vector<int>& tensors) {
  Node n;
  n.kind = OpKind::Permute;
  n.shape = l.node(node).shape;
  const size_t r = n.shape.size();
  for (size_t i = 0; i < r; ++i) n.permutation.push_back(static_cast<int>(i));
  std::swap(n.permutation[r - 1], n.permutation[r - 2]);
  std::swap(n.shape[r - 1], n.shape[r - 2]);
  n.inputs = {node};
  n.name = l.unique_name(name);
  return l.add_node(std::move(n), tensors);
}

// BATCH_MATMUL of an activation [.., M, K] by a constant [K, N]: a Dense (the converter's form
// of an EinsumDense whose kernel it did not make a FULLY_CONNECTED).
void lift_constant_matmul(Lifter& l, int x, int w) {
  const tfl::Op& o = l.op();
  const tfl::Tensor& wt = l.tensor(w);
  if (o.options.adj_x || wt.shape.size() != 2) l.refuse("a constant operand other than a [K, N] matrix has no graph form");
  std::vector<float> k = l.constant_f32(w, "matrix");
  int K = wt.shape[0], N = wt.shape[1];
  if (o.options.adj_y) {
    std::vector<float> t(k.size());
    for (int i = 0; i < K; ++i) for (int j = 0; j < N; ++j) t[static_cast<size_t>(j) * K + i] = k[static_cast<size_t>(i) * N + j];
    k.swap(t);
    std::swap(K, N);
  }
  Node n;
  n.kind = OpKind::Dense;
  n.keras_class = "Dense";
  n.units = N;
  n.weights = {Weight{{K, N}, std::move(k)}, Weight{{N}, std::vector<float>(static_cast<size_t>(N), 0.0f)}};
  n.shape = unbatched(l.tensor(o.outputs[0]).shape);
  Shape in = unbatched(l.tensor(x).shape);
  if (in.empty() || in.back() != K) l.refuse("the activation's last axis does not match the matrix");
  n.inputs = {l.as_shape(x, in)};
  n.name = l.node_name(o.outputs[0]);
  l.set_value(o.outputs[0], own_value(l.add_node(std::move(n), {x})));
}

}  // namespace

void lift_transpose(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.size() != 2 || o.outputs.size() != 1) l.refuse("expects input, permutation and one output");
  const int in = o.inputs[0];
  const tfl::Shape& s = l.tensor(in).shape;
  const std::vector<int32_t> perm = int_constant(l, o.inputs[1], "permutation");
  if (perm.size() != s.size() || s.empty() || s[0] != 1 || perm[0] != 0) l.refuse("moves the batch axis");
  if (l.value(in).padded()) l.refuse("transposes a PAD result");
  Node n;
  n.kind = OpKind::Permute;
  for (size_t i = 1; i < perm.size(); ++i) n.permutation.push_back(perm[i] - 1);
  n.inputs = {l.as_shape(in, unbatched(s))};
  n.shape = unbatched(l.tensor(o.outputs[0]).shape);
  n.name = l.node_name(o.outputs[0]);
  l.set_value(o.outputs[0], own_value(l.add_node(std::move(n), {in})));
}

void lift_batch_matmul(Lifter& l) {
  const tfl::Op& o = l.op();
  if (o.inputs.size() != 2 || o.outputs.size() != 1) l.refuse("expects two inputs and one output");
  const int a = o.inputs[0], b = o.inputs[1];
  if (l.tensor(a).is_constant()) l.refuse("a constant left operand has no graph form");
  if (l.tensor(b).is_constant()) return lift_constant_matmul(l, a, b);
  const tfl::Shape &sa = l.tensor(a).shape, &sb = l.tensor(b).shape;
  if (sa.size() != sb.size() || sa.size() < 3 || sa[0] != 1 || !std::equal(sa.begin(), sa.end() - 2, sb.begin())) {
    l.refuse("operands " + shape_str(unbatched(sa)) + " and " + shape_str(unbatched(sb)) + " broadcast (no graph form)");
  }
  const std::string base = l.node_name(o.outputs[0]);
  int na = l.as_shape(a, unbatched(sa)), nb = l.as_shape(b, unbatched(sb));
  if (o.options.adj_x) na = permute_last_two(l, na, base + "/adj_x", {a});
  if (o.options.adj_y) nb = permute_last_two(l, nb, base + "/adj_y", {b});
  Node n;
  n.kind = OpKind::MatMul;
  n.keras_class = "MatMul";
  n.inputs = {na, nb};
  n.shape = unbatched(l.tensor(o.outputs[0]).shape);
  n.name = base;
  l.set_value(o.outputs[0], own_value(l.add_node(std::move(n), {a, b})));
}

// cond ? x : fill with a constant condition and a fill at or below -1e9 (a masked score): the
// graph adds 0 where cond holds and the fill elsewhere, the same after a softmax (x + fill
// rounds to fill for any score below 1e29 in magnitude).
void lift_select(Lifter& l) {
  const tfl::Op& o = l.op();
  const int c = o.inputs[0], x = o.inputs[1], y = o.inputs[2], out = o.outputs[0];
  const tfl::Tensor& ct = l.tensor(c);
  if (!ct.is_constant() || ct.type != tfl::DType::Bool) l.refuse("a computed condition has no graph form");
  const bool x_live = !l.tensor(x).is_constant();
  if (x_live == !l.tensor(y).is_constant()) l.refuse("only one activation operand and one constant fill have a graph form");
  const int live = x_live ? x : y, fill = x_live ? y : x;
  const tfl::Shape& os = l.tensor(out).shape;
  if (l.tensor(live).shape != os || !broadcasts(ct.shape, os) || !broadcasts(l.tensor(fill).shape, os)) {
    l.refuse("operands do not broadcast to the output");
  }
  const std::vector<float> f = l.constant_f32(fill, "fill");
  const std::vector<size_t> ic = broadcast_index(ct.shape, os), iv = broadcast_index(l.tensor(fill).shape, os);
  std::vector<float> add(ic.size());
  for (size_t i = 0; i < ic.size(); ++i) {
    const bool keep = (ct.data[ic[i]] != 0) == x_live;
    const float v = f[iv[i]];
    if (!keep && !(v <= -1e9f)) l.refuse("a select that is not a mask fill (at or below -1e9) has no graph form");
    add[i] = keep ? 0.0f : v;
  }
  const Shape shape = unbatched(os);
  Node k;
  k.kind = OpKind::Constant;
  k.keras_class = "Constant";
  k.weights = {Weight{shape, std::move(add)}};
  k.shape = shape;
  k.name = l.node_name(out) + "/mask";
  const int kc = l.add_node(std::move(k), {});
  Node n;
  n.kind = OpKind::Add;
  n.keras_class = "Add";
  n.inputs = {l.as_shape(live, shape), kc};
  n.shape = shape;
  n.name = l.node_name(out);
  l.set_value(out, own_value(l.add_node(std::move(n), {c, live, fill})));
}

namespace {

struct LnMatch {
  const tfl::Program& p;
  std::vector<int> ops;  // matched ops besides the MEAN

  // The one op reading `t` with `code`, or -1; `only`: it must be t's only reader.
  int reader(int t, tfl::OpCode code, bool only = true) const {
    int found = -1, count = 0;
    for (size_t i = 0; i < p.ops.size(); ++i) {
      for (int in : p.ops[i].inputs) {
        if (in != t) continue;
        ++count;
        if (p.ops[i].code == code) found = static_cast<int>(i);
        break;
      }
    }
    for (int o : p.outputs) count += o == t;
    return (only && count != 1) ? -1 : found;
  }
  // The other operand of binary op `i` besides `t`.
  int other(int i, int t) const {
    const auto& in = p.ops[static_cast<size_t>(i)].inputs;
    return in[0] == t ? in[1] : in[0];
  }
  int out(int i) const { return p.ops[static_cast<size_t>(i)].outputs[0]; }
  bool take(int i) {
    if (i < 0 || p.ops[static_cast<size_t>(i)].options.activation != tfl::FusedActivation::None) return false;
    ops.push_back(i);
    return true;
  }
};

}  // namespace

bool lift_layer_norm(Lifter& l) {
  const tfl::Op& mean = l.op();
  const tfl::Program& p = l.program();
  const int X = mean.inputs[0], M = mean.outputs[0];
  const tfl::Shape& xs = l.tensor(X).shape;
  const std::vector<int32_t> axes = int_constant(l, mean.inputs[1], "axes");
  const int rank = static_cast<int>(xs.size());
  if (axes.size() != 1 || (axes[0] != rank - 1 && axes[0] != -1) || l.tensor(M).shape.size() != xs.size()) return false;
  LnMatch m{p, {}};
  // mean -> squared difference -> mean -> + eps -> rsqrt -> * gamma = g; x * g + (beta - mean * g).
  int sd = -1, neg = -1;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const auto& in = p.ops[i].inputs;
    if (p.ops[i].code == tfl::OpCode::SquaredDifference && in.size() == 2 && ((in[0] == X && in[1] == M) || (in[0] == M && in[1] == X))) sd = static_cast<int>(i);
    if (p.ops[i].code == tfl::OpCode::Neg && in.size() == 1 && in[0] == M) neg = static_cast<int>(i);
  }
  if (l.consumers(M) != 2 || !m.take(sd) || !m.take(neg)) return false;
  const int var = m.reader(m.out(sd), tfl::OpCode::Mean);
  if (!m.take(var) || p.ops[static_cast<size_t>(var)].inputs[1] != mean.inputs[1]) return false;
  const int add_eps = m.reader(m.out(var), tfl::OpCode::Add);
  if (!m.take(add_eps)) return false;
  const int eps_t = m.other(add_eps, m.out(var));
  if (!l.tensor(eps_t).is_constant() || tfl::element_count(l.tensor(eps_t).shape) != 1) return false;
  const int rsqrt = m.reader(m.out(add_eps), tfl::OpCode::Rsqrt);
  if (!m.take(rsqrt)) return false;
  int g = m.out(rsqrt), gamma_t = -1;
  if (const int mg = m.reader(g, tfl::OpCode::Mul); mg >= 0 && l.tensor(m.other(mg, g)).is_constant()) {
    m.take(mg);
    gamma_t = m.other(mg, g);
    g = m.out(mg);
  }
  // g feeds exactly x * g and (-mean) * g.
  int xg = -1, ng = -1;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const auto& in = p.ops[i].inputs;
    if (p.ops[i].code != tfl::OpCode::Mul || in.size() != 2 || (in[0] != g && in[1] != g)) continue;
    const int o = m.other(static_cast<int>(i), g);
    if (o == X) xg = static_cast<int>(i);
    if (o == m.out(neg)) ng = static_cast<int>(i);
  }
  if (l.consumers(g) != 2 || l.consumers(m.out(neg)) != 1 || !m.take(xg) || !m.take(ng)) return false;
  int shift = m.out(ng), beta_t = -1;
  if (const int ab = m.reader(shift, tfl::OpCode::Add); ab >= 0 && l.tensor(m.other(ab, shift)).is_constant()) {
    m.take(ab);
    beta_t = m.other(ab, shift);
    shift = m.out(ab);
  }
  const int last = m.reader(shift, tfl::OpCode::Add);
  if (last < 0 || m.other(last, shift) != m.out(xg) || l.consumers(m.out(xg)) != 1 || !m.take(last)) return false;
  for (int i : m.ops) {
    if (i < l.op_index()) return false;
    for (int t : p.ops[static_cast<size_t>(i)].outputs) if (i != last && l.is_output(t)) return false;
  }
  const int C = xs.back();
  auto per_channel = [&](int t, float dflt, const char* what) {
    if (t < 0) return std::vector<float>(static_cast<size_t>(C), dflt);
    std::vector<float> v = l.constant_f32(t, what);
    if (v.size() == 1) v.assign(static_cast<size_t>(C), v[0]);
    if (static_cast<int>(v.size()) != C) l.refuse(std::string(what) + " is not one value per channel");
    return v;
  };
  Node n;
  n.kind = OpKind::LayerNorm;
  n.keras_class = "LayerNormalization";
  n.epsilon = l.constant_f32(eps_t, "epsilon")[0];
  n.weights = {Weight{{C}, per_channel(gamma_t, 1.0f, "gamma")}, Weight{{C}, per_channel(beta_t, 0.0f, "beta")}};
  const Shape shape = unbatched(xs);
  n.inputs = {l.as_shape(X, shape)};
  n.shape = shape;
  n.name = l.node_name(m.out(last));
  const int out = m.out(last);
  l.set_value(out, own_value(l.add_node(std::move(n), {X})));
  for (int i : m.ops) l.mark_lifted(i);
  return true;
}

}  // namespace tickinfer::formats::lift
