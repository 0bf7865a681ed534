// The AVX2 form of std::exp(float) bit for bit (platform_expf.hpp): four doubles at a time, the
// same operations and fusions as glibc's FMA variant; lanes below the underflow point are +0, other
// lanes at |x| >= 88 or NaN are redone by std::exp.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "tflite/kernels/logistic_f32.hpp"
#include "tflite/kernels/platform_expf.hpp"

namespace tickinfer::tfl::kernels {
namespace {

using namespace platform_expf;

// Four results; `special` gets a bit per lane whose x takes another path than the polynomial.
inline __m128 exp4(__m128 xf, const uint64_t* T, int& special) noexcept {
  const __m128i top = _mm_and_si128(_mm_srli_epi32(_mm_castps_si128(xf), 20), _mm_set1_epi32(0x7ff));
  special = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(top, _mm_set1_epi32(int(kSpecialTop) - 1))));
  const __m256d xd = _mm256_cvtps_pd(xf);
  const __m256d inv = _mm256_set1_pd(kInvLn2N), shift = _mm256_set1_pd(kShift);
  const __m256d shifted = _mm256_fmadd_pd(inv, xd, shift);
  const __m256i ki = _mm256_castpd_si256(shifted);
  const __m256d kd = _mm256_sub_pd(shifted, shift);
  const __m256d r = _mm256_fmsub_pd(inv, xd, kd);
  // The four table entries by scalar loads (a 256-bit gather is several times slower on the
  // AMD cores measured).
  const __m128i lo = _mm256_castsi256_si128(ki), hi = _mm256_extracti128_si256(ki, 1);
  const __m256i entries = _mm256_set_epi64x(static_cast<long long>(T[_mm_extract_epi64(hi, 1) & 31]),
                                            static_cast<long long>(T[_mm_extract_epi64(hi, 0) & 31]),
                                            static_cast<long long>(T[_mm_extract_epi64(lo, 1) & 31]),
                                            static_cast<long long>(T[_mm_cvtsi128_si64(lo) & 31]));
  const __m256i t = _mm256_add_epi64(entries, _mm256_slli_epi64(ki, 47));
  const __m256d z = _mm256_fmadd_pd(r, _mm256_set1_pd(kC0), _mm256_set1_pd(kC1));
  const __m256d r2 = _mm256_mul_pd(r, r);
  __m256d y = _mm256_fmadd_pd(r, _mm256_set1_pd(kC2), _mm256_set1_pd(1.0));
  y = _mm256_fmadd_pd(z, r2, y);
  y = _mm256_mul_pd(y, _mm256_castsi256_pd(t));
  // Below the underflow point (-inf too) the result is +0: in the vector, since masked attention
  // scores (the converter's -1e9) make whole rows of such lanes. Every other special lane is
  // redone by std::exp.
  const __m128 underflow = _mm_cmplt_ps(xf, _mm_set1_ps(kUnderflow));
  special &= ~_mm_movemask_ps(underflow);
  return _mm_andnot_ps(underflow, _mm256_cvtpd_ps(y));
}

inline void redo_special(const float* x, float* y, int lanes, int special) noexcept {
  for (int l = 0; l < lanes; ++l) {
    if (!(special >> l & 1)) continue;
    y[l] = std::exp(x[l]);
  }
}

}  // namespace

void expf_array_avx2(const float* x, float* y, int n) noexcept {
  const uint64_t* T = table();
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    int special;
    const __m128 v = exp4(_mm_loadu_ps(x + i), T, special);
    if (special) {
      float in[4];
      std::memcpy(in, x + i, sizeof in);  // x and y may alias
      _mm_storeu_ps(y + i, v);
      redo_special(in, y + i, 4, special);
    } else {
      _mm_storeu_ps(y + i, v);
    }
  }
  if (i < n) {
    float in[4] = {0, 0, 0, 0}, out[4];
    std::memcpy(in, x + i, sizeof(float) * static_cast<size_t>(n - i));
    int special;
    _mm_storeu_ps(out, exp4(_mm_loadu_ps(in), T, special));
    redo_special(in, out, n - i, special);
    std::memcpy(y + i, out, sizeof(float) * static_cast<size_t>(n - i));
  }
}

// TFLite's reference LOGISTIC (logistic_f32.hpp) eight values at a time: the exponent's argument
// chosen, two exp4 calls, the division and both saturations in the vector, lane for lane the
// scalar formula's operations; a special exponential lane is redone by the scalar formula.
void logistic_array_avx2(const float* x, float* y, int n) noexcept {
  const uint64_t* T = table();
  const __m256 lower = _mm256_set1_ps(kLogisticLower), upper = _mm256_set1_ps(kLogisticUpper);
  const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
  const auto eight = [&](__m256 v, int& special) {
    const __m256 low = _mm256_cmp_ps(v, lower, _CMP_LT_OQ);
    const __m256 arg = _mm256_blendv_ps(_mm256_xor_ps(v, sign), v, low);
    int s_lo, s_hi;
    const __m256 e = _mm256_set_m128(exp4(_mm256_extractf128_ps(arg, 1), T, s_hi), exp4(_mm256_castps256_ps128(arg), T, s_lo));
    special = s_lo | s_hi << 4;
    const __m256 mid = _mm256_blendv_ps(_mm256_div_ps(one, _mm256_add_ps(one, e)), e, low);
    return _mm256_blendv_ps(mid, one, _mm256_cmp_ps(v, upper, _CMP_GT_OQ));
  };
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    int special;
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 r = eight(v, special);
    if (special) {
      float in[8];
      _mm256_storeu_ps(in, v);  // x and y may alias
      _mm256_storeu_ps(y + i, r);
      for (int l = 0; l < 8; ++l)
        if (special >> l & 1) y[i + l] = logistic_one(in[l]);
    } else {
      _mm256_storeu_ps(y + i, r);
    }
  }
  if (i < n) {
    float in[8] = {0, 0, 0, 0, 0, 0, 0, 0}, out[8];
    std::memcpy(in, x + i, sizeof(float) * static_cast<size_t>(n - i));
    int special;
    _mm256_storeu_ps(out, eight(_mm256_loadu_ps(in), special));
    for (int l = 0; l < n - i; ++l) y[i + l] = (special >> l & 1) ? logistic_one(in[l]) : out[l];
  }
}

}  // namespace tickinfer::tfl::kernels
