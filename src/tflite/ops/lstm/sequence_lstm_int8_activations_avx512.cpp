// The integer LSTM's activations computed on 32 int16 lanes (fx16_avx512.hpp): the "computed"
// activation kernels of the AVX-512 set, bit for bit the tables' values. On a core that splits
// 512-bit operations (Zen 4) the mask-register forms still halve the AVX2 form's instruction
// count, and, unlike the tables, they leave the gate weights in L1.
#include "kernels/x86_intrinsics.hpp"

#include <cstring>

#include "tflite/kernels/requant_avx512_lanes.hpp"
#include "tflite/ops/lstm/fx16_avx512.hpp"
#include "tflite/ops/lstm/sequence_lstm_int8_kernels.hpp"

namespace tickinfer::tfl::ops::lstm {

namespace {

namespace v = fx16::avx512;
namespace lanes = kernels::avx512_lanes;
constexpr int kLanes = 32;

template <int kTanhBits, int K>
inline v::Vecs<K> activation(const v::Vecs<K>& x) {
  if constexpr (kTanhBits < 0) {
    return v::logistic_q3<K>(x);
  } else {
    return v::tanh<kTanhBits, K>(x);
  }
}

template <int K>
inline v::Vecs<K> load_vecs(const int16_t* p) {
  v::Vecs<K> r;
  for (int j = 0; j < K; ++j) r[j] = _mm512_loadu_si512(p + kLanes * j);
  return r;
}
template <int K>
inline void store_vecs(int16_t* p, const v::Vecs<K>& r) {
  for (int j = 0; j < K; ++j) _mm512_storeu_si512(p + kLanes * j, r[j]);
}

// Two vectors side by side (64 elements, a common cell count): two independent chains.
constexpr int kSideBySide = 2;

template <int kTanhBits>
void activate(int16_t* x, int n) noexcept {
  int k = 0;
  for (; k + kLanes * kSideBySide <= n; k += kLanes * kSideBySide) {
    store_vecs<kSideBySide>(x + k, activation<kTanhBits, kSideBySide>(load_vecs<kSideBySide>(x + k)));
  }
  for (; k + kLanes <= n; k += kLanes) store_vecs<1>(x + k, activation<kTanhBits, 1>(load_vecs<1>(x + k)));
  if (k < n) {  // the tail through a whole vector
    alignas(64) int16_t tail[kLanes] = {};
    std::memcpy(tail, x + k, sizeof(int16_t) * static_cast<size_t>(n - k));
    store_vecs<1>(tail, activation<kTanhBits, 1>(load_vecs<1>(tail)));
    std::memcpy(x + k, tail, sizeof(int16_t) * static_cast<size_t>(n - k));
  }
}

// MBQM on 16 int32 lanes with one multiplier and shift, its constants made once per call.
template <Rounding R>
class HiddenRequant {
 public:
  HiddenRequant(int32_t m, int shift) : m_(_mm512_set1_epi32(m)), s_(_mm512_set1_epi32(shift)), rq_(m_, s_) {}
  __m512i apply(__m512i x) const {
    if constexpr (R == Rounding::Double) {
      return rq_.apply(x);
    } else {
      return lanes::mbqm16<Rounding::Single>(x, m_, s_);
    }
  }

 private:
  __m512i m_, s_;
  lanes::DoubleRounding16 rq_;
};

// 16 hidden values: int8(clamp(MBQM(o * t, m, shift) + zp)); vpmovsdb's saturation is the clamp.
template <Rounding R>
inline __m128i hidden16(__m256i o, __m256i t, const HiddenRequant<R>& rq, __m512i zp) {
  const __m512i prod = _mm512_mullo_epi32(_mm512_maskz_cvtepi16_epi32(lanes::k32, o), _mm512_maskz_cvtepi16_epi32(lanes::k32, t));
  return _mm512_maskz_cvtsepi32_epi8(lanes::k32, _mm512_add_epi32(rq.apply(prod), zp));
}
inline __m256i low_half(__m512i v) { return _mm512_maskz_extracti32x8_epi32(0xFF, v, 0); }
inline __m256i high_half(__m512i v) { return _mm512_maskz_extracti32x8_epi32(0xFF, v, 1); }

template <Rounding R, int kTanhBits>
void hidden_avx512(const int16_t* o, const int16_t* c, int n, int32_t m, int shift, int32_t zp, int8_t* h) noexcept {
  const HiddenRequant<R> rq(m, shift);
  const __m512i zpv = _mm512_set1_epi32(zp);
  // K vectors of 32: tanh(c) side by side, then o .* tanh(c) requantized.
  const auto block = [&]<int K>(const int16_t* o32, const int16_t* c32, int8_t* h32) {
    const v::Vecs<K> t = activation<kTanhBits, K>(load_vecs<K>(c32));
    for (int j = 0; j < K; ++j) {
      const __m512i ov = _mm512_loadu_si512(o32 + kLanes * j);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(h32 + kLanes * j), hidden16<R>(low_half(ov), low_half(t[j]), rq, zpv));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(h32 + kLanes * j + 16),
                       hidden16<R>(high_half(ov), high_half(t[j]), rq, zpv));
    }
  };
  int k = 0;
  for (; k + kLanes * kSideBySide <= n; k += kLanes * kSideBySide) block.template operator()<kSideBySide>(o + k, c + k, h + k);
  for (; k + kLanes <= n; k += kLanes) block.template operator()<1>(o + k, c + k, h + k);
  if (k < n) {
    alignas(64) int16_t ot[kLanes] = {}, ct[kLanes] = {};
    alignas(16) int8_t ht[kLanes];
    const size_t rest = static_cast<size_t>(n - k);
    std::memcpy(ot, o + k, sizeof(int16_t) * rest);
    std::memcpy(ct, c + k, sizeof(int16_t) * rest);
    block.template operator()<1>(ot, ct, ht);
    std::memcpy(h + k, ht, rest);
  }
}

