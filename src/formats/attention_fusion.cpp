// Folds the exporters' attention chains into MultiHeadAttention nodes (see attention_fusion.hpp).
//
// Every tensor of the chain is traced back to the projection it came from, and each of its axes
// is described by the "atoms" it holds: the sequence rows (T), the heads (H), the per-head
// features (E) or a projection's unsplit channels (C), each tagged with the projection it
// belongs to. Which projection is the query and which the key shows only at the softmax (the
// key's rows are the axis it normalises): Keras' dropout path multiplies K by Q^T and transposes. A Reshape regroups the atoms (splitting a projection's channels into
// heads then features, the order Keras, TF and PyTorch all use), a Permute reorders them, and a
// MatMul is accepted only when its operands contract the right atoms over the same heads. So any
// spelling of the transposes and reshapes is accepted, and any product that is not attention's is
// not fused.
#include "formats/attention_fusion.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

enum class Role : uint8_t { T, H, E, C };

struct Atom {
  Role role;
  int src;  // the projection (0 query, 1 key, 2 value) whose tensor the atom belongs to
  int size;
  bool operator==(const Atom& o) const { return role == o.role && src == o.src && size == o.size; }
};
using Axis = std::vector<Atom>;  // empty: a unit axis

enum class Stage : uint8_t { Projection, Scores, Probs, Context };

struct View {
  std::vector<Axis> axes;  // one per axis of the node's shape
  Stage stage = Stage::Projection;
  int src = -1;            // Projection: which projection
};

// One projection: y = (x W) * scale + bias, traced through the scales and bias adds after the Dense.
struct Projection {
  int dense = -1;
  double scale = 1.0;
  std::vector<double> bias;
};

struct Match {
  Projection proj[3];  // in the order the tracing meets them
  int next_src = 0;
  int query = -1, key = -1, value = -1;  // indices into proj, known at the softmax and the context
  double score_scale = 1.0;
  int scored[2] = {-1, -1};    // the two projections the scores multiply
  const Node* mask = nullptr;  // a Constant added to the scores, checked once the key is known
  View mask_view;
  // tf2onnx's SelectV2: the scores times a 0/1 constant, then the additive mask: accepted when
  // both mark the same cells, so a masked score is the fill, not 0.
  const Node* keep = nullptr;
  View keep_view;
  bool causal = false;
  int span = 0;  // a sliding window: |i - j| < span (0: none)
  int heads = 1, key_dim = 0, value_dim = 0;
};

bool is_affine_scale(const Node& n, double& s) {
  if (n.kind != OpKind::BatchNorm || n.epsilon != 0.0f || n.weights.size() != 4) return false;
  const auto& g = n.weights[0].data;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g[i] != g[0] || n.weights[1].data[i] != 0.0f || n.weights[2].data[i] != 0.0f || n.weights[3].data[i] != 1.0f) return false;
  }
  s = g.empty() ? 1.0 : g[0];
  return true;
}

// The value of `c` (a Constant node's weight) when uniform.
std::optional<double> uniform(const Node& c) {
  if (c.kind != OpKind::Constant || c.weights.empty() || c.weights[0].data.empty()) return std::nullopt;
  const auto& d = c.weights[0].data;
  for (float v : d) if (v != d[0]) return std::nullopt;
  return d[0];
}

class Tracer {
 public:
  Tracer(const Graph& g, Match& m) : g_(g), m_(m) {}

  // The view of node `i`'s output, or nullopt when it is not part of an attention chain.
  std::optional<View> trace(int i) {
    const Node& n = g_.nodes[static_cast<size_t>(i)];
    double s = 1.0;
    switch (n.kind) {
      case OpKind::Dense: return projection(i);
      case OpKind::Identity:
      case OpKind::Reshape:
      case OpKind::Flatten: return regroup(trace(n.inputs[0]), n.shape);
      case OpKind::Activation:
        if (n.activation.kind == ActKind::Linear) return regroup(trace(n.inputs[0]), n.shape);
        if (n.activation.kind == ActKind::Softmax) return softmax(trace(n.inputs[0]));
        return std::nullopt;
      case OpKind::Permute: return permute(trace(n.inputs[0]), n.permutation);
      case OpKind::BatchNorm:
        if (!is_affine_scale(n, s)) return std::nullopt;
        return scaled(trace(n.inputs[0]), s);
      case OpKind::Multiply: return constant_operand(n, [&](std::optional<View> v, const Node& c) {
          auto u = uniform(c);
          return u ? scaled(std::move(v), *u) : keep_mask(std::move(v), c);
        });
      case OpKind::Add: return constant_operand(n, [&](std::optional<View> v, const Node& c) { return added(std::move(v), c); });
      case OpKind::MatMul: return product(n);
      default: return std::nullopt;
    }
  }

