// The integer LSTM's activations computed in vector lanes (fx16_avx2.hpp) instead of looked up:
// the "computed" activation kernels of the AVX2 set, bit for bit the tables' values. Which form
// a plan runs is measured at prepare (sequence_lstm_int8_kernels.hpp, choose_int8_activations).
#include <immintrin.h>

#include <cstring>

#include "tflite/ops/lstm/fx16_avx2.hpp"
#include "tflite/ops/lstm/int8_step_avx2.hpp"
#include "tflite/ops/lstm/sequence_lstm_int8_kernels.hpp"

namespace tickinfer::tfl::ops::lstm {

namespace {

using namespace avx2;

// The function of f on K vectors of 16 lanes (fx16_avx2.hpp), one instance per function the
// LSTM uses.
template <int kTanhBits, int K>
inline fx16::avx2::Vecs<K> activation(const fx16::avx2::Vecs<K>& x) {
  if constexpr (kTanhBits < 0) {
    return fx16::avx2::logistic_q3<K>(x);
  } else {
    return fx16::avx2::tanh<kTanhBits, K>(x);
  }
}

// K vectors of 16 from p, and back.
template <int K>
inline fx16::avx2::Vecs<K> load_vecs(const int16_t* p) {
  fx16::avx2::Vecs<K> v;
  for (int j = 0; j < K; ++j) v[j] = load16(p + 16 * j);
  return v;
}
template <int K>
inline void store_vecs(int16_t* p, const fx16::avx2::Vecs<K>& v) {
  for (int j = 0; j < K; ++j) store16(p + 16 * j, v[j]);
}

// Vectors evaluated side by side: 4, a block of 64 elements (a common cell count). Measured on
// the first Zen (a scratch loop over 128 elements), ns per element: 1 vector 2.4-2.5, 2 1.9-2.0,
// 4 1.8, 8 1.7; 8 would leave a 64-cell layer to single vectors.
constexpr int kSideBySide = 4;

template <int kTanhBits>
void activate(int16_t* x, int n) noexcept {
  int k = 0;
  for (; k + 16 * kSideBySide <= n; k += 16 * kSideBySide) {
    store_vecs<kSideBySide>(x + k, activation<kTanhBits, kSideBySide>(load_vecs<kSideBySide>(x + k)));
  }
  for (; k + 16 <= n; k += 16) store_vecs<1>(x + k, activation<kTanhBits, 1>(load_vecs<1>(x + k)));
  if (k < n) {  // the tail through a whole vector, so no element falls back to a table
    alignas(32) int16_t tail[16] = {};
    std::memcpy(tail, x + k, sizeof(int16_t) * static_cast<size_t>(n - k));
    store_vecs<1>(tail, activation<kTanhBits, 1>(load_vecs<1>(tail)));
    std::memcpy(x + k, tail, sizeof(int16_t) * static_cast<size_t>(n - k));
  }
}

template <bool kDouble, int kTanhBits>
void hidden_avx2(const int16_t* o, const int16_t* c, int n, int32_t m, int shift, int32_t zp, int8_t* h) noexcept {
  const __m256i zpv = _mm256_set1_epi32(zp);
  // K vectors of 16: tanh(c) side by side, then o .* tanh(c) requantized.
  const auto block = [&]<int K>(const int16_t* o16, const int16_t* c16, int8_t* h16) {
    const fx16::avx2::Vecs<K> t = activation<kTanhBits, K>(load_vecs<K>(c16));
    for (int j = 0; j < K; ++j) {
      const __m256i ov = load16(o16 + 16 * j);
      const __m128i lo = hidden8<kDouble>(_mm256_castsi256_si128(ov), _mm256_castsi256_si128(t[j]), m, shift, zpv);
      const __m128i hi =
          hidden8<kDouble>(_mm256_extracti128_si256(ov, 1), _mm256_extracti128_si256(t[j], 1), m, shift, zpv);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(h16 + 16 * j), _mm_packs_epi16(lo, hi));
    }
  };
  int k = 0;
  for (; k + 16 * kSideBySide <= n; k += 16 * kSideBySide) block.template operator()<kSideBySide>(o + k, c + k, h + k);
  for (; k + 16 <= n; k += 16) block.template operator()<1>(o + k, c + k, h + k);
  if (k < n) {
    alignas(32) int16_t ot[16] = {}, ct[16] = {};
    alignas(16) int8_t ht[16];
    const size_t rest = static_cast<size_t>(n - k);
    std::memcpy(ot, o + k, sizeof(int16_t) * rest);
    std::memcpy(ct, c + k, sizeof(int16_t) * rest);
    block.template operator()<1>(ot, ct, ht);
    std::memcpy(h + k, ht, rest);
  }
}

template <bool kDouble>
void hidden_of(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m, int shift, int32_t zp,
               int8_t* h) noexcept {
  fx16::with_function(t, [&]<int kBits>() { hidden_avx2<kDouble, kBits>(o, c, n, m, shift, zp, h); });
}

}  // namespace

void int8_activate_computed_avx2(const fx16::Activation& f, int16_t* x, int n) noexcept {
  fx16::with_function(f, [&]<int kBits>() { activate<kBits>(x, n); });
}

void int8_hidden_double_computed_avx2(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m,
                             int shift, int32_t zp, int8_t* h) noexcept {
  hidden_of<true>(o, c, t, n, m, shift, zp, h);
}
void int8_hidden_single_computed_avx2(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m,
                             int shift, int32_t zp, int8_t* h) noexcept {
  hidden_of<false>(o, c, t, n, m, shift, zp, h);
}

}  // namespace tickinfer::tfl::ops::lstm
