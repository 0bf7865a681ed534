// AVX2 variants of the integer LSTM's elementwise step kernels, bit-exact with the scalar
// reference (sequence_lstm_int8_kernels.cpp): the gate requantizations and the cell update on 8
// lanes (tails by the scalar code), and the activations by table. The computed activations are in
// sequence_lstm_int8_activations_avx2.cpp.
#include <immintrin.h>

#include <cstring>

#include "tflite/ops/lstm/int8_step_avx2.hpp"
#include "tflite/ops/lstm/sequence_lstm_int8_kernels.hpp"

namespace tickinfer::tfl::ops::lstm {

namespace {

using namespace avx2;

// The cell state's tanh for up to this many elements at a time, looked up into a buffer first:
// looking up into the vector being built (8 scalar stores, one vector load) stalls store-to-load
// forwarding at every vector.
constexpr int kLookupChunk = 256;

template <bool kDouble>
void hidden_table(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m, int shift,
                  int32_t zp, int8_t* h) noexcept {
  const __m256i zpv = _mm256_set1_epi32(zp);
  alignas(32) int16_t tanh_c[kLookupChunk];
  for (int k0 = 0; k0 < n; k0 += kLookupChunk) {
    const int len = n - k0 < kLookupChunk ? n - k0 : kLookupChunk;
    std::memcpy(tanh_c, c + k0, sizeof(int16_t) * static_cast<size_t>(len));
    int8_activate_scalar(t, tanh_c, len);
    int k = 0;
    for (; k + 8 <= len; k += 8) {
      const __m128i v16 = hidden8<kDouble>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + k0 + k)),
                                           _mm_load_si128(reinterpret_cast<const __m128i*>(tanh_c + k)), m, shift, zpv);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(h + k0 + k), _mm_packs_epi16(v16, v16));
    }
    if (k < len) {
      (kDouble ? int8_hidden_double_scalar : int8_hidden_single_scalar)(o + k0 + k, c + k0 + k, t, len - k, m, shift,
                                                                        zp, h + k0 + k);
    }
  }
}

}  // namespace

void int8_hidden_double_avx2(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m, int shift,
                             int32_t zp, int8_t* h) noexcept {
  hidden_table<true>(o, c, t, n, m, shift, zp, h);
}
void int8_hidden_single_avx2(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m, int shift,
                             int32_t zp, int8_t* h) noexcept {
  hidden_table<false>(o, c, t, n, m, shift, zp, h);
}

namespace {

// The requantization's constants made once per call; kDivides: whether the shift has a right
// part (DoubleRounding8::apply). The vectors up to the last whole 8.
template <bool kDivides>
void gate_input_loop(const int32_t* acc_x, const int32_t* bias_x, int n, int32_t mx, int sx, int16_t* gx) noexcept {
  const DoubleRounding8 rx(mx, sx);
  for (int k = 0; k + 8 <= n; k += 8) {
    const __m256i t = rx.apply<kDivides>(_mm256_add_epi32(load8(bias_x + k), load8(acc_x + k)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(gx + k), pack8_sat(t));
  }
}

template <bool kDivides>
void gate_recurrent_loop(const int32_t* acc_h, const int32_t* bias_h, const int16_t* gx, int n, int32_t mh, int sh,
                         int16_t* gate) noexcept {
  const DoubleRounding8 rh(mh, sh);
  for (int k = 0; k + 8 <= n; k += 8) {
    const __m256i th = rh.apply<kDivides>(_mm256_add_epi32(load8(bias_h + k), load8(acc_h + k)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(gate + k), pack8_sat(_mm256_add_epi32(th, load8_s16(gx + k))));
  }
}

}  // namespace

void int8_gate_input_avx2(const int32_t* acc_x, const int32_t* bias_x, int n, int32_t mx, int sx,
                          int16_t* gx) noexcept {
  (sx < 0 ? gate_input_loop<true> : gate_input_loop<false>)(acc_x, bias_x, n, mx, sx, gx);
  const int k = n - n % 8;
  if (k < n) int8_gate_input_scalar(acc_x + k, bias_x + k, n - k, mx, sx, gx + k);
}

void int8_gate_recurrent_avx2(const int32_t* acc_h, const int32_t* bias_h, const int16_t* gx, int n, int32_t mh,
                              int sh, int16_t* gate) noexcept {
  (sh < 0 ? gate_recurrent_loop<true> : gate_recurrent_loop<false>)(acc_h, bias_h, gx, n, mh, sh, gate);
  const int k = n - n % 8;
  if (k < n) int8_gate_recurrent_scalar(acc_h + k, bias_h + k, gx + k, n - k, mh, sh, gate + k);
}

void int8_gate_const_h_avx2(const int32_t* th, const int16_t* gx, int n, int16_t* gate) noexcept {
  int k = 0;
  for (; k + 8 <= n; k += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(gate + k), pack8_sat(_mm256_add_epi32(load8(th + k), load8_s16(gx + k))));
  }
  if (k < n) int8_gate_const_h_scalar(th + k, gx + k, n - k, gate + k);
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
