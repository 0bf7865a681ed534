// AVX2 variants of the integer LSTM's elementwise step kernels, bit-exact with the scalar
// reference (sequence_lstm_int8_kernels.cpp); 8 (gates) or 16 (cells) lanes per iteration, the
// tail by the scalar code.
#include <immintrin.h>

#include "tflite/ops/lstm/sequence_lstm_int8_kernels.hpp"

namespace tickinfer::tfl::ops::lstm {

namespace {

// gemmlowp RoundingDivideByPOT on 8 int32 lanes, one exponent e in [0, 31]:
// (x >> e) + (remainder > (mask >> 1) + (x < 0)).
inline __m256i rounding_divide_by_pot8(__m256i x, int e) {
  const __m256i mask = _mm256_set1_epi32(static_cast<int32_t>((int64_t{1} << e) - 1));
  const __m256i rem = _mm256_and_si256(x, mask);
  const __m256i negative = _mm256_cmpgt_epi32(_mm256_setzero_si256(), x);  // -1 where x < 0
  const __m256i thr = _mm256_sub_epi32(_mm256_srli_epi32(mask, 1), negative);
  // cmpgt gives -1 where a round-up is due: subtracting it adds 1.
  return _mm256_sub_epi32(_mm256_sra_epi32(x, _mm_cvtsi32_si128(e)), _mm256_cmpgt_epi32(rem, thr));
}

// MultiplyByQuantizedMultiplier, double rounding, one multiplier m >= 0 and shift for all lanes.
// SaturatingRoundingDoublingHighMul(a, m) = trunc((a m + nudge) / 2^31), nudge 2^30 or 1 - 2^30 by
// the sign of a m; for a negative product trunc((p + 1 - 2^30) / 2^31) equals
// floor((p + 2^30) / 2^31), so every lane is the arithmetic floor of (p + 2^30) / 2^31, whose low
// 32 bits a logical 64-bit right shift by 31 yields (m >= 0: the INT32_MIN^2 case cannot occur).
inline __m256i mbqm_double8(__m256i x, int32_t m, int shift) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const __m256i a = _mm256_sll_epi32(x, _mm_cvtsi32_si128(left));
  const __m256i mv = _mm256_set1_epi32(m);
  const __m256i nudge = _mm256_set1_epi64x(int64_t{1} << 30);
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(a, mv), nudge);
  const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), mv), nudge);
  const __m256i h = _mm256_blend_epi32(_mm256_srli_epi64(pe, 31), _mm256_slli_epi64(_mm256_srli_epi64(po, 31), 32), 0xAA);
  return rounding_divide_by_pot8(h, right);
}

inline __m256i load8(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// 8 int16 -> 8 int32
inline __m256i load8_s16(const int16_t* p) {
  return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// 8 int32 -> 8 int16, saturating (the values here always fit or are meant to saturate).
inline __m128i pack8_sat(__m256i v) {
  return _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

// 8 int32 -> 8 int16 keeping the low 16 bits (C++'s narrowing conversion).
inline __m128i pack8_wrap(__m256i v) {
  const __m256i lo = _mm256_srai_epi32(_mm256_slli_epi32(v, 16), 16);
  return pack8_sat(lo);
}

// MultiplyByQuantizedMultiplier, single rounding: (x m + 2^(t-1)) >> t arithmetic, t = 31 - shift
// in [1, 62]. |x m| < 2^62, so adding 2^62 makes the 64-bit sum non-negative and a logical shift
// exact; the added 2^62 contributes exactly 2^(62-t) to the quotient, removed again.
inline __m256i mbqm_single8(__m256i x, int32_t m, int shift) {
  const int t = 31 - shift;
  const __m256i mv = _mm256_set1_epi32(m);
  const __m256i add = _mm256_set1_epi64x((int64_t{1} << (t - 1)) + (int64_t{1} << 62));
  const __m256i sub = _mm256_set1_epi64x(int64_t{1} << (62 - t));
  const __m128i count = _mm_cvtsi32_si128(t);
  const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(x, mv), add);
  const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), mv), add);
  const __m256i qe = _mm256_sub_epi64(_mm256_srl_epi64(pe, count), sub);
  const __m256i qo = _mm256_sub_epi64(_mm256_srl_epi64(po, count), sub);
  return _mm256_blend_epi32(qe, _mm256_slli_epi64(qo, 32), 0xAA);
}

// t[x[j] + 32768] for 8 int16 inputs, as 8 int32 lanes. Eight scalar loads, not vpgatherdd: on
// Zen 3 a gather of 8 costs more than the 8 loads it replaces (measured on lstm_tiny: about
// 0.2 us of 3.4 us per step).
inline __m256i lookup8(const fx16::Table& t, const int16_t* x) {
  alignas(32) int32_t v[8];
  for (int j = 0; j < 8; ++j) v[j] = t[static_cast<size_t>(int32_t{x[j]} + 32768)];
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(v));
}

