// The weight and window arithmetic of the lowering (weight_forms.hpp).
#include "engine/lowering/weight_forms.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace tickinfer::engine {

// A relu that a clamp expresses exactly, or linear.
bool clamp_for(const ActivationSpec& a, float& lo, float& hi) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if (a.kind == ActKind::Linear) {
    lo = -kInf, hi = kInf;
    return true;
  }
  if (a.kind == ActKind::Relu && a.alpha == 0.0f && a.threshold == 0.0f) {
    lo = 0.0f, hi = a.max_value;
    return true;
  }
  return false;
}

// BatchNorm as y = x * scale + shift, per channel.
void bn_affine(const Node& bn, std::vector<float>& scale, std::vector<float>& shift) {
  const auto& gamma = bn.weights[0].data;
  const auto& beta = bn.weights[1].data;
  const auto& mean = bn.weights[2].data;
  const auto& var = bn.weights[3].data;
  scale.resize(gamma.size());
  shift.resize(gamma.size());
  for (size_t c = 0; c < gamma.size(); ++c) {
    scale[c] = gamma[c] / std::sqrt(var[c] + bn.epsilon);
    shift[c] = beta[c] - mean[c] * scale[c];
  }
}

// Columns [c0, c0 + n) of a (K x N) row-major weight.
Matrix columns(const Weight& w, int c0, int n) {
  const int K = w.shape[0], N = w.shape[1];
  Matrix m{K, n, std::vector<float>(static_cast<size_t>(K) * n)};
  for (int k = 0; k < K; ++k) {
    std::copy_n(w.data.begin() + static_cast<size_t>(k) * N + c0, n, m.data.begin() + static_cast<size_t>(k) * n);
  }
  return m;
}

Matrix matrix(std::vector<float> data, int rows, int cols) { return Matrix{rows, cols, std::move(data)}; }

// Left padding as TensorFlow chooses it: SAME splits the total with the extra on the right;
// causal pads the whole receptive field on the left.
int pad_left(Padding p, int len, int out_len, int span, int stride) {
  if (p == Padding::Causal) return span - 1;
  if (p == Padding::Same) return std::max((out_len - 1) * stride + span - len, 0) / 2;
  return 0;
}

// Row-wise concatenation of weights of equal row counts ((K x N_i) -> K x sum N_i), in order.
Matrix side_by_side(std::initializer_list<const Weight*> parts) {
  const int K = parts.begin()[0]->shape[0];
  int N = 0;
  for (const Weight* w : parts) N += static_cast<int>(w->data.size() / K);
  Matrix m{K, N, {}};
  m.data.reserve(static_cast<size_t>(K) * N);
  for (int r = 0; r < K; ++r) {
    for (const Weight* w : parts) {
      const size_t n = w->data.size() / K;
      m.data.insert(m.data.end(), w->data.begin() + r * n, w->data.begin() + (r + 1) * n);
    }
  }
  return m;
}

void fold_batch_norm(const Node* bn, std::vector<float>& w, std::vector<float>& b, int N) {
  if (!bn) return;
  std::vector<float> scale, shift;
  bn_affine(*bn, scale, shift);
  for (size_t i = 0; i < w.size(); ++i) w[i] *= scale[i % static_cast<size_t>(N)];
  for (int j = 0; j < N; ++j) b[j] = b[j] * scale[j] + shift[j];
}

void constant_operand_affine(OpKind kind, size_t tensor_side, const std::vector<float>& c, std::vector<float>& scale,
                             std::vector<float>& shift) {
  if (kind == OpKind::Multiply) {
    scale = c;
    shift.assign(c.size(), 0.0f);
    return;
  }
  const bool negate_x = kind == OpKind::Subtract && tensor_side == 1;
  const bool negate_c = kind == OpKind::Subtract && tensor_side == 0;
  scale.assign(c.size(), negate_x ? -1.0f : 1.0f);
  shift = c;
  if (negate_c) {
    for (float& v : shift) v = -v;
  }
}

std::vector<float> joined(std::initializer_list<const Weight*> parts) {
  std::vector<float> out;
  for (const Weight* w : parts) out.insert(out.end(), w->data.begin(), w->data.end());
  return out;
}

}  // namespace tickinfer::engine
