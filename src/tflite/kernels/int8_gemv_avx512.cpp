// AVX-512 VNNI int8 dot products (compiled with the avx512 flags plus the VNNI target below;
// selected only when the CPU reports avx512vnni). vpdpbusd multiplies unsigned by signed bytes,
// so x is offset by +128 (x ^ 0x80) and the row sum of w times 128 is subtracted again:
//   sum (x + 128) * w - 128 * sum w = sum x * w, exact in int32. The row sum comes from a second
// vpdpbusd against a vector of ones.
// GCC 12 reports its own _mm512_reduce_add_epi32 as maybe-uninitialized; the header is not ours
// (clang has neither the false report nor the warning group).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "tflite/kernels/int8_gemv.hpp"

namespace tickinfer::tfl::kernels {

__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
void gemv_s8s8_s32_avx512vnni(const int8_t* w, int rows, int stride, const int8_t* x, int32_t* acc) noexcept {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i ones = _mm512_set1_epi8(1);
  for (int r = 0; r < rows; ++r) {
    const int8_t* wr = w + static_cast<size_t>(r) * stride;
    __m512i dot = _mm512_setzero_si512();
    __m512i sum = _mm512_setzero_si512();
    int c = 0;
    for (; c + 64 <= stride; c += 64) {
      const __m512i xu = _mm512_xor_si512(_mm512_loadu_si512(x + c), flip);
      const __m512i wv = _mm512_loadu_si512(wr + c);
      dot = _mm512_dpbusd_epi32(dot, xu, wv);
      sum = _mm512_dpbusd_epi32(sum, ones, wv);
    }
    if (c < stride) {  // 16, 32 or 48 bytes left: masked loads read nothing past the row
      const __mmask64 k = (~0ULL) >> (64 - (stride - c));
      const __m512i xu = _mm512_xor_si512(_mm512_maskz_loadu_epi8(k, x + c), flip);
      const __m512i wv = _mm512_maskz_loadu_epi8(k, wr + c);  // zero weights past the row
      dot = _mm512_dpbusd_epi32(dot, xu, wv);
      sum = _mm512_dpbusd_epi32(sum, ones, wv);
    }
    acc[r] = _mm512_reduce_add_epi32(dot) - 128 * _mm512_reduce_add_epi32(sum);
  }
}

}  // namespace tickinfer::tfl::kernels
