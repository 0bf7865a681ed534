// The implicit-GEMM int8 convolution on AVX-512 VNNI (conv_s8_vnni.hpp). Compiled with the
// AVX-512 flags plus VNNI; chosen only where the CPU reports it.
//
// A tile is P positions x G groups of 16 channels (P <= 8, G <= 2: 16 accumulators, the 2
// weight vectors of a quad and one broadcast input quad in 19 of the 32 registers). Per quad it
// loads G weight vectors and P 4-byte input quads (broadcasts, which run on the load ports) for
// P x G vpdpbusd: each weight loaded once serves P positions, and 16 independent sums cover the
// instruction's latency.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "tflite/kernels/conv_s8_vnni.hpp"
#include "tflite/kernels/requant_avx512_lanes.hpp"

namespace tickinfer::tfl::kernels {

namespace {

inline __m512i broadcast_quad(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

inline __mmask16 lanes_of(int rows, int r0) {
  const int n = std::min(kConvVnniLanes, rows - r0);
  return static_cast<__mmask16>((1u << n) - 1u);
}

// The sums of positions xp[0, P) and channel groups [g0, g0 + G).
template <int P, int G>
inline void tile(const ConvVnniCall& c, const uint8_t* const* xp, int g0, __m512i (&acc)[P][G]) {
  const size_t group_bytes = static_cast<size_t>(c.quads) * 4 * kConvVnniLanes;
  const int8_t* w = c.packed + static_cast<size_t>(g0) * group_bytes;
#pragma GCC unroll 16
  for (int g = 0; g < G; ++g) {
    const __m512i start = _mm512_loadu_si512(c.init + kConvVnniLanes * (g0 + g));
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) acc[p][g] = start;
  }
  const int per_tap = c.taps.quads_per_tap;
  for (int t = 0; t < c.taps.taps; ++t) {
    const int32_t off = c.taps.offset ? c.taps.offset[t] : 0;
    const uint8_t* x[P];
    for (int p = 0; p < P; ++p) x[p] = xp[p] + off;
    for (int q = 0; q < per_tap; ++q, w += 4 * kConvVnniLanes) {
      __m512i wv[G];
      for (int g = 0; g < G; ++g) wv[g] = _mm512_loadu_si512(w + g * group_bytes);
      for (int p = 0; p < P; ++p) {
        const __m512i xv = broadcast_quad(x[p] + 4 * q);
        for (int g = 0; g < G; ++g) acc[p][g] = _mm512_dpbusd_epi32(acc[p][g], xv, wv[g]);
      }
    }
  }
}

// Position p's requantized channels [r0, r0 + 16) (lanes k), zero point added, clamped, narrowed.
inline void store(int8_t* out, int p, int rows, int r0, __mmask16 k, __m512i q, __m512i zp, __m512i lo, __m512i hi) {
  _mm_mask_storeu_epi8(out + static_cast<size_t>(p) * rows + r0, k, avx512_lanes::narrow16(q, zp, lo, hi));
}

template <Rounding R>
struct RequantOut {
  const ConvVnniCall& c;
  const RequantParams& q;
  int8_t* y;
  template <int P, int G>
  void operator()(const uint8_t* const* xp, int first, int g0) const {
    __m512i acc[P][G];
    tile<P, G>(c, xp, g0, acc);
    const __m512i zp = _mm512_set1_epi32(q.output_zero_point);
    const __m512i lo = _mm512_set1_epi32(q.act_min), hi = _mm512_set1_epi32(q.act_max);
    // Locals, not members: an int8 store may alias anything, so a member would be read again
    // after every store.
    const int rows = c.rows;
    int8_t* const out = y + static_cast<size_t>(first) * rows;
    const int32_t* const mult = q.multiplier;
    const int32_t* const shift = q.shift;
#pragma GCC unroll 16
    for (int g = 0; g < G; ++g) {
      const int r0 = kConvVnniLanes * (g0 + g);
      const __mmask16 k = lanes_of(rows, r0);
      if constexpr (R == Rounding::Double) {
        if (c.rounding != nullptr) {  // made at prepare
          const auto rounding = avx512_lanes::DoubleRounding16::load(c.rounding + static_cast<size_t>(g0 + g) * kDoubleRounding16Bytes);
          if (c.shifts_left) {
#pragma GCC unroll 16
            for (int p = 0; p < P; ++p) store(out, p, rows, r0, k, rounding.apply(acc[p][g]), zp, lo, hi);
          } else {
#pragma GCC unroll 16
            for (int p = 0; p < P; ++p) store(out, p, rows, r0, k, rounding.apply_right_only(acc[p][g]), zp, lo, hi);
          }
        } else {
          const avx512_lanes::DoubleRounding16 rounding(_mm512_maskz_loadu_epi32(k, mult + r0),
                                                        _mm512_maskz_loadu_epi32(k, shift + r0));  // once per group
#pragma GCC unroll 16
          for (int p = 0; p < P; ++p) store(out, p, rows, r0, k, rounding.apply(acc[p][g]), zp, lo, hi);
        }
      } else {
        const __m512i m = _mm512_maskz_loadu_epi32(k, mult + r0);
        const __m512i s = _mm512_maskz_loadu_epi32(k, shift + r0);
#pragma GCC unroll 16
        for (int p = 0; p < P; ++p) {
          const __m128i v = avx512_lanes::requant16<R>(acc[p][g], m, s, zp, lo, hi);
          _mm_mask_storeu_epi8(out + static_cast<size_t>(p) * rows + r0, k, v);
        }
      }
    }
  }
};

struct S32Out {
  const ConvVnniCall& c;
  int32_t* acc_out;
  int acc_step;
  template <int P, int G>
  void operator()(const uint8_t* const* xp, int first, int g0) const {
    __m512i acc[P][G];
    tile<P, G>(c, xp, g0, acc);
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) {
#pragma GCC unroll 16
      for (int g = 0; g < G; ++g) {
        _mm512_storeu_si512(acc_out + static_cast<size_t>(first + p) * acc_step + kConvVnniLanes * (g0 + g), acc[p][g]);
      }
    }
  }
};

// Every channel group of positions [first, first + P): pairs of groups, then a last lone one.
template <int P, class Out>
inline void positions(const ConvVnniCall& c, int first, const Out& out) {
  const int groups = conv_vnni_padded_rows(c.rows) / kConvVnniLanes;
  int g = 0;
  for (; g + 2 <= groups; g += 2) out.template operator()<P, 2>(c.xp + first, first, g);
  if (g < groups) out.template operator()<P, 1>(c.xp + first, first, g);
}

// n positions as tiles of 8, 4, 2 and 1.
template <class Out>
void run(const ConvVnniCall& c, const Out& out) {
  int first = 0;
  for (; first + 8 <= c.n; first += 8) positions<8>(c, first, out);
  if (first + 4 <= c.n) {
    positions<4>(c, first, out);
    first += 4;
  }
  if (first + 2 <= c.n) {
    positions<2>(c, first, out);
    first += 2;
  }
  if (first < c.n) positions<1>(c, first, out);
}

}  // namespace

template <Rounding R>
void conv_u8s8_requant_vnni(const ConvVnniCall& c, const RequantParams& p, int8_t* y) noexcept {
  run(c, RequantOut<R>{c, p, y});
}

void conv_u8s8_s32_vnni(const ConvVnniCall& c, int32_t* acc, int acc_step) noexcept {
  run(c, S32Out{c, acc, acc_step});
}

template void conv_u8s8_requant_vnni<Rounding::Double>(const ConvVnniCall&, const RequantParams&, int8_t*) noexcept;
template void conv_u8s8_requant_vnni<Rounding::Single>(const ConvVnniCall&, const RequantParams&, int8_t*) noexcept;

}  // namespace tickinfer::tfl::kernels
