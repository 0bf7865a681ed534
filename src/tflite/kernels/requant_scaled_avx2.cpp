// requant_scaled.hpp on 4 doubles per vector: the product in double exactly as the scalar
// reference forms it, round() as trunc plus a step away from zero where the dropped fraction is
// at least one half (exact: the fraction of a double below 2^52 is exact, and above it there is
// none), then vcvttpd2dq, whose out-of-range answer is the scalar conversion's INT32_MIN.
#include <immintrin.h>

#include <cstring>

#include "tflite/kernels/requant_scaled.hpp"

namespace tickinfer::tfl::kernels {

void requantize_s32_to_s8_scaled_avx2(const int32_t* acc, int rows, const ScaledRequant& q, int8_t* y) noexcept {
  const __m256d half = _mm256_set1_pd(0.5);
  const __m256d one = _mm256_set1_pd(1.0);
  const __m256d magnitude = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  const __m128i zp = _mm_set1_epi32(q.output_zero_point);
  const __m128i lo = _mm_set1_epi32(q.act_min), hi = _mm_set1_epi32(q.act_max);
  int r = 0;
  for (; r + 4 <= rows; r += 4) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(acc + r));
    if (q.bias) a = _mm_add_epi32(a, _mm_loadu_si128(reinterpret_cast<const __m128i*>(q.bias + r)));
    const __m256d p = _mm256_mul_pd(_mm256_cvtepi32_pd(a), _mm256_loadu_pd(q.scale + r));
    const __m256d t = _mm256_round_pd(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256d frac = _mm256_and_pd(_mm256_sub_pd(p, t), magnitude);
    const __m256d away = _mm256_or_pd(_mm256_andnot_pd(magnitude, p), one);  // copysign(1, p)
    const __m256d step = _mm256_and_pd(_mm256_cmp_pd(frac, half, _CMP_GE_OQ), away);
    __m128i v = _mm256_cvttpd_epi32(_mm256_add_pd(t, step));
    v = _mm_add_epi32(v, zp);
    v = _mm_min_epi32(_mm_max_epi32(v, lo), hi);
    v = _mm_packs_epi16(_mm_packs_epi32(v, v), v);
    const int32_t four = _mm_cvtsi128_si32(v);
    std::memcpy(y + r, &four, 4);
  }
  for (; r < rows; ++r) {
    const uint32_t b = q.bias ? static_cast<uint32_t>(q.bias[r]) : 0u;
    y[r] = requant_scaled_one(static_cast<int32_t>(static_cast<uint32_t>(acc[r]) + b), q.scale[r], q.output_zero_point,
                              q.act_min, q.act_max);
  }
}

}  // namespace tickinfer::tfl::kernels
