#pragma once
// Internal: softmax, layer norm and binary elementwise ops, written once against a Simd traits
// type and instantiated per ISA in elementwise_<isa>.cpp. Reductions sum in vector lanes, so
// results differ from the scalar reference by rounding only (tolerances in the tests).
#include "kernels/lane_index.hpp"
#include "kernels/unroll.hpp"
#include "kernels/vector_math.hpp"

namespace tickinfer::kernels::simd {

// y = f(a, b) elementwise; y may alias a or b.
template <class S, class F>
inline void map_binary(const float* a, const float* b, float* y, int n, F f) {
  int i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) S::store(y + i, f(S::load(a + i), S::load(b + i)));
  if (i < n) {
    const int r = n - i;
    S::store_partial(y + i, f(S::load_partial(a + i, r), S::load_partial(b + i, r)), r);
  }
}

template <class S>
inline void softmax(const float* x, float* y, int n) {
  using V = typename S::V;
  constexpr float kNegInf = -__builtin_inff();
  const int full = n - n % S::kWidth;  // elements covered by whole vectors
  const int rest = n - full;
  V vmax = S::set1(kNegInf);
  for (int i = 0; i < full; i += S::kWidth) vmax = S::max(vmax, S::load(x + i));
  if (rest) vmax = S::max(vmax, S::load_partial(x + full, rest, kNegInf));
  const V mx = S::set1(S::reduce_max(vmax));
  V vsum = S::zero();
  for (int i = 0; i < full; i += S::kWidth) {
    const V e = vmath::exp<S>(S::sub(S::load(x + i), mx));
    S::store(y + i, e);
    vsum = S::add(vsum, e);
  }
  if (rest) {  // padding lanes are -inf, so they add exp(-inf) = 0
    const V e = vmath::exp<S>(S::sub(S::load_partial(x + full, rest, kNegInf), mx));
    S::store_partial(y + full, e, rest);
    vsum = S::add(vsum, e);
  }
  // One division, then multiplies: a vector division per 8 or 16 scores costs as much as the
  // exponentials on short rows (attention's), within an ulp of e / sum.
  const V inv = S::set1(1.0f / S::reduce_add(vsum));
  map_binary<S>(y, y, y, n, [&inv](V e, V) { return S::mul(e, inv); });
}

// p[0, rest) and `fill` in the other lanes: a whole load masked in registers when the lanes past
// rest may be read (kOverRead), else the ISA's partial load.
template <class S, bool kOverRead>
TICKINFER_ALWAYS_INLINE inline typename S::V load_tail(const float* p, int rest, float fill) {
  if constexpr (kOverRead) {
    return S::select(first_lanes_mask<S>(rest), S::load(p), S::set1(fill));
  } else {
    return S::load_partial(p, rest, fill);
  }
}