template <bool kDouble>
void hidden_avx2(const int16_t* o, const int16_t* c, const fx16::Table& t, int n, int32_t m, int shift, int32_t zp,
                 int8_t* h) noexcept {
  const __m256i zpv = _mm256_set1_epi32(zp);
  int k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256i prod = _mm256_mullo_epi32(load8_s16(o + k), lookup8(t, c + k));
    const __m256i q = kDouble ? mbqm_double8(prod, m, shift) : mbqm_single8(prod, m, shift);
    const __m128i v16 = pack8_sat(_mm256_add_epi32(q, zpv));  // int8 clamp below = clamp of the int32
    _mm_storel_epi64(reinterpret_cast<__m128i*>(h + k), _mm_packs_epi16(v16, v16));
  }
  if (k < n) {
    (kDouble ? int8_hidden_double_scalar : int8_hidden_single_scalar)(o + k, c + k, t, n - k, m, shift, zp, h + k);
  }
}

}  // namespace

// Table lookups in place: the scalar loop is the fastest form here (see lookup8).
void int8_activate_avx2(const fx16::Table& t, int16_t* x, int n) noexcept { int8_activate_scalar(t, x, n); }

void int8_hidden_double_avx2(const int16_t* o, const int16_t* c, const fx16::Table& t, int n, int32_t m, int shift,
                             int32_t zp, int8_t* h) noexcept {
  hidden_avx2<true>(o, c, t, n, m, shift, zp, h);
}
void int8_hidden_single_avx2(const int16_t* o, const int16_t* c, const fx16::Table& t, int n, int32_t m, int shift,
                             int32_t zp, int8_t* h) noexcept {
  hidden_avx2<false>(o, c, t, n, m, shift, zp, h);
}

void int8_gate_avx2(const int32_t* acc_x, const int32_t* bias_x, const int32_t* acc_h, const int32_t* bias_h,
                    int n, Int8GateScales s, int16_t* gate) noexcept {
  int k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256i tx = mbqm_double8(_mm256_add_epi32(load8(bias_x + k), load8(acc_x + k)), s.mx, s.sx);
    // sat16 of the first term, widened again for the second addition.
    const __m256i t = _mm256_cvtepi16_epi32(pack8_sat(tx));
    const __m256i th = mbqm_double8(_mm256_add_epi32(load8(bias_h + k), load8(acc_h + k)), s.mh, s.sh);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(gate + k), pack8_sat(_mm256_add_epi32(th, t)));
  }
  if (k < n) int8_gate_scalar(acc_x + k, bias_x + k, acc_h + k, bias_h + k, n - k, s, gate + k);
}

void int8_gate_const_h_avx2(const int32_t* acc_x, const int32_t* bias_x, const int32_t* th, int n, int32_t mx,
                            int sx, int16_t* gate) noexcept {
  int k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256i tx = mbqm_double8(_mm256_add_epi32(load8(bias_x + k), load8(acc_x + k)), mx, sx);
    const __m256i t = _mm256_cvtepi16_epi32(pack8_sat(tx));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(gate + k), pack8_sat(_mm256_add_epi32(load8(th + k), t)));
  }
  if (k < n) int8_gate_const_h_scalar(acc_x + k, bias_x + k, th + k, n - k, mx, sx, gate + k);
}

void int8_cell_avx2(const int16_t* i, const int16_t* f, const int16_t* g, int n, int shift, int16_t clip,
                    int16_t* c) noexcept {
  const __m256i one = _mm256_set1_epi32(32767);
  const __m128i hi = _mm_set1_epi16(clip > 0 ? clip : 32767);
  const __m128i lo = _mm_set1_epi16(static_cast<int16_t>(clip > 0 ? -clip : -32768));
  int k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256i fv = load8_s16(f + k);
    const __m256i iv = i ? load8_s16(i + k) : _mm256_cvtepi16_epi32(pack8_wrap(_mm256_sub_epi32(one, fv)));
    const __m256i kept = _mm256_cvtepi16_epi32(pack8_wrap(rounding_divide_by_pot8(_mm256_mullo_epi32(fv, load8_s16(c + k)), 15)));
    const __m256i added = _mm256_cvtepi16_epi32(pack8_wrap(rounding_divide_by_pot8(_mm256_mullo_epi32(iv, load8_s16(g + k)), shift)));
    __m128i v = pack8_sat(_mm256_add_epi32(kept, added));
    v = _mm_min_epi16(_mm_max_epi16(v, lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(c + k), v);
  }
  if (k < n) int8_cell_scalar(i ? i + k : nullptr, f + k, g + k, n - k, shift, clip, c + k);
}

}  // namespace tickinfer::tfl::ops::lstm