 private:
  template <class F>
  std::optional<View> constant_operand(const Node& n, F f) {
    if (n.inputs.size() != 2) return std::nullopt;
    for (int k = 0; k < 2; ++k) {
      const Node& c = g_.nodes[static_cast<size_t>(n.inputs[static_cast<size_t>(k)])];
      if (c.kind == OpKind::Constant) return f(trace(n.inputs[static_cast<size_t>(1 - k)]), c);
    }
    return std::nullopt;
  }

  std::optional<View> projection(int i) {
    const Node& n = g_.nodes[static_cast<size_t>(i)];
    const Shape& in = g_.nodes[static_cast<size_t>(n.inputs[0])].shape;
    if (n.activation.kind != ActKind::Linear || in.size() != 2 || n.shape.size() != 2 || m_.next_src >= 3) return std::nullopt;
    const int src = m_.next_src++;
    Projection& p = m_.proj[src];
    p.dense = i;
    p.bias.assign(n.weights[1].data.begin(), n.weights[1].data.end());
    View v;
    v.src = src;
    v.axes = {atoms(Role::T, src, n.shape[0]), atoms(Role::C, src, n.shape[1])};
    return v;
  }

  static Axis atoms(Role r, int src, int size) { return size == 1 ? Axis{} : Axis{Atom{r, src, size}}; }

  // A Reshape: the atoms in order, cut into the new axes; a projection's channels split once
  // into heads (first) and per-head features.
  static std::optional<View> regroup(std::optional<View> v, const Shape& shape) {
    if (!v) return v;
    std::vector<Atom> flat;
    for (const Axis& a : v->axes) flat.insert(flat.end(), a.begin(), a.end());
    std::vector<Axis> out;
    size_t at = 0;
    for (int d : shape) {
      Axis axis;
      int64_t have = 1;
      while (have < d) {
        if (at >= flat.size()) return std::nullopt;
        Atom a = flat[at];
        if (have * a.size <= d) {
          axis.push_back(a);
          have *= a.size;
          ++at;
          continue;
        }
        const int64_t need = d / have;
        if (a.role != Role::C || d % have != 0 || a.size % need != 0) return std::nullopt;
        axis.push_back(Atom{Role::H, a.src, static_cast<int>(need)});
        flat[at] = Atom{Role::E, a.src, static_cast<int>(a.size / need)};
        have = d;
      }
      if (have != d) return std::nullopt;
      out.push_back(std::move(axis));
    }
    if (at != flat.size()) return std::nullopt;
    v->axes = std::move(out);
    return v;
  }

  static std::optional<View> permute(std::optional<View> v, const std::vector<int>& perm) {
    if (!v || perm.size() != v->axes.size()) return std::nullopt;
    std::vector<Axis> out;
    for (int p : perm) out.push_back(v->axes[static_cast<size_t>(p)]);
    v->axes = std::move(out);
    return v;
  }

  std::optional<View> scaled(std::optional<View> v, double s) {
    if (!v) return v;
    if (v->stage == Stage::Projection) {
      Projection& p = m_.proj[v->src];
      p.scale *= s;
      for (double& b : p.bias) b *= s;
      return v;
    }
    if (v->stage != Stage::Scores) return std::nullopt;
    m_.score_scale *= s;
    return v;
  }

  // Coordinates of element `flat` of a tensor shaped by `v`'s axes: atom -> index.
  static void coords(const View& v, int64_t flat, std::vector<std::pair<Atom, int>>& out) {
    out.clear();
    for (size_t a = v.axes.size(); a-- > 0;) {
      for (size_t k = v.axes[a].size(); k-- > 0;) {
        const Atom& at = v.axes[a][k];
        out.push_back({at, static_cast<int>(flat % at.size)});
        flat /= at.size;
      }
    }
  }

