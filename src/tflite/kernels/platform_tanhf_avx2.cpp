// The AVX2 form of std::tanh(float) bit for bit (platform_tanhf.hpp): glibc's tanhf and the
// expm1f it calls, eight lanes at a time, every case computed and each lane keeping its own; the
// single-precision operations in the library's order (separate multiplies and adds: no FMA).
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "tflite/kernels/platform_tanhf.hpp"

namespace tickinfer::tfl::kernels {
namespace {

inline __m256 f(float v) { return _mm256_set1_ps(v); }
inline __m256i u(uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }
inline __m256 bits(__m256i v) { return _mm256_castsi256_ps(v); }
inline __m256i ints(__m256 v) { return _mm256_castps_si256(v); }
inline __m256 pick(__m256 mask, __m256 yes, __m256 no) { return _mm256_blendv_ps(no, yes, mask); }
inline __m256 lane_mask(__m256i m) { return _mm256_castsi256_ps(m); }
// Unsigned a > b for values below 2^31 (the absolute-value bit patterns compared here).
inline __m256 above(__m256i a, uint32_t b) { return lane_mask(_mm256_cmpgt_epi32(a, u(b))); }
inline __m256 below(__m256i a, uint32_t b) { return lane_mask(_mm256_cmpgt_epi32(u(b), a)); }
inline __m256 k_is(__m256i k, int v) { return lane_mask(_mm256_cmpeq_epi32(k, _mm256_set1_epi32(v))); }
// y with k added to its exponent field.
inline __m256 scale(__m256 y, __m256i k) { return bits(_mm256_add_epi32(ints(y), _mm256_slli_epi32(k, 23))); }

// expm1f for the arguments tanh feeds it: 2|x| in [2, 44) (k >= 3) and -2|x| in (-2, 0) (k <= 0).
// k = 1 never occurs there, so expm1f's k = 1 rebuild is left out (the exhaustive comparison
// with std::tanh covers every argument this meets).
__m256 expm1f8(__m256 a) {
  const __m256i hx = _mm256_and_si256(ints(a), u(0x7fffffff));
  const __m256 neg = lane_mask(_mm256_srai_epi32(ints(a), 31));
  const __m256 ln2_hi = f(0x1.62e3p-1f), ln2_lo = f(0x1.2fefa2p-17f);
  // Argument reduction: k ln 2 off a, the rounding error in c.
  const __m256 reduced = above(hx, 0x3eb17218);  // |a| > 0.5 ln 2
  const __m256 big = above(hx, 0x3f851591);      // |a| >= 1.5 ln 2
  const __m256i k_big = _mm256_cvttps_epi32(_mm256_add_ps(pick(neg, f(-0.5f), f(0.5f)), _mm256_mul_ps(f(0x1.715476p+0f), a)));
  const __m256 t_big = _mm256_cvtepi32_ps(k_big);
  const __m256 hi = pick(big, _mm256_sub_ps(a, _mm256_mul_ps(t_big, ln2_hi)),
                         pick(neg, _mm256_add_ps(a, ln2_hi), _mm256_sub_ps(a, ln2_hi)));
  const __m256 lo = pick(big, _mm256_mul_ps(t_big, ln2_lo), pick(neg, f(-0x1.2fefa2p-17f), ln2_lo));
  const __m256i k_mid = _mm256_or_si256(_mm256_castps_si256(neg), _mm256_set1_epi32(1));  // -1 or 1
  const __m256i k = _mm256_and_si256(ints(reduced), ints(pick(big, bits(k_big), bits(k_mid))));
  const __m256 xr_red = _mm256_sub_ps(hi, lo);
  const __m256 x = pick(reduced, xr_red, a);
  const __m256 c = pick(reduced, _mm256_sub_ps(_mm256_sub_ps(hi, xr_red), lo), _mm256_setzero_ps());
  // The rational form in x^2 / 2.
  const __m256 hfx = _mm256_mul_ps(x, f(0.5f));
  const __m256 hxs = _mm256_mul_ps(x, hfx);
  __m256 r1 = _mm256_mul_ps(f(-0x1.afdb76p-23f), hxs);
  r1 = _mm256_mul_ps(_mm256_add_ps(r1, f(0x1.0cfca8p-18f)), hxs);
  r1 = _mm256_mul_ps(_mm256_sub_ps(r1, f(0x1.4ce19ap-14f)), hxs);
  r1 = _mm256_mul_ps(_mm256_add_ps(r1, f(0x1.a01a02p-10f)), hxs);
  r1 = _mm256_mul_ps(_mm256_sub_ps(r1, f(0x1.111112p-5f)), hxs);
  r1 = _mm256_add_ps(r1, f(1.0f));
  const __m256 t = _mm256_sub_ps(f(3.0f), _mm256_mul_ps(hfx, r1));
  __m256 e = _mm256_mul_ps(_mm256_div_ps(_mm256_sub_ps(r1, t), _mm256_sub_ps(f(6.0f), _mm256_mul_ps(t, x))), hxs);
  const __m256 res0 = _mm256_sub_ps(x, _mm256_sub_ps(_mm256_mul_ps(x, e), hxs));  // k = 0
  e = _mm256_sub_ps(_mm256_sub_ps(_mm256_mul_ps(_mm256_sub_ps(e, c), x), c), hxs);
  const __m256 x_minus_e = _mm256_sub_ps(x, e), e_minus_x = _mm256_sub_ps(e, x);
  const __m256 res_m1 = _mm256_sub_ps(_mm256_mul_ps(x_minus_e, f(0.5f)), f(0.5f));
  const __m256 res_far = _mm256_sub_ps(scale(_mm256_sub_ps(f(1.0f), e_minus_x), k), f(1.0f));  // k <= -2, k > 56
  const __m256 t_lt23 = bits(_mm256_sub_epi32(u(0x3f800000), _mm256_srav_epi32(u(0x1000000), k)));
  const __m256 res_lt23 = scale(_mm256_sub_ps(t_lt23, e_minus_x), k);  // 2 <= k <= 22
  const __m256 t_ge23 = bits(_mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(0x7f), k), 23));
  const __m256 res_ge23 = scale(_mm256_add_ps(_mm256_sub_ps(x, _mm256_add_ps(e, t_ge23)), f(1.0f)), k);  // 23..56
  const __m256 far = lane_mask(_mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(-1), k),
                                               _mm256_cmpgt_epi32(k, _mm256_set1_epi32(56))));
  __m256 r = pick(lane_mask(_mm256_cmpgt_epi32(k, _mm256_set1_epi32(22))), res_ge23, res_lt23);
  r = pick(far, res_far, r);
  r = pick(k_is(k, -1), res_m1, r);
  r = pick(k_is(k, 0), res0, r);
  return pick(below(hx, 0x33000000), a, r);  // |a| < 2^-25: a itself
}

