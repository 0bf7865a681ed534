// The per-row requantization of gemv_s8.hpp on 16 lanes (AVX-512F/BW), for the VNNI kernel set:
// twice the lanes of the AVX2 version per instruction, the same arithmetic (gemv_s8_avx2.cpp
// derives both roundings), and AVX-512's compare masks and saturating vpmovsdb in place of
// AVX2's sign-mask arithmetic and two-step packs. Bit-exact with the scalar reference
// (quant_int8_kernels_test); rows % 16 go to the AVX2 version.
#include <immintrin.h>

#include <cstring>

#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/requant_avx512_lanes.hpp"

namespace tickinfer::tfl::kernels {

using namespace avx512_lanes;  // NOLINT: this file is the lanes' own user

void double_rounding_constants16(const int32_t* multiplier, const int32_t* shift, int rows, int8_t* out) noexcept {
  static_assert(sizeof(DoubleRounding16) == kDoubleRounding16Bytes);
  for (int r0 = 0; r0 < rows; r0 += 16) {
    const __mmask16 k = static_cast<__mmask16>(rows - r0 >= 16 ? 0xFFFFu : (1u << (rows - r0)) - 1u);
    const DoubleRounding16 r(_mm512_maskz_loadu_epi32(k, multiplier + r0), _mm512_maskz_loadu_epi32(k, shift + r0));
    std::memcpy(out + static_cast<size_t>(r0 / 16) * kDoubleRounding16Bytes, &r, sizeof r);
  }
}

template <Rounding R>
void requantize_s32_to_s8_avx512(const int32_t* acc, int rows, const RequantParams& p, int8_t* y) noexcept {
  const __m512i zp = _mm512_set1_epi32(p.output_zero_point);
  const __m512i lo = _mm512_set1_epi32(p.act_min);
  const __m512i hi = _mm512_set1_epi32(p.act_max);
  int r = 0;
  for (; r + 16 <= rows; r += 16) {
    __m512i a = _mm512_loadu_si512(acc + r);
    if (p.bias) a = _mm512_add_epi32(a, _mm512_loadu_si512(p.bias + r));
    const __m512i m = _mm512_loadu_si512(p.multiplier + r), s = _mm512_loadu_si512(p.shift + r);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + r), requant16<R>(a, m, s, zp, lo, hi));
  }
  if (r < rows) requantize_s32_to_s8_avx2<R>(acc + r, rows - r, requant_rows_from(p, r), y + r);
}

template void requantize_s32_to_s8_avx512<Rounding::Double>(const int32_t*, int, const RequantParams&, int8_t*) noexcept;
template void requantize_s32_to_s8_avx512<Rounding::Single>(const int32_t*, int, const RequantParams&, int8_t*) noexcept;

}  // namespace tickinfer::tfl::kernels
