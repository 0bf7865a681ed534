// The implicit-GEMM int8 convolution on AVX2 (conv_s8_avx2.hpp).
//
// A tile is P positions x G blocks of 8 channels (P <= 2, G <= 4: 8 accumulators, each
// position's two broadcast input pairs and a quad's two weight vectors of one block in 14 of
// AVX2's 16 registers). Per quad and block it loads two weight vectors, each serving P positions;
// the input pairs are broadcast straight from memory (load ports only).
#include "tflite/kernels/conv_s8_avx2.hpp"

#include <immintrin.h>

#include <cstring>
#include <new>

#include "tflite/kernels/requant8_avx2.hpp"

namespace tickinfer::tfl::kernels {

namespace {

using avx2_requant::load8;
using avx2_requant::Requant8;
using avx2_requant::store32_s8;
using avx2_requant::store8_s8;

// Two int16 input elements in every 32-bit lane.
inline __m256i broadcast_pair(const int16_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

inline __m256i load16(const int16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// The sums of positions xp[0, P) and channel blocks [b0, b0 + G), from their starting sums.
template <int P, int G>
inline void tile(const ConvAvx2Call& c, const int16_t* const* xp, int b0, __m256i (&acc)[P][G]) {
  const size_t block_elements = static_cast<size_t>(c.quads) * 4 * kConvAvx2BlockRows;
  const int16_t* w = c.packed + static_cast<size_t>(b0) * block_elements;
#pragma GCC unroll 16
  for (int g = 0; g < G; ++g) {
    const __m256i start = load8(c.init + kConvAvx2BlockRows * (b0 + g));
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) acc[p][g] = start;
  }
  const int per_tap = c.taps.quads_per_tap;
  for (int t = 0; t < c.taps.taps; ++t) {
    const int32_t off = c.taps.offset ? c.taps.offset[t] : 0;
    const int16_t* x[P];
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) x[p] = xp[p] + off;
    for (int q = 0; q < per_tap; ++q, w += 4 * kConvAvx2BlockRows) {
      __m256i lo[P], hi[P];  // elements (0, 1) and (2, 3) of the quad
#pragma GCC unroll 16
      for (int p = 0; p < P; ++p) {
        lo[p] = broadcast_pair(x[p] + 4 * q);
        hi[p] = broadcast_pair(x[p] + 4 * q + 2);
      }
#pragma GCC unroll 16
      for (int g = 0; g < G; ++g) {
        const __m256i w01 = load16(w + g * block_elements), w23 = load16(w + g * block_elements + 16);
#pragma GCC unroll 16
        for (int p = 0; p < P; ++p) {
          const __m256i sum = _mm256_add_epi32(_mm256_madd_epi16(lo[p], w01), _mm256_madd_epi16(hi[p], w23));
          acc[p][g] = _mm256_add_epi32(acc[p][g], sum);
        }
      }
    }
  }
}

template <Rounding R>
struct RequantOut {
  const ConvAvx2Call& c;
  const RequantParams& q;
  int8_t* y;
  template <int P, int G>
  void operator()(int first, int b0) const {
    __m256i acc[P][G];
    tile<P, G>(c, c.xp + first, b0, acc);
    const Requant8<R>* rq = std::launder(static_cast<const Requant8<R>*>(c.requant)) + b0;
    if constexpr (R == Rounding::Double) {
      if (!c.shifts_left) return store<false, P, G>(first, b0, rq, acc);
    }
    store<true, P, G>(first, b0, rq, acc);
  }

