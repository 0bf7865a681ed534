// Clean-up after lowering: the per-channel affine nodes that ONNX Add/Mul constants become merge
// into their producer (a MatMul + Add is one Dense, a Mul + Add one BatchNorm), activations fuse
// into a Dense/Conv1D that feeds only them, two Permutes in a row become one, and nodes nothing
// reaches are dropped (the sequence twin of a recurrent layer whose last step alone is used, the
// operands of folded shapes).
#include <algorithm>

#include "formats/onnx/onnx_lower.hpp"

namespace tickinfer::formats::onnx_import {

namespace {

// A BatchNorm with mean 0, variance 1, epsilon 0: y = x * gamma + beta exactly.
bool is_affine(const Node& n) {
  if (n.kind != OpKind::BatchNorm || n.epsilon != 0.0f || n.weights.size() != 4) return false;
  for (float v : n.weights[2].data) if (v != 0.0f) return false;
  for (float v : n.weights[3].data) if (v != 1.0f) return false;
  return true;
}
bool all_equal(const std::vector<float>& v, float x) {
  return std::all_of(v.begin(), v.end(), [x](float e) { return e == x; });
}
bool is_bias_only(const Node& n) { return is_affine(n) && all_equal(n.weights[0].data, 1.0f); }
bool is_scale_only(const Node& n) { return is_affine(n) && all_equal(n.weights[1].data, 0.0f); }
bool is_linear_producer(const Node& n) {
  return (n.kind == OpKind::Dense || n.kind == OpKind::Conv1D) && n.activation.kind == ActKind::Linear;
}

}  // namespace

void simplify_graph(Graph& g) {
  const size_t N = g.nodes.size();
  std::vector<int> alias(N), consumers(N, 0);
  for (size_t i = 0; i < N; ++i) alias[i] = static_cast<int>(i);
  for (const Node& n : g.nodes) for (int in : n.inputs) ++consumers[in];
  for (int o : g.outputs) ++consumers[o];
  auto resolve = [&](int i) { while (alias[i] != i) i = alias[i]; return i; };

  for (size_t i = 0; i < N; ++i) {
    Node& n = g.nodes[i];
    for (int& in : n.inputs) in = resolve(in);
    if (n.inputs.size() != 1) continue;
    const int p = n.inputs[0];
    Node& prod = g.nodes[p];
    if (consumers[p] != 1) continue;
    bool merged = false;
    if (is_bias_only(n) && is_linear_producer(prod)) {
      std::vector<float>& bias = prod.weights[1].data;
      for (size_t c = 0; c < bias.size(); ++c) bias[c] += n.weights[1].data[c];
      merged = true;
    } else if (is_bias_only(n) && is_scale_only(prod)) {
      prod.weights[1].data = n.weights[1].data;
      merged = true;
    } else if (n.kind == OpKind::Activation && is_linear_producer(prod)) {
      prod.activation = n.activation;
      merged = true;
    } else if (n.kind == OpKind::Permute && prod.kind == OpKind::Permute) {
      // Views lowered one op at a time can permute twice in a row: one data movement instead.
      std::vector<int> composed;
      for (int a : n.permutation) composed.push_back(prod.permutation[a]);
      prod.permutation = std::move(composed);
      prod.shape = n.shape;
      merged = true;
    }
    if (merged) {
      prod.origin += " + " + n.origin;
      alias[i] = p;
      consumers[p] = consumers[i];
    }
  }
  for (int& o : g.outputs) o = resolve(o);

  std::vector<bool> live(N, false);
  for (int o : g.outputs) live[o] = true;
  for (int in : g.inputs) live[in] = true;
  for (size_t i = N; i-- > 0;) {
    if (!live[i] || alias[i] != static_cast<int>(i)) continue;
    for (int in : g.nodes[i].inputs) live[in] = true;
  }
  std::vector<int> index(N, -1);
  std::vector<Node> kept;
  for (size_t i = 0; i < N; ++i) {
    if (!live[i] || alias[i] != static_cast<int>(i)) continue;
    index[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(g.nodes[i]));
    for (int& in : kept.back().inputs) in = index[in];
  }
  g.nodes = std::move(kept);
  for (int& o : g.outputs) o = index[o];
  for (int& in : g.inputs) in = index[in];
}

}  // namespace tickinfer::formats::onnx_import
