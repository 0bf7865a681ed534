// AVX2 pair-block gemv (quant/kernels/gemv_s16_pairs.hpp). Each broadcast input pair feeds four
// blocks (32 rows); even and odd pairs go to separate
// accumulators, so eight vpmaddwd/vpaddd chains are in flight and the loop runs at the
// multiplier's throughput rather than its latency.
#include <immintrin.h>

#include "quant/kernels/gemv_s16_pairs.hpp"

namespace tickinfer::quant::kernels {

namespace {

// (x[2k], x[2k+1]) as two int16 in every 32-bit lane: one broadcast load.
inline __m256i pair_of(const int16_t* xw, int k) {
  return _mm256_castps_si256(_mm256_broadcast_ss(reinterpret_cast<const float*>(xw + 2 * k)));
}

inline __m256i load(const int16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline __m256i madd_add(__m256i acc, const int16_t* w, __m256i x) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(load(w), x));
}
inline void store(int32_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }

}  // namespace

void gemv_s16_pairs_avx2(const int16_t* packed, int blocks, int pairs, const int16_t* xw, int32_t* acc) noexcept {
  constexpr size_t kBP = 2 * kPairBlockRows;  // int16 per (block, pair)
  const size_t block_elems = static_cast<size_t>(pairs) * kBP;
  int b = 0;
  for (; b + 4 <= blocks; b += 4) {
    const int16_t* w = packed + static_cast<size_t>(b) * block_elems;
    __m256i e0 = _mm256_setzero_si256(), e1 = e0, e2 = e0, e3 = e0, o0 = e0, o1 = e0, o2 = e0, o3 = e0;
    int k = 0;
    for (; k + 2 <= pairs; k += 2) {
      const __m256i xe = pair_of(xw, k), xo = pair_of(xw, k + 1);
      const int16_t* p = w + static_cast<size_t>(k) * kBP;
      e0 = madd_add(e0, p, xe);
      o0 = madd_add(o0, p + kBP, xo);
      e1 = madd_add(e1, p + block_elems, xe);
      o1 = madd_add(o1, p + block_elems + kBP, xo);
      e2 = madd_add(e2, p + 2 * block_elems, xe);
      o2 = madd_add(o2, p + 2 * block_elems + kBP, xo);
      e3 = madd_add(e3, p + 3 * block_elems, xe);
      o3 = madd_add(o3, p + 3 * block_elems + kBP, xo);
    }
    if (k < pairs) {
      const __m256i xe = pair_of(xw, k);
      const int16_t* p = w + static_cast<size_t>(k) * kBP;
      e0 = madd_add(e0, p, xe);
      e1 = madd_add(e1, p + block_elems, xe);
      e2 = madd_add(e2, p + 2 * block_elems, xe);
      e3 = madd_add(e3, p + 3 * block_elems, xe);
    }
    int32_t* out = acc + static_cast<size_t>(b) * kPairBlockRows;
    store(out, _mm256_add_epi32(e0, o0));
    store(out + 8, _mm256_add_epi32(e1, o1));
    store(out + 16, _mm256_add_epi32(e2, o2));
    store(out + 24, _mm256_add_epi32(e3, o3));
  }
  for (; b < blocks; ++b) {
    const int16_t* w = packed + static_cast<size_t>(b) * block_elems;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    int k = 0;
    for (; k + 4 <= pairs; k += 4) {
      const int16_t* p = w + static_cast<size_t>(k) * kBP;
      a0 = madd_add(a0, p, pair_of(xw, k));
      a1 = madd_add(a1, p + kBP, pair_of(xw, k + 1));
      a2 = madd_add(a2, p + 2 * kBP, pair_of(xw, k + 2));
      a3 = madd_add(a3, p + 3 * kBP, pair_of(xw, k + 3));
    }
    for (; k < pairs; ++k) a0 = madd_add(a0, w + static_cast<size_t>(k) * kBP, pair_of(xw, k));
    store(acc + static_cast<size_t>(b) * kPairBlockRows,
          _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)));
  }
}

}  // namespace tickinfer::quant::kernels