  // + a Constant: a projection's bias (the same for every row) or the scores' causal mask.
  std::optional<View> added(std::optional<View> v, const Node& c) {
    if (!v || (v->stage != Stage::Projection && v->stage != Stage::Scores)) return std::nullopt;
    const std::vector<float>& val = c.weights[0].data;
    std::vector<std::pair<Atom, int>> at;
    if (v->stage == Stage::Projection) {
      Projection& p = m_.proj[v->src];
      std::vector<double> add(p.bias.size(), 0.0);
      std::vector<bool> seen(p.bias.size(), false);
      for (int64_t i = 0; i < static_cast<int64_t>(val.size()); ++i) {
        coords(*v, i, at);
        int64_t channel = 0, stride = 1;  // heads major, features minor: the Dense's channel order
        for (const auto& [atom, idx] : at) {
          if (atom.role == Role::T) continue;
          channel += idx * stride;
          stride *= atom.size;
        }
        const auto ch = static_cast<size_t>(channel);
        if (seen[ch] && add[ch] != val[static_cast<size_t>(i)]) return std::nullopt;  // varies along T
        seen[ch] = true;
        add[ch] = val[static_cast<size_t>(i)];
      }
      for (size_t k = 0; k < add.size(); ++k) p.bias[k] += add[k];
      return v;
    }
    if (m_.mask) return std::nullopt;  // one mask per chain
    m_.mask = &c;
    m_.mask_view = *v;
    return v;
  }

  std::optional<View> keep_mask(std::optional<View> v, const Node& c) {
    if (!v || v->stage != Stage::Scores || m_.keep || m_.mask) return std::nullopt;
    m_.keep = &c;
    m_.keep_view = *v;
    return v;
  }

  // The cells of `c` (laid out as `view`) as a query-row x key-row grid of kept (1) / masked (0),
  // the same for every head: kept where the value is `kept`, masked where `masked_ok`; empty when
  // any cell is neither or the heads differ.
  template <class F>
  std::vector<int8_t> grid(const Node& c, const View& view, float kept, F masked_ok, int& rows, int& cols) const {
    const std::vector<float>& val = c.weights[0].data;
    std::vector<std::pair<Atom, int>> at;
    rows = cols = 0;
    for (const Axis& a : view.axes) {
      for (const Atom& t : a) {
        if (t.role == Role::T && t.src == m_.query) rows = t.size;
        if (t.role == Role::T && t.src == m_.key) cols = t.size;
      }
    }
    rows = std::max(rows, 1), cols = std::max(cols, 1);
    std::vector<int8_t> g(static_cast<size_t>(rows) * cols, -1);
    for (int64_t i = 0; i < static_cast<int64_t>(val.size()); ++i) {
      coords(view, i, at);
      int row = 0, col = 0;
      for (const auto& [atom, idx] : at) {
        if (atom.role == Role::T && atom.src == m_.query) row = idx;
        if (atom.role == Role::T && atom.src == m_.key) col = idx;
      }
      const float x = val[static_cast<size_t>(i)];
      const int8_t k = x == kept ? 1 : masked_ok(x) ? 0 : -1;
      int8_t& cell = g[static_cast<size_t>(row) * cols + col];
      if (k < 0 || (cell >= 0 && cell != k)) return {};
      cell = k;
    }
    return g;
  }

