// The VNNI gate matrix's kernels (lstm_vnni_gates.hpp): vpdpbusd over 16-row groups, each group's
// sums requantized in registers (avx512_lanes::DoubleRounding16, TFLite's double rounding, its
// constants made once at prepare) and narrowed to int16 with saturation (vpmovsdw is sat16).
// Compiled with the AVX-512 VNNI flags.
#include "kernels/x86_intrinsics.hpp"

#include <cstdint>
#include <cstring>

#include "tflite/kernels/requant_avx512_lanes.hpp"
#include "tflite/ops/lstm/lstm_vnni_gates.hpp"

namespace tickinfer::tfl::ops::lstm {

namespace {

using kernels::avx512_lanes::DoubleRounding16;
static_assert(sizeof(DoubleRounding16) == kVnniRoundingBytes);
constexpr int kRows = VnniGates::kGroupRows;

inline __m512i load_rows(const int32_t* p) { return _mm512_loadu_si512(p); }
inline __m512i quad_of(const uint8_t* x, int q) {
  int32_t v;
  std::memcpy(&v, x + 4 * q, 4);
  return _mm512_set1_epi32(v);
}
inline const __m512i* weights(const int8_t* packed, int g, int quads) {
  return reinterpret_cast<const __m512i*>(packed + static_cast<size_t>(g) * static_cast<size_t>(quads) * 64);
}
inline DoubleRounding16 rounding_of(const int8_t* rounding, int g) {
  return DoubleRounding16::load(rounding + static_cast<size_t>(g) * kVnniRoundingBytes);
}
inline void store_sat16(int16_t* p, __m512i v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtsepi32_epi16(v));
}

}  // namespace

namespace {

// One vector (h, or a lone input) times kGroups groups side by side, each on two chains (even and
// odd quads): 2 kGroups independent vpdpbusd chains, one broadcast of the vector per quad for all
// of them. Then each group's requantization, plus the input term gx (kAddGx), narrowed.
template <int kGroups, bool kAddGx>
inline void groups_times_vector(const int8_t* packed, int g0, int quads, const int32_t* bias, const int8_t* rounding,
                                const uint8_t* vu8, const int16_t* gx, int16_t* out) {
  // (The loops over the groups are unrolled so the accumulators stay in registers.)
  __m512i a[kGroups], b[kGroups];
  const __m512i* w[kGroups];
#pragma GCC unroll 8
  for (int i = 0; i < kGroups; ++i) {
    a[i] = load_rows(bias + static_cast<size_t>(g0 + i) * kRows);
    b[i] = _mm512_setzero_si512();
    w[i] = weights(packed, g0 + i, quads);
  }
  int q = 0;
  for (; q + 2 <= quads; q += 2) {
    const __m512i h0 = quad_of(vu8, q), h1 = quad_of(vu8, q + 1);
#pragma GCC unroll 8
    for (int i = 0; i < kGroups; ++i) {
      a[i] = _mm512_dpbusd_epi32(a[i], h0, _mm512_loadu_si512(w[i] + q));
      b[i] = _mm512_dpbusd_epi32(b[i], h1, _mm512_loadu_si512(w[i] + q + 1));
    }
  }
  if (q < quads) {
    const __m512i h0 = quad_of(vu8, q);
#pragma GCC unroll 8
    for (int i = 0; i < kGroups; ++i) a[i] = _mm512_dpbusd_epi32(a[i], h0, _mm512_loadu_si512(w[i] + q));
  }
#pragma GCC unroll 8
  for (int i = 0; i < kGroups; ++i) {
    const size_t r0 = static_cast<size_t>(g0 + i) * kRows;
    const __m512i term = rounding_of(rounding, g0 + i).apply(_mm512_add_epi32(a[i], b[i]));
    if constexpr (kAddGx) {
      const __m512i x = _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(gx + r0)));
      store_sat16(out + r0, _mm512_add_epi32(term, x));
    } else {
      store_sat16(out + r0, term);
    }
  }
}

// Every group (or those covering the used rows) times one vector.
template <bool kAddGx>
void all_groups_times_vector(const int8_t* packed, int groups, int quads, const int32_t* bias, const int8_t* rounding,
                             const uint8_t* vu8, const int16_t* gx, int16_t* out) {
  int g = 0;
  for (; g + 4 <= groups; g += 4) groups_times_vector<4, kAddGx>(packed, g, quads, bias, rounding, vu8, gx, out);
  for (; g < groups; ++g) groups_times_vector<1, kAddGx>(packed, g, quads, bias, rounding, vu8, gx, out);
}

}  // namespace

// Pairs of inputs one group at a time, its weights reread from L1 while the pairs, independent of
// each other, pass by (two chains each); a lone input (stream mode's every call) as the recurrent
// vector is, across the groups.
void lstm_input_terms_vnni(const int8_t* packed, int groups, int quads, const int32_t* bias, const int8_t* rounding,
                           const uint8_t* xu8, size_t x_stride, int len, int16_t* gx, size_t gx_stride) noexcept {
  const int pairs = len / 2 * 2;
  if (pairs < len) {
    all_groups_times_vector<false>(packed, groups, quads, bias, rounding, xu8 + static_cast<size_t>(pairs) * x_stride, nullptr,
                            gx + static_cast<size_t>(pairs) * gx_stride);
  }
  if (pairs == 0) return;
  for (int g = 0; g < groups; ++g) {
    const __m512i* w = weights(packed, g, quads);
    const size_t r0 = static_cast<size_t>(g) * kRows;
    const DoubleRounding16 rq = rounding_of(rounding, g);
    const __m512i b = load_rows(bias + r0);
    for (int j = 0; j < pairs; j += 2) {
      const uint8_t* x0 = xu8 + static_cast<size_t>(j) * x_stride;
      const uint8_t* x1 = x0 + x_stride;
      __m512i a0 = b, a1 = b;
      for (int q = 0; q < quads; ++q) {
        const __m512i wq = _mm512_loadu_si512(w + q);
        a0 = _mm512_dpbusd_epi32(a0, quad_of(x0, q), wq);
        a1 = _mm512_dpbusd_epi32(a1, quad_of(x1, q), wq);
      }
      store_sat16(gx + static_cast<size_t>(j) * gx_stride + r0, rq.apply(a0));
      store_sat16(gx + static_cast<size_t>(j + 1) * gx_stride + r0, rq.apply(a1));
    }
  }
}

void lstm_recurrent_gates_vnni(const int8_t* packed, int groups, int quads, const int32_t* bias, const int8_t* rounding,
                               const uint8_t* hu8, const int16_t* gx, int16_t* gate) noexcept {
  all_groups_times_vector<true>(packed, groups, quads, bias, rounding, hu8, gx, gate);
}

}  // namespace tickinfer::tfl::ops::lstm