// Eight tanh values; `special` gets a bit per lane that is infinite or NaN.
__m256 tanh8(__m256 x, int& special) {
  const __m256i ix = _mm256_and_si256(ints(x), u(0x7fffffff));
  special = _mm256_movemask_ps(above(ix, 0x7f7fffff));
  const __m256 ax = bits(ix);
  const __m256 ge1 = above(ix, 0x3f7fffff);
  const __m256 arg = pick(ge1, _mm256_add_ps(ax, ax), _mm256_mul_ps(ax, f(-2.0f)));
  const __m256 t = expm1f8(arg);
  const __m256 tp2 = _mm256_add_ps(t, f(2.0f));
  // 1 - 2 / (t + 2) and -t / (t + 2): one division of the lane's own numerator.
  const __m256 q = _mm256_div_ps(pick(ge1, f(2.0f), _mm256_xor_ps(t, f(-0.0f))), tp2);
  __m256 z = pick(ge1, _mm256_sub_ps(f(1.0f), q), q);
  z = pick(above(ix, 0x41afffff), f(1.0f), z);  // |x| >= 22: 1 - 1e-30 rounds to 1
  z = _mm256_xor_ps(z, _mm256_and_ps(x, f(-0.0f)));  // -z for negative x
  z = pick(below(ix, 0x24000000), _mm256_mul_ps(x, _mm256_add_ps(f(1.0f), x)), z);  // tiny: x (1 + x)
  return pick(k_is(ix, 0), x, z);  // +-0
}

}  // namespace

void tanhf_array_avx2(const float* x, float* y, int n) noexcept {
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    int special;
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 t = tanh8(v, special);
    if (special) {  // infinities and NaN: std::tanh on the inputs, kept before y (it may alias x) is written
      float in[8];
      _mm256_storeu_ps(in, v);
      _mm256_storeu_ps(y + i, t);
      for (int l = 0; special; ++l, special >>= 1)
        if (special & 1) y[i + l] = std::tanh(in[l]);
    } else {
      _mm256_storeu_ps(y + i, t);
    }
  }
  if (i < n) {
    float in[8] = {0, 0, 0, 0, 0, 0, 0, 0}, out[8];
    std::memcpy(in, x + i, sizeof(float) * static_cast<size_t>(n - i));
    int special;
    _mm256_storeu_ps(out, tanh8(_mm256_loadu_ps(in), special));
    for (int l = 0; l < n - i; ++l) y[i + l] = (special >> l & 1) ? std::tanh(in[l]) : out[l];
  }
}

}  // namespace tickinfer::tfl::kernels