  // Which mask the grid is: none, causal, a sliding window of `span` rows (|i - j| < span), or
  // both (Keras' use_causal_mask with sliding_window); false for any other pattern.
  bool classify(const std::vector<int8_t>& g, int rows, int cols) {
    if (g.empty()) return false;
    bool causal = true;
    int span = 0;  // the widest run of kept cells a row has before or at its diagonal
    for (int i = 0; i < rows; ++i) {
      for (int j = i + 1; j < cols; ++j) causal = causal && g[static_cast<size_t>(i) * cols + j] == 0;
      int run = 0;
      for (int j = std::min(i, cols - 1); j >= 0 && g[static_cast<size_t>(i) * cols + j] == 1; --j) ++run;
      span = std::max(span, run);
    }
    if (span >= std::max(rows, cols)) span = 0;
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < cols; ++j) {
        const bool keep = (!causal || j <= i) && (span == 0 || std::abs(i - j) < span);
        if (g[static_cast<size_t>(i) * cols + j] != (keep ? 1 : 0)) return false;
      }
    }
    m_.causal = causal && cols > 1;
    m_.span = span;
    return true;
  }

  // The additive mask: 0 where a query row sees a key row, at most -1e9 elsewhere; a 0/1 mask
  // multiplied in before it (tf2onnx) must mark the same cells.
  bool causal_mask() {
    if (!m_.mask) return !m_.keep;
    int rows = 0, cols = 0, r2 = 0, c2 = 0;
    const std::vector<int8_t> add = grid(*m_.mask, m_.mask_view, 0.0f, [](float x) { return x <= -1e9f; }, rows, cols);
    if (m_.keep && grid(*m_.keep, m_.keep_view, 1.0f, [](float x) { return x == 0.0f; }, r2, c2) != add) return false;
    return classify(add, rows, cols);
  }

  // The softmax axis holds the key's rows; the other row axis is the query's.
  std::optional<View> softmax(std::optional<View> v) {
    if (!v || v->stage != Stage::Scores || v->axes.size() < 2) return std::nullopt;
    const Axis& last = v->axes.back();
    if (last.size() != 1 || last[0].role != Role::T) return std::nullopt;
    m_.key = last[0].src;
    m_.query = m_.key == m_.scored[0] ? m_.scored[1] : m_.scored[0];
    for (size_t a = 0; a + 1 < v->axes.size(); ++a) {
      for (const Atom& at : v->axes[a]) if (at.role == Role::T && at.src != m_.query) return std::nullopt;
    }
    if (!causal_mask()) return std::nullopt;
    v->stage = Stage::Probs;
    return v;
  }

  static std::vector<Atom> flat_atoms(const std::vector<Axis>& axes, size_t from, size_t to) {
    std::vector<Atom> out;
    for (size_t a = from; a < to; ++a) out.insert(out.end(), axes[a].begin(), axes[a].end());
    return out;
  }
  static bool one(const Axis& a, Role r, int src) { return a.size() == 1 && a[0].role == r && a[0].src == src; }
  static bool rows_of(const Axis& a, int src) { return a.empty() || one(a, Role::T, src); }
  static bool same_heads(const std::vector<Atom>& a, const std::vector<Atom>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].role != Role::H || b[i].role != Role::H || a[i].size != b[i].size) return false;
    }
    return true;
  }

  // q [.., T, k] x k [.., k, S] -> scores [.., T, S]; probs [.., T, S] x v [.., S, v] -> context.
  std::optional<View> product(const Node& n) {
    std::optional<View> a = trace(n.inputs[0]);
    if (!a) return a;
    std::optional<View> b = trace(n.inputs[1]);
    if (!b || a->axes.size() != b->axes.size() || a->axes.size() < 2) return std::nullopt;
    const size_t r = a->axes.size();
    const std::vector<Atom> ha = flat_atoms(a->axes, 0, r - 2), hb = flat_atoms(b->axes, 0, r - 2);
    if (!same_heads(ha, hb)) return std::nullopt;
    const int heads = ha.empty() ? 1 : ha[0].size;
    View out;
    out.axes.assign(a->axes.begin(), a->axes.end() - 2);
    if (a->stage == Stage::Projection && b->stage == Stage::Projection && m_.scored[0] < 0) {
      const int p = a->src, q = b->src;
      const Axis &m = a->axes[r - 2], &ea = a->axes[r - 1], &eb = b->axes[r - 2], &n = b->axes[r - 1];
      if (!rows_of(m, p) || !one(ea, Role::E, p) || !one(eb, Role::E, q) || ea[0].size != eb[0].size || !rows_of(n, q)) {
        return std::nullopt;
      }
      m_.heads = heads;
      m_.key_dim = ea[0].size;
      m_.scored[0] = p;
      m_.scored[1] = q;
      out.stage = Stage::Scores;
      out.axes.push_back(m);
      out.axes.push_back(n);
      return out;
    }
    if (a->stage == Stage::Probs && b->stage == Stage::Projection && m_.heads == heads) {
      const Axis &m = a->axes[r - 2], &cols = a->axes[r - 1], &rows = b->axes[r - 2], &e = b->axes[r - 1];
      const int v = b->src;
      const int len = cols.empty() ? 1 : cols[0].size;
      if (!rows_of(rows, v) || (rows.empty() ? 1 : rows[0].size) != len || !one(e, Role::E, v)) return std::nullopt;
      m_.value = v;
      m_.value_dim = e[0].size;
      out.stage = Stage::Context;
      out.src = v;
      out.axes.push_back(m);
      out.axes.push_back(e);
      return out;
    }
    return std::nullopt;
  }

  const Graph& g_;
  Match& m_;
};

std::vector<float> to_float(const std::vector<double>& v, double scale) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(v[i] * scale);
  return out;
}

