// formats/attention_fusion.hpp: attention written as generic nodes (the importers' lowering of the
// exporters' op chains) becomes one MultiHeadAttention node, and what is not attention is left
// alone and refused, naming the product, when compiled. The fused plans are checked here against
// attention computed directly from its definition (scores = q k^T / sqrt(k), softmax over the
// keys, weighted sum of the values, output projection); the exporters' real files are checked
// against their frameworks by the reference tests (TFLite lift, SavedModel, ONNX).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "formats/attention_fusion.hpp"
#include "model/graph.hpp"
#include "tickinfer/error.hpp"
#include "tickinfer/tickinfer.hpp"

namespace tickinfer {
namespace {

constexpr int T = 5, D = 4, H = 2, K = 2;

std::vector<float> values(size_t n, float seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(seed + 0.7f * static_cast<float>(i)) * 0.8f;
  return v;
}

int add(Graph& g, Node n) {
  g.nodes.push_back(std::move(n));
  return static_cast<int>(g.nodes.size()) - 1;
}
Node node(OpKind kind, std::vector<int> inputs, const std::string& name) {
  Node n;
  n.kind = kind;
  n.keras_class = op_name(kind);
  n.inputs = std::move(inputs);
  n.name = name;
  return n;
}
int dense(Graph& g, int in, int units, float seed, const std::string& name) {
  Node n = node(OpKind::Dense, {in}, name);
  n.units = units;
  n.weights = {Weight{{D, units}, values(static_cast<size_t>(D * units), seed)}, Weight{{units}, values(static_cast<size_t>(units), seed + 9)}};
  return add(g, std::move(n));
}
int reshape(Graph& g, int in, Shape s, const std::string& name) {
  Node n = node(OpKind::Reshape, {in}, name);
  n.target_shape = std::move(s);
  return add(g, std::move(n));
}
int permute(Graph& g, int in, std::vector<int> p, const std::string& name) {
  Node n = node(OpKind::Permute, {in}, name);
  n.permutation = std::move(p);
  return add(g, std::move(n));
}

struct Spec {
  std::vector<float> mask;  // [H, T, T] added to the scores; empty: none
};

// x -> q, k, v projections -> heads -> q k^T * 1/sqrt(K) (+ mask) -> softmax -> * v -> merge -> Dense.
Graph attention_graph(const Spec& s) {
  Graph g;
  Node x = node(OpKind::Input, {}, "x");
  x.keras_class = "InputLayer";
  x.shape = {T, D};
  g.inputs = {add(g, x)};
  const int q = permute(g, reshape(g, dense(g, 0, H * K, 1.0f, "q"), {T, H, K}, "q_heads"), {1, 0, 2}, "q_t");
  const int k = permute(g, reshape(g, dense(g, 0, H * K, 2.0f, "k"), {T, H, K}, "k_heads"), {1, 2, 0}, "k_t");
  const int v = permute(g, reshape(g, dense(g, 0, H * K, 3.0f, "v"), {T, H, K}, "v_heads"), {1, 0, 2}, "v_t");
  int scores = add(g, node(OpKind::MatMul, {q, k}, "scores"));
  Node scale = node(OpKind::Multiply, {}, "scale");
  const int c = add(g, [] {
    Node n = node(OpKind::Constant, {}, "scale_value");
    n.weights = {Weight{{H, T, T}, std::vector<float>(H * T * T, 1.0f / std::sqrt(float{K}))}};
    return n;
  }());
  scale.inputs = {scores, c};
  scores = add(g, scale);
  if (!s.mask.empty()) {
    Node m = node(OpKind::Constant, {}, "mask");
    m.weights = {Weight{{H, T, T}, s.mask}};
    const int mc = add(g, m);
    scores = add(g, node(OpKind::Add, {scores, mc}, "masked"));
  }
  Node sm = node(OpKind::Activation, {scores}, "softmax");
  sm.activation.kind = ActKind::Softmax;
  const int p = add(g, sm);
  const int ctx = add(g, node(OpKind::MatMul, {p, v}, "context"));
  const int merged = reshape(g, permute(g, ctx, {1, 0, 2}, "ctx_t"), {T, H * K}, "merge");
  Node out = node(OpKind::Dense, {merged}, "out");
  out.units = 3;
  out.weights = {Weight{{H * K, 3}, values(H * K * 3, 4.0f)}, Weight{{3}, values(3, 5.0f)}};
  g.outputs = {add(g, out)};
  return g;
}

std::vector<float> mask_values(bool causal, int blocked_col) {
  std::vector<float> m(H * T * T, 0.0f);
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j)
        if ((causal && j > i) || j == blocked_col) m[(h * T + i) * T + j] = -1e9f;
  return m;
}

// Attention from its definition, on the weights attention_graph() used; key column blocked_col
// (>= 0) masked out as mask_values() does.
std::vector<float> reference(const std::vector<float>& x, bool causal, int blocked_col = -1) {
  auto project = [&](float seed) {
    const std::vector<float> w = values(D * H * K, seed), b = values(H * K, seed + 9);
    std::vector<double> y(T * H * K);
    for (int t = 0; t < T; ++t)
      for (int u = 0; u < H * K; ++u) {
        double acc = b[u];
        for (int d = 0; d < D; ++d) acc += double{x[t * D + d]} * w[d * H * K + u];
        y[t * H * K + u] = acc;
      }
    return y;
  };
  const std::vector<double> q = project(1.0f), k = project(2.0f), v = project(3.0f);
  std::vector<double> ctx(T * H * K, 0.0);
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < T; ++i) {
      std::vector<double> s(T);
      double mx = -1e300, sum = 0;
      const int last = causal ? i : T - 1;
      for (int j = 0; j <= last; ++j) {
        s[j] = 0;
        for (int e = 0; e < K; ++e) s[j] += q[i * H * K + h * K + e] * k[j * H * K + h * K + e];
        s[j] /= std::sqrt(double{K});
        if (j != blocked_col) mx = std::max(mx, s[j]);
      }
      for (int j = 0; j <= last; ++j) sum += s[j] = j == blocked_col ? 0.0 : std::exp(s[j] - mx);
      for (int j = 0; j <= last; ++j)
        for (int e = 0; e < K; ++e) ctx[i * H * K + h * K + e] += s[j] / sum * v[j * H * K + h * K + e];
    }
  const std::vector<float> w = values(H * K * 3, 4.0f), b = values(3, 5.0f);
  std::vector<float> out(T * 3);
  for (int t = 0; t < T; ++t)
    for (int o = 0; o < 3; ++o) {
      double acc = b[o];
      for (int u = 0; u < H * K; ++u) acc += ctx[t * H * K + u] * w[u * 3 + o];
      out[t * 3 + o] = static_cast<float>(acc);
    }
  return out;
}

