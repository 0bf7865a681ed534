#pragma once
// Internal: one attention head (KernelSet::attend_head), written once against a Simd traits type
// and instantiated per ISA in simd_kernels_<isa>.cpp. A block of queries, in vector lanes, is one
// panel of the packed Q^T (kPanel = 16 queries: two AVX2 vectors, one AVX-512 vector, four
// portable ones), or one vector when a mask is set (attend_head, below). The block walks down the
// key rows three times: the scores and their max, the exponentials and their sum, then the
// weighted sums of the value rows. Every
// reduction is lane-wise, so a query's softmax costs no shuffle, no scalar division and no
// normalising pass: the weighted sums are scaled by 1 / sum once, at the end. Results differ from
// the scalar reference (attention_scalar.cpp) by the exponential's ulps and summation order.
//
// Why whole panels and tiles of key rows: the scores are a small GEMM (key rows x key_dim times
// key_dim x queries) whose inner dimension is only key_dim (8 or 16), so a row-at-a-time dot
// product is a chain of key_dim dependent FMAs with a broadcast each. A tile of key rows times
// the block's vectors keeps independent accumulators, loads each Q^T vector once per tile and
// each key element once per row.
//
// Masks (causal, span) cost compares and blends, so only the key rows that some lane of the block
// does not see take them: a causal block's diagonal rows and a span's lower edge; the rows every
// lane sees (most of a causal block's) run unmasked.
#include <algorithm>
#include <utility>

#include "kernels/kernel_set.hpp"
#include "kernels/lane_index.hpp"
#include "kernels/unroll.hpp"
#include "kernels/vector_math.hpp"

