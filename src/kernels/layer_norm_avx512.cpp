// AVX-512 layer normalization (KernelSet::layer_norm). Rows of up to 16 features (a Transformer's
// model width in the book models: 16 in tiny_transformer, 15 in TransLOB) go 16 rows at a time:
// one vector per row, the 16 rows' sums and squared deviations reduced together by a transposing
// tree (45 shuffles and adds for 16 sums, where 16 horizontal sums take 16 chains of 8 dependent
// operations each), the means and inverse deviations computed once for all 16 rows in one vector.
// Wider rows, and the rows after the last 16, take the generic kernel (elementwise_simd.hpp).
// The per-row sums come out in another order than one row's horizontal sum: the results differ
// from that kernel's in the last bits, both within Keras's tolerance (kernels tests).
#include "kernels/x86_intrinsics.hpp"

#include "kernels/elementwise_simd.hpp"
#include "kernels/kernels_by_isa.hpp"
#include "kernels/simd_avx512.hpp"

namespace tickinfer::kernels::avx512 {

namespace {

// out lane i = the sum of v[i]'s 16 lanes, for 16 vectors.
inline __m512 sums_of_16(const __m512 (&v)[16]) {
  __m512 a[8], b[4], c[2];
  for (int i = 0; i < 8; ++i) {  // per 128-bit lane: [v2i, v2i+1, v2i, v2i+1] partials
    a[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  }
  for (int i = 0; i < 4; ++i) {  // per 128-bit lane: [v4i, v4i+1, v4i+2, v4i+3] partials
    b[i] = _mm512_add_ps(_mm512_shuffle_ps(a[2 * i], a[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_ps(a[2 * i], a[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  }
  for (int i = 0; i < 2; ++i) {  // 128-bit lanes [b2i, b2i, b2i+1, b2i+1] partials
    c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  }
  return _mm512_add_ps(_mm512_shuffle_f32x4(c[0], c[1], _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_f32x4(c[0], c[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

inline __m512 lane(__m512 v, int i) { return _mm512_permutexvar_ps(_mm512_set1_epi32(i), v); }

// 16 rows of n <= 16 features. Lanes past n are read (the caller guarantees they are in the
// tensor) and zeroed in registers: a masked load costs several plain ones on AMD cores.
template <bool kOverRead>
inline void sixteen_rows(const float* x, size_t ldx, const float* gamma, const float* beta, float eps, float* y,
                         size_t ldy, int n) {
  const __mmask16 m = static_cast<__mmask16>((1u << n) - 1u);
  __m512 v[16];
  for (int r = 0; r < 16; ++r) {
    v[r] = kOverRead ? _mm512_maskz_mov_ps(m, _mm512_loadu_ps(x + r * ldx)) : _mm512_maskz_loadu_ps(m, x + r * ldx);
  }
  const __m512 count = _mm512_set1_ps(static_cast<float>(n));
  const __m512 mean = _mm512_div_ps(sums_of_16(v), count);
  for (int r = 0; r < 16; ++r) v[r] = _mm512_maskz_sub_ps(m, v[r], lane(mean, r));  // deviations, 0 past n
  __m512 sq[16];
  for (int r = 0; r < 16; ++r) sq[r] = _mm512_mul_ps(v[r], v[r]);
  const __m512 var = _mm512_div_ps(sums_of_16(sq), count);
  const __m512 inv_std = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_sqrt_ps(_mm512_add_ps(var, _mm512_set1_ps(eps))));
  const __m512 g = _mm512_maskz_loadu_ps(m, gamma), b = _mm512_maskz_loadu_ps(m, beta);
  for (int r = 0; r < 16; ++r) {
    _mm512_mask_storeu_ps(y + r * ldy, m, _mm512_fmadd_ps(_mm512_mul_ps(v[r], lane(inv_std, r)), g, b));
  }
}

}  // namespace

void layer_norm(const float* x, size_t ldx, int rows, const float* gamma, const float* beta, float eps, float* y,
                size_t ldy, int n) noexcept {
  int r = 0;
  if (n <= 16) {
    // A row's whole-vector read stays inside the tensor while another row follows it
    // (ldx + n >= 16); the tensor's last 16 rows read with masks.
    const bool over_read = ldx + static_cast<size_t>(n) >= 16;
    for (; r + 16 <= rows; r += 16) {
      if (over_read && r + 16 < rows) {
        sixteen_rows<true>(x + r * ldx, ldx, gamma, beta, eps, y + r * ldy, ldy, n);
      } else {
        sixteen_rows<false>(x + r * ldx, ldx, gamma, beta, eps, y + r * ldy, ldy, n);
      }
    }
  }
  if (r < rows) simd::layer_norm<Simd>(x + r * ldx, ldx, rows - r, gamma, beta, eps, y + r * ldy, ldy, n);
}

}  // namespace tickinfer::kernels::avx512