template <Rounding R>
void hidden_of(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m, int shift, int32_t zp,
               int8_t* h) noexcept {
  fx16::with_function(t, [&]<int kBits>() { hidden_avx512<R, kBits>(o, c, n, m, shift, zp, h); });
}

}  // namespace

void int8_activate_computed_avx512(const fx16::Activation& f, int16_t* x, int n) noexcept {
  fx16::with_function(f, [&]<int kBits>() { activate<kBits>(x, n); });
}

void int8_hidden_double_computed_avx512(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m,
                                        int shift, int32_t zp, int8_t* h) noexcept {
  hidden_of<Rounding::Double>(o, c, t, n, m, shift, zp, h);
}
void int8_hidden_single_computed_avx512(const int16_t* o, const int16_t* c, const fx16::Activation& t, int n, int32_t m,
                                        int shift, int32_t zp, int8_t* h) noexcept {
  hidden_of<Rounding::Single>(o, c, t, n, m, shift, zp, h);
}

namespace {

// gemmlowp RoundingDivideByPOT on 16 int32 lanes, one exponent e in [0, 31]:
// (x >> e) + (remainder > (mask >> 1) + (x < 0)).
inline __m512i rounding_divide_by_pot16(__m512i x, int e) {
  const __m512i mask = _mm512_set1_epi32(static_cast<int32_t>((int64_t{1} << e) - 1));
  const __m512i rem = _mm512_and_si512(x, mask);
  const __m512i thr = _mm512_mask_add_epi32(_mm512_maskz_srli_epi32(lanes::k32, mask, 1), _mm512_movepi32_mask(x),
                                            _mm512_maskz_srli_epi32(lanes::k32, mask, 1), _mm512_set1_epi32(1));
  const __m512i q = _mm512_maskz_sra_epi32(lanes::k32, x, _mm_cvtsi32_si128(e));
  return _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(rem, thr), q, _mm512_set1_epi32(1));
}
// 16 int16 -> int32, and int32 -> int16 keeping the low 16 bits, sign-extended back (C++'s
// narrowing conversion, then the widening the next sum needs).
inline __m512i widen(const int16_t* p) {
  return _mm512_maskz_cvtepi16_epi32(lanes::k32, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline __m512i wrap16(__m512i v) { return _mm512_maskz_srai_epi32(lanes::k32, _mm512_maskz_slli_epi32(lanes::k32, v, 16), 16); }

}  // namespace

void int8_cell_avx512(const int16_t* i, const int16_t* f, const int16_t* g, int n, int shift, int16_t clip,
                      int16_t* c) noexcept {
  const __m512i one = _mm512_set1_epi32(32767);
  const __m512i hi = _mm512_set1_epi32(clip > 0 ? clip : 32767);
  const __m512i lo = _mm512_set1_epi32(clip > 0 ? -clip : -32768);
  int k = 0;
  for (; k + 16 <= n; k += 16) {
    const __m512i fv = widen(f + k);
    const __m512i iv = i ? widen(i + k) : wrap16(_mm512_sub_epi32(one, fv));
    const __m512i kept = wrap16(rounding_divide_by_pot16(_mm512_mullo_epi32(fv, widen(c + k)), 15));
    const __m512i added = wrap16(rounding_divide_by_pot16(_mm512_mullo_epi32(iv, widen(g + k)), shift));
    // The sum of two int16 fits int32; clamped to int16 (or the clip) it narrows exactly.
    const __m512i v = lanes::min32(lanes::max32(_mm512_add_epi32(kept, added), lo), hi);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + k), _mm512_maskz_cvtepi32_epi16(lanes::k32, v));
  }
  if (k < n) int8_cell_scalar(i ? i + k : nullptr, f + k, g + k, n - k, shift, clip, c + k);
}

}  // namespace tickinfer::tfl::ops::lstm
