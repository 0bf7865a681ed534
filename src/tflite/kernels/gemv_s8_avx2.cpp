// AVX2 int8 kernels. Dot products: sign-extend 16 int8 to int16 and vpmaddwd (products of int8
// pairs summed in pairs never saturate, so the result is exact). Requantization: 8 outputs at a
// time with the exact integer formulas of tflite/fixed_point.hpp (see the derivations inline).
#include <immintrin.h>

#include <cstring>

#include "tflite/fixed_point.hpp"
#include "tflite/kernels/gemv_s8.hpp"
#include "tflite/kernels/requant8_avx2.hpp"

namespace tickinfer::tfl::kernels {
namespace {

// Horizontal sums of four 8-lane accumulators -> 4 int32.
inline __m128i hsum4(__m256i a0, __m256i a1, __m256i a2, __m256i a3) {
  const __m256i t01 = _mm256_hadd_epi32(a0, a1);
  const __m256i t23 = _mm256_hadd_epi32(a2, a3);
  const __m256i t = _mm256_hadd_epi32(t01, t23);  // [r0 r1 r2 r3 | r0 r1 r2 r3] partial halves
  return _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

inline __m256i load16_s8_as_s16(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

}  // namespace

void gemv_s8s8_s32_avx2(const int8_t* w, int rows, int stride, const int8_t* x, int32_t* acc) noexcept {
  int r = 0;
  for (; r + 4 <= rows; r += 4) {
    const int8_t* w0 = w + static_cast<size_t>(r) * stride;
    const int8_t* w1 = w0 + stride;
    const int8_t* w2 = w1 + stride;
    const int8_t* w3 = w2 + stride;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (int c = 0; c < stride; c += 16) {
      const __m256i xv = load16_s8_as_s16(x + c);
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(load16_s8_as_s16(w0 + c), xv));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(load16_s8_as_s16(w1 + c), xv));
      a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(load16_s8_as_s16(w2 + c), xv));
      a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(load16_s8_as_s16(w3 + c), xv));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(acc + r), hsum4(a0, a1, a2, a3));
  }
  for (; r < rows; ++r) {
    const int8_t* w0 = w + static_cast<size_t>(r) * stride;
    __m256i a0 = _mm256_setzero_si256();
    for (int c = 0; c < stride; c += 16) {
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(load16_s8_as_s16(w0 + c), load16_s8_as_s16(x + c)));
    }
    const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1));
    const __m128i s2 = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    acc[r] = _mm_cvtsi128_si32(_mm_add_epi32(s2, _mm_shuffle_epi32(s2, 0xb1)));
  }
}

// The rows layout (matrices holding -128) is the fallback set: one gemv per vector.
void gemm_s8s8_s32_avx2(const int8_t* w, int rows, int stride, const int8_t* x, int n, int32_t* acc) noexcept {
  const size_t acc_step = static_cast<size_t>(s8_padded_rows(rows));
  for (int p = 0; p < n; ++p) {
    gemv_s8s8_s32_avx2(w, rows, stride, x + static_cast<size_t>(p) * stride, acc + static_cast<size_t>(p) * acc_step);
  }
}

using namespace avx2_requant;

// The last 1 to 7 rows as one vector: copied into zero-padded lanes (a lane of multiplier 0 gives
// 0, harmlessly), computed as every other vector is, and only the real bytes stored. Each lane is
// the same arithmetic as a full vector's, so the same bits as the scalar loop it replaces (which
// took 8.9 % of the instructions of a TransLOB full-int8 run, callgrind: a softmax over 100 keys
// or an output of 5 columns is mostly tail).
template <Rounding R>
inline void requant_tail8(const int32_t* acc, int n, const RequantParams& p, __m256i zp, __m256i lo, __m256i hi,
                          int8_t* y) noexcept {
  alignas(32) int32_t a8[8] = {}, m8[8] = {}, s8[8] = {};
  for (int i = 0; i < n; ++i) {
    // + bias wraps, as the vector add does
    a8[i] = p.bias ? static_cast<int32_t>(static_cast<uint32_t>(acc[i]) + static_cast<uint32_t>(p.bias[i])) : acc[i];
    m8[i] = p.multiplier[i];
    s8[i] = p.shift[i];
  }
  alignas(16) int8_t y8[16];
  const Requant8<R> q(load8(m8), load8(s8));
  store8_s8(q.apply(load8(a8)), zp, lo, hi, y8);
  std::memcpy(y, y8, static_cast<size_t>(n));
}

template <Rounding R>
void requantize_s32_to_s8_avx2(const int32_t* acc, int rows, const RequantParams& p, int8_t* y) noexcept {
  const __m256i zp = _mm256_set1_epi32(p.output_zero_point);
  const __m256i lo = _mm256_set1_epi32(p.act_min);
  const __m256i hi = _mm256_set1_epi32(p.act_max);
  int r = 0;
  for (; r + 8 <= rows; r += 8) {
    __m256i a = load8(acc + r);
    if (p.bias) a = _mm256_add_epi32(a, load8(p.bias + r));
    const Requant8<R> q(load8(p.multiplier + r), load8(p.shift + r));
    store8_s8(q.apply(a), zp, lo, hi, y + r);
  }
  if (r < rows) requant_tail8<R>(acc + r, rows - r, requant_rows_from(p, r), zp, lo, hi, y + r);
}

template void requantize_s32_to_s8_avx2<Rounding::Double>(const int32_t*, int, const RequantParams&, int8_t*) noexcept;
template void requantize_s32_to_s8_avx2<Rounding::Single>(const int32_t*, int, const RequantParams&, int8_t*) noexcept;

// Channel blocks outer, positions inner: each block's constants serve all n positions.
template <Rounding R>
void requantize_pixels_s32_to_s8_avx2(const int32_t* acc, int rows, int n, int acc_step, const RequantParams& p,
                                      int8_t* y) noexcept {
  const __m256i zp = _mm256_set1_epi32(p.output_zero_point);
  const __m256i lo = _mm256_set1_epi32(p.act_min);
  const __m256i hi = _mm256_set1_epi32(p.act_max);
  int r = 0;
  for (; r + 8 <= rows; r += 8) {
    const __m256i bias = p.bias ? load8(p.bias + r) : _mm256_setzero_si256();  // + 0 wraps to the same
    const Requant8<R> q(load8(p.multiplier + r), load8(p.shift + r));
    for (int j = 0; j < n; ++j) {
      const __m256i a = _mm256_add_epi32(load8(acc + static_cast<size_t>(j) * acc_step + r), bias);
      store8_s8(q.apply(a), zp, lo, hi, y + static_cast<size_t>(j) * rows + r);
    }
  }
  if (r < rows) {
    const RequantParams t = requant_rows_from(p, r);
    for (int j = 0; j < n; ++j) {
      requant_tail8<R>(acc + static_cast<size_t>(j) * acc_step + r, rows - r, t, zp, lo, hi,
                       y + static_cast<size_t>(j) * rows + r);
    }
  }
}

template void requantize_pixels_s32_to_s8_avx2<Rounding::Double>(const int32_t*, int, int, int, const RequantParams&,
                                                                 int8_t*) noexcept;
template void requantize_pixels_s32_to_s8_avx2<Rounding::Single>(const int32_t*, int, int, int, const RequantParams&,
                                                                 int8_t*) noexcept;

}  // namespace tickinfer::tfl::kernels
