// AVX2 hybrid FC epilogue (hybrid_epilogue.hpp): 8 units per step, the portable loop's float
// operations in its order; the tail through the portable loop.
//   std::max(v, lo) = v < lo ? lo : v = maxps(lo, v): maxps returns its second operand when
//   either is NaN, so NaN stays NaN, and for equal values (+-0) it returns v, as the ternary does.
//   std::min(v, hi) = hi < v ? hi : v = minps(hi, v), likewise.
#include <immintrin.h>

#include "tflite/kernels/hybrid_epilogue.hpp"

namespace tickinfer::tfl::kernels {

void hybrid_epilogue_avx2(const HybridRow& r, int units, float* y) noexcept {
  const __m256 zp = _mm256_set1_ps(r.zero_point), rs = _mm256_set1_ps(r.row_scale);
  const __m256 lo = _mm256_set1_ps(r.lo), hi = _mm256_set1_ps(r.hi);
  int o = 0;
  for (; o + 8 <= units; o += 8) {
    __m256i dot = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r.acc + o));
    if (r.row_sums) {
      const __m256 sums = _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r.row_sums + o)));
      dot = _mm256_cvttps_epi32(_mm256_sub_ps(_mm256_cvtepi32_ps(dot), _mm256_mul_ps(sums, zp)));
    }
    const __m256 scale = _mm256_mul_ps(rs, _mm256_loadu_ps(r.filter_scale + o));
    const __m256 v = _mm256_add_ps(_mm256_loadu_ps(y + o), _mm256_mul_ps(_mm256_cvtepi32_ps(dot), scale));
    _mm256_storeu_ps(y + o, _mm256_min_ps(hi, _mm256_max_ps(lo, v)));
  }
  if (o < units) {
    HybridRow tail = r;
    tail.acc += o;
    if (tail.row_sums) tail.row_sums += o;
    tail.filter_scale += o;
    hybrid_epilogue_portable(tail, units - o, y + o);
  }
}

}  // namespace tickinfer::tfl::kernels
