#pragma once
// The quad-block gemv's requantization of each block's 8 sums in registers (single rounding,
// block_requant.hpp), shared by the AVX2 kernels (gemv_s8_quads_avx2.cpp) and the VNNI ones
// (gemv_s8_quads_vnni.cpp), which differ only in how they form the sums: a `Dot` object with
//   void four_blocks(const int8_t* p, size_t block_bytes, int quads, const int8_t* x, int32_t* acc) const;
//   void one_block(const int8_t* p, int quads, const int8_t* x, int32_t* acc) const;
//   size_t block_bytes() const;  // from one block to the next
//   int stride;                   // the matrix's quad stride
// (taken by value, and the stride only through it: six register arguments let the high-word
// instance be a tail call from the entry points, not a call behind a stack frame).
// (the exact sums of the 4 blocks, or the one block, at p into acc, 8 per block).
//
// Everything here has internal linkage (an unnamed namespace), on purpose: each including file is
// compiled with its own ISA flags, and one shared inline definition would let the linker keep the
// AVX-512 build of it for the AVX2 path too.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "tflite/kernels/block_requant.hpp"
#include "tflite/kernels/gemv_s8.hpp"

namespace tickinfer::tfl::kernels {
namespace {

inline __m256i load_si256(const void* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// (a * m + 2^(t-1)) >> t per lane with the block's constants c (layout in block_requant.cpp).
// |a m| < 2^62, so adding 2^62 makes the 64-bit sum non-negative and the logical shift exact; the
// 2^62 adds exactly 2^(62-t) to the quotient, subtracted again. Low 32 bits of each quotient kept.
struct Out8 {
  __m256i zp, lo, hi;
};
inline void requant8(__m256i acc, const int64_t* c, const Out8& o, int8_t* y8) {
  const __m256i a = _mm256_add_epi32(acc, load_si256(c));
  const __m256i m = load_si256(c + 4);
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(a, m), load_si256(c + 16));
  const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(m, 32)), load_si256(c + 20));
  const __m256i qe = _mm256_sub_epi64(_mm256_srlv_epi64(pe, load_si256(c + 8)), load_si256(c + 24));
  const __m256i qo = _mm256_sub_epi64(_mm256_srlv_epi64(po, load_si256(c + 12)), load_si256(c + 28));
  __m256i v = _mm256_blend_epi32(qe, _mm256_slli_epi64(qo, 32), 0xAA);
  v = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v, o.zp), o.lo), o.hi);
  const __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(y8), _mm_packs_epi16(p16, p16));
}

// A high-word block's quotients before the zero point (every t >= 32; layout and proof in
// block_requant.cpp). |result| < 2^30: the multiplier is below 0.5.
inline __m256i quotient8_high(__m256i acc, const int64_t* c) {
  const __m256i a = _mm256_add_epi32(acc, load_si256(c));
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(a, load_si256(c + 4)), load_si256(c + 12));
  const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), load_si256(c + 8)), load_si256(c + 16));
  const __m256i hi = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA);  // row i's high word in lane i
  return _mm256_srav_epi32(hi, load_si256(c + 20));
}

inline void requant8_high(__m256i acc, const int64_t* c, const Out8& o, int8_t* y8) {
  __m256i v = quotient8_high(acc, c);
  v = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v, o.zp), o.lo), o.hi);
  const __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(y8), _mm_packs_epi16(p16, p16));
}

// Two whole high-word blocks, 16 outputs: the zero point and the clamp run on int16 after one
// saturating pack, once for both. Equal to requant8_high twice: a quotient beyond int16 saturates
// to +-32767/-32768, which plus any int8 zero point still lies beyond [act_min, act_max] on the
// same side, so the clamp gives what it gives in int32.
struct Out16 {
  __m256i zp, lo, hi;  // int16 lanes
};
inline void requant16_high(__m256i acc0, __m256i acc1, const int64_t* c0, const Out16& o, int8_t* y16) {
  const __m256i v0 = quotient8_high(acc0, c0), v1 = quotient8_high(acc1, c0 + kBlockRequantWords);
  // packs works per 128-bit lane: [v0 0-3, v1 0-3 | v0 4-7, v1 4-7]; the permute restores row order.
  __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8);
  p = _mm256_min_epi16(_mm256_max_epi16(_mm256_adds_epi16(p, o.zp), o.lo), o.hi);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(y16),
                   _mm_packs_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)));
}

// The sums of up to four blocks go through a small buffer on the stack: the requantization's
// constants and the dot products' registers then never compete (GCC spills both otherwise).
template <class Dot, bool kHighWord>
void quads_requant_single(Dot dot, const int8_t* w, int rows, const int8_t* x, const BlockRequantSingle& q,
                          int8_t* y) noexcept {
  const auto requant = kHighWord ? requant8_high : requant8;
  const Out8 o{_mm256_set1_epi32(q.output_zero_point), _mm256_set1_epi32(q.act_min), _mm256_set1_epi32(q.act_max)};
  const Out16 o16{_mm256_set1_epi16(static_cast<int16_t>(q.output_zero_point)),
                  _mm256_set1_epi16(static_cast<int16_t>(q.act_min)), _mm256_set1_epi16(static_cast<int16_t>(q.act_max))};
  const int blocks = (rows + kS8BlockRows - 1) / kS8BlockRows;
  const int full = rows / kS8BlockRows;  // blocks whose 8 outputs all exist
  const int quads = dot.stride / 4;
  const size_t block_bytes = dot.block_bytes();
  const int64_t* consts = q.per_block.data();
  alignas(32) int32_t acc[4 * kS8BlockRows];
  for (int b = 0; b < blocks;) {
    const int n = blocks - b >= 4 ? 4 : 1;
    if (n == 4) {
      dot.four_blocks(w + static_cast<size_t>(b) * block_bytes, block_bytes, quads, x, acc);
    } else {
      dot.one_block(w + static_cast<size_t>(b) * block_bytes, quads, x, acc);
    }
    int j = 0;
    if constexpr (kHighWord) {
      for (; j + 2 <= n && b + 2 <= full; j += 2, b += 2) {
        requant16_high(_mm256_load_si256(reinterpret_cast<const __m256i*>(acc + j * kS8BlockRows)),
                       _mm256_load_si256(reinterpret_cast<const __m256i*>(acc + (j + 1) * kS8BlockRows)),
                       consts + static_cast<size_t>(b) * kBlockRequantWords, o16, y + static_cast<size_t>(b) * kS8BlockRows);
      }
    }
    for (; j < n; ++j, ++b) {
      const __m256i sums = _mm256_load_si256(reinterpret_cast<const __m256i*>(acc + j * kS8BlockRows));
      const int64_t* c = consts + static_cast<size_t>(b) * kBlockRequantWords;
      if (b < full) {
        requant(sums, c, o, y + static_cast<size_t>(b) * kS8BlockRows);
      } else {  // the last, partial block: through a small buffer
        alignas(8) int8_t tmp[kS8BlockRows];
        requant(sums, c, o, tmp);
        for (int r = b * kS8BlockRows; r < rows; ++r) y[r] = tmp[r - b * kS8BlockRows];
      }
    }
  }
}


template <class Dot>
inline void quads_requant_single_dispatch(Dot dot, const int8_t* w, int rows, const int8_t* x,
                                   const BlockRequantSingle& q, int8_t* y) noexcept {
  if (q.high_word) {
    quads_requant_single<Dot, true>(dot, w, rows, x, q, y);
  } else {
    quads_requant_single<Dot, false>(dot, w, rows, x, q, y);
  }
}

}  // namespace
}  // namespace tickinfer::tfl::kernels