int count(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.kind == kind;
  return n;
}

void expect_matches_reference(Graph g, bool causal, int blocked_col = -1) {
  const Model model = Model::from_graph(std::move(g));
  Plan plan = compile(model);
  const std::vector<float> x = values(T * D, 0.3f);
  std::vector<float> y(plan.output_size(0));
  plan.run(x.data(), y.data());
  const std::vector<float> want = reference(x, causal, blocked_col);
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << i;
}

TEST(AttentionFusion, ChainBecomesOneAttentionNodeThatComputesAttention) {
  Graph g = attention_graph({});
  EXPECT_EQ(formats::fuse_attention(g), 1);
  EXPECT_EQ(count(g, OpKind::MatMul), 0);
  ASSERT_EQ(count(g, OpKind::MultiHeadAttention), 1);
  const Node& n = g.nodes[static_cast<size_t>(g.outputs[0])];
  EXPECT_EQ(n.kind, OpKind::MultiHeadAttention);
  EXPECT_EQ(n.num_heads, H);
  EXPECT_EQ(n.key_dim, K);
  EXPECT_FALSE(n.causal_mask);
  EXPECT_EQ(g.nodes.size(), 2u);  // the input and the attention: every piece of the chain dropped
  expect_matches_reference(std::move(g), false);
}

TEST(AttentionFusion, CausalMaskConstantBecomesTheCausalFlag) {
  Graph g = attention_graph({mask_values(true, -1)});
  EXPECT_EQ(formats::fuse_attention(g), 1);
  EXPECT_TRUE(g.nodes[static_cast<size_t>(g.outputs[0])].causal_mask);
  expect_matches_reference(std::move(g), true);
}

// A mask the fused step does not express (one key column blocked) leaves the chain as it is:
// its two products then run as MatMul steps of their own, and the result is still attention's.
TEST(AttentionFusion, OtherMasksAreNotFusedAndRunAsProductsOfTheirOwn) {
  Graph g = attention_graph({mask_values(false, 0)});
  EXPECT_EQ(formats::fuse_attention(g), 0);
  EXPECT_EQ(count(g, OpKind::MatMul), 2);
  expect_matches_reference(std::move(g), false, 0);
}

}  // namespace
}  // namespace tickinfer
