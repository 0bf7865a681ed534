// AVX2 int8 gemv on quad blocks (gemv_s8.hpp), plain and with the single-rounding
// requantization fused (block_requant.hpp, gemv_s8_quads_requant.hpp).
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

#include "tflite/kernels/gemv_s8_quads_requant.hpp"
#include "tflite/kernels/gemv_s8.hpp"

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

namespace {

// Blocks [b, b + 4) times two vectors x0, x1: each weight load feeds both. (Four vectors would
// need 16 accumulators plus each vector's quad and its absolute value: more than AVX2's 16
// registers.) acc0/acc1 take the 32 sums of each vector.
inline void four_blocks_two(const int8_t* p, size_t block_bytes, int quads, const int8_t* x0, const int8_t* x1,
                            int32_t* acc0, int32_t* acc1) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  for (int q = 0; q < quads; ++q, p += 32) {
    const __m256i w0 = load(p), w1 = load(p + block_bytes), w2 = load(p + 2 * block_bytes), w3 = load(p + 3 * block_bytes);
    const __m256i s0 = quad_of(x0, q), u0 = _mm256_abs_epi8(s0);
    a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_maddubs_epi16(u0, _mm256_sign_epi8(w0, s0)), ones));
    a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_maddubs_epi16(u0, _mm256_sign_epi8(w1, s0)), ones));
    a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_maddubs_epi16(u0, _mm256_sign_epi8(w2, s0)), ones));
    a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_maddubs_epi16(u0, _mm256_sign_epi8(w3, s0)), ones));
    const __m256i s1 = quad_of(x1, q), u1 = _mm256_abs_epi8(s1);
    b0 = _mm256_add_epi32(b0, _mm256_madd_epi16(_mm256_maddubs_epi16(u1, _mm256_sign_epi8(w0, s1)), ones));
    b1 = _mm256_add_epi32(b1, _mm256_madd_epi16(_mm256_maddubs_epi16(u1, _mm256_sign_epi8(w1, s1)), ones));
    b2 = _mm256_add_epi32(b2, _mm256_madd_epi16(_mm256_maddubs_epi16(u1, _mm256_sign_epi8(w2, s1)), ones));
    b3 = _mm256_add_epi32(b3, _mm256_madd_epi16(_mm256_maddubs_epi16(u1, _mm256_sign_epi8(w3, s1)), ones));
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc0), a0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc0 + 8), a1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc0 + 16), a2);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc0 + 24), a3);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc1), b0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc1 + 8), b1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc1 + 16), b2);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc1 + 24), b3);
}

}  // namespace

void gemm_s8s8_s32_quads_avx2(const int8_t* w, int rows, int stride, const int8_t* x, int n, int32_t* acc) noexcept {
  const int blocks = (rows + kS8BlockRows - 1) / kS8BlockRows;
  const int quads = stride / 4;
  const size_t block_bytes = static_cast<size_t>(stride) * kS8BlockRows;
  const size_t acc_step = static_cast<size_t>(blocks) * kS8BlockRows;
  int p = 0;
  for (; p + 2 <= n; p += 2) {
    const int8_t* x0 = x + static_cast<size_t>(p) * stride;
    int32_t* acc0 = acc + static_cast<size_t>(p) * acc_step;
    int b = 0;
    for (; b + 4 <= blocks; b += 4) {
      const size_t o = static_cast<size_t>(b) * kS8BlockRows;
      four_blocks_two(w + static_cast<size_t>(b) * block_bytes, block_bytes, quads, x0, x0 + stride, acc0 + o,
                      acc0 + acc_step + o);
    }
    for (; b < blocks; ++b) {
      const size_t o = static_cast<size_t>(b) * kS8BlockRows;
      one_block(w + static_cast<size_t>(b) * block_bytes, quads, x0, acc0 + o);
      one_block(w + static_cast<size_t>(b) * block_bytes, quads, x0 + stride, acc0 + acc_step + o);
    }
  }
  if (p < n) gemv_s8s8_s32_quads_avx2(w, rows, stride, x + static_cast<size_t>(p) * stride, acc + static_cast<size_t>(p) * acc_step);
}

namespace {

struct Avx2Dot {
  int stride;
  size_t block_bytes() const { return static_cast<size_t>(stride) * kS8BlockRows; }
  void four_blocks(const int8_t* p, size_t block_bytes, int quads, const int8_t* x, int32_t* acc) const {
    kernels::four_blocks(p, block_bytes, quads, x, acc);
  }
  void one_block(const int8_t* p, int quads, const int8_t* x, int32_t* acc) const { kernels::one_block(p, quads, x, acc); }
};

}  // namespace

void gemv_s8_quads_requant_single_avx2(const int8_t* w, int rows, int stride, const int8_t* x,
                                       const BlockRequantSingle& q, int8_t* y) noexcept {
  quads_requant_single_dispatch(Avx2Dot{stride}, w, rows, x, q, y);
}

}  // namespace tickinfer::tfl::kernels