  template <bool kShiftLeft, int P, int G>
  void store(int first, int b0, const Requant8<R>* rq, const __m256i (&acc)[P][G]) const {
    // Locals, not members: an int8 store may alias anything, so a member would be read again
    // after every store.
    const int rows = c.rows;
    int8_t* const out = y + static_cast<size_t>(first) * rows;
    const int r0 = kConvAvx2BlockRows * b0;
    if constexpr (G == 4) {
      if (r0 + 4 * kConvAvx2BlockRows <= rows) {  // 32 channels of a position in one store
        const __m256i zp = _mm256_set1_epi32(q.output_zero_point);
        const __m256i lo8 = _mm256_set1_epi8(static_cast<int8_t>(q.act_min));
        const __m256i hi8 = _mm256_set1_epi8(static_cast<int8_t>(q.act_max));
#pragma GCC unroll 16
        for (int p = 0; p < P; ++p) {
          store32_s8(rq[0].template apply<kShiftLeft>(acc[p][0]), rq[1].template apply<kShiftLeft>(acc[p][1]),
                     rq[2].template apply<kShiftLeft>(acc[p][2]), rq[3].template apply<kShiftLeft>(acc[p][3]), zp, lo8,
                     hi8, out + static_cast<size_t>(p) * rows + r0);
        }
        return;
      }
    }
    const __m256i zp = _mm256_set1_epi32(q.output_zero_point);
    const __m256i lo = _mm256_set1_epi32(q.act_min), hi = _mm256_set1_epi32(q.act_max);
#pragma GCC unroll 16
    for (int g = 0; g < G; ++g) {
      const int rg = r0 + kConvAvx2BlockRows * g;
#pragma GCC unroll 16
      for (int p = 0; p < P; ++p) {
        int8_t* o = out + static_cast<size_t>(p) * rows + rg;
        const __m256i v = rq[g].template apply<kShiftLeft>(acc[p][g]);
        if (rg + kConvAvx2BlockRows <= rows) {
          store8_s8(v, zp, lo, hi, o);
        } else {  // the last block's real channels only
          alignas(16) int8_t part[16];
          store8_s8(v, zp, lo, hi, part);
          std::memcpy(o, part, static_cast<size_t>(rows - rg));
        }
      }
    }
  }
};

struct S32Out {
  const ConvAvx2Call& c;
  int32_t* acc_out;
  int acc_step;
  template <int P, int G>
  void operator()(int first, int b0) const {
    __m256i acc[P][G];
    tile<P, G>(c, c.xp + first, b0, acc);
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) {
#pragma GCC unroll 16
      for (int g = 0; g < G; ++g) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc_out + static_cast<size_t>(first + p) * acc_step +
                                                       kConvAvx2BlockRows * (b0 + g)),
                            acc[p][g]);
      }
    }
  }
};

// Every channel block of positions [first, first + P): fours, then the last one to three.
template <int P, class Out>
inline void positions(const ConvAvx2Call& c, int first, const Out& out) {
  const int blocks = conv_avx2_padded_rows(c.rows) / kConvAvx2BlockRows;
  int b = 0;
  for (; b + 4 <= blocks; b += 4) out.template operator()<P, 4>(first, b);
  switch (blocks - b) {
    case 3: out.template operator()<P, 3>(first, b); break;
    case 2: out.template operator()<P, 2>(first, b); break;
    case 1: out.template operator()<P, 1>(first, b); break;
    default: break;
  }
}

template <class Out>
void run(const ConvAvx2Call& c, const Out& out) {
  int first = 0;
  for (; first + 2 <= c.n; first += 2) positions<2>(c, first, out);
  if (first < c.n) positions<1>(c, first, out);
}

}  // namespace

template <Rounding R>
void conv_s16_requant_avx2(const ConvAvx2Call& c, const RequantParams& p, int8_t* y) noexcept {
  run(c, RequantOut<R>{c, p, y});
}

void conv_s16_s32_avx2(const ConvAvx2Call& c, int32_t* acc, int acc_step) noexcept {
  run(c, S32Out{c, acc, acc_step});
}

template <Rounding R>
void conv_avx2_prepare_requant(const int32_t* multiplier, const int32_t* shift, int rows, void* out) noexcept {
  static_assert(sizeof(Requant8<R>) <= 256 && alignof(Requant8<R>) <= 32, "conv_avx2_requant_bytes' block");
  auto* block = static_cast<Requant8<R>*>(out);
  for (int r = 0; r < conv_avx2_padded_rows(rows); r += kConvAvx2BlockRows, ++block) {
    new (block) Requant8<R>(load8(multiplier + r), load8(shift + r));
  }
}

template void conv_avx2_prepare_requant<Rounding::Double>(const int32_t*, const int32_t*, int, void*) noexcept;
template void conv_avx2_prepare_requant<Rounding::Single>(const int32_t*, const int32_t*, int, void*) noexcept;
template void conv_s16_requant_avx2<Rounding::Double>(const ConvAvx2Call&, const RequantParams&, int8_t*) noexcept;
template void conv_s16_requant_avx2<Rounding::Single>(const ConvAvx2Call&, const RequantParams&, int8_t*) noexcept;

}  // namespace tickinfer::tfl::kernels