namespace tickinfer::kernels::simd {

// At most the accumulators a score tile keeps (8: the register file holds them with the operands
// beside them on every ISA), and the weighted sums' (12: the exponentials and one broadcast beside
// them still fit 16 registers, and value widths up to 6 take one walk on AVX2).
inline constexpr int kScoreAccumulators = 8;
inline constexpr int kSumAccumulators = 12;

// A block's key rows: [first, clear_begin) and [clear_end, end) are hidden from some lane (masked
// per lane: keys in [lo, hi] are seen), [clear_begin, clear_end) seen by every lane.
template <class S, int VB>
struct BlockRows {
  using V = typename S::V;
  int first, clear_begin, clear_end, end;
  V lo[VB], hi[VB];
  // x where vector v's lane sees key j, else `hidden`.
  V keep(int v, int j, V x, V hidden) const {
    const V jv = S::set1(static_cast<float>(j));
    return S::select(S::ge(jv, lo[v]), S::select(S::ge(hi[v], jv), x, hidden), hidden);
  }
};

template <class S, int VB>
inline BlockRows<S, VB> block_rows(const AttendHead& a, int i0) {
  constexpr int kQueries = VB * S::kWidth;
  const KeyRange keys = attend_keys(a, i0, kQueries);
  BlockRows<S, VB> b;
  b.first = keys.first;
  b.end = keys.end;
  // Every lane sees key j when j >= the last lane's lowest key and j <= the first lane's highest.
  b.clear_begin = a.span > 0 ? std::clamp(i0 + kQueries - a.span, keys.first, keys.end) : keys.first;
  const int first_lane_end = a.causal ? i0 + 1 : (a.span > 0 ? i0 + a.span : keys.end);
  b.clear_end = std::clamp(first_lane_end, b.clear_begin, keys.end);
  const float inf = __builtin_inff(), reach = static_cast<float>(a.span - 1);
  for (int v = 0; v < VB; ++v) {
    // Lane l of vector v holds query i0 + v W + l; masks compare key indices with it (exact in float).
    const typename S::V i = S::add(S::load(kLaneIndex + v * S::kWidth), S::set1(static_cast<float>(i0)));
    b.lo[v] = a.span > 0 ? S::sub(i, S::set1(reach)) : S::set1(-inf);
    b.hi[v] = a.causal ? i : (a.span > 0 ? S::add(i, S::set1(reach)) : S::set1(inf));
  }
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

template <int N, class S, int VB, class G>
TICKINFER_ALWAYS_INLINE inline void for_row_groups(const BlockRows<S, VB>& b, G&& g) {
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

// The block's scores for key rows [j, j + R): q_i . k_j for every lane, R x VB independent
// accumulators; stored for the next walk, and folded into each vector's running max m (masked
// per lane on the block's edge rows). The loop over key_dim stays a loop: each step is a whole
// tile, and one unrolled instance per key width made the kernels four times larger and slower
// (AVX2, T64 d8 head 8.4 -> 7.9 us without them).
template <class S, int VB, int R, bool kMasked>
TICKINFER_ALWAYS_INLINE inline void score_tile(const BlockRows<S, VB>& b, const float* qt, const float* key_rows,
                                               size_t ldk, int key_dim, float* scores, size_t ld, int j,
                                               typename S::V (&m)[VB]) {
  using V = typename S::V;
  constexpr int W = S::kWidth;
  const float* k = key_rows + static_cast<size_t>(j) * ldk;
  V acc[R][VB];
  {
    V q[VB];
    TICKINFER_UNROLL
    for (int v = 0; v < VB; ++v) q[v] = S::load(qt + v * W);
    TICKINFER_UNROLL
    for (int r = 0; r < R; ++r) {
      const V kr = S::set1(k[r * ldk]);
      TICKINFER_UNROLL
      for (int v = 0; v < VB; ++v) acc[r][v] = S::mul(kr, q[v]);
    }
  }
  for (int d = 1; d < key_dim; ++d) {
    V q[VB];
    TICKINFER_UNROLL
    for (int v = 0; v < VB; ++v) q[v] = S::load(qt + d * kPanel + v * W);
    TICKINFER_UNROLL
    for (int r = 0; r < R; ++r) {
      const V kr = S::set1(k[r * ldk + d]);
      TICKINFER_UNROLL
      for (int v = 0; v < VB; ++v) acc[r][v] = S::fmadd(kr, q[v], acc[r][v]);
    }
  }
  const V neg_inf = S::set1(-__builtin_inff());
  TICKINFER_UNROLL
  for (int r = 0; r < R; ++r) {
    TICKINFER_UNROLL
    for (int v = 0; v < VB; ++v) {
      S::store(scores + static_cast<size_t>(j + r) * ld + v * W, acc[r][v]);
      const V s = kMasked ? b.keep(v, j + r, acc[r][v], neg_inf) : acc[r][v];
      m[v] = S::max(m[v], s);
    }
  }
}

// The block's scores over all its key rows, stored; each vector's max over the keys its lanes see.
template <class S, int VB, int R>
TICKINFER_ALWAYS_INLINE inline void scores_and_max(const AttendHead& a, const BlockRows<S, VB>& b, int i0,
                                                   typename S::V (&m)[VB]) {
  // Locals, not a's fields: the vector stores below may alias anything, so fields read through
  // `a` would be reloaded after every store.
  const float* qt = a.queries_t + static_cast<size_t>(i0 / kPanel) * a.key_dim * kPanel + i0 % kPanel;
  const float* key_rows = a.key_rows;
  float* scores = a.scores_t + i0;
  const size_t ldk = a.ldk, ld = a.ld;
  const int key_dim = a.key_dim;
  TICKINFER_UNROLL
  for (int v = 0; v < VB; ++v) m[v] = S::set1(-__builtin_inff());
  // Rows [from, to) in tiles of R, then one at a time; masked or not as the range is.
  auto walk = [&]<bool kMasked>(int from, int to) TICKINFER_ALWAYS_INLINE {
    int j = from;
    for (; j + R <= to; j += R) score_tile<S, VB, R, kMasked>(b, qt, key_rows, ldk, key_dim, scores, ld, j, m);
    for (; j < to; ++j) score_tile<S, VB, 1, kMasked>(b, qt, key_rows, ldk, key_dim, scores, ld, j, m);
  };
  walk.template operator()<true>(b.first, b.clear_begin);
  walk.template operator()<false>(b.clear_begin, b.clear_end);
  walk.template operator()<true>(b.clear_end, b.end);
}

// The exponentials e = 2^(score - max), zero where a lane does not see the key, stored over the
// scores; returns their sum per lane in sum. Several rows per iteration: an exponential is a chain
// of a dozen dependent operations, and independent ones in flight hide that latency.
template <class S, int VB>
TICKINFER_ALWAYS_INLINE inline void store_exponentials(const AttendHead& a, const BlockRows<S, VB>& b, int i0,
                                                       const typename S::V (&m)[VB], typename S::V (&sum)[VB]) {
  using V = typename S::V;
  constexpr int W = S::kWidth;
  constexpr int N = VB >= 4 ? 1 : 4 / VB;  // rows per iteration: four exponentials in flight
  V sums[N][VB];
  TICKINFER_UNROLL
  for (int u = 0; u < N; ++u) {
    TICKINFER_UNROLL
    for (int v = 0; v < VB; ++v) sums[u][v] = S::zero();
  }
  float* scores = a.scores_t + i0;
  const size_t ld = a.ld;
  for_row_groups<N>(b, [&]<bool kMasked, int U>(int j) TICKINFER_ALWAYS_INLINE {
    float* row = scores + static_cast<size_t>(j) * ld;
    TICKINFER_UNROLL
    for (int v = 0; v < VB; ++v) {
      V e = vmath::exp2_nonpositive_flush<S>(S::sub(S::load(row + v * W), m[v]));
      if constexpr (kMasked) e = b.keep(v, j, e, S::zero());
      S::store(row + v * W, e);
      sums[U][v] = S::add(sums[U][v], e);
    }
  });
  TICKINFER_UNROLL
  for (int v = 0; v < VB; ++v) {
    sum[v] = sums[0][v];
    TICKINFER_UNROLL
    for (int u = 1; u < N; ++u) sum[v] = S::add(sum[v], sums[u][v]);
  }
}

// The G x VB scaled sums acc (column d0 + t, queries i0 + v W + lane) into the queries' rows,
// through `staging` (G x VB W floats): a transpose.
template <class S, int VB, int G>
inline void store_columns(const AttendHead& a, int i0, int d0, const typename S::V (&acc)[G][VB],
                          const typename S::V (&inv_sum)[VB], float* staging) {
  constexpr int W = S::kWidth, kQueries = VB * W;
  TICKINFER_UNROLL
  for (int t = 0; t < G; ++t) {
    TICKINFER_UNROLL
    for (int v = 0; v < VB; ++v) S::store(staging + t * kQueries + v * W, S::mul(acc[t][v], inv_sum[v]));
  }
  const int lanes = std::min(kQueries, a.queries - i0);
  for (int l = 0; l < lanes; ++l) {
    float* out = a.out + static_cast<size_t>(i0 + l) * a.ldo + d0;
    for (int t = 0; t < G; ++t) out[t] = staging[t * kQueries + l];
  }
}

// The weighted sums of G value columns from the stored exponentials: per key row, VB loads of the
// exponentials and G broadcasts of the values feed G x VB independent accumulators.
template <class S, int VB, int G>
TICKINFER_ALWAYS_INLINE inline void weighted_sum(const AttendHead& a, const BlockRows<S, VB>& b, int i0, int d0,
                                                 const typename S::V (&inv_sum)[VB], float* staging) {
  using V = typename S::V;
  constexpr int W = S::kWidth;
  V acc[G][VB];
  TICKINFER_UNROLL
  for (int t = 0; t < G; ++t) {
    TICKINFER_UNROLL
    for (int v = 0; v < VB; ++v) acc[t][v] = S::zero();
  }
  const float* scores = a.scores_t + i0;
  const float* values = a.values + d0;
  const size_t ld = a.ld, ldv = a.ldv;
  for (int j = b.first; j < b.end; ++j) {
    V e[VB];
    TICKINFER_UNROLL
    for (int v = 0; v < VB; ++v) e[v] = S::load(scores + static_cast<size_t>(j) * ld + v * W);
    const float* vj = values + static_cast<size_t>(j) * ldv;
    TICKINFER_UNROLL
    for (int t = 0; t < G; ++t) {
      const V x = S::set1(vj[t]);
      TICKINFER_UNROLL
      for (int v = 0; v < VB; ++v) acc[t][v] = S::fmadd(e[v], x, acc[t][v]);
    }
  }
  store_columns<S, VB, G>(a, i0, d0, acc, inv_sum, staging);
}

// Dispatch a runtime count g in [1, G] to the template instance for it.
template <int G, class F>
inline void with_count(int g, F&& f) {
  if constexpr (G > 1) {
    if (g < G) return with_count<G - 1>(g, f);
  }
  f.template operator()<G>();
}

// The head in blocks of VB vectors of queries, scores in tiles of R key rows.
template <class S, int VB, int R>
inline void attend_blocks(const AttendHead& a) {
  using V = typename S::V;
  constexpr int kQueries = VB * S::kWidth;
  constexpr int kColumns = kSumAccumulators / VB;    // value columns per weighted-sum walk
  alignas(64) float staging[kColumns * kQueries];
  for (int i0 = 0; i0 < a.queries; i0 += kQueries) {
    const BlockRows<S, VB> b = block_rows<S, VB>(a, i0);
    V m[VB], sum[VB], inv_sum[VB];
    scores_and_max<S, VB, R>(a, b, i0, m);
    store_exponentials<S, VB>(a, b, i0, m, sum);
    TICKINFER_UNROLL
    for (int v = 0; v < VB; ++v) inv_sum[v] = inverse_sum<S>(sum[v]);
    for (int d0 = 0; d0 < a.value_dim; d0 += kColumns) {
      with_count<kColumns>(std::min(kColumns, a.value_dim - d0),
                           [&]<int G>() { weighted_sum<S, VB, G>(a, b, i0, d0, inv_sum, staging); });
    }
  }
}

// Blocks of a whole panel (16 queries) unless a mask is set: a causal or sliding-window block's
// key range grows with its last query and its edge rows are masked, so wider blocks compute
// more scores no lane keeps (TransLOB, T 100 causal: a quarter more with 16-query blocks than
// with 8); there the block is one vector. Score tiles: kScoreAccumulators independent chains
// (4 rows of two AVX2 vectors, 8 rows of one AVX-512 vector, 2 rows of four portable ones);
// with a mask 4 rows of one vector, measured faster on AVX2 than 8 rows: a causal block's edge
// leaves single-row tails as long as the tiles.
template <class S>
inline void attend_head(const AttendHead& a) {
  constexpr int VB = kPanel / S::kWidth;
  if (a.causal || a.span > 0) return attend_blocks<S, 1, 4>(a);
  attend_blocks<S, VB, kScoreAccumulators / VB>(a);
}

}  // namespace tickinfer::kernels::simd
