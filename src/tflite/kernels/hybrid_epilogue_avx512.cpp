// The AVX-512 form of the hybrid CONV_2D epilogue (hybrid_epilogue.hpp): the portable loop's
// float operations lane for lane on 16 output channels (no FMA: -ffp-contract=off), a last group
// of fewer channels by masked loads and stores; the same bits.

#include "kernels/x86_intrinsics.hpp"
#include "tflite/kernels/hybrid_epilogue.hpp"

namespace tickinfer::tfl::kernels {

void hybrid_conv_epilogue_avx512(const int32_t* acc, int out_c, int n, int acc_step, const HybridConvOut& q,
                                 float* y) noexcept {
  const __m512 in_scale = _mm512_set1_ps(q.input_scale);
  const __m512 lo = _mm512_set1_ps(q.lo), hi = _mm512_set1_ps(q.hi);
  const __m512 alpha = _mm512_set1_ps(q.alpha), zero = _mm512_setzero_ps();
  const __m512i zp = _mm512_set1_epi32(q.zero_point);
  for (int o = 0; o < out_c; o += 16) {
    const __mmask16 m = out_c - o >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << (out_c - o)) - 1);
    const __m512i offset = q.row_sums ? _mm512_mullo_epi32(zp, _mm512_maskz_loadu_epi32(m, q.row_sums + o))
                                      : _mm512_setzero_si512();
    const __m512 fscale = q.row_sums ? _mm512_maskz_loadu_ps(m, q.filter_scale + o) : zero;
    const __m512 bias = q.bias ? _mm512_maskz_loadu_ps(m, q.bias + o) : zero;
    for (int j = 0; j < n; ++j) {
      const __m512i a = _mm512_maskz_loadu_epi32(m, acc + static_cast<size_t>(j) * acc_step + o);
      __m512 v;
      if (q.row_sums) {
        v = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(a, offset)), fscale), in_scale);
      } else {
        v = _mm512_mul_ps(_mm512_cvtepi32_ps(a), in_scale);
      }
      if (q.bias) v = _mm512_add_ps(v, bias);  // no bias: no addition (v + 0 would turn -0 into +0)
      // max(lo, v) then min(hi, .): the operand order keeps a NaN, as std::min(std::max(v, lo), hi) does.
      __m512 c = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
      if (q.leaky) c = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(c, zero, _CMP_GT_OQ), _mm512_mul_ps(c, alpha), c);
      _mm512_mask_storeu_ps(y + static_cast<size_t>(j) * out_c + o, m, c);
    }
  }
}

}  // namespace tickinfer::tfl::kernels