// The MultiHeadAttention node for output projection `out` over the traced chain, or nullopt.
std::optional<Node> attention_node(const Graph& g, int out) {
  const Node& o = g.nodes[static_cast<size_t>(out)];
  if (o.kind != OpKind::Dense || o.activation.kind != ActKind::Linear || o.shape.size() != 2) return std::nullopt;
  Match m;
  std::optional<View> ctx = Tracer(g, m).trace(o.inputs[0]);
  if (!ctx || ctx->stage != Stage::Context || m.next_src != 3 || m.query < 0 || m.value < 0) return std::nullopt;
  // The Dense reads [T, h * v] with the heads major, as the output kernel (h, v, o) expects.
  const Axis& last = ctx->axes.back();
  const bool heads_then_features = (m.heads == 1 && last.size() == 1 && last[0].role == Role::E) ||
                                   (last.size() == 2 && last[0].role == Role::H && last[1].role == Role::E);
  for (size_t a = 0; a + 1 < ctx->axes.size(); ++a) {
    const Axis& ax = ctx->axes[a];
    if (!(ax.empty() || (ax.size() == 1 && ax[0].role == Role::T && ax[0].src == m.query))) return std::nullopt;
  }
  if (!heads_then_features) return std::nullopt;
  const int h = m.heads, k = m.key_dim, v = m.value_dim;
  // The node scales the scores by 1 / sqrt(k) itself; any other scale is folded into the query.
  double q_factor = m.score_scale * std::sqrt(static_cast<double>(k));
  if (std::abs(q_factor - 1.0) < 1e-6) q_factor = 1.0;
  Node n;
  n.name = o.name;
  n.keras_class = "MultiHeadAttention";
  n.kind = OpKind::MultiHeadAttention;
  n.origin = "attention fused from the products, softmax and projections ending at " +
             (o.origin.empty() ? "'" + o.name + "'" : o.origin);
  n.num_heads = h;
  n.key_dim = k;
  n.value_dim = v;
  n.causal_mask = m.causal;
  n.attention_span = m.span;
  n.units = o.units;
  const int order[3] = {m.query, m.key, m.value};
  int in[3];
  for (int p = 0; p < 3; ++p) in[p] = g.nodes[static_cast<size_t>(m.proj[order[p]].dense)].inputs[0];
  n.inputs = in[1] == in[2] ? std::vector<int>{in[0], in[2]} : std::vector<int>{in[0], in[2], in[1]};
  const int widths[3] = {k, k, v};
  for (int p = 0; p < 3; ++p) {
    const Projection& pr = m.proj[order[p]];
    const Node& d = g.nodes[static_cast<size_t>(pr.dense)];
    const double f = (p == 0 ? q_factor : 1.0) * pr.scale;
    std::vector<float> w(d.weights[0].data.size());
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(d.weights[0].data[i] * f);
    const int din = d.weights[0].shape[0];
    if (d.units != h * widths[p]) return std::nullopt;
    n.weights.push_back(Weight{{din, h, widths[p]}, std::move(w)});
    n.weights.push_back(Weight{{h, widths[p]}, to_float(pr.bias, p == 0 ? q_factor : 1.0)});
  }
  n.weights.push_back(Weight{{h, v, o.units}, o.weights[0].data});
  n.weights.push_back(o.weights[1]);
  return n;
}

// Drops the nodes no output reaches (the chains just fused), keeping the inputs.
void drop_unreached(Graph& g) {
  const size_t N = g.nodes.size();
  std::vector<bool> live(N, false);
  for (int o : g.outputs) live[static_cast<size_t>(o)] = true;
  for (int i : g.inputs) live[static_cast<size_t>(i)] = true;
  for (size_t i = N; i-- > 0;) {
    if (!live[i]) continue;
    for (int in : g.nodes[i].inputs) live[static_cast<size_t>(in)] = true;
  }
  std::vector<int> index(N, -1);
  std::vector<Node> kept;
  for (size_t i = 0; i < N; ++i) {
    if (!live[i]) continue;
    index[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(g.nodes[i]));
    for (int& in : kept.back().inputs) in = index[static_cast<size_t>(in)];
  }
  g.nodes = std::move(kept);
  for (int& o : g.outputs) o = index[static_cast<size_t>(o)];
  for (int& i : g.inputs) i = index[static_cast<size_t>(i)];
}

}  // namespace

int fuse_attention(Graph& g) {
  if (std::none_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.kind == OpKind::MatMul; })) return 0;
  // Shapes for the tracing; an unknown sequence length is probed at one value (the chain's
  // structure does not depend on it).
  Graph probe = g;
  for (int idx : probe.inputs) {
    for (int& d : probe.nodes[static_cast<size_t>(idx)].shape) d = d < 1 ? 3 : d;
  }
  infer_shapes(probe);
  int fused = 0;
  for (size_t i = 0; i < probe.nodes.size(); ++i) {
    std::optional<Node> n = attention_node(probe, static_cast<int>(i));
    if (!n) continue;
    n->shape = g.nodes[i].shape;
    g.nodes[i] = *n;
    probe.nodes[i] = std::move(*n);
    ++fused;
  }
  if (fused) drop_unreached(g);
  return fused;
}

}  // namespace tickinfer::formats
