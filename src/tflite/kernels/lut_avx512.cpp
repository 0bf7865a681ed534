// The 256-entry int8 table applied 64 bytes at a time (lut.hpp): AVX-512 VBMI's two-table byte
// permute looks each byte up in the lower and in the upper 128 entries (its low seven bits), and
// the byte's sign bit (bit 7 of its uint8 index) picks which; tails by masked loads and stores.
// Compiled for AVX-512 by its name; VBMI by the attribute below, and only called where the CPU
// has it (lut_s8_vbmi_supported).
#include <immintrin.h>

#include "tflite/kernels/lut.hpp"

namespace tickinfer::tfl::kernels {

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void apply_lut_s8_vbmi(const LutS8& lut, const int8_t* x,
                                                                             int8_t* y, int64_t n) noexcept {
  const __m512i t0 = _mm512_loadu_si512(lut.table), t1 = _mm512_loadu_si512(lut.table + 64);
  const __m512i t2 = _mm512_loadu_si512(lut.table + 128), t3 = _mm512_loadu_si512(lut.table + 192);
  for (int64_t i = 0; i < n; i += 64) {
    const int64_t left = n - i;
    const __mmask64 m = left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
    const __m512i idx = _mm512_maskz_loadu_epi8(m, x + i);
    const __m512i low = _mm512_permutex2var_epi8(t0, idx, t1);
    const __m512i high = _mm512_permutex2var_epi8(t2, idx, t3);
    _mm512_mask_storeu_epi8(y + i, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), low, high));
  }
}

}  // namespace tickinfer::tfl::kernels
