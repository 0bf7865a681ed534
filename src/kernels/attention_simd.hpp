#pragma once
// Internal: one attention head after its score product (KernelSet::attend_head), written once
// against a Simd traits type and instantiated per ISA in simd_kernels_<isa>.cpp. Queries lie in
// vector lanes: a block of S::kWidth queries walks down the key rows of the transposed scores
// three times (max, exponentials and their sum, then the weighted sum of the value rows), so
// every reduction is lane-wise and a query's softmax costs no shuffle, no scalar division and no
// normalising pass: the weighted sums are scaled by 1 / sum once, at the end. Results differ from
// the scalar reference (attention_scalar.cpp) by the exponential's ulps and summation order.
#include <algorithm>

#include "kernels/kernel_set.hpp"
#include "kernels/vector_math.hpp"

namespace tickinfer::kernels::simd {

// Lane l of a block holds query i0 + l; masks compare key indices with these (exact in float).
inline constexpr float kLaneIndex[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

// The keys each lane's query sees: [lo, hi] per lane (float, exact for the small integers here).
template <class S>
struct VisibleKeys {
  typename S::V lo, hi;
  bool masked;  // some key row in the block's range is hidden from some lane
  typename S::V keep(typename S::V j, typename S::V x, typename S::V hidden) const {
    return S::select(S::ge(j, lo), S::select(S::ge(hi, j), x, hidden), hidden);
  }
};

template <class S>
inline VisibleKeys<S> visible_keys(const AttendHead& a, int i0) {
  using V = typename S::V;
  const V i = S::add(S::load(kLaneIndex), S::set1(static_cast<float>(i0)));
  const float inf = __builtin_inff();
  const float reach = static_cast<float>(a.span - 1);
  VisibleKeys<S> v;
  v.lo = a.span > 0 ? S::sub(i, S::set1(reach)) : S::set1(-inf);
  v.hi = a.causal ? i : (a.span > 0 ? S::add(i, S::set1(reach)) : S::set1(inf));
  v.masked = a.causal || a.span > 0;
  return v;
}

// acc[t] += e * values[j][d0 + t] over the block's key rows, for G value columns; then the
// scaled sums go out through `staging` (G x kWidth), transposed into the queries' rows.
template <class S, int G>
inline void weighted_sum(const AttendHead& a, KeyRange keys, int i0, int d0, typename S::V inv_sum,
                         float* staging) {
  using V = typename S::V;
  constexpr int W = S::kWidth;
  V acc[G];
  for (int t = 0; t < G; ++t) acc[t] = S::zero();
  for (int j = keys.first; j < keys.end; ++j) {
    const V e = S::load(a.scores_t + static_cast<size_t>(j) * a.ld + i0);
    const float* vj = a.values + static_cast<size_t>(j) * a.ldv + d0;
    for (int t = 0; t < G; ++t) acc[t] = S::fmadd(e, S::set1(vj[t]), acc[t]);
  }
  for (int t = 0; t < G; ++t) S::store(staging + t * W, S::mul(acc[t], inv_sum));
  const int lanes = std::min(W, a.queries - i0);
  for (int l = 0; l < lanes; ++l) {
    float* row = a.out + static_cast<size_t>(i0 + l) * a.ldo + d0;
    for (int t = 0; t < G; ++t) row[t] = staging[t * W + l];
  }
}

template <class S, int G>
inline void weighted_sum_upto(const AttendHead& a, KeyRange keys, int i0, int d0, int g, typename S::V inv_sum,
                              float* staging) {
  if constexpr (G > 1) {
    if (g < G) return weighted_sum_upto<S, G - 1>(a, keys, i0, d0, g, inv_sum, staging);
  }
  weighted_sum<S, G>(a, keys, i0, d0, inv_sum, staging);
}

// Value rows of at most G columns: the exponentials and the weighted sums in one walk down the
// key rows (no store and reload of the exponentials; each row's exponential overlaps the
// previous rows' multiply-adds), two rows per iteration for two exponential chains in flight.
template <class S, int G>
inline void exp_weighted_sum(const AttendHead& a, KeyRange keys, int i0, typename S::V m, const VisibleKeys<S>& vis,
                             float* staging) {
  using V = typename S::V;
  constexpr int W = S::kWidth;
  V acc[G];
  for (int t = 0; t < G; ++t) acc[t] = S::zero();
  V sums[2] = {S::zero(), S::zero()};
  auto row = [&](int j, int u) {
    V e = vmath::exp_nonpositive_flush<S>(S::sub(S::load(a.scores_t + static_cast<size_t>(j) * a.ld + i0), m));
    if (vis.masked) e = vis.keep(S::set1(static_cast<float>(j)), e, S::zero());
    sums[u] = S::add(sums[u], e);
    const float* vj = a.values + static_cast<size_t>(j) * a.ldv;
    for (int t = 0; t < G; ++t) acc[t] = S::fmadd(e, S::set1(vj[t]), acc[t]);
  };
  int j = keys.first;
  for (; j + 2 <= keys.end; j += 2) {
    row(j, 0);
    row(j + 1, 1);
  }
  if (j < keys.end) row(j, 0);
  const V sum = S::add(sums[0], sums[1]);
  const V inv_sum = S::select(S::gt(sum, S::zero()), S::div(S::set1(1.0f), sum), S::zero());
  for (int t = 0; t < G; ++t) S::store(staging + t * W, S::mul(acc[t], inv_sum));
  const int lanes = std::min(W, a.queries - i0);
  for (int l = 0; l < lanes; ++l) {
    float* out = a.out + static_cast<size_t>(i0 + l) * a.ldo;
    for (int t = 0; t < G; ++t) out[t] = staging[t * W + l];
  }
}

template <class S, int G>
inline void exp_weighted_sum_upto(const AttendHead& a, KeyRange keys, int i0, typename S::V m, const VisibleKeys<S>& vis,
                                  float* staging) {
  if constexpr (G > 1) {
    if (a.value_dim < G) return exp_weighted_sum_upto<S, G - 1>(a, keys, i0, m, vis, staging);
  }
  exp_weighted_sum<S, G>(a, keys, i0, m, vis, staging);
}

template <class S>
inline void attend_head(const AttendHead& a) {
  using V = typename S::V;
  constexpr int W = S::kWidth;
  constexpr int kColumns = 8;  // value columns per pass: accumulators held in registers
  alignas(64) float staging[kColumns * W];
  const V neg_inf = S::set1(-__builtin_inff());
  for (int i0 = 0; i0 < a.queries; i0 += W) {
    const KeyRange keys = attend_keys(a, i0, W);
    const VisibleKeys<S> vis = visible_keys<S>(a, i0);
    V m = neg_inf;
    for (int j = keys.first; j < keys.end; ++j) {
      V s = S::load(a.scores_t + static_cast<size_t>(j) * a.ld + i0);
      if (vis.masked) s = vis.keep(S::set1(static_cast<float>(j)), s, neg_inf);
      m = S::max(m, s);
    }
    if (a.value_dim <= kColumns) {
      exp_weighted_sum_upto<S, kColumns>(a, keys, i0, m, vis, staging);
      continue;
    }
    // Four key rows per iteration: four independent exponentials in flight (one alone is a
    // chain of some twenty dependent operations), four partial sums.
    auto exponential = [&](int j) {
      float* row = a.scores_t + static_cast<size_t>(j) * a.ld + i0;
      V e = vmath::exp_nonpositive_flush<S>(S::sub(S::load(row), m));
      if (vis.masked) e = vis.keep(S::set1(static_cast<float>(j)), e, S::zero());
      S::store(row, e);
      return e;
    };
    V sums[4] = {S::zero(), S::zero(), S::zero(), S::zero()};
    int j = keys.first;
    for (; j + 4 <= keys.end; j += 4) {
      for (int u = 0; u < 4; ++u) sums[u] = S::add(sums[u], exponential(j + u));
    }
    for (; j < keys.end; ++j) sums[0] = S::add(sums[0], exponential(j));
    const V sum = S::add(S::add(sums[0], sums[1]), S::add(sums[2], sums[3]));
    // A lane that sees no key (sum 0) gets zeros, not 0 / 0.
    const V inv_sum = S::select(S::gt(sum, S::zero()), S::div(S::set1(1.0f), sum), S::zero());
    for (int d0 = 0; d0 < a.value_dim; d0 += kColumns) {
      const int g = std::min(kColumns, a.value_dim - d0);
      weighted_sum_upto<S, kColumns>(a, keys, i0, d0, g, inv_sum, staging);
    }
  }
}

}  // namespace tickinfer::kernels::simd
