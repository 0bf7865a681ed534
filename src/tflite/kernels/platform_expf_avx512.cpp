// The AVX-512 forms of std::exp(float) and of TFLite's float LOGISTIC, bit for bit
// (platform_expf.hpp, logistic_f32.hpp): the AVX2 form's double-precision operations and fusions
// on eight doubles at a time, the 32-entry table read by two two-register permutes instead of
// eight scalar loads; lanes below the underflow point are +0, other lanes at |x| >= 88 or NaN
// are redone by std::exp (as the scalar formula, for LOGISTIC).

#include <cmath>
#include <cstring>

#include "kernels/x86_intrinsics.hpp"
#include "tflite/kernels/logistic_f32.hpp"
#include "tflite/kernels/platform_expf.hpp"

namespace tickinfer::tfl::kernels {
namespace {

using namespace platform_expf;

struct Table {
  __m512i t0, t1, t2, t3;  // entries 0-7, 8-15, 16-23, 24-31
  explicit Table(const uint64_t* T)
      : t0(_mm512_loadu_si512(T)), t1(_mm512_loadu_si512(T + 8)), t2(_mm512_loadu_si512(T + 16)),
        t3(_mm512_loadu_si512(T + 24)) {}
  // T[i & 31] for eight 64-bit indices.
  __m512i operator()(__m512i i) const {
    const __m512i low = _mm512_permutex2var_epi64(t0, i, t1);   // bits 0-3 of i
    const __m512i high = _mm512_permutex2var_epi64(t2, i, t3);
    return _mm512_mask_blend_epi64(_mm512_test_epi64_mask(i, _mm512_set1_epi64(16)), low, high);
  }
};

// Eight results; `special` gets a bit per lane whose x takes another path than the polynomial.
inline __m256 exp8(__m256 xf, const Table& T, __mmask8& special) noexcept {
  const __m256i top = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(xf), 20), _mm256_set1_epi32(0x7ff));
  special = _mm256_cmpgt_epi32_mask(top, _mm256_set1_epi32(int(kSpecialTop) - 1));
  const __m512d xd = _mm512_cvtps_pd(xf);
  const __m512d inv = _mm512_set1_pd(kInvLn2N), shift = _mm512_set1_pd(kShift);
  const __m512d shifted = _mm512_fmadd_pd(inv, xd, shift);
  const __m512i ki = _mm512_castpd_si512(shifted);
  const __m512d kd = _mm512_sub_pd(shifted, shift);
  const __m512d r = _mm512_fmsub_pd(inv, xd, kd);
  const __m512i t = _mm512_add_epi64(T(ki), _mm512_slli_epi64(ki, 47));
  const __m512d z = _mm512_fmadd_pd(r, _mm512_set1_pd(kC0), _mm512_set1_pd(kC1));
  const __m512d r2 = _mm512_mul_pd(r, r);
  __m512d y = _mm512_fmadd_pd(r, _mm512_set1_pd(kC2), _mm512_set1_pd(1.0));
  y = _mm512_fmadd_pd(z, r2, y);
  y = _mm512_mul_pd(y, _mm512_castsi512_pd(t));
  // Below the underflow point (-inf too) the result is +0; every other special lane is redone.
  const __mmask8 underflow = _mm256_cmp_ps_mask(xf, _mm256_set1_ps(kUnderflow), _CMP_LT_OQ);
  special = static_cast<__mmask8>(special & ~underflow);
  return _mm512_maskz_cvtpd_ps(static_cast<__mmask8>(~underflow), y);
}

// Sixteen values as two halves of eight.
inline __m512 exp16(__m512 x, const Table& T, __mmask16& special) noexcept {
  __mmask8 lo, hi;
  const __m256 a = exp8(_mm512_extractf32x8_ps(x, 0), T, lo);
  const __m256 b = exp8(_mm512_extractf32x8_ps(x, 1), T, hi);
  special = static_cast<__mmask16>(lo | (hi << 8));
  return _mm512_insertf32x8(_mm512_insertf32x8(_mm512_setzero_ps(), a, 0), b, 1);
}

}  // namespace

void expf_array_avx512(const float* x, float* y, int n) noexcept {
  const Table T(table());
  for (int i = 0; i < n; i += 16) {
    const int lanes = n - i < 16 ? n - i : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << lanes) - 1);
    __mmask16 special;
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    const __m512 r = exp16(v, T, special);
    special &= m;
    if (special) {
      alignas(64) float in[16];
      _mm512_store_ps(in, v);  // x and y may alias
      _mm512_mask_storeu_ps(y + i, m, r);
      for (int l = 0; l < lanes; ++l)
        if (special >> l & 1) y[i + l] = std::exp(in[l]);
    } else {
      _mm512_mask_storeu_ps(y + i, m, r);
    }
  }
}

void logistic_array_avx512(const float* x, float* y, int n) noexcept {
  const Table T(table());
  const __m512 lower = _mm512_set1_ps(kLogisticLower), upper = _mm512_set1_ps(kLogisticUpper);
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int i = 0; i < n; i += 16) {
    const int lanes = n - i < 16 ? n - i : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << lanes) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    const __mmask16 low = _mm512_cmp_ps_mask(v, lower, _CMP_LT_OQ);
    const __m512 arg = _mm512_mask_blend_ps(low, _mm512_castsi512_ps(_mm512_xor_epi32(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN))), v);
    __mmask16 special;
    const __m512 e = exp16(arg, T, special);
    special &= m;
    const __m512 mid = _mm512_mask_blend_ps(low, _mm512_div_ps(one, _mm512_add_ps(one, e)), e);
    const __m512 r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, upper, _CMP_GT_OQ), mid, one);
    if (special) {
      alignas(64) float in[16];
      _mm512_store_ps(in, v);  // x and y may alias
      _mm512_mask_storeu_ps(y + i, m, r);
      for (int l = 0; l < lanes; ++l)
        if (special >> l & 1) y[i + l] = logistic_one(in[l]);
    } else {
      _mm512_mask_storeu_ps(y + i, m, r);
    }
  }
}

}  // namespace tickinfer::tfl::kernels
