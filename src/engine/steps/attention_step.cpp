// Attention: MultiHeadAttention's core between its projections (Dense steps before and after).
// Per head and query row i: scores over the key rows (all S, or j <= i when causal), scaled by
// 1 / sqrt(key_dim) (folded into the packed keys: q . (s k) instead of Keras' s (q . k), the
// same to within a rounding, which the Keras fixtures' tolerance covers), a softmax, and
// the probabilities' weighted sum of the value rows. A causal mask is a shorter softmax: Keras
// sets the masked scores to -0.7 x FLT_MAX, whose exponentials are exactly 0; a sliding window
// (span) shortens it from the front too. Not row-wise (a query row reads every key row).
// Stream mode (causal, with a span): one query row per run against the key and value rows of
// the last `span` runs, kept in the step's state as a ring (a key/value cache): the softmax and
// the weighted sum do not depend on the rows' order, so the ring is read as it lies.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

// Scratch: a head's T x S scores; a head's operand gathered row-major; K^T and V packed in the
// kernels' layout (kernels/kernel_set.hpp), so a head's scores and its weighted sums of the value
// rows are each one product over a block of query rows (rows_times).
struct Scratch {
  float* scores;
  float* gathered;
  float* packed_keys;    // (key_dim x S)
  float* packed_values;  // (S x value_dim)
};

size_t padded(size_t floats) { return (floats + 15) / 16 * 16; }
size_t scores_floats(const OpParams& p) { return padded(static_cast<size_t>(p.steps) * p.attention.keys); }
size_t gathered_floats(const AttentionParams& a) {
  return padded(static_cast<size_t>(a.keys) * static_cast<size_t>(std::max(a.key_dim, a.value_dim)));
}
size_t packed_keys_floats(const AttentionParams& a) { return padded(kernels::packed_floats(a.key_dim, a.keys)); }
size_t packed_values_floats(const AttentionParams& a) { return padded(kernels::packed_floats(a.keys, a.value_dim)); }

Scratch scratch_of(const StepCtx& c, const Step& s) noexcept {
  const AttentionParams& a = s.attention;
  float* base = c.arena(s.scratch);
  Scratch sc;
  sc.scores = base;
  sc.gathered = sc.scores + scores_floats(s);
  sc.packed_keys = sc.gathered + gathered_floats(a);
  sc.packed_values = sc.packed_keys + packed_keys_floats(a);
  return sc;
}

// Head h's keys as the (key_dim x S) matrix K^T scaled by `scale` (so the scores come out
// scaled, without a pass over the T x S scores) and its values as the (S x value_dim) matrix V,
// in the kernels' packed layout. The panel form (kernels/kernel_set.hpp) is written in place:
// packed[(p K + k) kPanel + j] = W[k][p kPanel + j], zero past N; the dot form goes through
// pack_weights.
void pack_head(const Step& s, const float* k, const float* v, int h, float scale, const Scratch& sc) noexcept {
  const AttentionParams& a = s.attention;
  constexpr int P = kernels::kPanel;
  const size_t S = static_cast<size_t>(a.keys);
  const size_t kd = static_cast<size_t>(a.key_dim), vd = static_cast<size_t>(a.value_dim);
  if (!kernels::is_dot_form(a.keys)) {
    const size_t padded_keys = static_cast<size_t>(kernels::round_up(a.keys, P));
    for (size_t j = 0; j < padded_keys; ++j) {
      const float* kj = j < S ? k + j * a.k.ld + a.k.col + h * a.key_dim : nullptr;
      float* col = sc.packed_keys + (j / P) * kd * P + j % P;
      for (size_t d = 0; d < kd; ++d) col[d * P] = kj ? kj[d] * scale : 0.0f;  // zeros past S
    }
  } else {
    for (size_t j = 0; j < S; ++j) {
      const float* kj = k + j * a.k.ld + a.k.col + h * a.key_dim;
      for (size_t d = 0; d < kd; ++d) sc.gathered[d * S + j] = kj[d] * scale;
    }
    kernels::pack_weights(sc.gathered, a.key_dim, a.keys, sc.packed_keys);
  }
  if (!kernels::is_dot_form(a.value_dim)) {
    for (size_t j = 0; j < S; ++j) {
      const float* vj = v + j * a.v.ld + a.v.col + h * a.value_dim;
      for (size_t p0 = 0; p0 < vd; p0 += P) {
        const size_t n = std::min<size_t>(P, vd - p0);
        float* dst = sc.packed_values + (p0 / P * S + j) * P;
        std::memcpy(dst, vj + p0, sizeof(float) * n);
        std::fill(dst + n, dst + P, 0.0f);  // the panel's columns past value_dim
      }
    }
  } else {
    for (size_t j = 0; j < S; ++j) {
      std::memcpy(sc.gathered + j * vd, v + j * a.v.ld + a.v.col + h * a.value_dim, sizeof(float) * vd);
    }
    kernels::pack_weights(sc.gathered, a.keys, a.value_dim, sc.packed_values);
  }
}

