// Attention: MultiHeadAttention's core between its projections (Dense steps before and after).
// Per head and query row i: scores over the key rows (all S, or j <= i when causal), scaled by
// 1 / sqrt(key_dim) (folded into the packed queries: k . (s q) instead of Keras' s (q . k), the
// same to within a rounding, which the Keras fixtures' tolerance covers; with log2(e) too, for
// the kernel's base-2 softmax), a softmax, and
// the probabilities' weighted sum of the value rows. A causal mask is a shorter softmax: Keras
// sets the masked scores to -0.7 x FLT_MAX, whose exponentials are exactly 0; a sliding window
// (span) shortens it from the front too. Not row-wise (a query row reads every key row).
// Stream mode (causal, with a span): one query row per run against the key and value rows of
// the last `span` runs, kept in the step's state as a ring (a key/value cache): the softmax and
// the weighted sum do not depend on the rows' order, so the ring is read as it lies.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <ostream>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

// Scratch: a head's scores transposed (keys x queries, a row per key, queries padded to whole
// panels) and its scaled queries Q^T in the kernels' panel form (kernels/kernel_set.hpp), which
// KernelSet::attend_head reads with the queries in vector lanes.
struct Scratch {
  float* scores_t;        // keys x query_columns(p)
  float* packed_queries;  // (key_dim x query_columns(p)), panel form
};

size_t padded(size_t floats) { return (floats + 15) / 16 * 16; }
size_t query_columns(const OpParams& p) { return static_cast<size_t>(kernels::round_up(p.steps, kernels::kPanel)); }
size_t scores_floats(const OpParams& p) { return static_cast<size_t>(p.attention.keys) * query_columns(p); }
size_t packed_queries_floats(const OpParams& p) { return static_cast<size_t>(p.attention.key_dim) * query_columns(p); }

Scratch scratch_of(const StepCtx& c, const Step& s) noexcept {
  float* base = c.arena(s.scratch);
  return {base, base + padded(scores_floats(s))};
}

// Head h's queries as the (key_dim x T) matrix Q^T scaled by `scale` (so the scores come out
// scaled, without a pass over them), zero past T, in panel form:
// packed[(p key_dim + d) kPanel + l] = scale q[p kPanel + l][h key_dim + d].
void pack_queries(const Step& s, const float* q, int h, float scale, float* packed) noexcept {
  const AttentionParams& a = s.attention;
  constexpr size_t P = kernels::kPanel;
  const size_t kd = static_cast<size_t>(a.key_dim), ld = static_cast<size_t>(a.q.ld);
  const size_t T = static_cast<size_t>(s.steps), columns = query_columns(s);
  const float* qh = q + a.q.col + static_cast<size_t>(h) * kd;
  for (size_t p0 = 0; p0 < columns; p0 += P, packed += kd * P) {
    const size_t n = std::min(P, T > p0 ? T - p0 : 0);  // real queries in this panel
    for (size_t d = 0; d < kd; ++d) {
      float* col = packed + d * P;
      const float* src = qh + p0 * ld + d;
      for (size_t l = 0; l < n; ++l) col[l] = src[l * ld] * scale;
      std::fill(col + n, col + P, 0.0f);  // padding queries: zero scores, never stored
    }
  }
}

// Head after head: pack the head's scaled queries, then attend_head over its columns of the key
// and value rows (the projections' rows, read in place).
void run(const StepCtx& c, const Step& s) noexcept {
  const AttentionParams& a = s.attention;
  const Scratch sc = scratch_of(c, s);
  const float* q = c.at(s.in);
  float* out = c.at(s.out);
  // log2(e) / sqrt(key_dim): the kernel's softmax is in base 2 (2^(log2(e) x) = e^x).
  const float scale = static_cast<float>(std::numbers::log2e / std::sqrt(static_cast<double>(a.key_dim)));
  const float* keys = c.at(s.rhs) + a.k.col;
  const float* values = c.at(s.extra_inputs[0]) + a.v.col;
  kernels::AttendHead head{sc.packed_queries, nullptr, static_cast<size_t>(a.k.ld), a.key_dim, sc.scores_t,
                           query_columns(s), s.steps, a.keys, nullptr, static_cast<size_t>(a.v.ld), a.value_dim,
                           nullptr, static_cast<size_t>(a.heads) * a.value_dim, a.causal, a.span};
  for (int h = 0; h < a.heads; ++h) {
    pack_queries(s, q, h, scale, sc.packed_queries);
    head.key_rows = keys + h * a.key_dim;
    head.values = values + h * a.value_dim;
    head.out = out + h * a.value_dim;
    c.ks.attend_head(head);
  }
}

// Stream mode. State: K ring [span][heads * key_dim], V ring [span][heads * value_dim], then
// the next slot and the rows filled (small integers, exact in float). Scratch: span scores. One
// query against at most `span` rows, computed directly: attend_head's blocks of 8 or 16 query
// lanes and its packing would cost a tick more than they save (3,138 against 3,913 instructions
// per tick for tests/fixtures/attention_stream_k3, callgrind).
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
  return static_cast<int64_t>(padded(scores_floats(p)) + padded(packed_queries_floats(p)));
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
