#pragma once
// Internal: the dot form of gemv (N <= kDotMaxN outputs, each a contiguous zero-padded weight
// row; kernel_set.hpp) and the gemv entry that routes between it and an ISA's panel kernel.
// Written once over a `Simd` struct (simd_<isa>.hpp) and instantiated by each gemv_<isa>.cpp,
// which keeps only its panel kernel, tuned to its register file.
#include <cstddef>

#include "kernels/kernel_set.hpp"
#include "kernels/unroll.hpp"

namespace tickinfer::kernels::simd {

inline float clamp_one(float acc, const float* init, float lo, float hi) {
  float v = (init ? *init : 0.0f) + acc;
  v = v < lo ? lo : v;  // false for NaN: NaN propagates
  return v > hi ? hi : v;
}

// Pairwise sum of sets[B..E) (compile-time indices only, so the sets stay in registers).
template <class Simd, int B, int E, int S>
inline typename Simd::V sum_sets(const typename Simd::V (&sets)[S]) {
  if constexpr (E - B == 1) {
    return sets[B];
  } else {
    constexpr int M = B + (E - B) / 2;
    return Simd::add(sum_sets<Simd, B, M>(sets), sum_sets<Simd, M, E>(sets));
  }
}

// y[r] = clamp(init[r] + dot(x, row r), lo, hi) for R <= kDotMaxN rows of dot_row_floats(K).
template <class Simd, int R>
inline void dot_rows(const float* x, int K, const float* w, const float* init, float* y, float lo,
                     float hi) {
  using V = typename Simd::V;
  constexpr int W = Simd::kWidth;
  static_assert(kDotKAlign % W == 0, "weight rows must pad to whole vectors");
  // K-split accumulators per row: R * S >= 8 chains, except a single row keeps 4 (its K is
  // usually short, a final Dense(1) after 16-64 units, where the reduction depth costs more).
  constexpr int S = R == 1 ? 4 : (8 + R - 1) / R;
  const size_t stride = static_cast<size_t>(dot_row_floats(K));
  V acc[R][S];
  TICKINFER_UNROLL
  for (int r = 0; r < R; ++r)
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) acc[r][s] = Simd::zero();
  int k = 0;
  for (; k + W * S <= K; k += W * S) {
    TICKINFER_UNROLL
    for (int s = 0; s < S; ++s) {
      const V xv = Simd::load(x + k + W * s);
      TICKINFER_UNROLL
      for (int r = 0; r < R; ++r)
        acc[r][s] = Simd::fmadd(xv, Simd::load(w + r * stride + k + W * s), acc[r][s]);
    }
  }
  TICKINFER_UNROLL
  for (int t = 0; t + 1 < S; ++t) {  // at most S - 1 whole vectors remain
    if (k + W > K) break;
    const V xv = Simd::load(x + k);
    TICKINFER_UNROLL
    for (int r = 0; r < R; ++r) acc[r][t] = Simd::fmadd(xv, Simd::load(w + r * stride + k), acc[r][t]);
    k += W;
  }
  if (k < K) {  // x is read only up to K; weight rows are zero-padded, so a whole vector is readable
    const V xv = Simd::load_partial(x + k, K - k);
    TICKINFER_UNROLL
    for (int r = 0; r < R; ++r)
      acc[r][S - 1] = Simd::fmadd(xv, Simd::load(w + r * stride + k), acc[r][S - 1]);
  }
  TICKINFER_UNROLL
  for (int r = 0; r < R; ++r) {
    y[r] = clamp_one(Simd::reduce_add(sum_sets<Simd, 0, S>(acc[r])), init ? init + r : nullptr, lo, hi);
  }
}

// The gemv contract of kernel_set.hpp: the dot form for small N, the ISA's panel kernel else.
template <class Simd, class Panels>
inline void gemv(const float* x, int K, const float* packed_w, int N, const float* init, float* y,
                 float lo, float hi, Panels panels) noexcept {
  static_assert(kDotMaxN == 4, "one dot_rows instance per dot-form N");
  switch (is_dot_form(N) ? N : 0) {
    case 1: return dot_rows<Simd, 1>(x, K, packed_w, init, y, lo, hi);
    case 2: return dot_rows<Simd, 2>(x, K, packed_w, init, y, lo, hi);
    case 3: return dot_rows<Simd, 3>(x, K, packed_w, init, y, lo, hi);
    case 4: return dot_rows<Simd, 4>(x, K, packed_w, init, y, lo, hi);
    default: return panels(x, K, packed_w, N, init, y, lo, hi);
  }
}

}  // namespace tickinfer::kernels::simd
