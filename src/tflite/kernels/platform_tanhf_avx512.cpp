// The AVX-512 form of std::tanh(float) bit for bit (platform_tanhf.hpp): the AVX2 form's
// operations (platform_tanhf_avx2.cpp: glibc's tanhf and the expm1f it calls, every case computed
// and each lane keeping its own, no FMA) on 16 lanes, the lane selections by mask registers, and
// the tail of a row by masked loads and stores.

#include <cmath>
#include <cstdint>

#include "kernels/x86_intrinsics.hpp"
#include "tflite/kernels/platform_tanhf.hpp"

namespace tickinfer::tfl::kernels {
namespace {

inline __m512 f(float v) { return _mm512_set1_ps(v); }
inline __m512i u(uint32_t v) { return _mm512_set1_epi32(static_cast<int>(v)); }
inline __m512 bits(__m512i v) { return _mm512_castsi512_ps(v); }
inline __m512i ints(__m512 v) { return _mm512_castps_si512(v); }
inline __m512 pick(__mmask16 m, __m512 yes, __m512 no) { return _mm512_mask_blend_ps(m, no, yes); }
// Unsigned a > b and a < b for values below 2^31 (the absolute-value bit patterns compared here).
inline __mmask16 above(__m512i a, uint32_t b) { return _mm512_cmpgt_epi32_mask(a, u(b)); }
inline __mmask16 below(__m512i a, uint32_t b) { return _mm512_cmpgt_epi32_mask(u(b), a); }
inline __mmask16 k_is(__m512i k, int v) { return _mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(v)); }
inline __m512 add(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
inline __m512 sub(__m512 a, __m512 b) { return _mm512_sub_ps(a, b); }
inline __m512 mul(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }
// y with k added to its exponent field.
inline __m512 scale(__m512 y, __m512i k) {
  return bits(_mm512_add_epi32(ints(y), _mm512_slli_epi32(k, 23)));
}

// expm1f for the arguments tanh feeds it (see the AVX2 form: k = 1 never occurs there).
__m512 expm1f16(__m512 a) {
  const __m512i hx = _mm512_and_epi32(ints(a), u(0x7fffffff));
  const __mmask16 neg = _mm512_cmplt_epi32_mask(ints(a), _mm512_setzero_si512());
  const __m512 ln2_hi = f(0x1.62e3p-1f), ln2_lo = f(0x1.2fefa2p-17f);
  // Argument reduction: k ln 2 off a, the rounding error in c.
  const __mmask16 reduced = above(hx, 0x3eb17218);  // |a| > 0.5 ln 2
  const __mmask16 big = above(hx, 0x3f851591);      // |a| >= 1.5 ln 2
  const __m512i k_big = _mm512_cvttps_epi32(add(pick(neg, f(-0.5f), f(0.5f)), mul(f(0x1.715476p+0f), a)));
  const __m512 t_big = _mm512_cvtepi32_ps(k_big);
  const __m512 hi = pick(big, sub(a, mul(t_big, ln2_hi)), pick(neg, add(a, ln2_hi), sub(a, ln2_hi)));
  const __m512 lo = pick(big, mul(t_big, ln2_lo), pick(neg, f(-0x1.2fefa2p-17f), ln2_lo));
  const __m512i k_mid = _mm512_mask_blend_epi32(neg, _mm512_set1_epi32(1), _mm512_set1_epi32(-1));
  const __m512i k = _mm512_maskz_mov_epi32(reduced, _mm512_mask_blend_epi32(big, k_mid, k_big));
  const __m512 xr_red = sub(hi, lo);
  const __m512 x = pick(reduced, xr_red, a);
  const __m512 c = _mm512_maskz_sub_ps(reduced, sub(hi, xr_red), lo);  // 0 where not reduced
  // The rational form in x^2 / 2.
  const __m512 hfx = mul(x, f(0.5f));
  const __m512 hxs = mul(x, hfx);
  __m512 r1 = mul(f(-0x1.afdb76p-23f), hxs);
  r1 = mul(add(r1, f(0x1.0cfca8p-18f)), hxs);
  r1 = mul(sub(r1, f(0x1.4ce19ap-14f)), hxs);
  r1 = mul(add(r1, f(0x1.a01a02p-10f)), hxs);
  r1 = mul(sub(r1, f(0x1.111112p-5f)), hxs);
  r1 = add(r1, f(1.0f));
  const __m512 t = sub(f(3.0f), mul(hfx, r1));
  __m512 e = mul(_mm512_div_ps(sub(r1, t), sub(f(6.0f), mul(t, x))), hxs);
  const __m512 res0 = sub(x, sub(mul(x, e), hxs));  // k = 0
  e = sub(sub(mul(sub(e, c), x), c), hxs);
  const __m512 x_minus_e = sub(x, e), e_minus_x = sub(e, x);
  const __m512 res_m1 = sub(mul(x_minus_e, f(0.5f)), f(0.5f));
  const __m512 res_far = sub(scale(sub(f(1.0f), e_minus_x), k), f(1.0f));  // k <= -2, k > 56
  const __m512 t_lt23 = bits(_mm512_sub_epi32(u(0x3f800000), _mm512_srav_epi32(u(0x1000000), k)));
  const __m512 res_lt23 = scale(sub(t_lt23, e_minus_x), k);  // 2 <= k <= 22
  const __m512 t_ge23 = bits(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(0x7f), k), 23));
  const __m512 res_ge23 = scale(add(sub(x, add(e, t_ge23)), f(1.0f)), k);  // 23..56
  const __mmask16 far = _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(-1), k) | _mm512_cmpgt_epi32_mask(k, _mm512_set1_epi32(56));
  __m512 r = pick(_mm512_cmpgt_epi32_mask(k, _mm512_set1_epi32(22)), res_ge23, res_lt23);
  r = pick(far, res_far, r);
  r = pick(k_is(k, -1), res_m1, r);
  r = pick(k_is(k, 0), res0, r);
  return pick(below(hx, 0x33000000), a, r);  // |a| < 2^-25: a itself
}