// rows x (x . W): gemm_chain where the set has it and W is in panel form (several rows and
// panels blocked in registers), else gemm_rows. Either order is fine here: this step answers to
// Keras' float tolerance, not to another engine's bits.
void rows_times(const kernels::KernelSet& ks, const float* x, int rows, size_t ldx, int K, const float* packed, int N,
                float* y, size_t ldy) noexcept {
  constexpr float inf = std::numeric_limits<float>::infinity();
  if (ks.gemm_chain && !kernels::is_dot_form(N)) {
    ks.gemm_chain(x, rows, ldx, 1, 0, K, packed, N, nullptr, y, ldy, -inf, inf);
  } else {
    ks.gemm_rows(x, rows, ldx, K, packed, N, nullptr, y, ldy, -inf, inf);
  }
}

// Query rows per block of a causal step: a block's rows see at most the keys up to its last row,
// so its scores and weighted sums stop there (half the work at T = S).
constexpr int kCausalBlock = 16;

// Head after head: the scores of every query row against the key rows it may see, scaled; a
// causal row keeps its first i + 1 and zeros the rest of its block's columns, so the weighted sum
// over those value rows adds exact zeros (fma(0, v, acc) == acc for finite v); then the weighted
// sums into the head's columns. A block reads a prefix of the packed K^T (its first panels) and
// of the packed V (its first rows, where V is one panel, 4 < value_dim <= 16: the dot form's and
// later panels' offsets depend on the row count, so those take every row).
void run(const StepCtx& c, const Step& s) noexcept {
  const AttentionParams& a = s.attention;
  const float* q = c.at(s.in);
  const float* k = c.at(s.rhs);
  const float* v = c.at(s.extra_inputs[0]);
  float* out = c.at(s.out);
  const Scratch sc = scratch_of(c, s);
  const float scale = 1.0f / std::sqrt(static_cast<float>(a.key_dim));
  const size_t S = static_cast<size_t>(a.keys);
  const size_t ldo = static_cast<size_t>(a.heads) * a.value_dim;
  const int block = a.causal ? kCausalBlock : s.steps;
  const bool one_panel = !kernels::is_dot_form(a.value_dim) && a.value_dim <= kernels::kPanel;
  for (int h = 0; h < a.heads; ++h) {
    pack_head(s, k, v, h, scale, sc);
    for (int i0 = 0; i0 < s.steps; i0 += block) {
      const int rows = std::min(block, s.steps - i0);
      // Keys this block sees; at least one panel, so the packed K^T stays in panel form.
      const int keys = a.causal ? std::min(a.keys, std::max(i0 + rows, kernels::kPanel)) : a.keys;
      const int value_rows = one_panel ? keys : a.keys;
      float* scores = sc.scores + static_cast<size_t>(i0) * S;
      rows_times(c.ks, q + static_cast<size_t>(i0) * a.q.ld + a.q.col + h * a.key_dim, rows,
                 static_cast<size_t>(a.q.ld), a.key_dim, sc.packed_keys, keys, scores, S);
      for (int r = 0; r < rows; ++r) {
        float* row = scores + static_cast<size_t>(r) * S;
        const int i = i0 + r;
        int seen = a.causal ? std::min(i + 1, a.keys) : a.keys;
        const int first = a.span > 0 ? std::max(0, i - a.span + 1) : 0;
        if (a.span > 0 && !a.causal) seen = std::min(seen, i + a.span);
        c.ks.softmax(row + first, row + first, seen - first);
        std::fill(row, row + first, 0.0f);
        std::fill(row + seen, row + value_rows, 0.0f);
      }
      rows_times(c.ks, scores, rows, S, value_rows, sc.packed_values, a.value_dim,
                 out + static_cast<size_t>(i0) * ldo + h * a.value_dim, ldo);
    }
  }
}

