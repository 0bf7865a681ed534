#pragma once
// Internal: the 512-bit vector operations the templated kernels (vector_math.hpp,
// activation_simd.hpp, cells_simd.hpp, elementwise_simd.hpp) are written against. Include only
// from *_avx512.cpp files (compiled with the AVX-512 flags). Avx2Simd (simd_avx2.hpp) offers the
// same members; keep the two in step.
#include "kernels/x86_intrinsics.hpp"

namespace tickinfer::kernels::avx512 {

struct Simd {
  using V = __m512;
  using M = __mmask16;  // one bit per lane
  static constexpr int kWidth = 16;

  static V set1(float v) { return _mm512_set1_ps(v); }
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V from_i32(const int32_t* p) { return _mm512_cvtepi32_ps(_mm512_loadu_si512(p)); }  // kWidth int32, converted
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static M first_lanes(int n) { return static_cast<M>((1u << n) - 1u); }  // n in [0, 16]
  // Reads only p[0, n); other lanes get `fill`. Masked lanes never fault.
  static V load_partial(const float* p, int n, float fill = 0.0f) {
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), first_lanes(n), p);
  }
  // Writes only p[0, n).
  static void store_partial(float* p, V v, int n) { _mm512_mask_storeu_ps(p, first_lanes(n), v); }

  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }    // a * b + c
  static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a * b
  // min/max return b when either operand is NaN: pass the data as b to propagate NaN.
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V abs(V a) { return _mm512_abs_ps(a); }
  static V sign_bits(V a) { return _mm512_and_ps(a, _mm512_set1_ps(-0.0f)); }
  static V or_bits(V a, V b) { return _mm512_or_ps(a, b); }
  static V neg(V a) { return _mm512_xor_ps(a, _mm512_set1_ps(-0.0f)); }

  // Ordered comparisons: false when either operand is NaN.
  static M lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M gt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static M ge(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
  static V select(M m, V a, V b) { return _mm512_mask_blend_ps(m, b, a); }  // m ? a : b

  static V round_nearest(V a) {
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // p * 2^n for integral n; correct into the subnormal range and on overflow (vscalefps).
  static V ldexp(V p, V n) { return _mm512_scalef_ps(p, n); }

  // p * 2^n for a normal result (the avx2 member's contract); vscalefps is one instruction.
  static V ldexp_normal(V p, V n) { return _mm512_scalef_ps(p, n); }

  static float reduce_add(V a) { return _mm512_reduce_add_ps(a); }
  static float reduce_max(V a) { return _mm512_reduce_max_ps(a); }
};

}  // namespace tickinfer::kernels::avx512
