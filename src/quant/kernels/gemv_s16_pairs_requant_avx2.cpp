// AVX2 fused pair-block gemv + single-rounding requantization (gemv_s16_pairs_requant.hpp).
// The gemv part is gemv_s16_pairs_avx2's loop; each finished block of 8 sums goes straight into
// the requantization below instead of memory.
#include <immintrin.h>

#include <cstring>

#include "quant/kernels/gemv_s16_pairs_requant.hpp"

namespace tickinfer::quant::kernels {

namespace {

inline __m256i pair_of(const int16_t* xw, int k) {
  return _mm256_castps_si256(_mm256_broadcast_ss(reinterpret_cast<const float*>(xw + 2 * k)));
}
inline __m256i load(const void* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline __m256i madd_add(__m256i acc, const int16_t* w, __m256i x) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(load(w), x));
}

// (a * m + 2^(t-1)) >> t per lane with the block's constants c (layout in the .cpp). |a m| < 2^62,
// so adding 2^62 makes the 64-bit sum non-negative and the logical shift exact; the 2^62 adds
// exactly 2^(62-t) to the quotient, subtracted again. Low 32 bits of each quotient kept.
struct Out8 {
  __m256i zp, lo, hi;
};
inline void requant8(__m256i acc, const int64_t* c, const Out8& o, int8_t* y8) {
  const __m256i a = _mm256_add_epi32(acc, load(c));
  const __m256i m = load(c + 4);
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(a, m), load(c + 16));
  const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(m, 32)), load(c + 20));
  const __m256i qe = _mm256_sub_epi64(_mm256_srlv_epi64(pe, load(c + 8)), load(c + 24));
  const __m256i qo = _mm256_sub_epi64(_mm256_srlv_epi64(po, load(c + 12)), load(c + 28));
  __m256i v = _mm256_blend_epi32(qe, _mm256_slli_epi64(qo, 32), 0xAA);
  v = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v, o.zp), o.lo), o.hi);
  const __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(y8), _mm_packs_epi16(p16, p16));
}

// Block b's outputs: straight into y, or through a small buffer for the last, partial block.
inline void emit(__m256i acc, const PairRequantSingle& q, int b, int rows, const Out8& o, int8_t* y) {
  const int64_t* c = q.per_block.data() + static_cast<size_t>(b) * kPairRequantWords;
  const int r0 = b * kPairBlockRows;
  if (r0 + kPairBlockRows <= rows) {
    requant8(acc, c, o, y + r0);
  } else {
    alignas(8) int8_t tmp[kPairBlockRows];
    requant8(acc, c, o, tmp);
    std::memcpy(y + r0, tmp, static_cast<size_t>(rows - r0));
  }
}

}  // namespace

void gemv_s16_pairs_requant_single_avx2(const int16_t* packed, int blocks, int pairs, const int16_t* xw,
                                        const PairRequantSingle& q, int rows, int8_t* y) noexcept {
  const Out8 o{_mm256_set1_epi32(q.output_zero_point), _mm256_set1_epi32(q.act_min), _mm256_set1_epi32(q.act_max)};
  constexpr size_t kBP = 2 * kPairBlockRows;
  const size_t block_elems = static_cast<size_t>(pairs) * kBP;
  int b = 0;
  for (; b + 4 <= blocks; b += 4) {
    const int16_t* w = packed + static_cast<size_t>(b) * block_elems;
    __m256i e0 = _mm256_setzero_si256(), e1 = e0, e2 = e0, e3 = e0, o0 = e0, o1 = e0, o2 = e0, o3 = e0;
    int k = 0;
    for (; k + 2 <= pairs; k += 2) {
      const __m256i xe = pair_of(xw, k), xo = pair_of(xw, k + 1);
      const int16_t* p = w + static_cast<size_t>(k) * kBP;
      e0 = madd_add(e0, p, xe);
      o0 = madd_add(o0, p + kBP, xo);
      e1 = madd_add(e1, p + block_elems, xe);
      o1 = madd_add(o1, p + block_elems + kBP, xo);
      e2 = madd_add(e2, p + 2 * block_elems, xe);
      o2 = madd_add(o2, p + 2 * block_elems + kBP, xo);
      e3 = madd_add(e3, p + 3 * block_elems, xe);
      o3 = madd_add(o3, p + 3 * block_elems + kBP, xo);
    }
    if (k < pairs) {
      const __m256i xe = pair_of(xw, k);
      const int16_t* p = w + static_cast<size_t>(k) * kBP;
      e0 = madd_add(e0, p, xe);
      e1 = madd_add(e1, p + block_elems, xe);
      e2 = madd_add(e2, p + 2 * block_elems, xe);
      e3 = madd_add(e3, p + 3 * block_elems, xe);
    }
    emit(_mm256_add_epi32(e0, o0), q, b, rows, o, y);
    emit(_mm256_add_epi32(e1, o1), q, b + 1, rows, o, y);
    emit(_mm256_add_epi32(e2, o2), q, b + 2, rows, o, y);
    emit(_mm256_add_epi32(e3, o3), q, b + 3, rows, o, y);
  }
  for (; b < blocks; ++b) {
    const int16_t* w = packed + static_cast<size_t>(b) * block_elems;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    int k = 0;
    for (; k + 4 <= pairs; k += 4) {
      const int16_t* p = w + static_cast<size_t>(k) * kBP;
      a0 = madd_add(a0, p, pair_of(xw, k));
      a1 = madd_add(a1, p + kBP, pair_of(xw, k + 1));
      a2 = madd_add(a2, p + 2 * kBP, pair_of(xw, k + 2));
      a3 = madd_add(a3, p + 3 * kBP, pair_of(xw, k + 3));
    }
    for (; k < pairs; ++k) a0 = madd_add(a0, w + static_cast<size_t>(k) * kBP, pair_of(xw, k));
    emit(_mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)), q, b, rows, o, y);
  }
}

void widen_s8_to_s16_pairs_avx2(const int8_t* x, int cols, int16_t* xw) noexcept {
  int c = 0;
  for (; c + 16 <= cols; c += 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(xw + c),
                        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + c))));
  }
  for (; c < cols; ++c) xw[c] = x[c];
  if (cols & 1) xw[cols] = 0;
}

}  // namespace tickinfer::quant::kernels