// R rows at once, each its own chain (sum, mean, squared deviations, inverse deviation): one
// row's chain is latency-bound (two horizontal sums, a square root and a division in a row,
// on 16 to 64 features in a Transformer), so R rows keep the core R times as busy.
// kOverRead: a row's last partial vector may be read whole (its lanes past n belong to the next
// row of the tensor), then masked in registers: a masked load costs several times a plain one on
// AMD cores, and a 15-wide row (TransLOB's) reads its tail three times.
template <class S, int R, bool kOverRead>
inline void layer_norm_block(const float* x, size_t ldx, const float* gamma, const float* beta, float eps, float* y,
                             size_t ldy, int n) {
  using V = typename S::V;
  const int full = n - n % S::kWidth;
  const int rest = n - full;
  V vmean[R], inv_std[R];
  float mean[R];
  for (int r = 0; r < R; ++r) vmean[r] = S::zero();
  for (int i = 0; i < full; i += S::kWidth) {
    for (int r = 0; r < R; ++r) vmean[r] = S::add(vmean[r], S::load(x + r * ldx + i));
  }
  for (int r = 0; r < R; ++r) {
    if (rest) vmean[r] = S::add(vmean[r], load_tail<S, kOverRead>(x + r * ldx + full, rest, 0.0f));
    mean[r] = S::reduce_add(vmean[r]) / static_cast<float>(n);
    vmean[r] = S::set1(mean[r]);
    // inv_std[r] first sums the squared deviations (two-pass population variance; padding lanes
    // hold the mean, adding 0): one array for both keeps four rows' vectors in registers.
    inv_std[r] = S::zero();
  }
  for (int i = 0; i < full; i += S::kWidth) {
    for (int r = 0; r < R; ++r) {
      const V d = S::sub(S::load(x + r * ldx + i), vmean[r]);
      inv_std[r] = S::fmadd(d, d, inv_std[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    if (rest) {
      const V d = S::sub(load_tail<S, kOverRead>(x + r * ldx + full, rest, mean[r]), vmean[r]);
      inv_std[r] = S::fmadd(d, d, inv_std[r]);
    }
    const float var = S::reduce_add(inv_std[r]) / static_cast<float>(n);
    inv_std[r] = S::div(S::set1(1.0f), S::set1(__builtin_sqrtf(var + eps)));
  }
  auto norm = [&](int r, V xv, V g, V b) { return S::fmadd(S::mul(S::sub(xv, vmean[r]), inv_std[r]), g, b); };
  int i = 0;
  for (; i < full; i += S::kWidth) {
    const V g = S::load(gamma + i), b = S::load(beta + i);
    for (int r = 0; r < R; ++r) S::store(y + r * ldy + i, norm(r, S::load(x + r * ldx + i), g, b));
  }
  if (rest) {
    const V g = S::load_partial(gamma + i, rest), b = S::load_partial(beta + i, rest);
    for (int r = 0; r < R; ++r) {
      S::store_partial(y + r * ldy + i, norm(r, load_tail<S, kOverRead>(x + r * ldx + i, rest, 0.0f), g, b), rest);
    }
  }
}

// Rows in blocks of four; the blocks before the last row read their tails whole when the lanes
// past a row's end still lie within the next row (ldx + rest >= the vector width).
template <class S>
inline void layer_norm(const float* x, size_t ldx, int rows, const float* gamma, const float* beta, float eps,
                       float* y, size_t ldy, int n) {
  constexpr int R = 4;
  const bool over_read = n % S::kWidth != 0 && ldx + static_cast<size_t>(n % S::kWidth) >= static_cast<size_t>(S::kWidth);
  int r = 0;
  if (over_read) {
    for (; r + R < rows; r += R) layer_norm_block<S, R, true>(x + r * ldx, ldx, gamma, beta, eps, y + r * ldy, ldy, n);
  }
  for (; r + R <= rows; r += R) layer_norm_block<S, R, false>(x + r * ldx, ldx, gamma, beta, eps, y + r * ldy, ldy, n);
  for (; r < rows; ++r) layer_norm_block<S, 1, false>(x + r * ldx, ldx, gamma, beta, eps, y + r * ldy, ldy, n);
}

// y = sums * (s * scale) + bias (kernel_set.hpp, scale_sums); the tail's sums converted through
// a stack row, so it rounds as the whole vectors do.
template <class S>
inline void scale_sums(const int32_t* sums, const float* scale, float s, const float* bias, float* y, int n) {
  const typename S::V sv = S::set1(s);
  int i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) {
    S::store(y + i, S::fmadd(S::from_i32(sums + i), S::mul(sv, S::load(scale + i)), S::load(bias + i)));
  }
  if (i < n) {
    const int r = n - i;
    float tail[S::kWidth] = {};
    for (int k = 0; k < r; ++k) tail[k] = static_cast<float>(sums[i + k]);
    S::store_partial(y + i,
                     S::fmadd(S::load_partial(tail, r), S::mul(sv, S::load_partial(scale + i, r)),
                              S::load_partial(bias + i, r)),
                     r);
  }
}

template <class S>
inline void affine(const float* x, const float* scale, const float* shift, float* y, int n) {
  int i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) {
    S::store(y + i, S::fmadd(S::load(x + i), S::load(scale + i), S::load(shift + i)));
  }
  if (i < n) {
    const int r = n - i;
    S::store_partial(y + i,
                     S::fmadd(S::load_partial(x + i, r), S::load_partial(scale + i, r),
                              S::load_partial(shift + i, r)),
                     r);
  }
}

}  // namespace tickinfer::kernels::simd
