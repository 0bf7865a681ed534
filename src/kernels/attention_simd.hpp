#pragma once
// Internal: one attention head (KernelSet::attend_head), written once against a Simd traits type
// and instantiated per ISA in simd_kernels_<isa>.cpp. Queries lie in vector lanes: a block of
// S::kWidth queries walks down the key rows to compute the scores and their max, again for the
// exponentials and their sum, and once per 8 value columns for the weighted sums, so every
// reduction is lane-wise and a query's softmax costs no shuffle, no scalar division and no
// normalising pass: the weighted sums are scaled by 1 / sum once, at the end. Results differ from
// the scalar reference (attention_scalar.cpp) by the exponential's ulps and summation order.
//
// Masks (causal, span) cost compares and blends, so only the key rows that some lane of the block
// does not see take them: a causal block's diagonal rows and a span's lower edge; the rows every
// lane sees (most of a causal block's) run unmasked.
#include <algorithm>
#include <utility>

#include "kernels/kernel_set.hpp"
#include "kernels/unroll.hpp"
#include "kernels/vector_math.hpp"

namespace tickinfer::kernels::simd {

// Lane l of a block holds query i0 + l; masks compare key indices with these (exact in float).
inline constexpr float kLaneIndex[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

// A block's key rows: [first, clear_begin) and [clear_end, end) are hidden from some lane (masked
// per lane: keys in [lo, hi] are seen), [clear_begin, clear_end) seen by every lane.
template <class S>
struct BlockRows {
  int first, clear_begin, clear_end, end;
  typename S::V lo, hi;
  // x where lane sees key j, else `hidden`.
  typename S::V keep(int j, typename S::V x, typename S::V hidden) const {
    const typename S::V jv = S::set1(static_cast<float>(j));
    return S::select(S::ge(jv, lo), S::select(S::ge(hi, jv), x, hidden), hidden);
  }
};

template <class S>
inline BlockRows<S> block_rows(const AttendHead& a, int i0) {
  using V = typename S::V;
  constexpr int W = S::kWidth;
  const KeyRange keys = attend_keys(a, i0, W);
  BlockRows<S> b;
  b.first = keys.first;
  b.end = keys.end;
  // Every lane sees key j when j >= the last lane's lowest key and j <= the first lane's highest.
  b.clear_begin = a.span > 0 ? std::clamp(i0 + W - a.span, keys.first, keys.end) : keys.first;
  const int first_lane_end = a.causal ? i0 + 1 : (a.span > 0 ? i0 + a.span : keys.end);
  b.clear_end = std::clamp(first_lane_end, b.clear_begin, keys.end);
  const V i = S::add(S::load(kLaneIndex), S::set1(static_cast<float>(i0)));
  const float inf = __builtin_inff(), reach = static_cast<float>(a.span - 1);
  b.lo = a.span > 0 ? S::sub(i, S::set1(reach)) : S::set1(-inf);
  b.hi = a.causal ? i : (a.span > 0 ? S::add(i, S::set1(reach)) : S::set1(inf));
  return b;
}

// g.template operator()<kMasked, U>(j) over the block's rows in order: the masked edges one row
// at a time (U = 0), the clear middle N rows per iteration with U in [0, N) (N independent
// chains in flight, each with its own partial result; U is a template argument so that arrays
// indexed by it stay in registers).
template <class G, int... U>
TICKINFER_ALWAYS_INLINE inline void clear_group(G& g, int j, std::integer_sequence<int, U...>) {
  (g.template operator()<false, U>(j + U), ...);
}

template <int N, class S, class G>
TICKINFER_ALWAYS_INLINE inline void for_row_groups(const BlockRows<S>& b, G&& g) {
  for (int j = b.first; j < b.clear_begin; ++j) g.template operator()<true, 0>(j);
  int j = b.clear_begin;
  for (; j + N <= b.clear_end; j += N) clear_group(g, j, std::make_integer_sequence<int, N>{});
  for (; j < b.clear_end; ++j) g.template operator()<false, 0>(j);
  for (j = b.clear_end; j < b.end; ++j) g.template operator()<true, 0>(j);
}

// 1 / sum per lane; a lane that sees no key (sum 0) gets 0, so its outputs are zeros, not 0 / 0.
template <class S>
inline typename S::V inverse_sum(typename S::V sum) {
  return S::select(S::gt(sum, S::zero()), S::div(S::set1(1.0f), sum), S::zero());
}

// The G scaled sums acc[t] (lane l: query i0 + l, column d0 + t) into the queries' rows, through
// `staging` (G x kWidth floats): a transpose.
template <class S, int G>
inline void store_columns(const AttendHead& a, int i0, int d0, const typename S::V (&acc)[G], typename S::V inv_sum,
                          float* staging) {
  constexpr int W = S::kWidth;
  TICKINFER_UNROLL
  for (int t = 0; t < G; ++t) S::store(staging + t * W, S::mul(acc[t], inv_sum));
  const int lanes = std::min(W, a.queries - i0);
  for (int l = 0; l < lanes; ++l) {
    float* out = a.out + static_cast<size_t>(i0 + l) * a.ldo + d0;
    for (int t = 0; t < G; ++t) out[t] = staging[t * W + l];
  }
}

// The weighted sums of G value columns from the stored exponentials.
template <class S, int G>
TICKINFER_ALWAYS_INLINE inline void weighted_sum(const AttendHead& a, const BlockRows<S>& b, int i0, int d0, typename S::V inv_sum,
                         float* staging) {
  using V = typename S::V;
  V acc[G];
  TICKINFER_UNROLL
  for (int t = 0; t < G; ++t) acc[t] = S::zero();
  const float* scores = a.scores_t + i0;
  const float* values = a.values + d0;
  const size_t ld = a.ld, ldv = a.ldv;
  for (int j = b.first; j < b.end; ++j) {
    const V e = S::load(scores + static_cast<size_t>(j) * ld);
    const float* vj = values + static_cast<size_t>(j) * ldv;
    TICKINFER_UNROLL
    for (int t = 0; t < G; ++t) acc[t] = S::fmadd(e, S::set1(vj[t]), acc[t]);
  }
  store_columns<S, G>(a, i0, d0, acc, inv_sum, staging);
}

// The exponentials e = exp(score - max), zero where a lane does not see the key, stored over the
// scores; returns their sum per lane. Four rows at a time: an exponential is a chain of a dozen
// dependent operations, and independent ones in flight hide that latency.
template <class S>
TICKINFER_ALWAYS_INLINE inline typename S::V store_exponentials(const AttendHead& a, const BlockRows<S>& b, int i0,
                                                                typename S::V m) {
  using V = typename S::V;
  constexpr int N = 4;
  V sums[N];
  TICKINFER_UNROLL
  for (int u = 0; u < N; ++u) sums[u] = S::zero();
  float* scores = a.scores_t + i0;
  const size_t ld = a.ld;
  for_row_groups<N>(b, [&]<bool kMasked, int U>(int j) TICKINFER_ALWAYS_INLINE {
    float* row = scores + static_cast<size_t>(j) * ld;
    V e = vmath::exp_nonpositive_flush<S>(S::sub(S::load(row), m));
    if constexpr (kMasked) e = b.keep(j, e, S::zero());
    S::store(row, e);
    sums[U] = S::add(sums[U], e);
  });
  return S::add(S::add(sums[0], sums[1]), S::add(sums[2], sums[3]));
}

// Dispatch a runtime column count g in [1, G] to the template instance for it.
template <int G, class F>
inline void with_columns(int g, F&& f) {
  if constexpr (G > 1) {
    if (g < G) return with_columns<G - 1>(g, f);
  }
  f.template operator()<G>();
}

// The block's scores, key row by key row: q_i . k_j for every lane at once (the block's D query
// columns held in registers, one broadcast of each key feature), stored for the next walk; returns
// each lane's maximum over the keys it sees. D = 0: key_dim is read at run time, the columns
// loaded per row (dimensions past the register file).
template <class S, int D>
TICKINFER_ALWAYS_INLINE inline typename S::V scores_and_max(const AttendHead& a, const BlockRows<S>& b, int i0) {
  using V = typename S::V;
  const V neg_inf = S::set1(-__builtin_inff());
  // Locals, not a's fields: the vector stores below may alias anything, so fields read through
  // `a` would be reloaded after every store.
  const float* qt = a.queries_t + static_cast<size_t>(i0 / kPanel) * a.key_dim * kPanel + i0 % kPanel;
  const float* key_rows = a.key_rows;
  float* scores = a.scores_t + i0;
  const size_t ldk = a.ldk, ld = a.ld;
  const int key_dim = a.key_dim;
  V q[D > 0 ? D : 1];
  if constexpr (D > 0) {
    TICKINFER_UNROLL
    for (int d = 0; d < D; ++d) q[d] = S::load(qt + d * kPanel);
  }
  V m[2] = {neg_inf, neg_inf};
  for_row_groups<2>(b, [&]<bool kMasked, int U>(int j) TICKINFER_ALWAYS_INLINE {
    const float* kj = key_rows + static_cast<size_t>(j) * ldk;
    V s;
    if constexpr (D > 0) {
      s = S::mul(q[0], S::set1(kj[0]));
      TICKINFER_UNROLL
      for (int d = 1; d < D; ++d) s = S::fmadd(q[d], S::set1(kj[d]), s);
    } else {
      s = S::mul(S::load(qt), S::set1(kj[0]));
      for (int d = 1; d < key_dim; ++d) s = S::fmadd(S::load(qt + d * kPanel), S::set1(kj[d]), s);
    }
    S::store(scores + static_cast<size_t>(j) * ld, s);
    if constexpr (kMasked) s = b.keep(j, s, neg_inf);
    m[U] = S::max(m[U], s);
  });
  return S::max(m[0], m[1]);
}

template <class S>
inline void attend_head(const AttendHead& a) {
  using V = typename S::V;
  constexpr int W = S::kWidth;
  constexpr int kColumns = 8;  // value columns (and key dimensions) held in registers
  alignas(64) float staging[kColumns * W];
  for (int i0 = 0; i0 < a.queries; i0 += W) {
    const BlockRows<S> b = block_rows<S>(a, i0);
    V m;
    if (a.key_dim <= kColumns) {
      with_columns<kColumns>(a.key_dim, [&]<int D>() { m = scores_and_max<S, D>(a, b, i0); });
    } else {
      m = scores_and_max<S, 0>(a, b, i0);
    }
    const V inv_sum = inverse_sum<S>(store_exponentials<S>(a, b, i0, m));
    for (int d0 = 0; d0 < a.value_dim; d0 += kColumns) {
      with_columns<kColumns>(std::min(kColumns, a.value_dim - d0),
                                [&]<int G>() { weighted_sum<S, G>(a, b, i0, d0, inv_sum, staging); });
    }
  }
}

}  // namespace tickinfer::kernels::simd
