// AVX2 int8 gemv on quad blocks (int8_gemv.hpp), plain and with the single-rounding
// requantization fused (block_requant.hpp).
//
// Why the sign trick: AVX2's only byte multiply, vpmaddubsw, multiplies unsigned by signed bytes
// and adds pairs into int16 with saturation. With a = |x| (vpabsb; -128 becomes 128 as u8) and
// b = w with x's sign applied (vpsignb: -w where x < 0, 0 where x = 0), a * b = x * w, and a pair
// sum is at most 2 * 128 * 127 = 32512 in magnitude as long as no weight is -128: exact. A
// matrix holding -128 (never written by TFLite's converter or tickinfer's quantizer, whose
// symmetric weights stay in [-127, 127]) goes to the sign-extending rows kernel instead
// (s8_kernels()'s weights_reach_minus_128). vpmaddwd by ones then widens the int16 pairs to
// int32 quads: 4 uops per 32 multiply-adds, against 6 for sign extension and vpmaddwd, and the
// weights stay 8-bit in cache.
#include <immintrin.h>

#include <cstring>

#include "tflite/kernels/int8_gemv.hpp"

namespace tickinfer::tfl::kernels {

namespace {

inline __m256i load(const void* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// x[4q .. 4q+3] in every 32-bit lane.
inline __m256i quad_of(const int8_t* x, int q) {
  int32_t v;
  std::memcpy(&v, x + 4 * q, sizeof v);
  return _mm256_set1_epi32(v);
}

// acc + the 8 rows' dot products with one input quad (xs: the quad, xa: its absolute values).
inline __m256i dot_quad(__m256i acc, const int8_t* w, __m256i xs, __m256i xa, __m256i ones) {
  const __m256i pairs = _mm256_maddubs_epi16(xa, _mm256_sign_epi8(load(w), xs));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
}

// Blocks [b, b + 4): the 8 sums of each into acc[8 * j ...], j < 4. Each input quad is broadcast
// once for the 32 rows.
inline void four_blocks(const int8_t* p, size_t block_bytes, int quads, const int8_t* x, int32_t* acc) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (int q = 0; q < quads; ++q, p += 32) {
    const __m256i xs = quad_of(x, q), xa = _mm256_abs_epi8(xs);
    a0 = dot_quad(a0, p, xs, xa, ones);
    a1 = dot_quad(a1, p + block_bytes, xs, xa, ones);
    a2 = dot_quad(a2, p + 2 * block_bytes, xs, xa, ones);
    a3 = dot_quad(a3, p + 3 * block_bytes, xs, xa, ones);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc), a0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + 8), a1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + 16), a2);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + 24), a3);
}

// One block's 8 sums into acc[0, 8). Two chains so a lone block is not bound by vpaddd's latency.
inline void one_block(const int8_t* p, int quads, const int8_t* x, int32_t* acc) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0;
  int q = 0;
  for (; q + 2 <= quads; q += 2, p += 64) {
    const __m256i xs0 = quad_of(x, q), xs1 = quad_of(x, q + 1);
    a0 = dot_quad(a0, p, xs0, _mm256_abs_epi8(xs0), ones);
    a1 = dot_quad(a1, p + 32, xs1, _mm256_abs_epi8(xs1), ones);
  }
  if (q < quads) {
    const __m256i xs = quad_of(x, q);
    a0 = dot_quad(a0, p, xs, _mm256_abs_epi8(xs), ones);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc), _mm256_add_epi32(a0, a1));
}

// (a * m + 2^(t-1)) >> t per lane with the block's constants c (layout in block_requant.cpp).
// |a m| < 2^62, so adding 2^62 makes the 64-bit sum non-negative and the logical shift exact; the
// 2^62 adds exactly 2^(62-t) to the quotient, subtracted again. Low 32 bits of each quotient kept.
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

// A high-word block's quotients before the zero point (every t >= 32; layout and proof in
// block_requant.cpp). |result| < 2^30: the multiplier is below 0.5.
inline __m256i quotient8_high(__m256i acc, const int64_t* c) {
  const __m256i a = _mm256_add_epi32(acc, load(c));
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(a, load(c + 4)), load(c + 12));
  const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), load(c + 8)), load(c + 16));
  const __m256i hi = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA);  // row i's high word in lane i
  return _mm256_srav_epi32(hi, load(c + 20));
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

}  // namespace

void gemv_s8s8_s32_quads_avx2(const int8_t* w, int rows, int stride, const int8_t* x, int32_t* acc) noexcept {
  const int blocks = (rows + kS8BlockRows - 1) / kS8BlockRows;
  const int quads = stride / 4;
  const size_t block_bytes = static_cast<size_t>(stride) * kS8BlockRows;
  int b = 0;
  for (; b + 4 <= blocks; b += 4) {
    four_blocks(w + static_cast<size_t>(b) * block_bytes, block_bytes, quads, x, acc + static_cast<size_t>(b) * kS8BlockRows);
  }
  for (; b < blocks; ++b) {
    one_block(w + static_cast<size_t>(b) * block_bytes, quads, x, acc + static_cast<size_t>(b) * kS8BlockRows);
  }
}

// The sums of up to four blocks go through a small buffer on the stack: the requantization's
// constants and the dot products' registers then never compete (GCC spills both otherwise).
namespace {

template <bool kHighWord>
void quads_requant_single(const int8_t* w, int rows, int stride, const int8_t* x, const BlockRequantSingle& q,
                          int8_t* y) noexcept {
  const auto requant = kHighWord ? requant8_high : requant8;
  const Out8 o{_mm256_set1_epi32(q.output_zero_point), _mm256_set1_epi32(q.act_min), _mm256_set1_epi32(q.act_max)};
  const Out16 o16{_mm256_set1_epi16(static_cast<int16_t>(q.output_zero_point)),
                  _mm256_set1_epi16(static_cast<int16_t>(q.act_min)), _mm256_set1_epi16(static_cast<int16_t>(q.act_max))};
  const int blocks = (rows + kS8BlockRows - 1) / kS8BlockRows;
  const int full = rows / kS8BlockRows;  // blocks whose 8 outputs all exist
  const int quads = stride / 4;
  const size_t block_bytes = static_cast<size_t>(stride) * kS8BlockRows;
  const int64_t* consts = q.per_block.data();
  alignas(32) int32_t acc[4 * kS8BlockRows];
  for (int b = 0; b < blocks;) {
    const int n = blocks - b >= 4 ? 4 : 1;
    if (n == 4) {
      four_blocks(w + static_cast<size_t>(b) * block_bytes, block_bytes, quads, x, acc);
    } else {
      one_block(w + static_cast<size_t>(b) * block_bytes, quads, x, acc);
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

}  // namespace

void gemv_s8_quads_requant_single_avx2(const int8_t* w, int rows, int stride, const int8_t* x,
                                       const BlockRequantSingle& q, int8_t* y) noexcept {
  if (q.high_word) {
    quads_requant_single<true>(w, rows, stride, x, q, y);
  } else {
    quads_requant_single<false>(w, rows, stride, x, q, y);
  }
}

}  // namespace tickinfer::tfl::kernels
