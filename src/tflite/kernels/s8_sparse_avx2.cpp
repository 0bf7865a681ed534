// AVX2 block-sparse int8 gemv (s8_sparse.hpp): per gathered quad, the 4 inputs' bytes are put
// together from their indices, then vpmaddubsw with the sign trick (gemv_s8_quads_avx2.cpp says
// why it is exact) and vpmaddwd by ones meet the group's 16 rows in two ymm.
#include <immintrin.h>

#include <cstring>

#include "tflite/kernels/gemv_s8_quads_requant.hpp"
#include "tflite/kernels/s8_sparse.hpp"

namespace tickinfer::tfl::kernels {
namespace {

inline __m256i load(const void* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

inline __m256i gather_quad(const int8_t* x, const uint16_t* id) {
  const auto b = [&](int j) { return static_cast<uint32_t>(static_cast<uint8_t>(x[id[j]])); };
  return _mm256_set1_epi32(static_cast<int32_t>(b(0) | b(1) << 8 | b(2) << 16 | b(3) << 24));
}

inline __m256i dot(__m256i acc, const int8_t* w, __m256i xs, __m256i xa, __m256i ones) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(xa, _mm256_sign_epi8(load(w), xs)), ones));
}

// Group g's 16 sums: rows 0-7 in s0, rows 8-15 in s1.
inline void group_sums(const S8SparseView& w, const int8_t* x, int g, __m256i ones, __m256i& s0, __m256i& s1) {
  {
    const uint32_t q1 = w.start[g + 1];
    uint32_t q = w.start[g];
    const int8_t* p = w.weights + static_cast<size_t>(q) * kS8SparseQuadBytes;
    const uint16_t* id = w.index + static_cast<size_t>(q) * 4;
    // Two quads per step into separate chains: the next quad's gather overlaps this one's math.
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, b0 = a0, b1 = a0;
    for (; q + 2 <= q1; q += 2, p += 2 * kS8SparseQuadBytes, id += 8) {
      const __m256i xs0 = gather_quad(x, id), xs1 = gather_quad(x, id + 4);
      const __m256i xa0 = _mm256_abs_epi8(xs0), xa1 = _mm256_abs_epi8(xs1);
      a0 = dot(a0, p, xs0, xa0, ones);
      a1 = dot(a1, p + 32, xs0, xa0, ones);
      b0 = dot(b0, p + 64, xs1, xa1, ones);
      b1 = dot(b1, p + 96, xs1, xa1, ones);
    }
    if (q < q1) {
      const __m256i xs = gather_quad(x, id), xa = _mm256_abs_epi8(xs);
      a0 = dot(a0, p, xs, xa, ones);
      a1 = dot(a1, p + 32, xs, xa, ones);
    }
    s0 = _mm256_add_epi32(a0, b0);
    s1 = _mm256_add_epi32(a1, b1);
  }
}

template <bool kHighWord>
void sparse_requant_single(const S8SparseView& w, const int8_t* x, const BlockRequantSingle& q, int8_t* y) noexcept {
  const auto requant = kHighWord ? requant8_high : requant8;
  const __m256i ones = _mm256_set1_epi16(1);
  const Out8 o{_mm256_set1_epi32(q.output_zero_point), _mm256_set1_epi32(q.act_min), _mm256_set1_epi32(q.act_max)};
  const int full = w.rows / kS8BlockRows;  // 8-row blocks whose outputs all exist
  for (int g = 0; g < w.groups; ++g) {
    __m256i s[2];
    group_sums(w, x, g, ones, s[0], s[1]);
    for (int h = 0; h < 2; ++h) {
      const int b = 2 * g + h;
      if (b * kS8BlockRows >= w.rows) break;
      const int64_t* c = q.per_block.data() + static_cast<size_t>(b) * kBlockRequantWords;
      if (b < full) {
        requant(s[h], c, o, y + static_cast<size_t>(b) * kS8BlockRows);
      } else {  // the last, partial block: through a small buffer
        alignas(8) int8_t tmp[kS8BlockRows];
        requant(s[h], c, o, tmp);
        for (int r = b * kS8BlockRows; r < w.rows; ++r) y[r] = tmp[r - b * kS8BlockRows];
      }
    }
  }
}

}  // namespace

void gemv_s8_sparse_avx2(const S8SparseView& w, const int8_t* x, int32_t* acc) noexcept {
  const __m256i ones = _mm256_set1_epi16(1);
  for (int g = 0; g < w.groups; ++g) {
    __m256i s0, s1;
    group_sums(w, x, g, ones, s0, s1);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + g * kS8SparseRows), s0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + g * kS8SparseRows + 8), s1);
  }
}

void gemv_s8_sparse_requant_single_avx2(const S8SparseView& w, const int8_t* x, const BlockRequantSingle& q,
                                        int8_t* y) noexcept {
  if (q.high_word) {
    sparse_requant_single<true>(w, x, q, y);
  } else {
    sparse_requant_single<false>(w, x, q, y);
  }
}

}  // namespace tickinfer::tfl::kernels
