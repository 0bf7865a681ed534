// AVX2 int8 row sums (tflite/kernels/sum_rows_s8.hpp): 32 columns at a time, their four vectors
// of 8 int32 sums kept in registers down all the rows; the columns past the last 32 by the scalar
// loop.
#include <immintrin.h>

#include "tflite/kernels/sum_rows_s8.hpp"

namespace tickinfer::tfl::kernels {

namespace {

inline __m256i widen8(const int8_t* p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline __m256i load8(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline void store8(int32_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }

}  // namespace

void sum_rows_s8_avx2(const int8_t* x, int64_t rows, int64_t inner, int32_t* sum) noexcept {
  int64_t j = 0;
  for (; j + 32 <= inner; j += 32) {
    __m256i s0 = load8(sum + j), s1 = load8(sum + j + 8), s2 = load8(sum + j + 16), s3 = load8(sum + j + 24);
    for (int64_t r = 0; r < rows; ++r) {
      const int8_t* p = x + r * inner + j;
      s0 = _mm256_add_epi32(s0, widen8(p));
      s1 = _mm256_add_epi32(s1, widen8(p + 8));
      s2 = _mm256_add_epi32(s2, widen8(p + 16));
      s3 = _mm256_add_epi32(s3, widen8(p + 24));
    }
    store8(sum + j, s0);
    store8(sum + j + 8, s1);
    store8(sum + j + 16, s2);
    store8(sum + j + 24, s3);
  }
  for (; j + 8 <= inner; j += 8) {
    __m256i s = load8(sum + j);
    for (int64_t r = 0; r < rows; ++r) s = _mm256_add_epi32(s, widen8(x + r * inner + j));
    store8(sum + j, s);
  }
  if (j < inner) {  // the last 1..7 columns: a strided block of the scalar loop
    for (int64_t r = 0; r < rows; ++r) sum_rows_s8_scalar(x + r * inner + j, 1, inner - j, sum + j);
  }
}

}  // namespace tickinfer::tfl::kernels