// Stream mode. State: K ring [span][heads * key_dim], V ring [span][heads * value_dim], then
// the next slot and the rows filled (small integers, exact in float). Scratch: span scores.
int64_t ring_floats(const AttentionParams& a) {
  return static_cast<int64_t>(a.span) * a.heads * (a.key_dim + a.value_dim);
}

void run_stream(const StepCtx& c, const Step& s) noexcept {
  const AttentionParams& a = s.attention;
  const int hk = a.heads * a.key_dim, hv = a.heads * a.value_dim;
  float* keys = c.arena(s.state);
  float* values = keys + static_cast<size_t>(a.span) * hk;
  float* slot = values + static_cast<size_t>(a.span) * hv;
  float* filled = slot + 1;
  const int at = static_cast<int>(*slot);
  std::memcpy(keys + static_cast<size_t>(at) * hk, c.at(s.rhs) + a.k.col, sizeof(float) * hk);
  std::memcpy(values + static_cast<size_t>(at) * hv, c.at(s.extra_inputs[0]) + a.v.col, sizeof(float) * hv);
  *slot = static_cast<float>((at + 1) % a.span);
  const int n = std::min(static_cast<int>(*filled) + 1, a.span);
  *filled = static_cast<float>(n);
  const float* q = c.at(s.in) + a.q.col;
  float* out = c.at(s.out);
  float* scores = c.arena(s.scratch);
  const float scale = 1.0f / std::sqrt(static_cast<float>(a.key_dim));
  for (int h = 0; h < a.heads; ++h) {
    const float* qh = q + h * a.key_dim;
    for (int j = 0; j < n; ++j) {
      const float* kj = keys + static_cast<size_t>(j) * hk + h * a.key_dim;
      float acc = 0.0f;
      for (int d = 0; d < a.key_dim; ++d) acc = std::fma(qh[d], kj[d] * scale, acc);
      scores[j] = acc;
    }
    c.ks.softmax(scores, scores, n);
    float* oh = out + h * a.value_dim;
    std::fill(oh, oh + a.value_dim, 0.0f);
    for (int j = 0; j < n; ++j) {
      const float* vj = values + static_cast<size_t>(j) * hv + h * a.value_dim;
      for (int d = 0; d < a.value_dim; ++d) oh[d] = std::fma(scores[j], vj[d], oh[d]);
    }
  }
}

void run_any(const StepCtx& c, const Step& s) noexcept {
  if (s.attention.stream) return run_stream(c, s);
  run(c, s);
}

int64_t state(const OpParams& p) { return p.attention.stream ? ring_floats(p.attention) + 2 : 0; }

int64_t scratch(const OpParams& p) {
  const AttentionParams& a = p.attention;
  if (a.stream) return static_cast<int64_t>(padded(static_cast<size_t>(a.span)));
  return static_cast<int64_t>(scores_floats(p) + gathered_floats(a) + packed_keys_floats(a) + packed_values_floats(a));
}

// The score and weighted-sum products (the projections are their own Dense steps); no weights.
StepCost cost(const Step& s) {
  const AttentionParams& a = s.attention;
  int64_t pairs = 0;
  for (int i = 0; i < s.steps; ++i) {
    const int last = a.causal ? std::min(i + 1, a.keys) : (a.span > 0 ? std::min(a.keys, i + a.span) : a.keys);
    pairs += a.stream ? a.span : last - (a.span > 0 ? std::max(0, i - a.span + 1) : 0);
  }
  return {pairs * a.heads * (a.key_dim + a.value_dim), 0};
}

void describe(std::ostream& os, const Step& s) {
  const AttentionParams& a = s.attention;
  os << "  heads=" << a.heads << " key_dim=" << a.key_dim << " value_dim=" << a.value_dim << " T=" << s.steps
     << " S=" << a.keys << (a.causal ? " causal" : "");
  if (a.span > 0) os << " span=" << a.span << (a.stream ? " (key/value cache)" : "");
}

}  // namespace

extern const StepOps kAttentionStep = {"attention", "attention", run_any, nullptr, state, scratch, cost, describe};

}  // namespace tickinfer::engine
