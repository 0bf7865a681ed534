// AVX2 hybrid FC, CONV_2D and LSTM-gate epilogues (hybrid_epilogue.hpp): 8 outputs per step, the portable
// loops' float operations in their order; the tails through the portable loops.
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

// Channels in blocks of 8 outer (their scales, offsets and bias loaded once), positions inner.
void hybrid_conv_epilogue_avx2(const int32_t* acc, int out_c, int n, int acc_step, const HybridConvOut& q,
                               float* y) noexcept {
  const __m256 in_scale = _mm256_set1_ps(q.input_scale);
  const __m256 lo = _mm256_set1_ps(q.lo), hi = _mm256_set1_ps(q.hi);
  const __m256 alpha = _mm256_set1_ps(q.alpha), zero = _mm256_setzero_ps();
  const __m256i zp = _mm256_set1_epi32(q.zero_point);
  int o = 0;
  for (; o + 8 <= out_c; o += 8) {
    const __m256i offset = q.row_sums ? _mm256_mullo_epi32(zp, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.row_sums + o)))
                                      : _mm256_setzero_si256();
    const __m256 fscale = q.row_sums ? _mm256_loadu_ps(q.filter_scale + o) : _mm256_setzero_ps();
    const __m256 bias = q.bias ? _mm256_loadu_ps(q.bias + o) : _mm256_setzero_ps();
    for (int j = 0; j < n; ++j) {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + static_cast<size_t>(j) * acc_step + o));
      __m256 v;
      if (q.row_sums) {
        v = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(a, offset)), fscale), in_scale);
      } else {
        v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), in_scale);
      }
      if (q.bias) v = _mm256_add_ps(v, bias);  // no bias: no addition (v + 0 would turn -0 into +0)
      __m256 c = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
      if (q.leaky) c = _mm256_blendv_ps(_mm256_mul_ps(c, alpha), c, _mm256_cmp_ps(c, zero, _CMP_GT_OQ));
      _mm256_storeu_ps(y + static_cast<size_t>(j) * out_c + o, c);
    }
  }
  if (o < out_c) {
    HybridConvOut tail = q;
    if (tail.row_sums) tail.row_sums += o, tail.filter_scale += o;
    if (tail.bias) tail.bias += o;
    for (int j = 0; j < n; ++j) {
      hybrid_conv_epilogue_portable(acc + static_cast<size_t>(j) * acc_step + o, out_c - o, 1, acc_step, tail,
                                    y + static_cast<size_t>(j) * out_c + o);
    }
  }
}

namespace {
// (float)(acc - zp * row_sums) * scale on 8 rows.
inline __m256 side_term8(const HybridGateSide& s, int r) {
  const __m256i offset = _mm256_mullo_epi32(_mm256_set1_epi32(s.zero_point),
                                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.row_sums + r)));
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.acc + r));
  return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(a, offset)), _mm256_set1_ps(s.scale));
}
}  // namespace

void hybrid_gate_avx2(const float* bias, const HybridGateSide& x, const HybridGateSide& h, int n, float* z) noexcept {
  int r = 0;
  for (; r + 8 <= n; r += 8) {
    __m256 v = _mm256_loadu_ps(bias + r);
    if (x.acc) v = _mm256_add_ps(v, side_term8(x, r));
    if (h.acc) v = _mm256_add_ps(v, side_term8(h, r));
    _mm256_storeu_ps(z + r, v);
  }
  if (r < n) {
    HybridGateSide xt = x, ht = h;
    if (xt.acc) xt.acc += r, xt.row_sums += r;
    if (ht.acc) ht.acc += r, ht.row_sums += r;
    hybrid_gate_portable(bias + r, xt, ht, n - r, z + r);
  }
}

}  // namespace tickinfer::tfl::kernels
