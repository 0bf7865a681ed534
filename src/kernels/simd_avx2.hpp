#pragma once
// Internal: the 256-bit (AVX2 + FMA) vector operations the templated kernels are written
// against. Include only from *_avx2.cpp files. Same members as avx512::Simd (simd_avx512.hpp).
#include "kernels/x86_intrinsics.hpp"

namespace tickinfer::kernels::avx2 {

struct Simd {
  using V = __m256;
  using M = __m256;  // all-ones / all-zeros lanes, as the compare instructions produce
  static constexpr int kWidth = 8;

  static V set1(float v) { return _mm256_set1_ps(v); }
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V from_i32(const int32_t* p) {  // kWidth int32, converted
    return _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static __m256i first_lanes(int n) {  // n in [0, 8]
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  // Reads only p[0, n); other lanes get `fill`. vmaskmovps never faults on masked lanes.
  static V load_partial(const float* p, int n, float fill = 0.0f) {
    const __m256i m = first_lanes(n);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m),
                            _mm256_castsi256_ps(m));
  }
  // Writes only p[0, n) (n in [0, 8]), as at most three plain stores of 4, 2 and 1 floats (masked
  // stores are slow on several AMD cores, and a copy through memory float by float costs a store
  // and a load per float: in a small GEMM's epilogue, such as a 15-wide row's, more than its
  // multiply-adds). The branches depend on n only, fixed per call site.
  static void store_partial(float* p, V v, int n) {
    if (n >= 8) return _mm256_storeu_ps(p, v);
    __m128 part = _mm256_castps256_ps128(v);
    if (n >= 4) {
      _mm_storeu_ps(p, part);
      part = _mm256_extractf128_ps(v, 1);
      p += 4;
      n -= 4;
    }
    if (n >= 2) {
      _mm_storel_pi(reinterpret_cast<__m64*>(p), part);
      part = _mm_movehl_ps(part, part);
      p += 2;
      n -= 2;
    }
    if (n >= 1) _mm_store_ss(p, part);
  }

  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }    // a * b + c
  static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }  // c - a * b
  // min/max return b when either operand is NaN: pass the data as b to propagate NaN.
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static V sign_bits(V a) { return _mm256_and_ps(a, _mm256_set1_ps(-0.0f)); }
  static V or_bits(V a, V b) { return _mm256_or_ps(a, b); }
  static V neg(V a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }

  // Ordered comparisons: false when either operand is NaN.
  static M lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M gt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static M ge(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
  static V select(M m, V a, V b) { return _mm256_blendv_ps(b, a, m); }  // m ? a : b

  static V round_nearest(V a) {
    return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // p * 2^n for integral n in [-150, 128]: two exponent steps, so results that are subnormal
  // (n < -126) round once, and n = 128 overflows to inf as it should.
  static V ldexp(V p, V n) {
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i half = _mm256_srai_epi32(ni, 1);
    const __m256i rest = _mm256_sub_epi32(ni, half);
    const __m256i bias = _mm256_set1_epi32(127);
    const V s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
    const V s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(rest, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  }

  // p * 2^n for integral n when the result is a normal float (p in [0.5, 2), n in [-125, 127]):
  // one integer add into the exponent field, for callers that clamp their range first.
  static V ldexp_normal(V p, V n) {
    const __m256i step = _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23);
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), step));
  }

  static float reduce_add(V a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float reduce_max(V a) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

}  // namespace tickinfer::kernels::avx2