// Sixteen tanh values; `special` gets a bit per lane that is infinite or NaN. The two quotients
// of the AVX2 form (2 / (t + 2) and -t / (t + 2)) are one division of the lane's own numerator.
__m512 tanh16(__m512 x, __mmask16& special) {
  const __m512i ix = _mm512_and_epi32(ints(x), u(0x7fffffff));
  special = above(ix, 0x7f7fffff);
  const __m512 ax = bits(ix);
  const __mmask16 ge1 = above(ix, 0x3f7fffff);
  const __m512 arg = pick(ge1, add(ax, ax), mul(ax, f(-2.0f)));
  const __m512 t = expm1f16(arg);
  const __m512 tp2 = add(t, f(2.0f));
  const __m512 q = _mm512_div_ps(pick(ge1, f(2.0f), bits(_mm512_xor_epi32(ints(t), u(0x80000000)))), tp2);
  __m512 z = pick(ge1, sub(f(1.0f), q), q);
  z = pick(above(ix, 0x41afffff), f(1.0f), z);  // |x| >= 22: 1 - 1e-30 rounds to 1
  z = bits(_mm512_xor_epi32(ints(z), _mm512_and_epi32(ints(x), u(0x80000000))));  // -z for x < 0
  z = pick(below(ix, 0x24000000), mul(x, add(f(1.0f), x)), z);  // tiny: x (1 + x)
  return pick(k_is(ix, 0), x, z);  // +-0
}

}  // namespace

void tanhf_array_avx512(const float* x, float* y, int n) noexcept {
  for (int i = 0; i < n; i += 16) {
    const int lanes = n - i < 16 ? n - i : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << lanes) - 1);
    __mmask16 special;
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);  // a zero beyond the row: tanh(0) = 0, not stored
    const __m512 t = tanh16(v, special);
    special &= m;
    if (special) {  // infinities and NaN: std::tanh on the inputs, kept before y (it may alias x) is written
      alignas(64) float in[16];
      _mm512_store_ps(in, v);
      _mm512_mask_storeu_ps(y + i, m, t);
      for (int l = 0; special; ++l, special = static_cast<__mmask16>(special >> 1))
        if (special & 1) y[i + l] = std::tanh(in[l]);
    } else {
      _mm512_mask_storeu_ps(y + i, m, t);
    }
  }
}

}  // namespace tickinfer::tfl::kernels
