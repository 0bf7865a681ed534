// The 256-entry int8 table applied 32 bytes at a time on AVX2 (lut.hpp). vpshufb looks a byte up
// in 16 entries by its low nibble; each of the table's 16 rows of 16 (one per high nibble) gives
// a candidate, and the byte's high nibble picks its row's (compare and blend): 16 shuffles,
// compares and blends per 32 bytes, against a load and a store per byte in the loop, whose
// table lookups also wait on each byte's load (deeplob_small's int8 LEAKY_RELUs: docs/
// performance.md). Tails by the loop. Compiled for AVX2 by its name; chosen only where the CPU has it.
#include <immintrin.h>

#include "tflite/kernels/lut.hpp"

namespace tickinfer::tfl::kernels {

void apply_lut_s8_avx2(const LutS8& lut, const int8_t* x, int8_t* y, int64_t n) noexcept {
  if (n < 32) return apply_lut_s8(lut, x, y, n);  // a classifier's few outputs: not worth the 16 rows' loads
  __m256i rows[16];
  for (int h = 0; h < 16; ++h) {
    rows[h] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(lut.table + 16 * h)));
  }
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i lo = _mm256_and_si256(v, nibble);
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
    __m256i r = _mm256_shuffle_epi8(rows[0], lo);
#pragma GCC unroll 16
    for (int h = 1; h < 16; ++h) {
      const __m256i row_h = _mm256_cmpeq_epi8(hi, _mm256_set1_epi8(static_cast<char>(h)));
      r = _mm256_blendv_epi8(r, _mm256_shuffle_epi8(rows[h], lo), row_h);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), r);
  }
  apply_lut_s8(lut, x + i, y + i, n - i);
}

}  // namespace tickinfer::tfl::kernels
